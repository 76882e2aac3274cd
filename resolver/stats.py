"""Statistics on evaluation counts (spec 03): Wilson intervals, excess accuracy, the
six estimator modes, truncation / invalid ratios, ReasonScore and completeness.

Everything here is vectorised: functions take numpy arrays or pandas DataFrames of
*summed* counters (one row per point or per aggregate) and never loop over rows.

Counter names follow the PointsDB columns: ``correct`` (c), ``incorrect`` (x),
``invalid`` (v), ``truncated`` (t), ``guess_sum`` (G, the expected number of lucky
guesses among the untruncated samples). Derived: m = c + x + v untruncated,
n = m + t all samples, g = G / m the per-sample guess chance.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from resolver.errors import UserError, choices_text

Z95 = 1.96

MODES = ("E_I", "E_P", "E_O", "C_I", "C_P", "C_O")
DEFAULT_MODE = "C_P"
MODE_DESCRIPTIONS = {
    "E_I": "excess accuracy, truncations ignored (trials = untruncated)",
    "E_P": "excess accuracy, truncations count as failures",
    "E_O": "excess accuracy, truncations count as successes",
    "C_I": "Wilson on raw counts then guess-corrected, truncations ignored",
    "C_P": "Wilson on raw counts then guess-corrected, truncations count as failures",
    "C_O": "Wilson on raw counts then guess-corrected, truncations count as successes",
}
COUNTER_COLUMNS = ("correct", "incorrect", "invalid", "truncated", "guess_sum")

# ReasonScore floors each cell before the geometric mean so that one hopeless cell
# cannot drag the product to zero (spec 03).
SCORE_FLOOR = 0.01
SCORE_SCALE = 1000.0


def wilson_interval(successes, trials, z: float = Z95):
    """Wilson score interval as (center, margin); works on scalars or numpy arrays.

    Fractional counts are allowed (excess accuracy subtracts expected guesses);
    zero trials give (0, 0).
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


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise UserError(f"unknown mode {mode!r}; valid: {choices_text(MODES)}")
    return mode


def _counts(counts: pd.DataFrame):
    """The counter arrays (as floats) from a DataFrame; a missing column is an error."""
    missing = [c for c in COUNTER_COLUMNS if c not in counts.columns]
    if missing:
        raise ValueError(f"counts lack columns {missing}; need {COUNTER_COLUMNS}")
    return tuple(counts[c].to_numpy(dtype=float) for c in COUNTER_COLUMNS)


def mode_trials_successes(counts: pd.DataFrame, mode: str):
    """(successes, trials) of a mode before any guess correction."""
    c, x, v, t, _ = _counts(counts)
    m = c + x + v
    kind = check_mode(mode)[2]
    if kind == "I":
        return c, m
    if kind == "P":
        return c, m + t
    return c + t, m + t


def guess_rate(counts: pd.DataFrame) -> np.ndarray:
    """g = G / m, the expected chance that an untruncated answer is a lucky guess."""
    c, x, v, _, guess = _counts(counts)
    m = c + x + v
    return np.divide(guess, m, out=np.zeros_like(m), where=m > 0)


def excess_interval(successes, trials, guess_sum, z: float = Z95):
    """Excess accuracy: remove the expected lucky guesses from both counts, then Wilson."""
    s = np.asarray(successes, dtype=float) - np.asarray(guess_sum, dtype=float)
    k = np.asarray(trials, dtype=float) - np.asarray(guess_sum, dtype=float)
    return wilson_interval(s, np.maximum(k, 0.0), z)


def corrected_interval(successes, trials, g, z: float = Z95):
    """Wilson on raw counts, then both ends mapped through f(q) = max(0, (q - g) / (1 - g)).

    Returns the midpoint and half-width of the mapped interval. A guess rate of 1
    (every answer a certain guess) carries no information: (0, 0).
    """
    center, margin = wilson_interval(successes, trials, z)
    g = np.asarray(g, dtype=float)
    informative = g < 1.0
    scale = np.where(informative, 1.0 - g, 1.0)
    low = np.maximum(0.0, (np.asarray(center) - margin - g) / scale)
    high = np.maximum(0.0, (np.asarray(center) + margin - g) / scale)
    mid = np.where(informative, (low + high) / 2.0, 0.0)
    half = np.where(informative, (high - low) / 2.0, 0.0)
    return mid, half


