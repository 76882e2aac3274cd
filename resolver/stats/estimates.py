"""Statistics on evaluation counts (docs/statistics.md, docs/decisions.md): Wilson intervals, the six
estimator modes, the below-chance flag, truncation / invalid ratios, ReasonScore and
completeness. docs/statistics.md derives every formula here.

Everything is vectorised: functions take numpy arrays or pandas DataFrames of
*summed* counters (one row per point or per aggregate) and never loop over rows.

Counter names follow the PointsDB columns: ``correct`` (c), ``incorrect`` (x),
``invalid`` (v), ``truncated`` (t), ``guess_sum`` (G, expected lucky guesses among
the untruncated samples) and, optionally, ``guess_sum_all`` (G_all, the same over all
samples, truncated ones included). Derived: m = c + x + v untruncated, n = m + t all
samples, g = G / m the per-answer guess chance (G_all / n when m = 0).

Every mode is one (continuity-corrected) Wilson interval on raw counts (successes S of trials N) mapped
through an affine map h(q) = (q * N - offset) / scale onto the mode's estimand; the
lower end is floored at 0 and the upper end capped at the raw Wilson upper end
(skill never exceeds the raw success rate). A cell whose mapped upper end is below 0
(the raw upper end lies below the rate guessing alone gives) is *below chance*.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from resolver.core import UserError, choices_text
from resolver.stats.modes import DEFAULT_MODE, MODES

Z95 = 1.96

MODE_DESCRIPTIONS = {
    "E_I": "skill on answered samples s; recorded guess sums (equals C_I)",
    "E_P": "(1 - truncation rate) x s, truncations count as failures; recorded guess sums incl. truncated samples",
    "E_O": "(1 - truncation rate) x s + truncation rate, truncations count as successes; recorded guess sums",
    "C_I": "skill on answered samples s; Wilson on raw counts mapped through the guess rate",
    "C_P": "(1 - truncation rate) x s, truncations count as failures; Wilson on raw counts mapped",
    "C_O": "(1 - truncation rate) x s + truncation rate, truncations count as successes; Wilson mapped",
}
#: What each mode estimates (tau = truncation rate, s = skill on answered samples).
MODE_ESTIMANDS = {"I": "s", "P": "(1 - tau) * s", "O": "(1 - tau) * s + tau"}
COUNTER_COLUMNS = ("correct", "incorrect", "invalid", "truncated", "guess_sum")
GUESS_ALL_COLUMN = "guess_sum_all"
#: the counters to sum before calling these functions (guess_sum_all is optional)
SUMMED_COLUMNS = COUNTER_COLUMNS + (GUESS_ALL_COLUMN,)
#: The ReasonScore's cell interval: docs/analyze.md: excess accuracy (Wilson on c - G of
#: m - G). Kept for compatibility with published scores; it is NOT a calibrated 95%
#: interval when guessing is possible (docs/statistics.md, coverage table).
REASONSCORE_INTERVAL = "E_I (original: Wilson on guess-corrected counts; ReasonScore input, not a 95% interval)"

# ReasonScore floors each cell before the geometric mean so that one hopeless cell
# cannot drag the product to zero (docs/statistics.md); a missing cell enters at the floor.
SCORE_FLOOR = 0.01
SCORE_SCALE = 1000.0


def wilson_interval(successes: ArrayLike, trials: ArrayLike,
                    z: float = Z95) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Wilson score interval as (center, margin); works on scalars or numpy arrays.

    Fractional counts are allowed; zero trials give (0, 0).
    """
    s = np.asarray(successes, dtype=float)
    k = np.asarray(trials, dtype=float)
    safe_k = np.where(k > 0, k, 1.0)
    p = np.clip(s / safe_k, 0.0, 1.0)
    z2 = z * z
    den = 1.0 + z2 / safe_k
    center = (p + z2 / (2 * safe_k)) / den
    margin = z * np.sqrt(p * (1 - p) / safe_k + z2 / (4 * safe_k * safe_k)) / den
    center = np.where(k > 0, center, 0.0)
    margin = np.where(k > 0, margin, 0.0)
    if center.ndim == 0:
        return float(center), float(margin)
    return center, margin


