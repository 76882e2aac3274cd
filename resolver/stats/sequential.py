"""Anytime-valid paired differences: a confidence sequence for B - A that may be read after
every round without inflating its error (docs/statistics.md, "Stopping on the decision").

Each pair i (the same problem answered by A and B) contributes ``x_i = e_B - e_A`` with
``e = S - g·k`` (S the mode's raw success, g the problem's guess chance, k = 1 where the
sample counts toward the guess offset: answered samples in the P modes, every sample in the
O modes), and the weight ``w_i = 1 - g``. The cell's difference is ``Σ x_i / Σ w_i``, the
E_P / E_O estimand of docs/statistics.md; ``x_i`` lies in [-1, 1].

The sequence is the empirical-Bernstein one of Howard, Ramdas, McAuliffe & Sekhon (2021,
"Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2),
Theorem 4 and Section 3.2), in the form of Waudby-Smith & Ramdas (2023, "Estimating means of
bounded random variables by betting", JRSS-B, Theorem 2): with ``X_i = (x_i + 1)/2`` in
[0, 1], a predictable guess ``X̂_i`` (the mean of the earlier rounds, 1/2 before any) and
``ψ(λ) = -log(1 - λ) - λ``, for every fixed ``λ`` in [0, 1)

    M_t(λ) = exp(λ Σ (X_i - μ_i) - ψ(λ) Σ (X_i - X̂_i)²)

is a non-negative supermartingale (μ_i the conditional mean of X_i: the points of a cell
may differ). The e-process is the average of ``M_t(λ_j)`` and ``M_t(-λ_j)``'s mirror over a
fixed grid ``LAMBDAS`` (a discrete mixture, Howard et al. Section 3.1); by Ville's
inequality it exceeds 1/α with probability at most α at any time, so

    CS_t(α) = {Δ : E_t(Δ) < 1/α}

covers the running average of the pairs' conditional mean differences at every round at
once, and ``p_t = min(1, 1 / max_{s <= t} E_s(0))`` is an anytime-valid p-value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["LAMBDAS", "SEQUENTIAL_NAME", "Sequence", "anytime_sequence", "cells_and_overall", "e_value", "pair_contributions"]

#: the discrete mixture's bets: geometric from about one over the square root of the
#: largest variance a cell reaches (thousands of pairs) to near the edge of [0, 1)
SEQUENTIAL_NAME = "sequential.json"   # what runner.py --against writes in its run folder (docs/runner.md)
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


@dataclass
class Sequence:
    """Per round (rows) and cell (columns): pairs, the estimate, the 95% (``alpha``) sequence,
    the equivalence sequence at ``alpha / family``, and the running anytime p-value."""

    pairs: np.ndarray
    diff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    eq_low: np.ndarray
    eq_high: np.ndarray
    p_value: np.ndarray


def anytime_sequence(x: ArrayLike, w: ArrayLike, cell: ArrayLike, round_: ArrayLike, cells: int, rounds: int,
                     alpha: float = 0.05, family: int = 1) -> Sequence:
    """The confidence sequence of every cell after each round.

    ``x``, ``w``: per pair (pair_contributions); ``cell``: its cell code (0..cells-1);
    ``round_``: the round it was sampled in (0..rounds-1). Within a round the pairs of a
    cell share one predictable guess X̂ (the mean of the cell's earlier rounds), so the
    order of the pairs inside a round does not matter.
    """
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    code = np.asarray(cell, dtype=np.int64) * rounds + np.asarray(round_, dtype=np.int64)
    size = cells * rounds
    n = np.bincount(code, minlength=size).reshape(cells, rounds).T.astype(float)
    sx = np.bincount(code, weights=x, minlength=size).reshape(cells, rounds).T
    sw = np.bincount(code, weights=w, minlength=size).reshape(cells, rounds).T
    big_x = (x + 1.0) / 2.0
    s1 = np.bincount(code, weights=big_x, minlength=size).reshape(cells, rounds).T
    s2 = np.bincount(code, weights=big_x ** 2, minlength=size).reshape(cells, rounds).T
    cum_n, cum_x, cum_w = np.cumsum(n, axis=0), np.cumsum(sx, axis=0), np.cumsum(sw, axis=0)
    # the predictable guess of round r: the mean X of rounds before r (1/2 before any)
    before_n = cum_n - n
    before_1 = np.cumsum(s1, axis=0) - s1
    guess = np.divide(before_1 + 0.5, before_n + 1.0)
    # Σ over the round of (X - X̂)² = Σ X² - 2 X̂ Σ X + n X̂²
    var_sum = np.cumsum(s2 - 2.0 * guess * s1 + n * guess ** 2, axis=0)
    shape = cum_n.shape
    flat_x, flat_w, flat_v = cum_x.ravel(), cum_w.ravel(), var_sum.ravel()
    low, high = _bounds(flat_x, flat_w, flat_v, alpha)
    eq_low, eq_high = _bounds(flat_x, flat_w, flat_v, alpha / max(int(family), 1))
    e0 = e_value(flat_x, flat_w, flat_v, 0.0).reshape(shape)
    e0 = np.where(cum_n > 0, e0, 1.0)
    p = np.minimum(1.0, 1.0 / np.maximum.accumulate(e0, axis=0))
    diff = np.divide(cum_x, cum_w, out=np.zeros_like(cum_x), where=cum_w > 0)
    return Sequence(cum_n, diff, low.reshape(shape), high.reshape(shape), eq_low.reshape(shape),
                    eq_high.reshape(shape), p)


def cells_and_overall(x: ArrayLike, w: ArrayLike, cell: ArrayLike, round_: ArrayLike, cells: int, rounds: int,
                      alpha: float = 0.05) -> Sequence:
    """anytime_sequence of every cell plus, in the last column, every pair together (the
    overall row); the family is cells + 1, as in analyze.py compare's Holm."""
    xs, ws, codes, rnd = np.asarray(x), np.asarray(w), np.asarray(cell), np.asarray(round_)
    both_cell = np.concatenate([codes, np.full(len(codes), cells)])
    return anytime_sequence(np.concatenate([xs, xs]), np.concatenate([ws, ws]), both_cell,
                            np.concatenate([rnd, rnd]), cells + 1, rounds, alpha, family=cells + 1)
