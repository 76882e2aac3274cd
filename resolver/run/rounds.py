"""The adaptive rounds of API mode: a step's running tally and the rule that asks for
another round while its skill interval is too wide (docs/runner.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from resolver.stats import skill_interval

if TYPE_CHECKING:
    from resolver.config import Precision


# ================================================================ statistics per step
@dataclass
class Tally:
    """Outcome counts of one step so far (the inputs of the stopping rule)."""

    correct: int = 0
    incorrect: int = 0
    invalid: int = 0
    truncated: int = 0
    guess_sum: float = 0.0          # expected lucky guesses among untruncated samples

    def add(self, record: dict) -> None:
        if record["is_truncated"]:
            self.truncated += 1
            return
        self.guess_sum += float(record.get("guess_chance") or 0.0)
        if record["is_correct"]:
            self.correct += 1
        elif record["is_valid"]:
            self.incorrect += 1
        else:
            self.invalid += 1

    @property
    def untruncated(self) -> int:
        return self.correct + self.incorrect + self.invalid

    def excess(self) -> float:
        """Point estimate of the skill: excess accuracy (c - G) / (m - G), clipped to [0, 1]."""
        trials = self.untruncated - self.guess_sum
        return min(max((self.correct - self.guess_sum) / trials, 0.0), 1.0) if trials > 1e-12 else 0.0

    def skill_interval(self) -> tuple[float, float, bool]:
        """(low, high, below_chance): the calibrated 95% interval of the skill (mode C_I)."""
        return skill_interval(self.correct, self.untruncated, self.guess_sum)

    def margin(self) -> float:
        """Half-width of skill_interval: what the stopping rule compares with target_margin."""
        low, high, _ = self.skill_interval()
        return (high - low) / 2.0


def needs_another_round(tally: Tally, rounds_done: int, precision: Precision) -> bool:
    """The adaptive rule (docs/configs.md): more rounds until the margin is small enough.

    The margin is the half-width of the calibrated skill interval (C_I), the
    interval analyze.py shows, not docs/analyze.md: Wilson on guess-corrected counts,
    which is too narrow when guessing is possible (docs/decisions.md). A step with
    nothing left to measure (every sample truncated, or only guesses possible) has
    no margin to shrink and stops at maxrounds like any other; a below-chance step
    reads [0, 0] (margin 0) and stops.
    """
    if rounds_done >= precision.maxrounds:
        return False
    if tally.untruncated - tally.guess_sum <= 1e-12:
        return True
    return tally.margin() > precision.target_margin


class RoundRule(Protocol):
    """What RunLoop asks about rounds: a step's tally, and after each round whether to go on."""

    def tally(self, step: Any) -> Tally: ...

    async def more(self, step: Any, tally: Tally, rounds: int) -> bool: ...


class AdaptiveRounds:
    """The round rule of an ordinary run: each step on its own (needs_another_round).
    RunLoop asks a rule for a step's tally and, after each round, whether to go on;
    runner.py --against swaps in resolver.run.against.PairedStop."""

    def __init__(self, precision: Precision):
        self.precision = precision

    def tally(self, step: Any) -> Tally:
        return Tally()

    async def more(self, step: Any, tally: Tally, rounds: int) -> bool:
        return needs_another_round(tally, rounds, self.precision)