def mode_interval(counts: pd.DataFrame, mode: str = DEFAULT_MODE, z: float = Z95) -> pd.DataFrame:
    """center and margin of one of the six modes for every row of summed counters."""
    successes, trials = mode_trials_successes(counts, mode)
    if mode.startswith("E"):
        center, margin = excess_interval(successes, trials, counts["guess_sum"].to_numpy(dtype=float), z)
    else:
        center, margin = corrected_interval(successes, trials, guess_rate(counts), z)
    return pd.DataFrame({"center": np.atleast_1d(center), "margin": np.atleast_1d(margin)}, index=counts.index)


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

    Adds: samples (n), untruncated (m), center / margin of `mode`; the E_I numbers as
    adjusted_successes, adjusted_trials, adjusted_center, adjusted_margin; the ratios;
    adjusted_score = adjusted_center + adjusted_margin - truncated_ratio (spec 03);
    and completion_tokens_mean when completion_tokens_sum is present.
    """
    check_mode(mode)
    out = agg.copy()
    c, x, v, t, guess = _counts(out)
    out["untruncated"] = c + x + v
    out["samples"] = out["untruncated"] + t
    chosen = mode_interval(out, mode, z)
    out["center"] = chosen["center"].to_numpy()
    out["margin"] = chosen["margin"].to_numpy()
    out["adjusted_successes"] = c - guess
    out["adjusted_trials"] = out["untruncated"] - guess
    adjusted = chosen if mode == "E_I" else mode_interval(out, "E_I", z)
    out["adjusted_center"] = adjusted["center"].to_numpy()
    out["adjusted_margin"] = adjusted["margin"].to_numpy()
    out = out.join(ratios(out))
    out["adjusted_score"] = out["adjusted_center"] + out["adjusted_margin"] - out["truncated_ratio"]
    if "completion_tokens_sum" in out.columns:
        n = out["samples"].to_numpy(dtype=float)
        total = out["completion_tokens_sum"].to_numpy(dtype=float)
        out["completion_tokens_mean"] = np.divide(total, n, out=np.full_like(n, np.nan), where=n > 0)
    return out


def compare_modes(agg: pd.DataFrame, z: float = Z95) -> pd.DataFrame:
    """All six estimators side by side: columns <MODE>_center and <MODE>_margin."""
    columns = {}
    for mode in MODES:
        interval = mode_interval(agg, mode, z)
        columns[f"{mode}_center"] = interval["center"].to_numpy()
        columns[f"{mode}_margin"] = interval["margin"].to_numpy()
    return pd.DataFrame(columns, index=agg.index)


def adjusted_score(center, margin, truncated_ratio):
    """The per-cell score of ReasonScore: center + margin - truncated_ratio (E_I numbers)."""
    return np.asarray(center, dtype=float) + np.asarray(margin, dtype=float) - np.asarray(truncated_ratio, dtype=float)


def reasonscore(scores) -> float:
    """1000 x geometric mean of max(score, 0.01) over cells; NaN when there are none."""
    values = np.asarray(scores, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan")
    return float(SCORE_SCALE * np.exp(np.mean(np.log(np.maximum(values, SCORE_FLOOR)))))


def grouped_reasonscore(frame: pd.DataFrame, by, score_column: str = "adjusted_score") -> pd.Series:
    """ReasonScore per group of rows (e.g. per eval and tier), vectorised."""
    logs = np.log(np.maximum(frame[score_column].to_numpy(dtype=float), SCORE_FLOOR))
    return SCORE_SCALE * np.exp(pd.Series(logs, index=frame.index).groupby([frame[b] for b in by], sort=False).mean())


def score_per_token(score, mean_tokens):
    """ReasonScore divided by mean completion tokens (NaN without tokens)."""
    score = np.asarray(score, dtype=float)
    tokens = np.asarray(mean_tokens, dtype=float)
    ok = np.isfinite(tokens) & (tokens > 0)
    result = np.divide(score, np.where(ok, tokens, 1.0))
    result = np.where(ok, result, np.nan)
    return float(result) if result.ndim == 0 else result


def is_incomplete(point_count, expected_points):
    """A cell is incomplete when the config expects more points than were collected.

    Unknown expectations (NaN / None) are not incomplete: nothing to compare against.
    """
    have = np.asarray(point_count, dtype=float)
    want = np.asarray(expected_points, dtype=float)  # None -> NaN
    result = np.where(np.isnan(want), False, have < want)
    return bool(result) if np.ndim(result) == 0 else result
