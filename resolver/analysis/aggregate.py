"""The raw aggregated table (analyze.py aggregate): summed counters per
(split, facet, series) with the chosen mode's interval, optionally all six modes
side by side, the raw counters and token means."""
from __future__ import annotations

import pandas as pd

from resolver import stats
from resolver.analysis.token_usage import token_means


def compute_aggregate(agg: pd.DataFrame, dims: list, mode: str = stats.DEFAULT_MODE, compare_modes: bool = False,
                      raw_counters: bool = False, tokens: bool = False) -> pd.DataFrame:
    """One row per group of `dims` (the columns `agg` was aggregated by).

    Columns: dims, points, samples, center, margin, below_chance (of `mode`),
    truncated_ratio, invalid_ratio; with compare_modes <MODE>_center/_margin/_below_chance
    for all six; with raw_counters n_u, n_t, n_e, g, g_all; with tokens the token means
    of tokens.token_means.
    """
    frame = stats.add_statistics(agg, mode=mode)
    out = frame[list(dims) + ["points", "samples", "center", "margin", "below_chance", "truncated_ratio",
                                    "invalid_ratio"]].copy()
    if compare_modes:
        out = out.join(stats.compare_modes(frame))
    if raw_counters:
        out["n_u"] = frame["untruncated"].astype("int64")
        out["n_t"] = frame["truncated"].astype("int64")
        out["n_e"] = frame["correct"].astype("int64")
        out["g"] = frame["guess_sum"].astype(float)
        out["g_all"] = stats.guess_sum_all(frame)       # recorded, or the documented estimate
    if tokens:
        out = out.join(token_means(frame))
    out["samples"] = out["samples"].astype("int64")
    return out.reset_index(drop=True)
