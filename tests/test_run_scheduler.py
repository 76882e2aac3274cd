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


def test_steps_open_in_order_while_the_pool_has_room():
    """P = 4, T = 2: 8 in flight. Rounds of 3: a, b (6 queued < 8), c (9 >= 8): three open.
    a finishes (6 < 8): d opens (9). b finishes: e opens. Then the rest finish."""
    async def main():
        scheduler = Scheduler(parallel=4, threads=2)
        steps = Steps(scheduler, round_size=3)
        tasks: set[asyncio.Task] = set()
        run = asyncio.create_task(scheduler.run_steps(list("abcde"), steps.start, tasks))
        await settle()
        assert steps.opened == ["a", "b", "c"] and scheduler.queued == 9
        steps.finish("a")
        await settle()
        assert steps.opened == ["a", "b", "c", "d"] and scheduler.queued == 9
        steps.finish("b")
        await settle()
        assert steps.opened == list("abcde")
        assert not run.done()
        for name in "cde":
            steps.finish(name)
        await asyncio.wait_for(run, 10)
        assert scheduler.queued == 0 and not tasks

    asyncio.run(main())


def test_a_pool_filled_exactly_opens_no_more_steps():
    """P = 4, T = 2, rounds of 4: a and b queue 8 = P x T; c waits until a sample finishes."""
    async def main():
        scheduler = Scheduler(parallel=4, threads=2)
        steps = Steps(scheduler, round_size=4)
        run = asyncio.create_task(scheduler.run_steps(list("abc"), steps.start, set()))
        await settle()
        assert steps.opened == ["a", "b"]
        steps.finish("a")
        await settle()
        assert steps.opened == ["a", "b", "c"]
        steps.finish("b")
        steps.finish("c")
        await asyncio.wait_for(run, 10)

    asyncio.run(main())


def test_at_least_threads_steps_open_even_when_one_round_fills_the_pool():
    """P = 1, T = 3: 3 in flight; a round of 5 fills the pool at once, yet T = 3 steps open."""
    async def main():
        scheduler = Scheduler(parallel=1, threads=3)
        steps = Steps(scheduler, round_size=5)
        run = asyncio.create_task(scheduler.run_steps(list("abcd"), steps.start, set()))
        await settle()
        assert steps.opened == ["a", "b", "c"]
        steps.finish("b")                      # 10 queued: still no room, but only 2 steps are open
        await settle()
        assert steps.opened == list("abcd")
        for name in "acd":
            steps.finish(name)
        await asyncio.wait_for(run, 10)

    asyncio.run(main())


def test_a_step_that_stops_the_run_raises_from_run_steps():
    async def main():
        scheduler = Scheduler(parallel=2, threads=1)

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
