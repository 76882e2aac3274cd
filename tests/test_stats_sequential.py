"""The anytime-valid confidence sequence of paired differences (resolver/stats/sequential.py;
docs/statistics.md, "Stopping on the decision"): its e-value against the formula written out
here, and its time-uniform coverage on data drawn with scipy, points of a cell differing."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from resolver.stats.sequential import (
    BET_CAP,
    LAMBDAS,
    PROCEDURES,
    TUNE,
    anytime_sequence,
    cells_and_overall,
    e_value,
    pair_contributions,
)


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
    seq = anytime_sequence(x, np.ones(300), np.zeros(300, int), np.repeat(np.arange(3), 100), 1, 3,
                           procedure="eb-mixture")
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


@pytest.mark.parametrize("procedure", sorted(PROCEDURES))
def test_time_uniform_coverage_on_scipy_draws(procedure: str) -> None:
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
                           np.concatenate(round_codes), cells, rounds, procedure=procedure)
    t = np.asarray(truth)
    missed = ((seq.low > t) | (seq.high < t)).any(axis=0).mean()
    assert missed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / cells)
    # and it is not vacuous: at 512 pairs the half-width is under 0.12
    assert np.median((seq.high[-1] - seq.low[-1]) / 2) < 0.12


@pytest.mark.parametrize("procedure", sorted(PROCEDURES))
def test_no_false_decisions_when_peeking_at_zero_difference(procedure: str) -> None:
    """Equal models, a decision looked for after every round: the running anytime p-value
    falls below 0.05 in at most 5% of the cells (a fixed-n test read this way would not)."""
    rng = np.random.default_rng(7)
    cells, rounds, count = 600, 8, 32
    x = sps.randint.rvs(-1, 2, size=(cells, rounds * count), random_state=rng).astype(float)
    codes = np.repeat(np.arange(cells), rounds * count)
    rnd = np.tile(np.repeat(np.arange(rounds), count), cells)
    seq = anytime_sequence(x.ravel(), np.ones(x.size), codes, rnd, cells, rounds, procedure=procedure)
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


# ------------------------------------------------------------------ eb-horizon (the runner's procedure now)

def _horizon_by_hand(rounds: list[list[tuple[float, float]]], planned: float, alpha: float, family: int) -> dict:
    """eb-horizon written out pair by pair from docs/statistics.md: per round the guess X̂,
    the variance estimate, the bet λ; then the two one-sided e-processes and their ends."""
    def psi(u: float) -> float:
        return -math.log(1 - u) - u
    level_tune = math.log(2 * family / alpha)
    seen: list[float] = []
    sq_dev = 0.0
    a = b = pen_low = pen_high = 0.0
    e_max = 1.0
    for pairs in rounds:
        guess = (sum(seen) + 0.5) / (len(seen) + 1)
        variance = (0.25 + sq_dev) / (len(seen) + 1)
        lam = min(BET_CAP, math.sqrt(2 * level_tune / (variance * planned * TUNE)))
        for x, w in pairs:
            big = (x + 1) / 2
            a += lam * x
            b += lam * w
            pen_low += psi(lam * guess) / guess ** 2 * (big - guess) ** 2
            pen_high += psi(lam * (1 - guess)) / (1 - guess) ** 2 * (big - guess) ** 2
        for x, _ in pairs:
            seen.append((x + 1) / 2)
            sq_dev += ((x + 1) / 2 - guess) ** 2
        e_max = max(e_max, (math.exp(a / 2 - pen_low) + math.exp(-a / 2 - pen_high)) / 2)
    def ends(level: float) -> tuple[float, float]:
        return max(-1.0, (a - 2 * (pen_low + level)) / b), min(1.0, (a + 2 * (pen_high + level)) / b)
    return {"ends": ends(math.log(2 / alpha)), "eq": ends(math.log(2 * family / alpha)), "p": min(1.0, 1 / e_max)}


def test_horizon_sequence_is_the_formula_written_out() -> None:
    """Three rounds of a small cell with guess chances (w < 1), against the pair-by-pair loop."""
    rng = np.random.default_rng(3)
    rounds = [[(float(rng.choice([-1, 0, 0, 1, 1])) * w, w) for w in rng.choice([1.0, 0.75], size=40)]
              for _ in range(3)]
    x = np.array([p[0] for r in rounds for p in r])
    w = np.array([p[1] for r in rounds for p in r])
    rnd = np.repeat(np.arange(3), 40)
    seq = anytime_sequence(x, w, np.zeros(120, int), rnd, 1, 3, alpha=0.05, family=3, horizon=[200.0])
    for t in range(3):
        want = _horizon_by_hand(rounds[:t + 1], 200.0, 0.05, 3)
        assert (seq.low[t, 0], seq.high[t, 0]) == pytest.approx(want["ends"], rel=1e-9, abs=1e-12)
        assert (seq.eq_low[t, 0], seq.eq_high[t, 0]) == pytest.approx(want["eq"], rel=1e-9, abs=1e-12)
        assert seq.p_value[t, 0] == pytest.approx(want["p"], rel=1e-9)
    # the default horizon is the first round's pairs times the rounds: 40 x 3 here
    default = anytime_sequence(x, w, np.zeros(120, int), rnd, 1, 3, alpha=0.05, family=3)
    assert default.low[-1, 0] == pytest.approx(_horizon_by_hand(rounds, 120.0, 0.05, 3)["ends"][0], rel=1e-9)


def test_range_aware_penalty_is_a_supermartingale_step() -> None:
    """The one-round step behind eb-horizon's penalty: E exp(λ(X - μ) - ψ(λa)/a² (X - X̂)²) <= 1
    with a = X̂, for X on {0, 1/2, 1} (every law on a grid, computed exactly), any X̂ in (0, 1)
    and λ <= BET_CAP. With a = 1 it is Fan et al.'s textbook step; a < 1 is the tighter one."""
    worst = 0.0
    grid = np.linspace(0, 1, 21)
    for p0 in grid:
        for p1 in grid[grid <= 1 - p0 + 1e-12]:
            probs = np.array([p0, p1, max(0.0, 1 - p0 - p1)])
            values = np.array([0.0, 0.5, 1.0])
            mu = float(probs @ values)
            for guess in (0.05, 0.3, 0.5, 0.8, 0.97):
                for lam in (0.05, 0.3, BET_CAP):
                    pen = (-math.log1p(-lam * guess) - lam * guess) / guess ** 2
                    step = float(probs @ np.exp(lam * (values - mu) - pen * (values - guess) ** 2))
                    worst = max(worst, step)
    assert worst <= 1 + 1e-12


