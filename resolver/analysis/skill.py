"""Evidence of skill above guessing: the one rule every ranking applies.

A model that only guesses (or answers below chance) gets a small but nonzero
ReasonScore from the score floor and the Wilson upper ends; with very short answers
its score/token can then beat real reasoners. So every ordering the toolkit offers
(analyze.py scores / rank / pairwise, the leaderboard's rank-by) puts the series
that show *evidence of skill* before those that do not, and marks the latter; the
numbers themselves are unchanged.

The rule (docs/statistics.md, "Evidence of skill"): a series shows evidence of skill
when at least one of its cells has a C_I lower bound above 0 -- the continuity-
corrected Wilson lower end of its answered samples lies above the cell's guess
chance -- where the bound's z is Bonferroni-corrected for the number of cells the
series has (one-sided family-wise level SKILL_ALPHA). A model that only guesses
therefore shows "evidence" in at most about 2.5% of datasets, however many cells it
has; without the correction a 40-cell guesser would pass more often than not.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from resolver import stats

if TYPE_CHECKING:
    import numpy as np

SKILL_MODE = "C_I"          # skill on answered samples: truncation neither helps nor hides skill
SKILL_ALPHA = 0.025         # one-sided, family-wise over a series' cells (the upper tail of a 95% interval)
NO_SKILL_MARK = "†"
NO_SKILL_NOTE = (f"{NO_SKILL_MARK} = no evidence of skill above guessing: no cell's 95% lower bound (C_I, "
                 "Bonferroni-corrected over the model's cells) is above its guess chance; such models are ranked "
                 "after every model with evidence, whatever the sort (docs/statistics.md).")


def skill_z(cells: int) -> float:
    """z of the one-sided bound at family-wise level SKILL_ALPHA over `cells` cells (1.96 for one)."""
    from scipy.special import ndtri

    return float(-ndtri(SKILL_ALPHA / max(int(cells), 1)))


def cell_skill_bounds(counts: pd.DataFrame, cells: int) -> np.ndarray:
    """The C_I lower bound (0 = no evidence) of each row of summed counters, at skill_z(cells)."""
    successes, trials, offset, scale = stats.mode_map(counts, SKILL_MODE)
    low, _, _ = stats.mapped_interval(successes, trials, offset, scale, skill_z(cells))
    return low


def skill_evidence(counts: pd.DataFrame, series: str = "eval_id") -> dict:
    """{series value: True when at least one of its rows (cells) shows skill above guessing}.

    `counts` has one row per cell (e.g. eval x tier x task) with the summed counters of
    resolver.stats (correct, incorrect, invalid, truncated, guess_sum).
    """
    evidence: dict[object, bool] = {}
    if counts is None or counts.empty:
        return evidence
    for name, part in counts.groupby(series, sort=False, dropna=False):
        name = name[0] if isinstance(name, tuple) else name
        evidence[name] = bool((cell_skill_bounds(part, len(part)) > 0).any())
    return evidence


def skilled_first_key(has_skill: bool) -> int:
    """Leading sort key: series with evidence of skill (0) before those without (1)."""
    return 0 if has_skill else 1


def marked(name: object, has_skill: bool) -> str:
    """A display name, with NO_SKILL_MARK appended when the series shows no evidence of skill."""
    return str(name) if has_skill else f"{name} {NO_SKILL_MARK}"
