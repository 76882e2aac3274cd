"""What API mode sends next: the order of the steps, when the next step opens, and how many
requests may be in flight (docs/runner.md, *Concurrency*).

`--parallel P` is the requests of one step in flight, `--threads T` the steps: at most P x T
requests over the run. A step's round is often smaller than P, so steps are opened while fewer
than P x T samples are queued (and while fewer than T are open); a request waits for one of its
step's P slots first, then for one of the run's P x T, so a waiting step holds no run slot.
"""
from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any, Callable, Coroutine, TypeVar

if TYPE_CHECKING:
    from resolver.run.experiment import Experiment, RunOptions

__all__ = ["Scheduler", "ordered_steps"]

Item = TypeVar("Item")


def ordered_steps(experiment: Experiment, opts: RunOptions) -> list:
    """Config order, or shuffled by --seed (the default: spreads easy and hard work)."""
    steps = list(experiment.steps)
    if opts.shuffle:
        random.Random(opts.seed).shuffle(steps)
    return steps


class Scheduler:
    """The run's request pool: opens steps in order while it has room, and holds the P x T
    run slots a request takes (with one of its step's `step_slots()`) while it is sent."""

    def __init__(self, opts: RunOptions) -> None:
        self.parallel = opts.parallel
        self.min_steps = max(1, opts.threads)
        self.in_flight = opts.in_flight              # P x T
        self.run_slots = asyncio.Semaphore(self.in_flight)
        self.queued = 0                              # samples started and not finished
        self._wake = asyncio.Event()

    def step_slots(self) -> asyncio.Semaphore:
        """A new step's P slots: `async with step_slots, scheduler.run_slots:` sends one request."""
        return asyncio.Semaphore(self.parallel)

    def samples_queued(self, n: int) -> None:
        """A step started a round of `n` samples."""
        self.queued += n

    def sample_finished(self) -> None:
        """One sample is done (written, failed or missing): room for another step, perhaps."""
        self.queued -= 1
        if self.queued < self.in_flight:
            self._wake.set()

    async def run_steps(self, steps: list[Item], start: Callable[[Item], Coroutine[Any, Any, None]],
                        tasks: set[asyncio.Task]) -> None:
        """Run `start(step)` for every step, in order, as a task in `tasks`: a step opens while
        fewer than `min_steps` are open or fewer than P x T samples are queued. Returns when every
        task has finished; a task's exception (a UserError that stops the run) is raised here."""
        pending = steps[::-1]                        # pop() from the end keeps the order
        while pending or tasks:
            while pending and (len(tasks) < self.min_steps or self.queued < self.in_flight):
                tasks.add(asyncio.create_task(start(pending.pop())))
                await asyncio.sleep(0)               # let it queue its first round
            self._wake.clear()
            wake = asyncio.create_task(self._wake.wait())
            done, _ = await asyncio.wait(tasks | {wake}, return_when=asyncio.FIRST_COMPLETED)
            wake.cancel()
            for task in done - {wake}:
                tasks.discard(task)
                task.result()                        # re-raise UserError (e.g. abort)