def test_horizon_is_narrower_than_the_mixture() -> None:
    """The point of eb-horizon: on the same pairs, from the second of four rounds on, its
    equivalence interval (at alpha / 7) is narrower than eb-mixture's in most cells."""
    rng = np.random.default_rng(11)
    cells, rounds, count = 200, 4, 400
    x = sps.multinomial.rvs(1, [0.11, 0.11, 0.78], size=cells * rounds * count, random_state=rng)
    x = (x[:, 0] - x[:, 1]).astype(float)
    codes = np.repeat(np.arange(cells), rounds * count)
    rnd = np.tile(np.repeat(np.arange(rounds), count), cells)
    width = {p: (lambda s: s.eq_high - s.eq_low)(anytime_sequence(x, np.ones(x.size), codes, rnd, cells, rounds,
                                                                  family=7, procedure=p)) for p in PROCEDURES}
    assert (width["eb-horizon"][1:] < width["eb-mixture"][1:]).mean() > 0.9
    assert np.median(width["eb-horizon"][1] / width["eb-mixture"][1]) < 0.95


@pytest.mark.parametrize("procedure", sorted(PROCEDURES))
def test_direction_is_the_side_that_rejected_not_the_latest_average(procedure: str) -> None:
    """Rounds 0-1 favour A (their interval leaves 0 below it); round 2 swings the plain average
    to B's side. The p-value is a running maximum, so 0 stays rejected, and the verdict must
    follow the evidence that rejected it (A), not the sign of the latest average (B)."""
    counts = [(60, 2, 25), (60, 3, 24), (120, 90, 5)]          # (pairs, B-only right, A-only right)
    x = np.concatenate([[1.0] * up + [-1.0] * down + [0.0] * (n - up - down) for n, up, down in counts])
    rounds = np.concatenate([[r] * n for r, (n, _, _) in enumerate(counts)])
    seq = anytime_sequence(x, np.ones_like(x), np.zeros(len(x), dtype=int), rounds, 1, 3, procedure=procedure,
                           horizon=[180])
    assert sum(up - down for _, up, down in counts) > 0 and seq.diff[2, 0] > 0     # the average leans to B
    assert seq.p_value[2, 0] < 0.05
    decided = int(np.argmax(seq.p_value[:, 0] <= seq.p_value[2, 0]))
    assert seq.high[decided, 0] < 0                                                 # there, A was ahead
    assert seq.direction[2, 0] == -1 and seq.direction[decided, 0] == -1
