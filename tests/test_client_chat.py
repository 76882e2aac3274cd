"""resolver.client against a scripted real HTTP server on loopback.

The server answers POST /v1/chat/completions from a script (one step per request),
so every retry rule is exercised over a real socket.
"""
from __future__ import annotations

import asyncio
import json
import socket
import time
from email.utils import formatdate

import pytest
from aiohttp import web

from resolver.client.chat import ChatClient, RequestFailed, normalize_apibase
from resolver.client.completions import completion_from_payload
from resolver.client.http_policy import parse_retry_after
from resolver.core.errors import UserError
from tests.support.runner import LoopbackServer

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}


def completion(content="Final Answer: 4", finish="stop", **message):
    return {"id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}


class ScriptedServer(LoopbackServer):
    """Each request consumes the next script step: ("json", status, body, headers) |
    ("raw", bytes) | ("sleep", seconds, step) | ("drop",) | ("sse", [chunks], done).

    A "sleep" the client gave up on (its timeout) ends when the client hangs up: otherwise
    stopping the server would wait out the rest of the stall, time no check uses."""

    handler_cancellation = True

    def __init__(self, script, models_status=200):
        self.script = list(script)
        self.models_status = models_status
        self.times: list[float] = []
        self.bodies: list[dict] = []
        super().__init__()

    async def chat(self, request):
        self.times.append(time.monotonic())
        self.bodies.append(json.loads(await request.read()))
        step = self.script.pop(0) if self.script else ("json", 200, completion(), {})
        return await self.play(step, request)

    async def play(self, step, request):
        kind = step[0]
        if kind == "sleep":
            await asyncio.sleep(step[1])
            return await self.play(step[2], request)
        if kind == "json":
            return web.json_response(step[2], status=step[1], headers=step[3])
        if kind == "raw":
            return web.Response(body=step[1], content_type="application/json")
        if kind == "drop":
            request.transport.close()
            raise asyncio.CancelledError()
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for chunk in step[1]:
            await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        if step[2]:
            await resp.write(b"data: [DONE]\n\n")
        return resp

    async def list_models(self, request):
        if self.models_status != 200:
            return web.json_response({"error": {"message": "bad key"}}, status=self.models_status)
        return web.json_response({"object": "list", "data": [{"id": "m"}]})


def ask(url, body=BODY, **kwargs):
    async def go():
        async with ChatClient(url, "secret", backoff_base=0.01, **kwargs) as client:
            try:
                return await client.complete(body), client.stats
            except RequestFailed as exc:
                return exc, client.stats
    return asyncio.run(go())


def test_retry_after_is_honoured_on_429():
    with ScriptedServer([("json", 429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})]) as srv:
        result, stats = ask(srv.url)
    assert result.content == "Final Answer: 4"
    assert stats.retries == 1 and stats.retry_reasons == {"429": 1}
    assert srv.times[1] - srv.times[0] >= 0.95      # waited at least what the server asked


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503])
def test_transient_statuses_are_retried(status):
    with ScriptedServer([("json", status, {"error": {"message": "busy"}}, {})] * 2) as srv:
        result, stats = ask(srv.url)
    assert result.finish_reason == "stop" and stats.retries == 2 and len(srv.times) == 3


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_fail_at_once_with_the_server_message(status):
    with ScriptedServer([("json", status, {"error": {"message": "max_tokens is too large"}}, {})]) as srv:
        result, stats = ask(srv.url)
    assert isinstance(result, RequestFailed) and result.status == status
    assert "max_tokens is too large" in str(result) and str(status) in str(result)
    assert len(srv.times) == 1 and stats.retries == 0 and stats.failed == 1


def test_malformed_dropped_and_slow_replies_are_retried():
    script = [("raw", b'{"choices": [{"mess'), ("drop",), ("sleep", 3, ("json", 200, completion(), {})),
              ("json", 200, {"error": {"message": "upstream hiccup"}}, {})]
    with ScriptedServer(script) as srv:
        result, stats = ask(srv.url, timeout=0.5)
    assert result.content == "Final Answer: 4"
    # the drop comes on the connection the malformed reply left in the pool: sent again at
    # once, as a pooled connection the server closed would be (test_client_keepalive.py)
    assert stats.retry_reasons == {"malformed": 2, "timeout": 1} and stats.resent == 1


