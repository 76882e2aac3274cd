"""What API mode sends next (resolver/run/scheduler.py; docs/runner.md, *Concurrency*): steps
open in order while fewer than P x T samples are queued or fewer than T steps are open.

The steps here are stand-ins that queue a round of samples and finish them when the test says
so; the expected openings are worked out by hand from that rule.
"""
from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace

import pytest

from resolver.core import UserError
from resolver.run.scheduler import Scheduler, ordered_steps
from tests.support.runner import options


class Steps:
    """Stand-in steps: each queues `round_size` samples when it opens, then waits for the test
    to finish them (`finish(name)`)."""

    def __init__(self, scheduler: Scheduler, round_size: int):
        self.scheduler, self.round_size = scheduler, round_size
        self.opened: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}

    async def start(self, name: str) -> None:
        self.scheduler.samples_queued(self.round_size)
        self.opened.append(name)
        gate = self.gates.setdefault(name, asyncio.Event())
        await gate.wait()
        for _ in range(self.round_size):
            self.scheduler.sample_finished()

    def finish(self, name: str) -> None:
        self.gates.setdefault(name, asyncio.Event()).set()


async def settle() -> None:
    """Let every ready task run until nothing changes (no clock involved)."""
    for _ in range(50):
        await asyncio.sleep(0)


# (P, T, round size, steps, then: which step finishes -> the steps open so far), worked out by hand
CASES = {
    # 8 in flight, rounds of 3: a, b (6 queued < 8), c (9): three open; a finishes (6 < 8): d (9); b: e
    "open while the pool has room": (4, 2, 3, "abcde", [(None, "abc"), ("a", "abcd"), ("b", "abcde")]),
    # rounds of 4: a and b queue exactly 8 = P x T, so c waits until a finishes
    "a pool filled exactly opens no more": (4, 2, 4, "abc", [(None, "ab"), ("a", "abc")]),
    # 3 in flight; a round of 5 fills the pool at once, yet T = 3 steps open; when b finishes
    # 10 are queued (no room), but only 2 steps are open: d opens
    "at least T steps open": (1, 3, 5, "abcd", [(None, "abc"), ("b", "abcd")]),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_steps_open_in_order_while_the_pool_has_room(case):
    parallel, threads, round_size, names, script = case

    async def main():
        scheduler = Scheduler(options(parallel, threads))
        steps = Steps(scheduler, round_size)
        tasks: set[asyncio.Task] = set()
        run = asyncio.create_task(scheduler.run_steps(list(names), steps.start, tasks))
        for finished, expected in script:
            if finished:
                steps.finish(finished)
            await settle()
            assert steps.opened == list(expected), finished
        assert not run.done()
        for name in names:
            steps.finish(name)
        await asyncio.wait_for(run, 10)
        assert scheduler.queued == 0 and not tasks

    asyncio.run(main())


def test_a_step_that_stops_the_run_raises_from_run_steps():
    async def main():
        scheduler = Scheduler(options(2, 1))

        async def start(name: str) -> None:
            if name == "b":
                raise UserError("stopping: the first 10 requests all failed")

        with pytest.raises(UserError, match="first 10"):
            await asyncio.wait_for(scheduler.run_steps(list("abc"), start, set()), 10)

    asyncio.run(main())


def test_steps_run_in_config_order_or_shuffled_by_seed():
    experiment = SimpleNamespace(steps=list(range(20)))
    in_order = ordered_steps(experiment, SimpleNamespace(shuffle=False, seed=42))
    assert in_order == list(range(20))
    shuffled = ordered_steps(experiment, SimpleNamespace(shuffle=True, seed=42))
    expected = list(range(20))
    random.Random(42).shuffle(expected)            # docs/runner.md: the order shuffled by --seed
    assert shuffled == expected != in_order
    assert ordered_steps(experiment, SimpleNamespace(shuffle=True, seed=7)) != shuffled
    assert experiment.steps == list(range(20))     # the experiment's own list is left alone
