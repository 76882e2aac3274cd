"""The anytime-valid confidence sequence of paired differences (resolver/stats/sequential.py;
docs/statistics.md, "Stopping on the decision"): its e-value against the formula written out
here, and its time-uniform coverage on data drawn with scipy, points of a cell differing."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from resolver.stats.sequential import LAMBDAS, anytime_sequence, cells_and_overall, e_value, pair_contributions


def _mixture(s: float, v: float) -> float:
    """The discrete mixture written out: mean over ±λ of exp(±λ s - (-log(1 - λ) - λ) v)."""
    terms = [math.exp(sign * lam * s - (-math.log(1 - lam) - lam) * v) for lam in LAMBDAS for sign in (1, -1)]
    return sum(terms) / len(terms)


def test_e_value_is_the_mixture_written_out() -> None:
    for sum_x, sum_w, var, delta in ((12.0, 80.0, 9.5, 0.0), (-30.0, 200.0, 40.0, 0.1), (3.0, 10.0, 1.0, -0.2)):
        expected = _mixture((sum_x - delta * sum_w) / 2.0, var)
        assert e_value(sum_x, sum_w, var, delta)[0] == pytest.approx(expected, rel=1e-9)


def test_pair_contributions_by_hand() -> None:
    # A correct, B wrong; A truncated, B correct; both invalid; g = 1/2 on the second pair
    x, w = pair_contributions([0, 3, 2], [1, 0, 2], [0.0, 0.5, 0.0], "C_P")
    assert x.tolist() == [-1.0, 0.5, 0.0] and w.tolist() == [1.0, 0.5, 1.0]
    x, _ = pair_contributions([0, 3, 2], [1, 0, 2], [0.0, 0.5, 0.0], "C_O")
    assert x.tolist() == [-1.0, 0.0, 0.0]          # O: a truncation is a success too
    with pytest.raises(ValueError):
        pair_contributions([0], [0], [0.0], "C_I")


def test_interval_ends_are_where_the_e_value_crosses() -> None:
    rng = np.random.default_rng(5)
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.15, 0.6, 0.25], size=300)
    seq = anytime_sequence(x, np.ones(300), np.zeros(300, int), np.repeat(np.arange(3), 100), 1, 3)
    big = (x + 1) / 2
    guess = np.array([0.5, (big[:100].sum() + 0.5) / 101, (big[:200].sum() + 0.5) / 201])
    var = sum(((big[r * 100:(r + 1) * 100] - guess[r]) ** 2).sum() for r in range(3))
    for end in (seq.low[-1, 0], seq.high[-1, 0]):
        assert _mixture((x.sum() - end * 300) / 2.0, var) == pytest.approx(20.0, rel=1e-4)
    assert seq.p_value[-1, 0] <= 1.0 and seq.low[-1, 0] < x.mean() < seq.high[-1, 0]


def _draw_cell(rng: np.random.Generator, rounds: int, count: int, points: int, diffs: np.ndarray,
               discord: float) -> tuple[np.ndarray, np.ndarray]:
    """Paired x per (round, point, sample) from scipy's multinomial: P(+1) - P(-1) = the point's diff."""
    plus, minus = (discord + diffs) / 2.0, (discord - diffs) / 2.0
    x = np.empty((rounds, points, count))
    for j in range(points):
        draws = sps.multinomial.rvs(1, [plus[j], minus[j], 1 - plus[j] - minus[j]], size=rounds * count,
                                    random_state=rng)
        x[:, j, :] = (draws[:, 0] - draws[:, 1]).reshape(rounds, count)
    return x.reshape(rounds, -1), np.repeat(np.arange(rounds), points * count)


def test_time_uniform_coverage_on_scipy_draws() -> None:
    """Looked at after every one of 8 rounds, the 95% sequence misses the running mean in at
    most 5% of the cells (1,000 cells; the bound 5% + 3 Monte-Carlo standard errors)."""
    rng = np.random.default_rng(44)
    cells, rounds, count, points = 1000, 8, 16, 4
    xs, cell_codes, round_codes, truth = [], [], [], []
    for c in range(cells):
        diffs = rng.uniform(-0.2, 0.2, size=points)       # the points of a cell differ
        x, r = _draw_cell(rng, rounds, count, points, diffs, discord=0.45)
        xs.append(x.ravel())
        cell_codes.append(np.full(x.size, c))
        round_codes.append(r)
        truth.append(diffs.mean())                     # every round samples every point equally
    seq = anytime_sequence(np.concatenate(xs), np.ones(cells * rounds * count * points), np.concatenate(cell_codes),
                           np.concatenate(round_codes), cells, rounds)
    t = np.asarray(truth)
    missed = ((seq.low > t) | (seq.high < t)).any(axis=0).mean()
    assert missed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / cells)
    # and it is not vacuous: at 512 pairs the half-width is under 0.12
    assert np.median((seq.high[-1] - seq.low[-1]) / 2) < 0.12


def test_no_false_decisions_when_peeking_at_zero_difference() -> None:
    """Equal models, a decision looked for after every round: the running anytime p-value
    falls below 0.05 in at most 5% of the cells (a fixed-n test read this way would not)."""
    rng = np.random.default_rng(7)
    cells, rounds, count = 600, 8, 32
    x = sps.randint.rvs(-1, 2, size=(cells, rounds * count), random_state=rng).astype(float)
    codes = np.repeat(np.arange(cells), rounds * count)
    rnd = np.tile(np.repeat(np.arange(rounds), count), cells)
    seq = anytime_sequence(x.ravel(), np.ones(x.size), codes, rnd, cells, rounds)
    assert (seq.p_value[-1] <= 0.05).mean() <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / cells)
    # the same data under a fixed-n z test at every round: peeking inflates the error
    means = np.cumsum(x.reshape(cells, rounds, count).sum(axis=2), axis=1) / (np.arange(1, rounds + 1) * count)
    sds = np.sqrt(2 / 3 / (np.arange(1, rounds + 1) * count))
    assert (np.abs(means / sds) > 1.96).any(axis=1).mean() > 0.08


def test_overall_column_pools_every_pair() -> None:
    x = np.array([1.0, 0.0, -1.0, 1.0, 1.0, 0.0])
    seq = cells_and_overall(x, np.ones(6), np.array([0, 0, 0, 1, 1, 1]), np.zeros(6, int), 2, 1)
    assert seq.pairs[0].tolist() == [3, 3, 6]
    assert seq.diff[0].tolist() == pytest.approx([0.0, 2 / 3, 1 / 3])
