"""Token utilisation (analyze.py tokens): mean prompt and completion tokens per
(eval, group), and mean completion tokens of correct / incorrect / invalid /
truncated answers — from the token sums PointsDB keeps per outcome. Samples the
sampler's stop_loops closed in a loop count at their max_tokens in those means; the
loops stopped and the tokens that saved are their own columns (docs/analyze.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from resolver.pointsdb import COUNTER_COLUMNS

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

TOKEN_MEAN_COLUMNS = {
    "prompt_tokens_mean": ("prompt_tokens", None),
    "completion_tokens_mean": ("completion_tokens_sum", None),
    "correct_tokens_mean": ("tokens_correct", "correct"),
    "incorrect_tokens_mean": ("tokens_incorrect", "incorrect"),
    "invalid_tokens_mean": ("tokens_invalid", "invalid"),
    "truncated_tokens_mean": ("tokens_truncated", "truncated"),
}


def _ratio(numerator: ArrayLike, denominator: ArrayLike) -> np.ndarray:
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    return np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)


def token_means(agg: pd.DataFrame) -> pd.DataFrame:
    """Token means for each row of summed counters; NaN where nothing was counted.

    Prompt and completion means are per sample (all outcomes); the per-outcome
    means divide each outcome's token sum by that outcome's count.
    """
    samples = agg[list(COUNTER_COLUMNS)].sum(axis=1)
    columns = {}
    for name, (total, count) in TOKEN_MEAN_COLUMNS.items():
        columns[name] = _ratio(agg[total], samples if count is None else agg[count])
    return pd.DataFrame(columns, index=agg.index)


def compute_tokens(agg: pd.DataFrame, dims: list) -> pd.DataFrame:
    """One row per (eval, group): dims, points, samples and the token means."""
    out = agg[list(dims) + ["points"]].copy()
    out["samples"] = agg[list(COUNTER_COLUMNS)].sum(axis=1).astype("int64")
    out = out.join(token_means(agg))
    for name in ("loops_stopped", "tokens_saved"):
        out[name] = agg[name].astype("int64") if name in agg else 0
    return out.reset_index(drop=True)
