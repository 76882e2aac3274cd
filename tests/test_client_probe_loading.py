"""The preflight chat probe waits while the server loads its model (docs/runner.md,
--load-timeout), then judges the reply it ends on. Counts are of requests at the server.
"""
from __future__ import annotations

import asyncio

import pytest

from resolver.client import retries
from resolver.client.chat import ChatClient
from resolver.core import UserError
from tests.test_client_chat import ScriptedServer, completion

LOADING = ("json", 503, {"error": {"code": 503, "message": "Loading model"}}, {"Retry-After": "0"})


def probe(url, **kwargs):
    async def go():
        async with ChatClient(url, "secret", **kwargs) as client:
            await client.probe_chat("m")
    asyncio.run(go())


@pytest.fixture
def quick_polls(monkeypatch):
    """A loading server asked again every 20 ms instead of 0.5 s: these tests count requests."""
    monkeypatch.setattr(retries, "LOADING_POLL_MIN_S", 0.02)


@pytest.mark.usefixtures("quick_polls")
def test_the_probe_waits_out_the_loading_replies():
    with ScriptedServer([LOADING] * 3 + [("json", 200, completion(), {})]) as srv:
        probe(srv.url)
    assert len(srv.times) == 4                  # three loading replies, then the answer


@pytest.mark.usefixtures("quick_polls")
def test_a_wrong_model_after_loading_is_named():
    with ScriptedServer([LOADING, ("json", 404, {"error": {"message": "model m not found"}}, {})]) as srv:
        with pytest.raises(UserError, match="HTTP 404 .*model m not found"):
            probe(srv.url)
    assert len(srv.times) == 2


def test_a_server_still_loading_after_the_budget_is_one_clear_error():
    with ScriptedServer([LOADING] * 50) as srv:
        with pytest.raises(UserError, match="still loading the model after 0.2 s"):
            probe(srv.url, load_timeout=0.2)
    assert 1 <= len(srv.times) <= 2             # 0.5 s between probes, longer than the 0.2 s budget
