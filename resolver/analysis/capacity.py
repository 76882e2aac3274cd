"""Effective capacity: how large a problem a model still solves, and at what budget.

Two views (mutually exclusive on the command line):

* **frontier** -- accuracy against a size parameter (``params.num_rows`` by default)
  with a fitted logistic in log-size,
  ``accuracy(x) = 1 / (1 + exp(slope * (ln x - ln x50)))``,
  fitted by ``scipy.optimize.curve_fit`` to the guess-corrected accuracy of each size,
  weighted by its Wilson margin. ``x50`` is the size at which accuracy falls to 50%.
  Log-size because difficulty knobs grow geometrically (10, 20, 40, 80 rows) and the
  curve is then symmetric.
* **peak** -- for every ``manifold.target_tokens`` budget: the mean size at that
  budget, its accuracy, the *effective capacity* = (lower end of the accuracy
  interval) x size -- the amount of problem we are confident the model handles; the
  lower end, not the center, because a Wilson center never reaches 0 and times a
  huge size would invent capacity from nothing -- and whether the accuracy center is
  still above ``threshold``.
  ``capacity`` = the largest size whose accuracy stays above the threshold; the
  *peak* is the budget where effective capacity is highest -- beyond it, longer
  inputs cost more accuracy than they add size.

  A dataset whose size task is a plain grid (r12's tables) has no ``target_tokens``;
  there the budget is derived from what every point measured: ``prompt_budget`` = the
  power of two at or above the point's mean prompt tokens per sample -- the smallest
  budget (1024, 2048, ...) its prompts fit in, the same meaning ``target_tokens`` has
  for a calibrated task (docs/decisions.md, "capacity --peak on a grid").
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.optimize import OptimizeWarning, curve_fit

from resolver.core import UserError
from resolver.stats import SUMMED_COLUMNS, Z95, add_statistics

if TYPE_CHECKING:
    from resolver.pointsdb import FiltersLike, PointsDB

DEFAULT_SIZE_PARAM = "params.num_rows"
DEFAULT_THRESHOLD = 0.5
TARGET_DIM = "manifold.target_tokens"
PROMPT_BUDGET = "prompt_budget"   # the derived budget column (see the module docstring)
MIN_FIT_SIZES = 3          # a logistic has two parameters; fit only with 3+ sizes
MIN_SIGMA = 0.01           # floor on the weight denominators (0-width intervals at 0 / 1)


def logistic(log_size: np.ndarray | float, log_x50: float, slope: float) -> np.ndarray | float:
    """Falling logistic in log-size: 1 at small sizes, 0.5 at x50, 0 at large sizes."""
    return 1.0 / (1.0 + np.exp(np.clip(slope * (log_size - log_x50), -500, 500)))


def fit_logistic(sizes: ArrayLike, accuracy: ArrayLike,
                 sigma: ArrayLike | None = None) -> dict:
    """Fit `logistic` to (size, accuracy); returns x50, slope, their standard errors, r2.

    Sizes must be positive. With fewer than MIN_FIT_SIZES distinct sizes, or when
    the optimiser fails, the result has ``fitted: False`` and NaN numbers.
    """
    x = np.asarray(sizes, dtype=float)
    y = np.clip(np.asarray(accuracy, dtype=float), 0.0, 1.0)
    failed = {"fitted": False, "x50": math.nan, "slope": math.nan, "x50_low": math.nan,
              "x50_high": math.nan, "r2": math.nan}
    if len(np.unique(x)) < MIN_FIT_SIZES or np.any(x <= 0):
        return failed
    lx = np.log(x)
    weights = None if sigma is None else np.maximum(np.asarray(sigma, dtype=float), MIN_SIGMA)
    guess_mid = _crossing_guess(lx, y)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            popt, pcov = curve_fit(logistic, lx, y, p0=[guess_mid, 2.0], sigma=weights,
                                   bounds=([lx.min() - 5, 0.0], [lx.max() + 5, 100.0]), maxfev=5000)
    except (RuntimeError, ValueError):
        return failed
    se = np.sqrt(np.clip(np.diag(pcov), 0, None)) if np.all(np.isfinite(pcov)) else [math.nan, math.nan]
    residual = y - logistic(lx, *popt)
    total = np.sum((y - y.mean()) ** 2)
    return {"fitted": True, "x50": float(np.exp(popt[0])), "slope": float(popt[1]),
            "x50_low": float(np.exp(popt[0] - Z95 * se[0])), "x50_high": float(np.exp(popt[0] + Z95 * se[0])),
            "r2": float(1 - np.sum(residual ** 2) / total) if total > 0 else math.nan}


def _crossing_guess(log_size: np.ndarray, accuracy: np.ndarray) -> float:
    """Starting point: the log-size whose accuracy is closest to one half."""
    return float(log_size[np.argmin(np.abs(accuracy - 0.5))])


def _series_key(group_by: str | None, facet_by: str | None) -> list[str]:
    return [d for d in ("eval_id", facet_by, group_by) if d]


def frontier(db: PointsDB, filters: FiltersLike = None, size_param: str = DEFAULT_SIZE_PARAM, group_by: str | None = None,
             facet_by: str | None = None, mode: str = "C_P") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(accuracy per size, one fit per series). A series = eval x facet x group value."""
    keys = list(dict.fromkeys(_series_key(group_by, facet_by)))
    agg = db.aggregate(filters, by=[*keys, size_param])
    agg = agg[agg[size_param].notna()]
    if agg.empty:
        raise UserError(f"no points have {size_param}; choose the size with --size-param (e.g. params.length)")
    if not pd.api.types.is_numeric_dtype(agg[size_param]):
        raise UserError(f"{size_param} is not numeric; --size-param needs a numeric parameter")
    curve = add_statistics(agg, mode)
    fits = []
    for key, part in curve.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        fit = fit_logistic(part[size_param], part["center"], part["margin"])
        low, high = part[size_param].min(), part[size_param].max()
        # a midpoint outside the measured sizes is an extrapolation: say so
        fit["x50_in_range"] = bool(fit["fitted"] and low <= fit["x50"] <= high)
        fits.append({**dict(zip(keys, key)), "sizes": int(part[size_param].nunique()), **fit})
    return curve, pd.DataFrame(fits)


