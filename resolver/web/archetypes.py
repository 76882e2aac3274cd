"""Archetypes: a one-word character of an eval's radar, with a one-line reason.

The rules read only the numbers the spiderweb shows (per-group accuracy, truncation share,
mean completion tokens) plus, for context, the same numbers of the other evals in the
dataset and the eval's accuracy per difficulty tier. They are tried in this order and the
first that fits wins, because a model that mostly hits the token limit is best described by
that, even if its profile is also uneven:

1. truncation-limited: on average at least TRUNCATION_LIMITED of its answers are cut off by
   the token limit, or some group loses TRUNCATION_LIMITED_WORST or more.
2. collapse: good on the easiest tier (accuracy >= COLLAPSE_EASY_MIN) but the hardest tier
   keeps at most COLLAPSE_KEEP of it.
3. over-thinker: spends at least OVERTHINK_TOKENS x the dataset's median tokens while its
   mean accuracy is not above the dataset's median accuracy.
4. specialist: best and worst group differ by SPECIALIST_SPREAD or more.
5. balanced: every group within BALANCED_SPREAD of the others (qualified as uniformly weak
   below WEAK_BELOW or uniformly strong from STRONG_FROM).
6. uneven: none of the above (a spread between the two limits).

Accuracy here is the interval center of the mode the app shows (C_P by default).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

TRUNCATION_LIMITED = 0.10
TRUNCATION_LIMITED_WORST = 0.25
COLLAPSE_EASY_MIN = 0.60
COLLAPSE_KEEP = 0.50
OVERTHINK_TOKENS = 1.5
SPECIALIST_SPREAD = 0.35
BALANCED_SPREAD = 0.20
WEAK_BELOW = 0.35          # a balanced profile entirely below this is called uniformly weak
STRONG_FROM = 0.75         # ... entirely at or above this, uniformly strong


@dataclass(frozen=True)
class Archetype:
    name: str
    reason: str


def _fmt(value: float) -> str:
    return f"{value:.2f}".replace("0.", ".", 1) if 0 <= value < 1 else f"{value:.2f}"


def classify(profile: pd.DataFrame, dataset: pd.DataFrame | None = None, tiers: pd.DataFrame | None = None) -> Archetype:
    """The archetype of one eval.

    profile: that eval's rows of the spiderweb table (group, center, truncated_ratio, tokens_mean,
    samples). dataset: the whole spiderweb table (all evals) for the median context.
    tiers: that eval's accuracy per tier, columns tier_order (0 easiest) and center; optional.
    """
    if profile.empty:
        return Archetype("no data", "this eval has no points in the selection")
    checks = (_truncation_limited, lambda p, d, t: _collapse(t), _over_thinker, _spread_based)
    for check in checks:
        found = check(profile, dataset, tiers)
        if found is not None:
            return found
    raise AssertionError("the spread rule always answers")


def _truncation_limited(profile, _dataset, _tiers):
    weights = profile["samples"].to_numpy(dtype=float)
    share = float(np.average(profile["truncated_ratio"], weights=weights)) if weights.sum() > 0 else 0.0
    worst = profile.loc[profile["truncated_ratio"].idxmax()]
    if share >= TRUNCATION_LIMITED or worst["truncated_ratio"] >= TRUNCATION_LIMITED_WORST:
        return Archetype("truncation-limited",
                         f"{share:.0%} of its answers hit the token limit (worst: {worst['group']} at "
                         f"{worst['truncated_ratio']:.0%}), so its accuracy is capped by length, not reasoning")
    return None


def _collapse(tiers):
    if tiers is None or len(tiers) < 2:
        return None
    ordered = tiers.sort_values("tier_order")
    easy, hard = ordered.iloc[0], ordered.iloc[-1]
    if easy["center"] >= COLLAPSE_EASY_MIN and hard["center"] <= COLLAPSE_KEEP * easy["center"]:
        return Archetype("collapse", f"{_fmt(easy['center'])} on {easy['tier']} falls to {_fmt(hard['center'])} "
                                     f"on {hard['tier']}: it falls apart as difficulty grows")
    return None


def _over_thinker(profile, dataset, _tiers):
    if dataset is None or dataset.empty:
        return None
    per_eval = dataset.groupby("eval_id").agg(center=("center", "mean"), tokens=("tokens_mean", "mean"))
    median_tokens, median_center = per_eval["tokens"].median(), per_eval["center"].median()
    tokens, center = profile["tokens_mean"].mean(), profile["center"].mean()
    if not (median_tokens > 0) or np.isnan(tokens):
        return None
    if tokens >= OVERTHINK_TOKENS * median_tokens and center <= median_center:
        return Archetype("over-thinker", f"uses {tokens / median_tokens:.1f}x the median tokens ({tokens:.0f}) "
                                         f"for a mean accuracy of {_fmt(center)} (median {_fmt(median_center)})")
    return None


def _spread_based(profile, _dataset, _tiers):
    best = profile.loc[profile["center"].idxmax()]
    worst = profile.loc[profile["center"].idxmin()]
    spread = best["center"] - worst["center"]
    if len(profile) >= 2 and spread >= SPECIALIST_SPREAD:
        return Archetype("specialist", f"strong on {best['group']} ({_fmt(best['center'])}) but weak on "
                                       f"{worst['group']} ({_fmt(worst['center'])})")
    if spread < BALANCED_SPREAD:
        level = (" (uniformly weak)" if best["center"] < WEAK_BELOW else
                 " (uniformly strong)" if worst["center"] >= STRONG_FROM else "")
        return Archetype("balanced", f"every group between {_fmt(worst['center'])} and {_fmt(best['center'])}{level}")
    return Archetype("uneven", f"groups range from {_fmt(worst['center'])} ({worst['group']}) to "
                               f"{_fmt(best['center'])} ({best['group']}) without one clear strength")
