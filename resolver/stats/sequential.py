"""Anytime-valid paired differences: a confidence sequence for B - A that may be read after
every round without inflating its error (docs/statistics.md, "Stopping on the decision").

Each pair i (the same problem answered by A and B) contributes ``x_i = e_B - e_A`` with
``e = S - g·k`` (S the mode's raw success, g the problem's guess chance, k = 1 where the
sample counts toward the guess offset: answered samples in the P modes, every sample in the
O modes), and the weight ``w_i = 1 - g``. The cell's difference is ``Σ x_i / Σ w_i``, the
E_P / E_O estimand of docs/statistics.md; ``x_i`` lies in [-1, 1].

Two procedures, named in sequential.json's ``procedure`` (PROCEDURES). Both are the
empirical-Bernstein sequence of Howard, Ramdas, McAuliffe & Sekhon (2021, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2), Theorem 4) in the
form of Waudby-Smith & Ramdas (2023, "Estimating means of bounded random variables by
betting", JRSS-B, Theorem 2): with ``X_i = (x_i + 1)/2`` in [0, 1], a predictable guess
``X̂_i`` (the mean of the cell's earlier rounds, 1/2 before any) and
``ψ(λ) = -log(1 - λ) - λ``, for a predictable ``λ_i`` in [0, 1)

    M_t = exp(Σ λ_i (X_i - μ_i) - Σ ψ(λ_i) (X_i - X̂_i)²)

is a non-negative supermartingale (μ_i the conditional mean of X_i).

* ``eb-horizon`` (the runner's now): one bet per round and cell, tuned to TUNE x the pairs
  the cell may draw at the variance seen so far, λ = min(BET_CAP, sqrt(2 log(2 family/α) /
  (σ̂² · TUNE · planned))), σ̂² = (1/4 + Σ (X - X̂)²)/(pairs + 1) over the earlier rounds; and
  the penalty ψ(λ a)/a² with a = X̂ (a = 1 - X̂ for the mirrored side), because X - X̂ >= -X̂
  (Fan et al.'s inequality on (X - X̂)/a >= -1; a = 1 is ψ(λ)). Each side's M_t >= 2/α is
  solved for Δ in closed form; the sequence covers the bet-weighted difference
  Σ λ_i E[x_i] / Σ λ_i w_i, the plain running average when each round samples the same points.
* ``eb-mixture`` (the first; read for older runs): the average of M_t(λ_j) and its mirror
  over the fixed grid ``LAMBDAS`` (a discrete mixture, Howard et al. Section 3.1), which
  covers the running average exactly; ends by bisection.

By Ville's inequality the e-process exceeds 1/α with probability at most α at any time, so
``CS_t(α) = {Δ : E_t(Δ) < 1/α}`` holds at every round at once, and
``p_t = min(1, 1 / max_{s <= t} E_s(0))`` is an anytime-valid p-value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["BET_CAP", "LAMBDAS", "PROCEDURE", "PROCEDURES", "SEQUENTIAL_NAME", "TUNE", "Sequence", "anytime_sequence",
           "cells_and_overall", "e_value", "pair_contributions"]

#: the discrete mixture's bets: geometric from about one over the square root of the
#: largest variance a cell reaches (thousands of pairs) to near the edge of [0, 1)
SEQUENTIAL_NAME = "sequential.json"   # what runner.py --against writes in its run folder (docs/runner.md)
#: the procedures by the id sequential.json records ("procedure"; a file without one is eb-mixture)
PROCEDURES = {
    "eb-horizon": "empirical-Bernstein confidence sequence, predictable plug-in bets tuned to the planned pairs "
                  "(docs/statistics.md)",
    "eb-mixture": "empirical-Bernstein confidence sequence, discrete mixture (docs/statistics.md)",
}
PROCEDURE = "eb-horizon"              # what runner.py --against uses now
TUNE = 0.5                            # eb-horizon tunes its bets to this share of the planned pairs
BET_CAP = 0.75                        # and never bets more (ψ needs λ < 1; Waudby-Smith & Ramdas use 1/2-3/4)
LAMBDAS = np.geomspace(0.02, 0.9, 16)
_PSI = -np.log1p(-LAMBDAS) - LAMBDAS
_BISECTIONS = 40


def pair_contributions(outcome_a: ArrayLike, outcome_b: ArrayLike, guess: ArrayLike,
                       mode: str = "C_P") -> tuple[np.ndarray, np.ndarray]:
    """(x, w) per pair from PointsDB outcome codes (0 correct, 1 incorrect, 2 invalid,
    3 truncated) and the problem's guess chance, for a P or O mode (see the module text)."""
    if mode[2] not in "PO":
        raise ValueError(f"anytime-valid differences are defined for the P and O modes, got {mode}")
    g = np.asarray(guess, dtype=float)
    def excess(outcome: ArrayLike) -> np.ndarray:
        o = np.asarray(outcome, dtype=np.int64)
        success = (o == 0) | ((o == 3) & (mode[2] == "O"))
        counted = np.ones_like(g) if mode[2] == "O" else (o != 3).astype(float)
        return success.astype(float) - g * counted
    return excess(outcome_b) - excess(outcome_a), 1.0 - g


