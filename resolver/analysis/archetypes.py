"""Archetypes: a one-word character of an eval's radar, with a one-line reason.

The rules read only the numbers the spiderweb shows (per-group accuracy interval, truncated
share, mean completion tokens), the same numbers of the other evals of the dataset (medians,
for context) and the eval's accuracy interval per difficulty tier. A shape (collapse,
specialist) needs evidence: the two intervals compared must not overlap, so two evals with
near-identical numbers cannot land on different sides of a cliff unless their intervals
say so. Tried in this order; the first that fits wins:

1. over-thinker: mean tokens >= OVERTHINK_TOKENS x the dataset's median eval while its mean
   accuracy is at or below the median eval's (it spends far more for no more accuracy;
   truncation, when there is some, is named in the reason: looping into the limit is how
   over-thinking usually shows).
2. truncation-limited: at least TRUNCATION_LIMITED of its answers cut off by the token limit
   (samples-weighted), or some group at TRUNCATION_LIMITED_WORST or more.
3. collapse: easiest tier accuracy >= COLLAPSE_EASY_MIN and the hardest tier keeps at most
   COLLAPSE_KEEP of it, with the two tiers' intervals apart.
4. specialist: best and worst group differ by >= SPECIALIST_SPREAD with their intervals apart.
5. balanced: everything else, qualified by its level: "strong all-round" (mean accuracy >=
   STRONG_FROM), "weak all-round" (below WEAK_BELOW), "mid-level all-round" between.

Accuracy here is the interval (center, margin) of the mode the app shows (C_P by default).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

OVERTHINK_TOKENS = 2.0
TRUNCATION_LIMITED = 0.10
TRUNCATION_LIMITED_WORST = 0.25
COLLAPSE_EASY_MIN = 0.50
COLLAPSE_KEEP = 0.50
SPECIALIST_SPREAD = 0.30
WEAK_BELOW = 0.35
STRONG_FROM = 0.70


@dataclass(frozen=True)
class Archetype:
    name: str
    reason: str


def _fmt(value: float) -> str:
    return f"{value:.2f}".replace("0.", ".", 1) if 0 <= value < 1 else f"{value:.2f}"


def _margin(row: pd.Series) -> float:
    value = row.get("margin", 0.0) if hasattr(row, "get") else 0.0
    return 0.0 if value is None or pd.isna(value) else float(value)


def _apart(high_row: pd.Series, low_row: pd.Series) -> bool:
    """True when high_row's interval lies entirely above low_row's."""
    return high_row["center"] - _margin(high_row) > low_row["center"] + _margin(low_row)


def dataset_medians(dataset: pd.DataFrame | None) -> tuple[float, float] | None:
    """(median mean-tokens, median mean-accuracy) over the evals of a spiderweb table."""
    if dataset is None or dataset.empty:
        return None
    per_eval = dataset.groupby("eval_id").agg(center=("center", "mean"), tokens=("tokens_mean", "mean"))
    return float(per_eval["tokens"].median()), float(per_eval["center"].median())


def classify(profile: pd.DataFrame, dataset: pd.DataFrame | tuple | None = None,
             tiers: pd.DataFrame | None = None) -> Archetype:
    """The archetype of one eval.

    profile: that eval's rows of the spiderweb table (group, center, margin, truncated_ratio,
    tokens_mean, samples). dataset: the whole spiderweb table (all evals) for the medians.
    tiers: that eval's accuracy per tier, columns tier, tier_order (0 easiest), center, margin; optional.
    """
    if profile.empty:
        return Archetype("no data", "this eval has no points in the selection")
    for check in (_over_thinker, _truncation_limited, _collapse, _specialist):
        found = check(profile, dataset, tiers)
        if found is not None:
            return found
    return _balanced(profile)


def _truncation_share(profile: pd.DataFrame) -> float:
    weights = profile["samples"].to_numpy(dtype=float)
    return float(np.average(profile["truncated_ratio"], weights=weights)) if weights.sum() > 0 else 0.0


def _over_thinker(profile: pd.DataFrame, dataset: pd.DataFrame | tuple | None,
                  _tiers: pd.DataFrame | None) -> Archetype | None:
    medians = dataset if isinstance(dataset, tuple) else dataset_medians(dataset)
    if medians is None:
        return None
    median_tokens, median_center = medians
    tokens, center = profile["tokens_mean"].mean(), profile["center"].mean()
    if not (median_tokens > 0) or np.isnan(tokens):
        return None
    if tokens >= OVERTHINK_TOKENS * median_tokens and center <= median_center:
        share = _truncation_share(profile)
        cut = f"; {share:.0%} of its answers run into the token limit" if share > 0.02 else ""
        return Archetype("over-thinker", f"uses {tokens / median_tokens:.1f}x the median tokens ({tokens:.0f}) "
                                         f"for a mean accuracy of {_fmt(center)}, not above the median "
                                         f"({_fmt(median_center)}){cut}")
    return None


def _truncation_limited(profile: pd.DataFrame, _dataset: pd.DataFrame | tuple | None,
                        _tiers: pd.DataFrame | None) -> Archetype | None:
    share = _truncation_share(profile)
    worst = profile.nlargest(1, "truncated_ratio").iloc[0]
    if share >= TRUNCATION_LIMITED or worst["truncated_ratio"] >= TRUNCATION_LIMITED_WORST:
        return Archetype("truncation-limited",
                         f"{share:.0%} of its answers hit the token limit (worst: {worst['group']} at "
                         f"{worst['truncated_ratio']:.0%}), so its accuracy is capped by length, not reasoning")
    return None


def _collapse(_profile: pd.DataFrame, _dataset: pd.DataFrame | tuple | None,
              tiers: pd.DataFrame | None) -> Archetype | None:
    if tiers is None or len(tiers) < 2:
        return None
    ordered = tiers.sort_values("tier_order")
    easy, hard = ordered.iloc[0], ordered.iloc[-1]
    if (easy["center"] >= COLLAPSE_EASY_MIN and hard["center"] <= COLLAPSE_KEEP * easy["center"]
            and _apart(easy, hard)):
        return Archetype("collapse", f"{_fmt(easy['center'])} on {easy['tier']} falls to {_fmt(hard['center'])} "
                                     f"on {hard['tier']}: it falls apart as difficulty grows")
    return None


def _specialist(profile: pd.DataFrame, _dataset: pd.DataFrame | tuple | None,
                _tiers: pd.DataFrame | None) -> Archetype | None:
    if len(profile) < 2:
        return None
    best = profile.nlargest(1, "center").iloc[0]
    worst = profile.nsmallest(1, "center").iloc[0]
    if best["center"] - worst["center"] >= SPECIALIST_SPREAD and _apart(best, worst):
        return Archetype("specialist", f"best on {best['group']} ({_fmt(best['center'])}), far weaker on "
                                       f"{worst['group']} ({_fmt(worst['center'])})")
    return None


def _balanced(profile: pd.DataFrame) -> Archetype:
    best = profile.nlargest(1, "center").iloc[0]
    worst = profile.nsmallest(1, "center").iloc[0]
    mean = float(profile["center"].mean())
    level = ("strong all-round" if mean >= STRONG_FROM else "weak all-round" if mean < WEAK_BELOW
             else "mid-level all-round")
    return Archetype("balanced", f"{level}: mean {_fmt(mean)}, every group between {_fmt(worst['center'])} "
                                 f"({worst['group']}) and {_fmt(best['center'])} ({best['group']}) with no clear "
                                 "strength or collapse")
