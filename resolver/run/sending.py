"""How API mode sends one sample's request: its body and cache key (`prepare_sample`), then
(`Sender.ask`) one HTTP call shared by identical requests in flight, sent inside the scheduler's
slots, its answer put in the cache, and what came of it told to the failure policy.
"""
from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from resolver.client import (
    TRANSPORT_ONLY_FIELDS,
    PromptTooLong,
    RequestFailed,
    cached_completion,
    canonical_request,
)
from resolver.run.experiment import messages_for, request_for

if TYPE_CHECKING:
    from resolver.client import ChatClient, Completion, ResponseCache
    from resolver.config import Step
    from resolver.grading import LoopRule
    from resolver.run.experiment import Experiment
    from resolver.run.failures import FailurePolicy
    from resolver.run.scheduler import Scheduler
    from resolver.run.summary import RunSummary
    from resolver.tasks import TestCase

__all__ = ["Sample", "Sender", "prepare_sample"]


@dataclass
class Sample:
    """One sample's request, prepared before its round is looked up in the cache."""

    index: int
    case: TestCase
    messages: list
    body: dict
    key: str
    payload: bytes | None
    replace: bool = False            # the cache holds a malformed value for this key: overwrite it


def prepare_sample(experiment: Experiment, step: Step, index: int, case: TestCase) -> Sample:
    """Sample `index` of `step`: its messages, request body and cache key (docs/runner.md)."""
    messages = messages_for(experiment, step, case)
    body = request_for(experiment, messages)
    canonical = canonical_request(body, experiment.sampler.stop_loops)
    # The canonical bytes are the request itself unless transport fields were dropped
    # (a stop_loops request streams, and its key carries the rule the request does not).
    payload = None if body.keys() & set(TRANSPORT_ONLY_FIELDS) else canonical
    return Sample(index, case, messages, body, hashlib.sha256(canonical).hexdigest(), payload)


class Sender:
    """Sends requests through `client`, one per distinct key in flight, and stores the answers
    in `cache`; `summary.answered` counts them."""

    def __init__(self, client: ChatClient, cache: ResponseCache, scheduler: Scheduler, failures: FailurePolicy,
                 summary: RunSummary, loop_rule: LoopRule | None) -> None:
        self.client = client
        self.cache = cache
        self.scheduler = scheduler
        self.failures = failures
        self.summary = summary
        self.loop_rule = loop_rule
        self._inflight: dict[str, asyncio.Future] = {}
        self._answered: set[str] = set()         # keys answered by the server in this run

    async def ask(self, sample: Sample, slots: asyncio.Semaphore) -> Completion | PromptTooLong | None:
        """The answer to `sample`'s request (sharing one HTTP call between identical requests in
        flight), sent holding one of its step's `slots` and one of the run's. None: it failed for
        good (counted by the failure policy, which raises UserError when the run must stop)."""
        key = sample.key
        shared = self._inflight.get(key)
        if shared is not None:
            return await asyncio.shield(shared)
        if key in self._answered:                # a twin of this sample was answered earlier in the run
            stored = self.cache.get(key)
            if stored is not None and cached_completion(stored) is not None:
                return cached_completion(stored)
        client = self.client
        future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            async with slots, self.scheduler.run_slots:     # the step's slot first: a waiting step holds no run slot
                completion = await client.complete(sample.body, sample.payload, self.loop_rule)
            self.cache.put(key, completion.to_json(), replace=sample.replace)
            self._answered.add(key)
            self.summary.answered += 1
            self.failures.server_answered()
            future.set_result(completion)
            return completion
        except RequestFailed as exc:
            if exc.kind == "prompt_too_long":
                self.failures.server_answered()     # the server answered: it works
                too_long = PromptTooLong(str(exc))
                future.set_result(too_long)
                return too_long
            future.set_result(None)
            if exc.kind == "fatal":
                raise self.failures.fatal(str(exc), client.key_hint) from None
            self.failures.failed(str(exc), exc.sent)
            return None
        except BaseException:
            if not future.done():
                future.cancel()
            raise
        finally:
            del self._inflight[key]
