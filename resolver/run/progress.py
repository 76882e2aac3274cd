"""What API mode shows while it runs (docs/runner.md, *Progress*): a bar of samples done of
samples planned (the plan grows when a step needs another round), its postfix (`tok/s`,
`cached`, `retries`, `failed`), and one line per finished step.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from resolver.run.report import Reporter
    from resolver.run.rounds import Tally

__all__ = ["POSTFIX_EVERY_S", "Progress", "step_line"]

POSTFIX_EVERY_S = 0.5        # the postfix is formatted at most this often (it costs CPU per sample)


def step_line(name: str, rounds: int, tally: Tally) -> str:
    """The line a finished step prints: rounds, samples, excess accuracy and its 95% interval."""
    low, high, below = tally.skill_interval()
    interval = "below chance" if below else f"95% interval {low:.2f}-{high:.2f}"
    return (f"{name}: {rounds} round(s), {tally.untruncated + tally.truncated} samples, "
            f"excess accuracy {tally.excess():.2f} ({interval})")


class Progress:
    """The bar (from `reporter.bar`; hidden unless `shown`) and the per-step lines (unless not
    `notes`). `counts()` gives (retries, failed) for the postfix; `clock` is time.monotonic."""

    def __init__(self, reporter: Reporter, model: str, counts: Callable[[], tuple[int, int]], *,
                 shown: bool = True, notes: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        self.reporter = reporter
        self.notes = notes
        self.bar = reporter.bar(total=0, unit="sample", desc=f"{model}", disable=not shown, smoothing=0.1)
        self.planned = 0             # samples the bar expects (rounds after the first add theirs)
        self.tokens = 0              # completion tokens of the records made so far
        self.cached = 0              # of those records, answered from the cache
        self._counts = counts
        self._clock = clock
        self._started = clock()
        self._last_postfix = 0.0

    def plan(self, samples: int) -> None:
        """The run starts: every step's first round."""
        self.planned = samples
        self.bar.total = samples

    def plan_more(self, samples: int) -> None:
        """A step starts another round of `samples`."""
        self.planned += samples
        self.bar.total = self.planned
        self.bar.refresh()

    def record_made(self, record: dict, cached: bool) -> None:
        self.tokens += int((record.get("usage") or {}).get("completion_tokens") or 0)
        self.cached += cached

    def sample_done(self) -> None:
        """A sample is finished, whatever came of it."""
        self.bar.update(1)
        now = self._clock()
        if now - self._last_postfix < POSTFIX_EVERY_S or self.bar.disable:
            return
        self._last_postfix = now
        self.bar.set_postfix_str(self.postfix(now), refresh=False)

    def postfix(self, now: float) -> str:
        elapsed = max(now - self._started, 1e-9)
        retries, failed = self._counts()
        return f"tok/s={self.tokens / elapsed:.0f} cached={self.cached} retries={retries} failed={failed}"

    def step_done(self, name: str, rounds: int, tally: Tally) -> None:
        if self.notes:
            self.reporter.note(step_line(name, rounds, tally))

    def close(self) -> None:
        self.bar.close()
