"""Pooled connections and the server's keep-alive, over real loopback sockets.

A server closes a connection that sat idle past its keep-alive (uvicorn, behind vLLM and
SGLang: 5 s). A client whose event loop is busy (a saturated CPU) has not yet read that
close when it sends the next request on the pooled connection, which then fails before any
byte of a reply: the server never saw the request. The client must send it again at once,
without spending a retry, and must itself drop idle connections before such a server would
(resolver/client/chat.py, docs/runner.md *Pooled connections*).
"""
from __future__ import annotations

import asyncio
import time

from resolver.client import chat
from resolver.client.chat import KEEPALIVE_SECONDS, ChatClient, RequestFailed
from tests.test_client_chat import BODY, ScriptedServer


class ShortKeepAlive(ScriptedServer):
    """Answers every request; closes a connection idle for 0.2 s; notes each request's client port."""

    keepalive_timeout = 0.2

    def __init__(self, script=()):
        self.ports: list[int] = []
        super().__init__(script)

    async def chat(self, request):
        self.ports.append(request.transport.get_extra_info("peername")[1])
        return await super().chat(request)


def two_requests_with_a_busy_loop_between(url, busy_seconds, **kwargs):
    """Two requests on one client; between them the event loop is blocked for busy_seconds,
    as a CPU-bound client's loop is, so the server's close of the idle connection is not read."""
    async def go():
        async with ChatClient(url, "secret", backoff_base=5.0, **kwargs) as client:
            first = await client.complete(BODY)
            time.sleep(busy_seconds)
            try:
                second = await client.complete(BODY)
            except RequestFailed as exc:
                second = exc
            return first, second, client.stats
    return asyncio.run(go())


def test_a_pooled_connection_the_server_closed_is_sent_again_at_once_without_a_retry():
    with ShortKeepAlive() as srv:
        first, second, stats = two_requests_with_a_busy_loop_between(srv.url, 1.0, max_retries=0)
    assert not isinstance(second, RequestFailed), second     # no retry budget at all: only a free resend succeeds
    assert second.content == "Final Answer: 4"
    assert stats.resent == 1 and stats.retries == 0 and stats.failed == 0
    assert len(srv.times) == 2                              # the lost send never reached the server
    assert srv.ports[0] != srv.ports[1]                      # the resend went out on a new connection


def test_a_connection_dropped_by_the_server_after_it_read_the_request_is_still_a_retry():
    # A fresh connection that dies before its reply is the server's doing (a crash, the
    # simulator's "drop" fault): it spends a retry, never a free resend.
    with ScriptedServer([("drop",)]) as srv:
        async def go():
            async with ChatClient(srv.url, "secret", backoff_base=0.01) as client:
                return await client.complete(BODY), client.stats
        result, stats = asyncio.run(go())
    assert result.content == "Final Answer: 4"
    assert stats.retries == 1 and stats.retry_reasons == {"connection": 1} and stats.resent == 0


def test_the_client_lets_go_of_an_idle_connection_before_a_5_s_keep_alive_runs_out(monkeypatch):
    # uvicorn's keep-alive is 5 s: a connection the client has left idle longer than its
    # own limit is closed by the client, not sent on.
    assert KEEPALIVE_SECONDS <= 2.5

    class LongKeepAlive(ShortKeepAlive):
        keepalive_timeout = 75.0

    # The client's limit, read when it opens its connection pool, shortened for the test: the
    # idle time it waits out is not what is checked (the constant's value is, above).
    monkeypatch.setattr(chat, "KEEPALIVE_SECONDS", 0.3)
    with LongKeepAlive() as srv:
        first, second, stats = two_requests_with_a_busy_loop_between(srv.url, chat.KEEPALIVE_SECONDS + 0.5)
    assert stats.resent == 0 and stats.retries == 0
    assert srv.ports[0] != srv.ports[1]                      # a new connection, though the server kept the old one
