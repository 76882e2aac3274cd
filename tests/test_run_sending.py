"""How API mode sends one request (resolver/run/sending.py; docs/runner.md, *Concurrency*):
identical requests in flight share one call, a twin answered earlier is not sent again, at most
P of a step and P x T over the run are in flight, and each outcome goes where the docs say
(cache, failure count, the line that stops the run). A stand-in client; a real ResponseCache
read back with plain sqlite3."""
from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3

import pytest

from resolver.client import Completion, PromptTooLong, RequestFailed, ResponseCache
from resolver.core import UserError
from resolver.run import Reporter, RunSummary
from resolver.run.failures import FailurePolicy
from resolver.run.scheduler import Scheduler
from resolver.run.sending import Sample, Sender
from tests.support.runner import options


class Client:
    """Answers every request "Final Answer: 1" once `release` is set, or raises `errors[key]`."""

    key_hint = "--apikey / $OPENAI_API_KEY"

    def __init__(self):
        self.calls: list[str] = []
        self.errors: dict[str, RequestFailed] = {}
        self.release = asyncio.Event()
        self.in_flight = self.most = 0
        self.by_step: dict[str, int] = {}
        self.most_by_step: dict[str, int] = {}

    async def complete(self, body, payload, loop_rule):
        key, step = body["key"], body["step"]
        self.calls.append(key)
        self.in_flight += 1
        self.by_step[step] = self.by_step.get(step, 0) + 1
        self.most = max(self.most, self.in_flight)
        self.most_by_step[step] = max(self.most_by_step.get(step, 0), self.by_step[step])
        try:
            await self.release.wait()
            if key in self.errors:
                raise self.errors[key]
            return Completion("Final Answer: 1", None, "stop", {"completion_tokens": 3})
        finally:
            self.in_flight -= 1
            self.by_step[step] -= 1


def sample(key: str, step: str = "s") -> Sample:
    body = {"key": key, "step": step}
    return Sample(0, None, [], body, hashlib.sha256(key.encode()).hexdigest(), json.dumps(body).encode())


def committed(cache: ResponseCache) -> set[str]:
    cache.flush()
    with sqlite3.connect(cache.path) as db:
        return {row[0] for row in db.execute("SELECT key FROM responses")}


def setup(tmp_path, parallel=4, threads=1):
    client, summary = Client(), RunSummary()
    cache = ResponseCache(tmp_path / "cache")
    scheduler = Scheduler(options(parallel, threads))
    failures = FailurePolicy(summary, Reporter(), scheduler.in_flight)
    return client, cache, summary, scheduler, Sender(client, cache, scheduler, failures, summary, None)


def test_identical_requests_in_flight_share_one_call_and_a_later_twin_is_read_from_the_cache(tmp_path):
    async def main():
        client, cache, summary, scheduler, sender = setup(tmp_path)
        slots = scheduler.step_slots()
        twins = [sample("a"), sample("a"), sample("b")]
        asks = asyncio.gather(*(sender.ask(s, slots) for s in twins))
        await asyncio.sleep(0)
        client.release.set()
        first, second, other = await asks
        assert first == second and first is not None and first.content == "Final Answer: 1"
        assert other is not None and sorted(client.calls) == ["a", "b"]
        again = await sender.ask(sample("a"), slots)          # answered earlier in this run
        assert again == first and sorted(client.calls) == ["a", "b"]
        assert summary.answered == 2
        assert committed(cache) == {twins[0].key, twins[2].key}
        cache.close()

    asyncio.run(main())


def test_requests_in_flight_stay_within_p_per_step_and_p_times_t_over_the_run(tmp_path):
    """P = 3, T = 2: 3 steps of 5 distinct requests each, all asked at once: 3 of a step, 6 in all."""
    async def main():
        client, cache, _, scheduler, sender = setup(tmp_path, parallel=3, threads=2)
        asks = []
        for step in "xyz":
            slots = scheduler.step_slots()
            asks += [sender.ask(sample(f"{step}{i}", step), slots) for i in range(5)]
        running = asyncio.gather(*asks)
        for _ in range(20):
            await asyncio.sleep(0)
        assert client.in_flight == 6 and max(client.by_step.values()) == 3
        client.release.set()
        answers = await running
        assert all(a is not None for a in answers) and len(client.calls) == 15
        assert client.most == 6 and max(client.most_by_step.values()) == 3
        cache.close()

    asyncio.run(main())


def test_outcomes_go_where_the_docs_say(tmp_path):
    """A failure: None, counted, not cached. Prompt too long: a finished sample, not cached, not
    an answer. A rejected key: the one line that stops the run."""
    async def main():
        client, cache, summary, scheduler, sender = setup(tmp_path)
        slots = scheduler.step_slots()
        client.errors = {"bad": RequestFailed("HTTP 400: top_k must be positive", status=400),
                         "long": RequestFailed("maximum context length is 100", status=400, kind="prompt_too_long"),
                         "key": RequestFailed("HTTP 401: invalid_api_key", status=401, kind="fatal")}
        client.release.set()
        assert await sender.ask(sample("bad"), slots) is None
        assert summary.failed == 1 and summary.failures == {"HTTP 400: top_k must be positive": 1}
        assert await sender.ask(sample("long"), slots) == PromptTooLong("maximum context length is 100")
        assert summary.answered == 0 and summary.failed == 1
        with pytest.raises(UserError) as stopped:
            await sender.ask(sample("key"), slots)
        assert str(stopped.value) == ("stopping: HTTP 401: invalid_api_key; no request can succeed like this "
                                      "(check --apikey / $OPENAI_API_KEY and the account's quota)")
        assert committed(cache) == set()
        assert await sender.ask(sample("ok"), slots) is not None and summary.answered == 1
        assert committed(cache) == {sample("ok").key}
        cache.close()

    asyncio.run(main())


def test_a_malformed_cached_value_is_replaced(tmp_path):
    async def main():
        client, cache, _, scheduler, sender = setup(tmp_path)
        client.release.set()
        s = sample("a")
        cache.put(s.key, {"content": 5})                      # not a completion (an older version cached it)
        cache.flush()
        s.replace = True
        await sender.ask(s, scheduler.step_slots())
        assert cache.get(s.key) == {"content": "Final Answer: 1", "reasoning": None, "finish_reason": "stop",
                                    "usage": {"completion_tokens": 3}}
        cache.close()

    asyncio.run(main())
