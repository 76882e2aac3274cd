"""The waits between a chat request's attempts (docs/runner.md, *Retries and failures*).

asyncio.sleep is replaced by a recorder (no real waiting, no clocks asserted) and the
jitter draws its upper bound, so the schedule can be checked against the numbers worked
out by hand from the documented rule: full-jitter backoff of at most 0.5 s doubling,
capped at 30 s, 8 retries; a server's Retry-After of S seconds waits S plus up to
0.1 S + 0.05 s.
"""
from __future__ import annotations

import asyncio
import random

import pytest
from conftest import free_port

from resolver.client.chat import ChatClient, RequestFailed
from tests.test_client_chat import ScriptedServer, completion


@pytest.fixture
def waits(monkeypatch):
    """Sleeps longer than an instant are recorded and skipped; jitter draws its upper bound."""
    recorded, real_sleep = [], asyncio.sleep

    async def fake_sleep(seconds, *args, **kwargs):
        if seconds > 0:
            recorded.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    monkeypatch.setattr(random, "uniform", lambda low, high: high)
    return recorded


def complete(url, body=None, **kwargs):
    async def go():
        async with ChatClient(url, **kwargs) as client:
            try:
                return await client.complete(body or {"model": "m", "messages": []}), client.stats
            except RequestFailed as exc:
                return exc, client.stats
    return asyncio.run(go())


def test_a_server_that_went_away_is_tried_nine_times_over_at_most_91_5_seconds(waits):
    result, stats = complete(f"http://127.0.0.1:{free_port()}")
    assert isinstance(result, RequestFailed) and "gave up after 9 attempts" in str(result)
    assert waits == [0.5, 1, 2, 4, 8, 16, 30, 30] and sum(waits) == 91.5
    assert stats.sent == 9 and stats.retries == 8 and stats.retry_reasons == {"connection": 8}


def test_the_backoff_options_set_the_schedule(waits):
    result, _ = complete(f"http://127.0.0.1:{free_port()}", max_retries=3, backoff_base=2.0, backoff_cap=5.0)
    assert "gave up after 4 attempts" in str(result) and waits == [2, 4, 5]


def test_retry_after_is_waited_with_a_tenth_more_at_most(waits):
    script = [("json", 429, {"error": {"message": "slow down"}}, {"Retry-After": "7"}),
              ("json", 503, {"error": {"message": "busy"}}, {"retry-after-ms": "1500"}),
              ("json", 200, completion(), {})]
    with ScriptedServer(script) as srv:
        result, stats = complete(srv.url)
    assert result.content == "Final Answer: 4"
    assert waits == [pytest.approx(7.75), pytest.approx(1.7)]
    assert stats.retry_reasons == {"429": 1, "503": 1}
