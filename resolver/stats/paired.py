"""Paired differences of two models on the same problems (analyze.py compare; docs/statistics.md,
"Paired comparisons").

The input of every function is a *joint table* per group (a cell, a point, or everything):
``joint[k, a, b]`` = how many paired samples of group k had outcome ``a`` for model A and
``b`` for model B (PointsDB outcome codes: 0 correct, 1 incorrect, 2 invalid, 3
truncated), plus the guess sums the single-model modes need: ``guess_a`` = the sum of the
guess chances of the pairs A answered, ``guess_b`` the same for B, ``guess_all`` over all
pairs. From it:

* each model's counters over the paired samples, hence its mode interval exactly as
  ``stats.mode_interval`` computes it (continuity-corrected Wilson on raw counts, mapped
  through the guess rate, floored at 0, capped at the raw upper end);
* the paired 95% interval of the difference B - A: Newcombe's method 10 for paired
  proportions (square-and-add of the two single-model intervals with the phi coefficient
  of the mode's raw success indicators, continuity-corrected), i.e. the MOVER recipe;
* the unpaired interval: the same square-and-add with phi = 0 (Newcombe's unpaired
  method 10);
* a two-sided p-value by inverting the paired interval in z, Holm's step-down
  adjustment, and the samples a decision would need.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

# the normal distribution from scipy.special: scipy.stats costs ~0.4 s to import (docs/performance.md)
from scipy.special import ndtr, ndtri

from resolver.stats.estimates import Z95, check_mode, mapped_interval, mode_map

__all__ = [
    "OUTCOMES",
    "compare_joint",
    "counters_from_joint",
    "holm",
    "joint_table",
    "mover_bounds",
    "pair_sd",
    "samples_needed",
    "success_phi",
]

#: PointsDB outcome codes: correct, incorrect, invalid, truncated
OUTCOMES = 4
CORRECT, TRUNCATED = 0, 3
# bisection in z for the p-value: z beyond 40 is p below 1e-300
_Z_MAX = 40.0
_BISECTIONS = 60
# a number or one per group: the interval helpers work on both
_Numbers = float | np.ndarray
# mode_map's (successes, trials, offset, scale)
_ModeMap = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def joint_table(outcome_a: ArrayLike, outcome_b: ArrayLike, groups: ArrayLike, n_groups: int) -> np.ndarray:
    """(n_groups, 4, 4) counts of (A outcome, B outcome) per group from per-pair arrays."""
    flat = (np.asarray(groups, dtype=np.int64) * OUTCOMES + np.asarray(outcome_a, dtype=np.int64)) * OUTCOMES \
        + np.asarray(outcome_b, dtype=np.int64)
    counts = np.bincount(flat, minlength=n_groups * OUTCOMES * OUTCOMES)
    return counts.reshape(n_groups, OUTCOMES, OUTCOMES).astype(float)


def counters_from_joint(marginal: np.ndarray, guess_answered: ArrayLike, guess_all: ArrayLike) -> pd.DataFrame:
    """One model's PointsDB-style counters from its (groups, 4) outcome margin."""
    marginal = np.asarray(marginal, dtype=float)
    return pd.DataFrame({"correct": marginal[:, 0], "incorrect": marginal[:, 1], "invalid": marginal[:, 2],
                         "truncated": marginal[:, 3], "guess_sum": np.asarray(guess_answered, dtype=float),
                         "guess_sum_all": np.asarray(guess_all, dtype=float)})


def _success(mode: str) -> np.ndarray:
    """Which outcome codes are a raw success of the mode's count (docs/statistics.md table)."""
    success = np.zeros(OUTCOMES, dtype=bool)
    success[CORRECT] = True
    if mode[2] == "O":
        success[TRUNCATED] = True
    return success


def success_phi(joint: np.ndarray, mode: str) -> np.ndarray:
    """Correlation of the two models' estimates per group, continuity-corrected.

    Each model's raw proportion is sum(a S) / sum(a) over the pairs (S the mode's raw
    success, a = 1 where the sample counts: every sample in the P and O modes, the
    answered ones in the I modes), so one pair moves it by e = a (S - p) / mean(a).
    phi is the correlation of e_A and e_B over the pairs, its positive covariance shrunk by
    1 / (2N). For the P and O modes (a = 1) this is exactly Newcombe's (1998b, method 10)
    continuity-corrected phi of the 2 x 2 table: with a' = both succeed, b' = A only,
    c' = B only, d' = neither, (a'd' - b'c' - N/2) / sqrt((a'+b')(c'+d')(a'+c')(b'+d')).
    In the I modes a pair one model truncated moves only the other's estimate, which
    the correlation over all pairs accounts for (the both-answered pairs alone would
    overstate it). 0 when either model's e has no variance.
    """
    table = np.asarray(joint, dtype=float)
    success = _success(mode).astype(float)
    counts = np.ones(OUTCOMES) if mode[2] != "I" else np.array([1.0, 1.0, 1.0, 0.0])
    total = table.sum(axis=(1, 2))
    effects = []
    for axis in (2, 1):                       # axis 2 summed away: A's margin; axis 1: B's
        margin = table.sum(axis=axis)
        used = (margin * counts).sum(axis=1)
        rate = np.divide((margin * counts * success).sum(axis=1), used, out=np.zeros_like(total), where=used > 0)
        effects.append(counts[None, :] * (success[None, :] - rate[:, None]))
    e_a, e_b = effects
    safe = np.where(total > 0, total, 1.0)
    cov = (table * e_a[:, :, None] * e_b[:, None, :]).sum(axis=(1, 2)) / safe
    var_a = (table.sum(axis=2) * e_a ** 2).sum(axis=1) / safe
    var_b = (table.sum(axis=1) * e_b ** 2).sum(axis=1) / safe
    cov = np.where(cov > 0, np.maximum(cov - 1.0 / (2.0 * safe), 0.0), cov)
    denominator = np.sqrt(var_a * var_b)
    return np.divide(cov, denominator, out=np.zeros_like(cov), where=denominator > 1e-15)


