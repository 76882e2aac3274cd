"""The chat client's .netrc login (docs/runner.md): read once per client, sent on every
request to the server's host, as aiohttp's trust_env sent it when it looked it up per request.
"""
from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from resolver.client.chat import ChatClient
from tests.support.runner import LoopbackServer

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}
# base64 of "alice:s3cret", written out: the Basic scheme of RFC 7617.
ALICE = "Basic YWxpY2U6czNjcmV0"


class HeaderServer(LoopbackServer):
    """Records the Authorization header of every request."""

    def __init__(self):
        self.seen: list[tuple[str, str | None]] = []
        super().__init__()

    async def chat(self, request):
        self.seen.append(("chat", request.headers.get("Authorization")))
        return web.json_response({"choices": [{"index": 0, "message": {"role": "assistant", "content": "4"},
                                               "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    async def list_models(self, request):
        self.seen.append(("models", request.headers.get("Authorization")))
        return web.json_response({"object": "list", "data": [{"id": "m"}]})


def use_netrc(tmp_path, monkeypatch, machine: str) -> None:
    """$NETRC names a file holding alice's login for `machine`."""
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine {machine} login alice password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))


def talk(url: str, apikey: str | None = None) -> None:
    async def go():
        async with ChatClient(url, apikey) as client:
            await client.list_models()
            for _ in range(3):
                await client.complete(BODY)
    asyncio.run(go())


@pytest.mark.parametrize("machine, login", [("127.0.0.1", ALICE), ("gpu.example", None)],
                         ids=["the-host's-login-goes-with-every-request", "no-login-for-other-hosts"])
def test_the_netrc_login_goes_only_to_its_host(tmp_path, monkeypatch, machine, login):
    use_netrc(tmp_path, monkeypatch, machine)
    with HeaderServer() as server:
        talk(server.url)
    assert server.seen == [("models", login)] + [("chat", login)] * 3


def test_an_api_key_wins_over_the_netrc_login(tmp_path, monkeypatch):
    use_netrc(tmp_path, monkeypatch, "127.0.0.1")
    with HeaderServer() as server:
        talk(server.url, apikey="sk-test")
    assert server.seen == [("models", "Bearer sk-test")] + [("chat", "Bearer sk-test")] * 3