def _log_mixture(s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """log E: the two-sided mixture at centred sums s (X scale) and variance sums v."""
    up = LAMBDAS[None, :] * s[:, None] - _PSI[None, :] * v[:, None]
    terms = np.concatenate([up, -2 * LAMBDAS[None, :] * s[:, None] + up], axis=1)
    top = terms.max(axis=1)
    return top + np.log(np.exp(terms - top[:, None]).sum(axis=1) / terms.shape[1])


def e_value(sum_x: ArrayLike, sum_w: ArrayLike, var_sum: ArrayLike, delta: ArrayLike) -> np.ndarray:
    """E_t(Δ): the mixture e-value of "the cell's difference is Δ" (vectorised over cells).

    ``sum_x`` = Σ x_i, ``sum_w`` = Σ w_i, ``var_sum`` = Σ (X_i - X̂_i)² on the [0, 1] scale.
    """
    s = (np.asarray(sum_x, dtype=float) - np.asarray(delta, dtype=float) * np.asarray(sum_w, dtype=float)) / 2.0
    return np.exp(_log_mixture(np.atleast_1d(s), np.atleast_1d(np.asarray(var_sum, dtype=float))))


def _bounds(sum_x: np.ndarray, sum_w: np.ndarray, var_sum: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of CS_t(α) per cell: where log E crosses log(1/α) on each side of the estimate."""
    level = np.log(1.0 / alpha)
    safe_w = np.where(sum_w > 0, sum_w, 1.0)
    centre = sum_x / safe_w
    # every x lies in [-1, 1] and w <= 1, so |Δ| can be read on a span of 2 / (mean w) around it
    span = 2.0 * np.maximum(np.ones_like(sum_w), sum_w) / safe_w + 2.0
    ends = []
    for sign in (-1.0, 1.0):
        inside, outside = np.zeros_like(centre), span.copy()
        for _ in range(_BISECTIONS):
            mid = (inside + outside) / 2.0
            s = (sum_x - (centre + sign * mid) * sum_w) / 2.0
            crossed = _log_mixture(s, var_sum) >= level
            inside, outside = np.where(crossed, inside, mid), np.where(crossed, mid, outside)
        ends.append(centre + sign * outside)
    # the estimand, a difference of two shares, lies in [-1, 1]: the sequence may be cut there
    low, high = np.maximum(ends[0], -1.0), np.minimum(ends[1], 1.0)
    return np.where(sum_w > 0, low, -1.0), np.where(sum_w > 0, high, 1.0)


def _round_sums(x: np.ndarray, w: np.ndarray, cell: ArrayLike, round_: ArrayLike, cells: int,
                rounds: int) -> dict[str, np.ndarray]:
    """Per round (rows) and cell (columns): pairs n, Σx, Σw, and on the X scale the
    predictable guess X̂ (the mean X of the cell's earlier rounds, 1/2 before any) and the
    round's Σ (X - X̂)²."""
    code = np.asarray(cell, dtype=np.int64) * rounds + np.asarray(round_, dtype=np.int64)
    size = cells * rounds
    def per(weights: np.ndarray | None) -> np.ndarray:
        return np.bincount(code, weights=weights, minlength=size).reshape(cells, rounds).T.astype(float)
    big_x = (x + 1.0) / 2.0
    n, s1, s2 = per(None), per(big_x), per(big_x ** 2)
    guess = (np.cumsum(s1, axis=0) - s1 + 0.5) / (np.cumsum(n, axis=0) - n + 1.0)
    # Σ over the round of (X - X̂)² = Σ X² - 2 X̂ Σ X + n X̂²
    return {"n": n, "x": per(x), "w": per(w), "guess": guess, "v": s2 - 2.0 * guess * s1 + n * guess ** 2}


def _horizon_bets(sums: dict[str, np.ndarray], horizon: np.ndarray, level: float) -> np.ndarray:
    """λ per round and cell (predictable plug-in, docs/statistics.md): the bet that makes the
    bound tightest after TUNE x the planned pairs ``horizon`` (per cell, fixed by the design
    before any outcome is seen), at the variance seen in earlier rounds."""
    n = sums["n"]
    planned = np.maximum(horizon * TUNE, 1.0)
    # WSR's predictable variance: (1/4 + Σ (X - X̂)²) / (pairs + 1) over the earlier rounds
    seen_n, seen_v = np.cumsum(n, axis=0) - n, np.cumsum(sums["v"], axis=0) - sums["v"]
    variance = (0.25 + seen_v) / (seen_n + 1.0)
    return np.minimum(BET_CAP, np.sqrt(2.0 * level / (variance * planned[None, :])))


@dataclass
class Sequence:
    """Per round (rows) and cell (columns): pairs, the estimate, the 95% (``alpha``) sequence,
    the equivalence sequence at ``alpha / family``, the running anytime p-value, and the
    direction of the evidence behind it (+1: B - A > 0, -1: < 0), read at the round where
    that p-value was reached: the side of the e-process that rejected 0, which is where the
    interval left 0 (the plain ``diff`` weighs every pair alike and can lean the other way)."""

    pairs: np.ndarray
    diff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    eq_low: np.ndarray
    eq_high: np.ndarray
    p_value: np.ndarray
    direction: np.ndarray


def _mixture_sequence(sums: dict[str, np.ndarray], alpha: float, family: int) -> tuple[np.ndarray, ...]:
    """PROCEDURES["eb-mixture"] (the first method, kept to read its runs): low, high, eq_low,
    eq_high, log E_t(0) and its side (+1/-1) from the discrete mixture over LAMBDAS."""
    cum_x, cum_w = np.cumsum(sums["x"], axis=0), np.cumsum(sums["w"], axis=0)
    shape = cum_x.shape
    flat_x, flat_w, flat_v = cum_x.ravel(), cum_w.ravel(), np.cumsum(sums["v"], axis=0).ravel()
    low, high = _bounds(flat_x, flat_w, flat_v, alpha)
    eq_low, eq_high = _bounds(flat_x, flat_w, flat_v, alpha / family)
    log_e0 = _log_mixture(flat_x / 2.0, flat_v)
    # the mixture is symmetric in the centred sum: its larger side is the sum's sign
    side = np.where(flat_x >= 0, 1.0, -1.0)
    return tuple(a.reshape(shape) for a in (low, high, eq_low, eq_high, log_e0, side))


def _horizon_sequence(sums: dict[str, np.ndarray], alpha: float, family: int,
                      horizon: np.ndarray) -> tuple[np.ndarray, ...]:
    """PROCEDURES["eb-horizon"]: the predictable plug-in empirical-Bernstein sequence with
    bets tuned to the planned pairs at alpha / family (docs/statistics.md). In closed form:
    Δ is rejected from below when (A_t - Δ B_t)/2 - P_t >= log(2/α), with A_t = Σ λ x,
    B_t = Σ λ w, P_t = Σ ψ(λ X̂)/X̂² (X - X̂)² (1 - X̂ for X̂ on the mirrored side); returns
    low, high, eq_low, eq_high, log E_t(0) and which side of it is larger (+1: B - A > 0)."""
    lam = _horizon_bets(sums, horizon, math.log(2.0 * family / alpha))
    big_a = np.cumsum(lam * sums["x"], axis=0)
    big_b = np.cumsum(lam * sums["w"], axis=0)
    # the penalty of each side: ψ(λ a)/a² per (X - X̂)², a = how far X may fall below X̂
    # (X̂ for the lower end, 1 - X̂ for the upper one; a = 1 is the textbook ψ(λ))
    def penalty(a: np.ndarray) -> np.ndarray:
        return np.cumsum((-np.log1p(-lam * a) - lam * a) / a ** 2 * sums["v"], axis=0)
    pen_low, pen_high = penalty(sums["guess"]), penalty(1.0 - sums["guess"])
    safe_b = np.where(big_b > 0, big_b, 1.0)
    def ends(level: float) -> tuple[np.ndarray, np.ndarray]:
        low = np.maximum((big_a - 2.0 * (pen_low + level)) / safe_b, -1.0)
        high = np.minimum((big_a + 2.0 * (pen_high + level)) / safe_b, 1.0)
        return np.where(big_b > 0, low, -1.0), np.where(big_b > 0, high, 1.0)
    low, high = ends(math.log(2.0 / alpha))
    eq_low, eq_high = ends(math.log(2.0 * family / alpha))
    up, down = big_a / 2.0 - pen_low, -big_a / 2.0 - pen_high   # log e of each side; up > level iff low > 0
    log_e0 = np.logaddexp(up, down) - math.log(2.0)
    return low, high, eq_low, eq_high, log_e0, np.where(up >= down, 1.0, -1.0)


def anytime_sequence(x: ArrayLike, w: ArrayLike, cell: ArrayLike, round_: ArrayLike, cells: int, rounds: int,
                     alpha: float = 0.05, family: int = 1, procedure: str = PROCEDURE,
                     horizon: ArrayLike | None = None) -> Sequence:
    """The confidence sequence of every cell after each round.

    ``x``, ``w``: per pair (pair_contributions); ``cell``: its cell code (0..cells-1);
    ``round_``: the round it was sampled in (0..rounds-1). Within a round the pairs of a
    cell share one predictable guess X̂ and one bet, so the order of the pairs inside a
    round does not matter. ``procedure``: a key of PROCEDURES; ``horizon``: eb-horizon's
    planned pairs per cell, fixed before any outcome (default: the cell's first round of
    pairs times ``rounds``, which is the design's when ``rounds`` is the run's maxrounds).
    """
    if procedure not in PROCEDURES:
        raise ValueError(f"unknown anytime procedure {procedure!r}; known: {', '.join(PROCEDURES)}")
    family = max(int(family), 1)
    sums = _round_sums(np.asarray(x, dtype=float), np.asarray(w, dtype=float), cell, round_, cells, rounds)
    if procedure == "eb-mixture":
        low, high, eq_low, eq_high, log_e0, side = _mixture_sequence(sums, alpha, family)
    else:
        n = sums["n"]
        planned = (n[np.argmax(n > 0, axis=0), np.arange(cells)] * rounds if horizon is None
                   else np.asarray(horizon, dtype=float))
        low, high, eq_low, eq_high, log_e0, side = _horizon_sequence(sums, alpha, family, planned)
    cum_n, cum_x, cum_w = (np.cumsum(sums[k], axis=0) for k in ("n", "x", "w"))
    log_e0 = np.where(cum_n > 0, log_e0, 0.0)
    best = np.maximum.accumulate(log_e0, axis=0)
    p = np.minimum(1.0, np.exp(-best))
    # the round at which each running maximum was reached (the latest of ties), and its side
    rows = np.arange(log_e0.shape[0])[:, None]
    at = np.maximum.accumulate(np.where(log_e0 >= best, rows, 0), axis=0)
    direction = np.take_along_axis(side, at, axis=0)
    diff = np.divide(cum_x, cum_w, out=np.zeros_like(cum_x), where=cum_w > 0)
    return Sequence(cum_n, diff, low, high, eq_low, eq_high, p, direction)


def cells_and_overall(x: ArrayLike, w: ArrayLike, cell: ArrayLike, round_: ArrayLike, cells: int, rounds: int,
                      alpha: float = 0.05, procedure: str = PROCEDURE, horizon: ArrayLike | None = None) -> Sequence:
    """anytime_sequence of every cell plus, in the last column, every pair together (the
    overall row); the family is cells + 1, as in analyze.py compare's Holm."""
    xs, ws, codes, rnd = np.asarray(x), np.asarray(w), np.asarray(cell), np.asarray(round_)
    both_cell = np.concatenate([codes, np.full(len(codes), cells)])
    return anytime_sequence(np.concatenate([xs, xs]), np.concatenate([ws, ws]), both_cell,
                            np.concatenate([rnd, rnd]), cells + 1, rounds, alpha, family=cells + 1,
                            procedure=procedure, horizon=None if horizon is None else
                            np.append(np.asarray(horizon, dtype=float), np.sum(horizon)))
