"""The statistics of runner.py --against by simulation (docs/performance.md, "Stopping on the
decision"; used by bench_stop_on_decision.py).

Each replicate is one comparison of six cells of 28 points (r12's medium cell size). A's
point accuracies are drawn from U(0.35, 0.85); B's are A's plus the cell's true difference.
Whether A and B get a problem right is correlated problem by problem as on the simulator
(a Gaussian copula with latent correlation 0.7, docs/simulator.md). Both models run
adaptively on their own (the runner's rule, needs_another_round); B --against stops each cell
as resolver.run.against does (the same sequence, Holm, equivalence and A running out),
with the rounds of all cells in step and the overall row's p-value left at 1 (a slightly
stricter Holm than the runner's). Guess chance and truncation are 0, so C_P is the accuracy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from resolver.config import Precision
from resolver.run.rounds import Tally, needs_another_round
from resolver.stats import compare_joint, holm, joint_table
from resolver.stats.sequential import PROCEDURES, anytime_sequence

CELLS, POINTS, RHO = 6, 28, 0.7
SCENARIOS = {
    "equal": [0.0] * CELLS,
    "small": [0.04] * CELLS,
    "large": [0.20] * CELLS,
    "by-cell": [-0.15, -0.05, 0.0, 0.0, 0.05, 0.15],
}
PRECISIONS = {"medium": Precision(count=32, maxrounds=4, target_margin=0.07),
              "high": Precision(count=64, maxrounds=8, target_margin=0.05)}


def _adaptive_rounds(correct: np.ndarray, precision: Precision) -> np.ndarray:
    """Rounds each point runs on its own (the runner's rule) from its outcomes (.., samples)."""
    shape = correct.shape[:-1]
    rounds = np.zeros(shape, dtype=int)
    for idx in np.ndindex(shape):
        tally, r = Tally(), 0
        while True:
            for ok in correct[idx][r * precision.count:(r + 1) * precision.count]:
                tally.add({"is_truncated": False, "is_correct": bool(ok), "is_valid": True, "guess_chance": 0.0})
            r += 1
            if not needs_another_round(tally, r, precision):
                break
        rounds[idx] = r
    return rounds


@dataclass
class Outcome:
    samples_against: int
    samples_full: int
    truth: np.ndarray          # per cell, the mean true difference over the pairs B --against drew
    true_diff: np.ndarray      # the cell's designed difference
    verdict: np.ndarray        # B --against: +1, -1, 0
    equivalent: np.ndarray
    low: np.ndarray
    high: np.ndarray
    fixed: np.ndarray          # the full-precision paired compare's Holm verdict
    peeked: np.ndarray         # the fixed-n compare read after every round (is anything ever decided)


def replicate(rng: np.random.Generator, diffs: list[float], precision: Precision, margin: float = 0.05) -> Outcome:
    count, maxr = precision.count, precision.maxrounds
    n = count * maxr
    p_a = rng.uniform(0.35, 0.85, size=(CELLS, POINTS))
    p_b = np.clip(p_a + np.asarray(diffs)[:, None], 0.01, 0.99)
    latent = sps.norm.rvs(size=(CELLS, POINTS, n), random_state=rng)
    own = sps.norm.rvs(size=(2, CELLS, POINTS, n), random_state=rng)
    u = sps.norm.cdf(np.sqrt(RHO) * latent[None] + np.sqrt(1 - RHO) * own)
    a_ok, b_ok = u[0] < p_a[..., None], u[1] < p_b[..., None]
    a_rounds, b_rounds = _adaptive_rounds(a_ok, precision), _adaptive_rounds(b_ok, precision)

    # B --against: the sequence over every potential round (a round's row depends only on rounds before it)
    x = b_ok.astype(float) - a_ok.astype(float)
    rnd = np.broadcast_to(np.arange(n) // count, x.shape)
    cell = np.broadcast_to(np.arange(CELLS)[:, None, None], x.shape)
    point_ok = rnd < a_rounds[..., None]                 # A has that round of that point
    seq = anytime_sequence(x[point_ok], np.ones(int(point_ok.sum())), cell[point_ok], rnd[point_ok], CELLS, maxr,
                           family=CELLS + 1)
    stop = np.full(CELLS, -1)
    state = np.zeros(CELLS, dtype=int)                   # 0 open, 1 decided, 2 equivalent, 3 A ran out / maxrounds
    for r in range(maxr):
        p = np.append(seq.p_value[np.where(stop >= 0, stop, r), np.arange(CELLS)], 1.0)
        rejected = holm(p, 0.05)[0][:CELLS]
        for c in range(CELLS):
            if state[c]:
                continue
            if rejected[c]:
                state[c] = 1
            elif -margin < seq.eq_low[r, c] and seq.eq_high[r, c] < margin:
                state[c] = 2
            elif r + 1 >= maxr or not (a_rounds[c] > r + 1).any():
                state[c] = 3
            if state[c]:
                stop[c] = r
    # a late Holm step may decide a cell that stopped for another reason: the final Holm is what compare shows
    final_p = np.append(seq.p_value[stop, np.arange(CELLS)], 1.0)
    rejected = holm(final_p, 0.05)[0][:CELLS]
    diff = seq.diff[stop, np.arange(CELLS)]
    verdict = np.where(rejected, np.sign(diff), 0).astype(int)
    used = point_ok & (rnd <= stop[:, None, None])
    samples_against = int(used.sum())
    true_point = (p_b - p_a)[..., None] * np.ones(n)
    truth = np.array([true_point[c][used[c]].mean() for c in range(CELLS)])

    # B at A's precision, then the paired compare on the samples both have (Holm over cells + overall)
    both = (rnd < a_rounds[..., None]) & (rnd < b_rounds[..., None])
    outcome_a, outcome_b = np.where(a_ok, 0, 1), np.where(b_ok, 0, 1)
    groups = np.concatenate([cell[both], np.full(int(both.sum()), CELLS)])
    joint = joint_table(np.concatenate([outcome_a[both]] * 2), np.concatenate([outcome_b[both]] * 2), groups, CELLS + 1)
    zeros = np.zeros(CELLS + 1)
    table = compare_joint(joint, zeros, zeros, zeros, "C_P")
    fixed_rejected = holm(table["p_value"].to_numpy(), 0.05)[0][:CELLS]
    fixed = np.where(fixed_rejected, np.sign(table["diff"].to_numpy()[:CELLS]), 0).astype(int)
    # the same fixed-n compare read after every round of B at A's precision (peeking)
    peeked = np.zeros(CELLS, dtype=bool)
    for r in range(maxr):
        upto = both & (rnd <= r)
        g = np.concatenate([cell[upto], np.full(int(upto.sum()), CELLS)])
        j = joint_table(np.concatenate([outcome_a[upto]] * 2), np.concatenate([outcome_b[upto]] * 2), g, CELLS + 1)
        t = compare_joint(j, zeros, zeros, zeros, "C_P")
        peeked |= holm(t["p_value"].to_numpy(), 0.05)[0][:CELLS]
    return Outcome(samples_against, int((b_rounds * count).sum()), truth, np.asarray(diffs), verdict,
                   state == 2, seq.low[stop, np.arange(CELLS)], seq.high[stop, np.arange(CELLS)], fixed, peeked)


def study(replicates: int, seed: int = 44) -> list[dict]:
    """One row per (precision, scenario): savings, agreement, false decisions, coverage."""
    rng = np.random.default_rng(seed)
    rows = []
    for pname, precision in PRECISIONS.items():
        for sname, diffs in SCENARIOS.items():
            runs = [replicate(rng, diffs, precision) for _ in range(replicates)]
            fixed = np.concatenate([r.fixed for r in runs])
            verdict = np.concatenate([r.verdict for r in runs])
            zero = np.concatenate([r.true_diff == 0 for r in runs])
            decided = fixed != 0
            covered = np.concatenate([(r.low <= r.truth) & (r.truth <= r.high) for r in runs])
            rows.append({
                "precision": pname, "scenario": sname, "replicates": replicates,
                "samples_against": sum(r.samples_against for r in runs),
                "samples_full": sum(r.samples_full for r in runs),
                "compare_decided": int(decided.sum()),
                "agree": int((verdict[decided] == fixed[decided]).sum()),
                "opposite": int((verdict * fixed == -1).sum()),
                "zero_cells": int(zero.sum()),
                "false_against": int((verdict[zero] != 0).sum()),
                "false_fixed": int((fixed[zero] != 0).sum()),
                "false_peeked": int(np.concatenate([r.peeked for r in runs])[zero].sum()),
                "equivalent": int(np.concatenate([r.equivalent for r in runs]).sum()),
                "cells": int(len(verdict)), "covered": int(covered.sum()),
            })
    return rows


def widths(cells: int = 60, seed: int = 45) -> list[dict]:
    """The price of looking after every round: per precision, procedure and round, the median
    half-width of the anytime 95% interval over the fixed-n normal one (z = 1.96, the pairs'
    own standard deviation) at the same pairs, on equal models drawn as in replicate()."""
    rng = np.random.default_rng(seed)
    rows = []
    for pname, precision in PRECISIONS.items():
        count, maxr = precision.count, precision.maxrounds
        n = count * maxr
        p_a = rng.uniform(0.35, 0.85, size=(cells, POINTS))
        latent = sps.norm.rvs(size=(cells, POINTS, n), random_state=rng)
        own = sps.norm.rvs(size=(2, cells, POINTS, n), random_state=rng)
        u = sps.norm.cdf(np.sqrt(RHO) * latent[None] + np.sqrt(1 - RHO) * own)
        x = (u[1] < p_a[..., None]).astype(float) - (u[0] < p_a[..., None])
        rnd = np.broadcast_to(np.arange(n) // count, x.shape)
        cell = np.broadcast_to(np.arange(cells)[:, None, None], x.shape)
        by_round = x.reshape(cells, POINTS, maxr, count).transpose(0, 2, 1, 3).reshape(cells, maxr, -1)
        pairs = np.arange(1, maxr + 1) * POINTS * count
        fixed = np.stack([1.96 * by_round[:, :r + 1].reshape(cells, -1).std(axis=1, ddof=1) / np.sqrt(pairs[r])
                          for r in range(maxr)])
        for procedure in PROCEDURES:
            seq = anytime_sequence(x.ravel(), np.ones(x.size), cell.ravel(), rnd.ravel(), cells, maxr,
                                   family=CELLS + 1, procedure=procedure)
            ratio = np.median((seq.high - seq.low) / 2 / fixed, axis=1)
            rows.append({"precision": pname, "procedure": procedure, "pairs": pairs.tolist(),
                         "ratio": [round(float(v), 3) for v in ratio]})
    return rows