def test_gives_up_after_max_retries():
    with ScriptedServer([("json", 500, {"error": {"message": "down"}}, {})] * 10) as srv:
        result, stats = ask(srv.url, max_retries=3)
    assert isinstance(result, RequestFailed) and "4 attempts" in str(result) and "down" in str(result)
    assert len(srv.times) == 4


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_and_usage_are_read(field):
    payload = completion("Final Answer: 7", "length", **{field: "thinking..."})
    with ScriptedServer([("json", 200, payload, {})]) as srv:
        result, _ = ask(srv.url)
    assert (result.content, result.reasoning, result.finish_reason) == ("Final Answer: 7", "thinking...", "length")
    assert result.usage == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    assert srv.bodies[0] == BODY


def _chunk(delta, finish=None, usage=None):
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **({"usage": usage} if usage else {})}


def test_streaming_is_assembled_and_asks_for_usage():
    chunks = [_chunk({"role": "assistant", "content": ""}), _chunk({"reasoning": "hm, "}),
              _chunk({"reasoning_content": "ok."}), _chunk({"content": "Final "}),
              _chunk({"content": "Answer: 5"}), _chunk({}, "stop"),
              {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}]
    with ScriptedServer([("sse", chunks, True)]) as srv:
        result, _ = ask(srv.url, {**BODY, "stream": True})
    assert (result.content, result.reasoning, result.finish_reason) == ("Final Answer: 5", "hm, ok.", "stop")
    assert result.usage["completion_tokens"] == 2
    assert srv.bodies[0]["stream_options"] == {"include_usage": True}


def test_a_stream_cut_short_is_retried():
    cut = [_chunk({"content": "Final Ans"})]
    whole = [_chunk({"content": "Final Answer: 1"}), _chunk({}, "stop")]
    with ScriptedServer([("sse", cut, False), ("sse", whole, True)]) as srv:
        result, stats = ask(srv.url, {**BODY, "stream": True})
    assert result.content == "Final Answer: 1" and stats.retry_reasons == {"connection": 1}


def test_normalize_apibase():
    assert normalize_apibase("http://localhost:3333") == "http://localhost:3333/v1"
    assert normalize_apibase("https://h.example/v1/") == "https://h.example/v1"
    # A URL with a path is used as given (provider bases such as .../v1/openai or .../v1beta/openai).
    assert normalize_apibase("http://h:8000/openai") == "http://h:8000/openai"
    assert normalize_apibase("https://api.example/v1beta/openai/") == "https://api.example/v1beta/openai"
    for bad in ("localhost:3333", "ftp://x", "http://", "", None, "http://h:99999", "http://[::1",
                "http://h/v1?x=1"):
        with pytest.raises(UserError, match="apibase"):
            normalize_apibase(bad)


def test_parse_retry_after():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = parse_retry_after(formatdate(time.time() + 30, usegmt=True))
    assert 25 <= later <= 31


def test_completion_from_payload_rejects_replies_without_choices():
    with pytest.raises(ValueError, match="quota"):
        completion_from_payload({"error": {"message": "quota exceeded"}})
    with pytest.raises(ValueError):
        completion_from_payload(["not", "an", "object"])


def test_preflight_errors_are_user_errors():
    async def models(url):
        async with ChatClient(url) as client:
            return await client.list_models()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    free = sock.getsockname()[1]
    sock.close()                                  # nothing listens there now
    with pytest.raises(UserError, match="connection refused"):
        asyncio.run(models(f"http://127.0.0.1:{free}"))
    with ScriptedServer([], models_status=401) as srv:
        with pytest.raises(UserError, match="rejected the API key"):
            asyncio.run(models(srv.url))
    with ScriptedServer([]) as srv:
        assert asyncio.run(models(srv.url)) == ["m"]