def peak(db: PointsDB, filters: FiltersLike = None, size_param: str = DEFAULT_SIZE_PARAM, group_by: str | None = None,
         facet_by: str | None = None, mode: str = "C_P",
         threshold: float = DEFAULT_THRESHOLD) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-budget table, per-series summary with capacity and peak budget).

    The budget is ``manifold.target_tokens`` where the points have it, else the derived
    ``prompt_budget``; the table's budget column and the summary's ``budget`` say which."""
    keys = list(dict.fromkeys(_series_key(group_by, facet_by)))
    points = db.points(filters, columns=[*keys, TARGET_DIM, size_param, "prompt_tokens", "correct", "incorrect",
                                         "invalid", "truncated", "guess_sum", "guess_sum_all"])
    points = points[points[size_param].notna()]
    if points.empty:
        raise UserError(f"no points have {size_param}; --size-param names the numeric size of the task to "
                        "measure (e.g. params.num_rows for tables)")
    budget = TARGET_DIM if points[TARGET_DIM].notna().any() else PROMPT_BUDGET
    if budget == TARGET_DIM:
        points = points[points[TARGET_DIM].notna()]
    else:
        points = points.assign(**{PROMPT_BUDGET: prompt_budgets(points)})
        points = points[points[PROMPT_BUDGET].notna()]
        if points.empty:
            raise UserError(f"the points with {size_param} have neither {TARGET_DIM} nor measured prompt tokens; "
                            "--peak needs calibrated (mode: calibrate) tasks or runs that report usage")
    return peak_from_points(points, keys, size_param, mode, threshold, budget)


def prompt_budgets(points: pd.DataFrame) -> pd.Series:
    """Per point: the power of two at or above its mean prompt tokens per sample (NaN without tokens)."""
    samples = points[["correct", "incorrect", "invalid", "truncated"]].sum(axis=1)
    mean = points["prompt_tokens"].astype(float) / samples.where(samples > 0)
    mean = mean.where(mean > 0)
    # numpy's ufuncs return a Series for a Series; pandas-stubs types them as ndarray
    return cast(pd.Series, np.exp2(np.ceil(np.log2(mean))))


def peak_from_points(points: pd.DataFrame, keys: list[str], size_param: str, mode: str,
                     threshold: float, budget: str = TARGET_DIM) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The computation behind `peak`, on a points frame with the needed columns;
    `budget` names the budget column (TARGET_DIM or PROMPT_BUDGET)."""
    counters = [c for c in SUMMED_COLUMNS if c in points.columns]
    grouped = points.groupby([*keys, budget], sort=True)
    table = grouped[counters].sum().join(grouped[size_param].mean().rename("size")).reset_index()
    table = add_statistics(table, mode)
    table["accuracy_low"] = (table["center"] - table["margin"]).clip(lower=0.0)
    table["effective_capacity"] = table["accuracy_low"] * table["size"]
    table["above_threshold"] = table["center"] >= threshold
    summary = []
    for key, part in table.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        best = part.nlargest(1, "effective_capacity").iloc[0]
        above = part[part["above_threshold"]]
        summary.append({**dict(zip(keys, key)),
                        "budget": budget,
                        "peak_budget_tokens": _plain_number(best[budget]),
                        "peak_effective_capacity": best["effective_capacity"],
                        "peak_accuracy": best["center"],
                        "capacity": float(above["size"].max()) if len(above) else 0.0,
                        "threshold": threshold})
    return table, pd.DataFrame(summary)


def _plain_number(value: object) -> object:
    """Integral floats back to int (target_tokens print as 4000, not 4000.0000)."""
    return int(value) if isinstance(value, (float, np.floating)) and float(value).is_integer() else value