def wilson_cc_bounds(successes: ArrayLike, trials: ArrayLike,
                     z: float | np.ndarray = Z95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the continuity-corrected Wilson interval (Newcombe 1998, method 4).

    The modes use it instead of the plain Wilson interval: at small n the plain
    interval's coverage dips to 92.6% (n = 24, p = 0.21), the corrected one stays
    above 95% on the whole grid of docs/statistics.md. Zero trials give (0, 0).
    """
    k = np.asarray(trials, dtype=float)
    safe_k = np.where(k > 0, k, 1.0)
    p = np.clip(np.asarray(successes, dtype=float) / safe_k, 0.0, 1.0)
    z2 = z * z
    den = 2.0 * (safe_k + z2)
    low_root = np.sqrt(np.maximum(z2 - 2.0 - 1.0 / safe_k + 4.0 * p * (safe_k * (1.0 - p) + 1.0), 0.0))
    high_root = np.sqrt(np.maximum(z2 + 2.0 - 1.0 / safe_k + 4.0 * p * (safe_k * (1.0 - p) - 1.0), 0.0))
    low = np.where(p > 0, np.clip((2.0 * safe_k * p + z2 - 1.0 - z * low_root) / den, 0.0, 1.0), 0.0)
    high = np.where(p < 1, np.clip((2.0 * safe_k * p + z2 + 1.0 + z * high_root) / den, 0.0, 1.0), 1.0)
    return np.where(k > 0, low, 0.0), np.where(k > 0, high, 0.0)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise UserError(f"unknown mode {mode!r}; valid: {choices_text(MODES)}")
    return mode


def _counts(counts: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """The counter arrays (as floats) from a DataFrame; a missing column is an error."""
    missing = [c for c in COUNTER_COLUMNS if c not in counts.columns]
    if missing:
        raise ValueError(f"counts lack columns {missing}; need {COUNTER_COLUMNS}")
    return tuple(counts[c].to_numpy(dtype=float) for c in COUNTER_COLUMNS)


def guess_sum_all(counts: pd.DataFrame) -> np.ndarray:
    """G_all: the guess sum over all samples.

    Read from the ``guess_sum_all`` column; where it is absent, NaN or impossible
    (below G: a PointsDB written before the column existed, whose NULLs a pandas sum
    turned into 0) it is estimated as G * n / m, i.e. truncated samples are assumed to
    have the answered samples' guess chance (0 when m = 0).
    """
    c, x, v, t, guess = _counts(counts)
    m = c + x + v
    estimate = np.divide(guess * (m + t), m, out=np.zeros_like(m), where=m > 0)
    if GUESS_ALL_COLUMN not in counts.columns:
        return estimate
    stored = pd.to_numeric(counts[GUESS_ALL_COLUMN], errors="coerce").to_numpy(dtype=float)
    return np.where(np.isnan(stored) | (stored < guess - 1e-9), estimate, stored)


def guess_rate(counts: pd.DataFrame) -> np.ndarray:
    """g = G / m, the chance that an answered sample is a lucky guess (G_all / n when m = 0)."""
    c, x, v, t, guess = _counts(counts)
    m = c + x + v
    n = m + t
    from_all = np.divide(guess_sum_all(counts), n, out=np.zeros_like(n), where=n > 0)
    return np.divide(guess, m, out=from_all, where=m > 0)


def mode_map(counts: pd.DataFrame, mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(successes S, trials N, offset, scale) of a mode: the estimate is (S - offset) / scale
    and the interval maps q -> (q N - offset) / scale (docs/statistics.md)."""
    c, x, v, t, guess = _counts(counts)
    kind = check_mode(mode)
    m = c + x + v
    n = m + t
    g = guess_rate(counts)
    if kind[2] == "I":               # E_I and C_I coincide: G = g m
        return c, m, guess, m - guess
    if kind[2] == "P":
        if kind[0] == "E":
            return c, n, guess, n - guess_sum_all(counts)
        return c, n, guess, n * (1.0 - g)
    if kind[0] == "E":
        total = guess_sum_all(counts)
        return c + t, n, total, n - total
    return c + t, n, g * n, n * (1.0 - g)


def mapped_interval(successes: ArrayLike, trials: ArrayLike, offset: ArrayLike, scale: ArrayLike,
                    z: float | np.ndarray = Z95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, below_chance): the continuity-corrected Wilson interval of the raw
    counts mapped through h(q) = (q * trials - offset) / scale.

    low is floored at 0; high is capped at the raw Wilson upper end (the estimands
    never exceed the raw success rate) and floored at 0. below_chance: the mapped
    upper end is negative, i.e. the data reject "at least chance"; such a cell reads
    [0, 0] plus the flag. No trials, or no information (scale <= 0, every answer a
    certain guess), give [0, 0] without the flag.
    """
    raw_low, raw_high = (np.atleast_1d(b) for b in wilson_cc_bounds(successes, trials, z))
    trials = np.atleast_1d(np.asarray(trials, dtype=float))
    offset = np.atleast_1d(np.asarray(offset, dtype=float))
    scale = np.atleast_1d(np.asarray(scale, dtype=float))
    informative = (trials > 0) & (scale > 1e-12)
    safe = np.where(informative, scale, 1.0)
    mapped_low = (raw_low * trials - offset) / safe
    mapped_high = (raw_high * trials - offset) / safe
    below = informative & (mapped_high < 0)
    high = np.where(informative, np.clip(np.minimum(mapped_high, raw_high), 0.0, None), 0.0)
    low = np.where(informative, np.clip(mapped_low, 0.0, None), 0.0)
    low = np.minimum(low, high)
    return low, high, below


def mode_interval(counts: pd.DataFrame, mode: str = DEFAULT_MODE, z: float = Z95) -> pd.DataFrame:
    """center, margin (midpoint and half-width of [low, high]), low, high and
    below_chance of one mode for every row of summed counters."""
    successes, trials, offset, scale = mode_map(counts, mode)
    low, high, below = mapped_interval(successes, trials, offset, scale, z)
    return pd.DataFrame({"center": (low + high) / 2.0, "margin": (high - low) / 2.0, "low": low, "high": high,
                         "below_chance": below.astype(bool)}, index=counts.index)


def original_excess_interval(counts: pd.DataFrame, z: float = Z95) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Seed 001's E_I, the ReasonScore input: Wilson on (c - G) successes of (m - G) trials.

    Reproduces the spec's worked example; its width assumes m - G binomial trials,
    too narrow when guessing is possible (see REASONSCORE_INTERVAL)."""
    c, x, v, _, guess = _counts(counts)
    return wilson_interval(c - guess, np.maximum(c + x + v - guess, 0.0), z)


def ratios(counts: pd.DataFrame) -> pd.DataFrame:
    """truncated_ratio = t / n (all samples) and invalid_ratio = v / m (untruncated)."""
    c, x, v, t, _ = _counts(counts)
    m = c + x + v
    n = m + t
    return pd.DataFrame({
        "truncated_ratio": np.divide(t, n, out=np.zeros_like(n), where=n > 0),
        "invalid_ratio": np.divide(v, m, out=np.zeros_like(m), where=m > 0),
    }, index=counts.index)


def add_statistics(agg: pd.DataFrame, mode: str = DEFAULT_MODE, z: float = Z95) -> pd.DataFrame:
    """A copy of `agg` with the statistics every analysis needs.

    Adds: samples (n), untruncated (m); center, margin, low, high, below_chance of
    `mode`; the ReasonScore inputs adjusted_successes, adjusted_trials,
    adjusted_center, adjusted_margin (docs/analyze.md: original E_I, see
    REASONSCORE_INTERVAL); the ratios; adjusted_score = adjusted_center +
    adjusted_margin - truncated_ratio (docs/statistics.md); neutral_score (see below); and
    completion_tokens_mean when completion_tokens_sum is present.
    """
    check_mode(mode)
    out = agg.copy()
    c, x, v, t, guess = _counts(out)
    out["untruncated"] = c + x + v
    out["samples"] = out["untruncated"] + t
    chosen = mode_interval(out, mode, z)
    for name in ("center", "margin", "low", "high", "below_chance"):
        out[name] = chosen[name].to_numpy()
    out["adjusted_successes"] = c - guess
    out["adjusted_trials"] = out["untruncated"] - guess
    adjusted_center, adjusted_margin = original_excess_interval(out, z)
    out["adjusted_center"] = np.atleast_1d(adjusted_center)
    out["adjusted_margin"] = np.atleast_1d(adjusted_margin)
    out = out.join(ratios(out))
    out["adjusted_score"] = out["adjusted_center"] + out["adjusted_margin"] - out["truncated_ratio"]
    out["neutral_score"] = neutral_score(out)
    if "completion_tokens_sum" in out.columns:
        n = out["samples"].to_numpy(dtype=float)
        total = out["completion_tokens_sum"].to_numpy(dtype=float)
        out["completion_tokens_mean"] = np.divide(total, n, out=np.full_like(n, np.nan), where=n > 0)
    return out


def neutral_score(counts: pd.DataFrame) -> np.ndarray:
    """The ReasonScore's neutral companion cell: plug-in excess accuracy minus truncation,
    (c - G) / (m - G) - t / n, with no sample-size term (0 accuracy when m - G <= 0).

    Unlike adjusted_score it gives no bonus for few samples (the Wilson upper end is
    wider there); its expectation is s - tau."""
    c, x, v, t, guess = _counts(counts)
    m = c + x + v
    n = m + t
    trials = m - guess
    excess = np.divide(c - guess, trials, out=np.zeros_like(m), where=trials > 1e-12)
    truncated = np.divide(t, n, out=np.zeros_like(n), where=n > 0)
    return np.clip(excess, 0.0, 1.0) - truncated


def compare_modes(agg: pd.DataFrame, z: float = Z95) -> pd.DataFrame:
    """All six estimators side by side: <MODE>_center, <MODE>_margin, <MODE>_below_chance."""
    columns = {}
    for mode in MODES:
        interval = mode_interval(agg, mode, z)
        columns[f"{mode}_center"] = interval["center"].to_numpy()
        columns[f"{mode}_margin"] = interval["margin"].to_numpy()
        columns[f"{mode}_below_chance"] = interval["below_chance"].to_numpy()
    return pd.DataFrame(columns, index=agg.index)


def adjusted_score(center: ArrayLike, margin: ArrayLike, truncated_ratio: ArrayLike) -> np.ndarray:
    """The per-cell score of ReasonScore: center + margin - truncated_ratio (E_I numbers)."""
    return np.asarray(center, dtype=float) + np.asarray(margin, dtype=float) - np.asarray(truncated_ratio, dtype=float)


def reasonscore(scores: ArrayLike) -> float:
    """1000 x geometric mean of max(score, 0.01) over cells; NaN when there are none."""
    values = np.asarray(scores, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan")
    return float(SCORE_SCALE * np.exp(np.mean(np.log(np.maximum(values, SCORE_FLOOR)))))


def grouped_reasonscore(frame: pd.DataFrame, by: Sequence[str], score_column: str = "adjusted_score") -> pd.Series:
    """ReasonScore per group of rows (e.g. per eval and tier), vectorised."""
    logs = np.log(np.maximum(frame[score_column].to_numpy(dtype=float), SCORE_FLOOR))
    means = pd.Series(logs, index=frame.index).groupby([frame[b] for b in by], sort=False).mean()
    # numpy's ufuncs return a Series for a Series; pandas-stubs types them as ndarray
    return cast(pd.Series, SCORE_SCALE * np.exp(means))


def score_per_token(score: ArrayLike, mean_tokens: ArrayLike) -> float | np.ndarray:
    """ReasonScore divided by mean completion tokens (NaN without tokens)."""
    score = np.asarray(score, dtype=float)
    tokens = np.asarray(mean_tokens, dtype=float)
    ok = np.isfinite(tokens) & (tokens > 0)
    result = np.divide(score, np.where(ok, tokens, 1.0))
    result = np.where(ok, result, np.nan)
    return float(result) if result.ndim == 0 else result


def is_incomplete(point_count: ArrayLike, expected_points: ArrayLike) -> bool | np.ndarray:
    """A cell is incomplete when the config expects more points than were collected.

    Unknown expectations (NaN / None) are not incomplete: nothing to compare against.
    """
    have = np.asarray(point_count, dtype=float)
    want = np.asarray(expected_points, dtype=float)  # None -> NaN
    result = np.where(np.isnan(want), False, have < want)
    return bool(result) if np.ndim(result) == 0 else result
