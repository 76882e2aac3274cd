"""When do answers end? Discrete-time survival analysis over completion tokens.

Time is the number of completion tokens, cut into buckets of ``bucket_size``. Every
sample either *ends* inside a bucket -- correct, or incorrect (an invalid answer is
an answer that ended without being right, so it counts as incorrect) -- or is
*censored*: truncated samples hit the token limit, so all we know is that they had
not ended yet. Correct and incorrect are competing risks.

Per bucket j (n_j samples still at risk when it starts, d_j^c / d_j^i ending correct /
incorrect inside it, c_j censored inside it):

* hazard_correct = d_j^c / n_j, hazard_incorrect = d_j^i / n_j (cause-specific hazards)
* survival S_j = prod_{k <= j} (1 - (d_k^c + d_k^i) / n_k) (Kaplan-Meier, all causes)
* cumulative incidence CIF_j^c = sum_{k <= j} S_{k-1} * d_k^c / n_k (Aalen-Johansen),
  likewise for incorrect; CIF^c + CIF^i + S = 1 at every bucket.

Censored samples count as at risk in the bucket where they are censored (they were
still generating at its start), the usual Kaplan-Meier convention.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from resolver.core import UserError

CORRECT, INCORRECT, INVALID, TRUNCATED = 0, 1, 2, 3
DEFAULT_BUCKET_SIZE = 256


def hazard_table(completion_tokens: ArrayLike, outcomes: ArrayLike,
                 bucket_size: int = DEFAULT_BUCKET_SIZE) -> pd.DataFrame:
    """One row per token bucket from 0 to the longest sample (see the module docstring).

    Columns: bucket, start, end, at_risk, correct, incorrect, censored,
    hazard_correct, hazard_incorrect, hazard_any, survival, cif_correct,
    cif_incorrect.
    """
    if bucket_size <= 0:
        raise UserError(f"--bucket-size must be a positive number of tokens, got {bucket_size}")
    tokens = np.asarray(completion_tokens, dtype=np.int64)
    outcome = np.asarray(outcomes, dtype=np.int64)
    if tokens.shape != outcome.shape:
        raise ValueError("completion_tokens and outcomes differ in length")
    if tokens.size == 0:
        return pd.DataFrame(columns=_COLUMNS)
    bucket = np.maximum(tokens, 0) // bucket_size
    buckets = int(bucket.max()) + 1
    correct = np.bincount(bucket[outcome == CORRECT], minlength=buckets)
    incorrect = np.bincount(bucket[(outcome == INCORRECT) | (outcome == INVALID)], minlength=buckets)
    censored = np.bincount(bucket[outcome == TRUNCATED], minlength=buckets)
    leaving = correct + incorrect + censored
    at_risk = tokens.size - np.concatenate([[0], np.cumsum(leaving)[:-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        h_correct = np.where(at_risk > 0, correct / at_risk, 0.0)
        h_incorrect = np.where(at_risk > 0, incorrect / at_risk, 0.0)
    h_any = h_correct + h_incorrect
    survival = np.cumprod(1.0 - h_any)
    before = np.concatenate([[1.0], survival[:-1]])
    starts = np.arange(buckets) * bucket_size
    return pd.DataFrame({
        "bucket": np.arange(buckets), "start": starts, "end": starts + bucket_size,
        "at_risk": at_risk, "correct": correct, "incorrect": incorrect, "censored": censored,
        "hazard_correct": h_correct, "hazard_incorrect": h_incorrect, "hazard_any": h_any,
        "survival": survival,
        "cif_correct": np.cumsum(before * h_correct), "cif_incorrect": np.cumsum(before * h_incorrect),
    })


_COLUMNS = ["bucket", "start", "end", "at_risk", "correct", "incorrect", "censored",
            "hazard_correct", "hazard_incorrect", "hazard_any", "survival", "cif_correct", "cif_incorrect"]


def samples_from_points(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate the per-sample completion_tokens / outcome arrays of some points."""
    tokens = [np.asarray(t, dtype=np.int64) for t in points["completion_tokens"] if t is not None]
    outcome = [np.asarray(o, dtype=np.int64) for o in points["outcome"] if o is not None]
    if not tokens:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(tokens), np.concatenate(outcome)


def hazard_by(points: pd.DataFrame, split_by: Sequence[str], bucket_size: int = DEFAULT_BUCKET_SIZE,
              series_by: str | None = None) -> dict[tuple, dict[object, pd.DataFrame]]:
    """{split key tuple: {series value: hazard_table}} for points carrying the dimension columns.

    ``split_by`` columns make separate results (files); ``series_by`` (optional) makes
    one curve per value inside each result, else a single series named "all".
    """
    out: dict[tuple, dict[object, pd.DataFrame]] = {}
    groups = points.groupby(list(split_by), sort=True, dropna=False) if split_by else [((), points)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        series = part.groupby(series_by, sort=True) if series_by else [("all", part)]
        out[key] = {name: hazard_table(*samples_from_points(rows), bucket_size) for name, rows in series}
    return out


def median_end_tokens(table: pd.DataFrame) -> float | None:
    """First bucket end where all-cause survival drops to one half (None if it never does)."""
    below = table.index[table["survival"] <= 0.5]
    return float(table.loc[below[0], "end"]) if len(below) else None