def _estimate_and_bounds(mapped: _ModeMap, z: _Numbers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate clipped into its interval, low, high): the single-model mode interval of
    mapped = mode_map(counts, mode)."""
    successes, trials, offset, scale = mapped
    low, high, _ = mapped_interval(successes, trials, offset, scale, z)
    raw = np.divide(successes - offset, scale, out=np.zeros_like(np.asarray(trials, dtype=float)),
                    where=np.asarray(scale) > 1e-12)
    return np.clip(raw, low, high), low, high


def mover_bounds(est_a: _Numbers, low_a: _Numbers, high_a: _Numbers, est_b: _Numbers, low_b: _Numbers,
                 high_b: _Numbers, phi: _Numbers) -> tuple[_Numbers, _Numbers]:
    """(low, high) of B - A from the two intervals by square-and-add (MOVER).

    phi = 0 gives Newcombe's unpaired method 10; the paired version subtracts
    2 phi times the product of the two facing half-widths (Newcombe 1998b, method 10).
    """
    diff = est_b - est_a
    down_b, up_b = est_b - low_b, high_b - est_b
    down_a, up_a = est_a - low_a, high_a - est_a
    lower = np.sqrt(np.maximum(down_b ** 2 - 2 * phi * down_b * up_a + up_a ** 2, 0.0))
    upper = np.sqrt(np.maximum(up_b ** 2 - 2 * phi * up_b * down_a + down_a ** 2, 0.0))
    return diff - lower, diff + upper


def _intervals(map_a: _ModeMap, map_b: _ModeMap, phi: _Numbers,
               z: _Numbers) -> tuple[np.ndarray, np.ndarray, tuple[_Numbers, _Numbers]]:
    est_a, low_a, high_a = _estimate_and_bounds(map_a, z)
    est_b, low_b, high_b = _estimate_and_bounds(map_b, z)
    return est_a, est_b, mover_bounds(est_a, low_a, high_a, est_b, low_b, high_b, phi)


def _p_values(map_a: _ModeMap, map_b: _ModeMap, phi: _Numbers, diff: np.ndarray) -> np.ndarray:
    """Two-sided p-value: 2 (1 - Phi(z*)) with z* the z at which the paired interval touches 0."""
    lo = np.zeros(len(diff))
    hi = np.full(len(diff), _Z_MAX)
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2.0
        _, _, (low, high) = _intervals(map_a, map_b, phi, mid)
        excludes = np.where(diff > 0, low > 0, high < 0)
        lo, hi = np.where(excludes, mid, lo), np.where(excludes, hi, mid)
    return np.where(diff == 0, 1.0, np.minimum(2.0 * ndtr(-lo), 1.0))


def pair_sd(joint: np.ndarray, guess_all: ArrayLike, mode: str) -> np.ndarray:
    """Standard deviation of one pair's contribution to the difference (linearised ratio estimators).

    Each model's estimate is sum(S - o) / sum(w) per sample (the E form of the mode:
    S the raw success, o the guess offset, w the trial weight, docs/statistics.md); a
    pair contributes (S_B - o_B - est_B w_B) / mean(w_B) - (the same for A). The guess
    chance is the group's mean (guess_all / pairs). Used only for sample-size planning.
    """
    table = np.asarray(joint, dtype=float)
    pairs = table.sum(axis=(1, 2))
    g = np.divide(np.asarray(guess_all, dtype=float), pairs, out=np.zeros_like(pairs), where=pairs > 0)[:, None]
    success = _success(mode).astype(float)[None, :]
    answered = np.array([1.0, 1.0, 1.0, 0.0])[None, :]
    if mode[2] == "O":
        offset, weight = g * np.ones_like(success), (1 - g) * np.ones_like(success)
    elif mode[2] == "P":
        offset, weight = g * answered, (1 - g) * np.ones_like(success)
    else:
        offset, weight = g * answered, (1 - g) * answered
    terms = []
    for axis in (2, 1):                       # axis 2 summed away: A's margin; axis 1: B's
        margin = table.sum(axis=axis)
        total_w = (margin * weight).sum(axis=1)
        est = np.divide((margin * (success - offset)).sum(axis=1), total_w, out=np.zeros_like(pairs),
                        where=total_w > 1e-12)
        mean_w = np.divide(total_w, pairs, out=np.ones_like(pairs), where=(pairs > 0) & (total_w > 1e-12))
        terms.append((success - offset - est[:, None] * weight) / mean_w[:, None])
    contribution = terms[1][:, None, :] - terms[0][:, :, None]      # [k, a, b]: B's minus A's
    mean = np.divide((table * contribution).sum(axis=(1, 2)), pairs, out=np.zeros_like(pairs), where=pairs > 0)
    var = np.divide((table * (contribution - mean[:, None, None]) ** 2).sum(axis=(1, 2)), pairs - 1,
                    out=np.zeros_like(pairs), where=pairs > 1)
    return np.sqrt(var)


def compare_joint(joint: ArrayLike, guess_a: ArrayLike, guess_b: ArrayLike, guess_all: ArrayLike, mode: str,
                  z: float = Z95, with_p: bool = True, phi: ArrayLike | None = None) -> pd.DataFrame:
    """Per group: pairs, a, b (the two mode estimates), diff = b - a, paired_low/high,
    unpaired_low/high, phi, discordant (pairs whose success differs), pair_sd and p_value.

    a and b are each model's point estimate (S - offset) / scale on the paired samples,
    clipped into its own mode interval (so a below-chance cell counts as 0). ``phi``
    overrides the estimated correlation (the coverage study uses it to show that an
    overstated correlation breaks coverage).
    """
    check_mode(mode)
    joint = np.asarray(joint, dtype=float)
    counts_a = counters_from_joint(joint.sum(axis=2), guess_a, guess_all)
    counts_b = counters_from_joint(joint.sum(axis=1), guess_b, guess_all)
    phi = success_phi(joint, mode) if phi is None else np.broadcast_to(np.asarray(phi, dtype=float), len(joint))
    map_a, map_b = mode_map(counts_a, mode), mode_map(counts_b, mode)
    est_a, est_b, (low, high) = _intervals(map_a, map_b, phi, z)
    _, _, (u_low, u_high) = _intervals(map_a, map_b, 0.0, z)
    success = _success(mode)
    discordant = joint[:, success][:, :, ~success].sum(axis=(1, 2)) + joint[:, ~success][:, :, success].sum(axis=(1, 2))
    diff = est_b - est_a
    frame = pd.DataFrame({"pairs": joint.sum(axis=(1, 2)), "a": est_a, "b": est_b, "diff": diff,
                          "paired_low": low, "paired_high": high, "unpaired_low": u_low, "unpaired_high": u_high,
                          "phi": phi, "discordant": discordant, "pair_sd": pair_sd(joint, guess_all, mode)})
    if with_p:
        frame["p_value"] = _p_values(map_a, map_b, phi, diff)
    return frame


def holm(p_values: ArrayLike, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """(rejected, adjusted p) of Holm's step-down procedure over one family of tests.

    Sorted ascending, p_(i) is rejected while p_(j) <= alpha / (K - j + 1) for all j <= i;
    the adjusted p-value is the running maximum of (K - j + 1) p_(j), capped at 1.
    """
    p = np.asarray(p_values, dtype=float)
    k = len(p)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(np.maximum.accumulate((k - np.arange(k)) * p[order]), 1.0)
    adjusted = np.empty(k)
    adjusted[order] = scaled
    return adjusted <= alpha, adjusted


def samples_needed(sd: ArrayLike, pairs: ArrayLike, points: ArrayLike, delta: float, tests: int, power: float = 0.8,
                   alpha: float = 0.05) -> np.ndarray:
    """More paired samples per point for 80% power to decide a difference of delta.

    Total pairs N* = ((z_{1 - alpha / (2 K)} + z_power) sd / delta)^2, the normal-theory
    size of a two-sided paired test at the Bonferroni level alpha / K (Holm's strictest
    step, so the decision holds under Holm). sd is floored at sqrt(delta (1 - delta)): a
    difference of delta needs at least a delta share of discordant pairs. Returns
    ceil(N* / points) minus the pairs per point already there, at least 0.
    """
    sd = np.maximum(np.asarray(sd, dtype=float), np.sqrt(delta * (1 - delta)))
    z = -ndtri(alpha / (2.0 * max(int(tests), 1))) + ndtri(power)
    total = (z * sd / delta) ** 2
    points = np.maximum(np.asarray(points, dtype=float), 1.0)
    have = np.asarray(pairs, dtype=float) / points
    return np.maximum(np.ceil(total / points - have), 0.0).astype(int)
