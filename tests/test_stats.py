"""resolver.stats against independent references: docs/statistics.md: worked example, docs/analyze.md's
ReasonScore cell, scipy's Wilson intervals (plain and continuity-corrected) and hand
computations of every mode's map (docs/statistics.md)."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm

from resolver.core.errors import UserError
from resolver.stats import estimates as stats

# scipy uses the exact 97.5% normal quantile; the toolkit's default is docs/statistics.md: 1.96.
# Comparisons with scipy pass scipy's z so that they test the formula itself.
ZQ = float(norm.ppf(0.975))


def scipy_wilson(successes: int, trials: int):
    ci = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return (ci.low + ci.high) / 2, (ci.high - ci.low) / 2


def counts(c, x, v, t, g, g_all=None):
    frame = pd.DataFrame({"correct": [c], "incorrect": [x], "invalid": [v], "truncated": [t], "guess_sum": [g]})
    if g_all is not None:
        frame["guess_sum_all"] = [g_all]
    return frame


def scipy_cc(successes: int, trials: int):
    """scipy's continuity-corrected Wilson interval (low, high)."""
    ci = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilsoncc")
    return ci.low, ci.high


def mapped(successes, trials, offset, scale):
    """Hand rule of docs/statistics.md: map both ends, floor at 0, cap the top at the raw top."""
    raw_low, raw_high = scipy_cc(successes, trials)
    low = max(0.0, (raw_low * trials - offset) / scale)
    high = max(0.0, min(raw_high, (raw_high * trials - offset) / scale))
    return min(low, high), high


def test_spec03_worked_example():
    # 12-choice point: c = 337, m = 888, G = 74, 6 invalid, 8 truncated.
    frame = stats.add_statistics(counts(337, 888 - 337 - 6, 6, 8, 74.0), mode="E_I")
    row = frame.iloc[0]
    assert row["adjusted_successes"] == 263
    assert row["adjusted_trials"] == 814
    assert 263 / 814 == pytest.approx(0.3230958, abs=5e-8)
    assert row["adjusted_center"] == pytest.approx(0.3239268, abs=5e-8)
    assert row["adjusted_margin"] == pytest.approx(0.0320624, abs=5e-8)
    # the E_I mode itself is now the calibrated interval: CC-Wilson of 337/888 mapped by g = 74/888
    low, high = mapped(337, 888, 74.0, 888 - 74.0)
    assert row["center"] == pytest.approx((low + high) / 2, abs=2e-5)      # 1.96 vs scipy's exact z
    assert row["margin"] == pytest.approx((high - low) / 2, abs=2e-5)
    assert not row["below_chance"]
    assert row["invalid_ratio"] == pytest.approx(6 / 888)
    assert row["truncated_ratio"] == pytest.approx(8 / 896)


def test_seed001_adjusted_score():
    assert stats.adjusted_score(0.808, 0.018, 0.015) == pytest.approx(0.811, abs=1e-12)


def test_wilson_matches_scipy_on_random_counts():
    rng = np.random.default_rng(7)
    trials = rng.integers(1, 2000, size=300)
    successes = (rng.random(300) * (trials + 1)).astype(int).clip(0, trials)
    center, margin = stats.wilson_interval(successes, trials, ZQ)
    for s, k, c, m in zip(successes, trials, center, margin):
        ref_c, ref_m = scipy_wilson(int(s), int(k))
        assert c == pytest.approx(ref_c, abs=1e-12)
        assert m == pytest.approx(ref_m, abs=1e-12)


def test_wilson_scalar_edges():
    assert stats.wilson_interval(0, 0) == (0.0, 0.0)
    c, m = stats.wilson_interval(10, 10, ZQ)
    ref = scipy_wilson(10, 10)
    assert (c, m) == pytest.approx(ref)
    assert isinstance(c, float)


# c = 30, x = 10, v = 5, t = 5, G = 9, G_all = 10  ->  m = 45, n = 50, g = 0.2
HAND = (30, 10, 5, 5, 9.0, 10.0)


@pytest.mark.parametrize("mode,successes,trials,offset,scale", [
    ("E_I", 30, 45, 9.0, 45 - 9.0),            # (q m - G) / (m - G)
    ("C_I", 30, 45, 9.0, 45 - 9.0),            # (q - g) / (1 - g): the same map
    ("C_P", 30, 50, 9.0, 50 * 0.8),            # (q - G/n) / (1 - g)
    ("E_P", 30, 50, 9.0, 50 - 10.0),           # (q n - G) / (n - G_all)
    ("C_O", 35, 50, 0.2 * 50, 50 * 0.8),       # (q - g) / (1 - g) on (c + t) / n
    ("E_O", 35, 50, 10.0, 50 - 10.0),          # (q n - G_all) / (n - G_all)
])
def test_every_mode_by_hand(mode, successes, trials, offset, scale):
    got = stats.mode_interval(counts(*HAND), mode, ZQ).iloc[0]
    low, high = mapped(successes, trials, offset, scale)
    assert got["low"] == pytest.approx(low, abs=1e-12)
    assert got["high"] == pytest.approx(high, abs=1e-12)
    assert got["center"] == pytest.approx((low + high) / 2, abs=1e-12)
    assert got["margin"] == pytest.approx((high - low) / 2, abs=1e-12)
    assert not got["below_chance"]


def test_hand_numbers_of_c_p():
    # Worked by hand (docs/statistics.md): CC-Wilson of 30/50 with z = 1.96 is
    # [(60 + 3.8416 - 1 - 1.96 sqrt(3.8416 - 2 - 0.02 + 2.4 (20 + 1))) / 107.6832,
    #  (60 + 3.8416 + 1 + 1.96 sqrt(3.8416 + 2 - 0.02 + 2.4 (20 - 1))) / 107.6832]
    #  = [48.6778 / 107.6832, 78.8965 / 107.6832] = [0.452046, 0.732672];
    # mapped by (q - 0.18) / 0.8: [0.340057, 0.690840].
    got = stats.mode_interval(counts(*HAND), "C_P").iloc[0]
    assert (got["low"], got["high"]) == pytest.approx((0.340057, 0.690840), abs=2e-6)


def test_corrected_mode_floors_at_zero():
    # 3 of 10 right with a coin-flip guess rate: the lower end maps below zero.
    got = stats.mode_interval(counts(3, 7, 0, 0, 5.0), "C_I", ZQ).iloc[0]
    raw_low, raw_high = scipy_cc(3, 10)
    high = (raw_high - 0.5) / 0.5
    assert high > 0 and raw_low < 0.5
    assert got["center"] == pytest.approx(high / 2)
    assert got["margin"] == pytest.approx(high / 2)


def test_below_chance_is_flagged_not_a_zero_width_certainty():
    # 0 of 20 on a yes/no task: the CC-Wilson top (0.1947 by scipy) is below 0.5.
    assert scipy_cc(0, 20)[1] < 0.5
    for mode in stats.MODES:
        got = stats.mode_interval(counts(0, 20, 0, 0, 10.0, 10.0), mode).iloc[0]
        if mode.endswith("O"):
            continue
        assert got["below_chance"], mode
        assert (got["low"], got["high"]) == (0.0, 0.0)
    # 7 of 20: the top (0.5918) is above 0.5, so not flagged
    assert not stats.mode_interval(counts(7, 13, 0, 0, 10.0), "C_I")["below_chance"].iloc[0]
    row = stats.add_statistics(counts(0, 20, 0, 0, 10.0)).iloc[0]
    assert bool(row["below_chance"]) is True


def test_truncation_costs_one_failure():
    # Expected counts of a model with skill s on a guess-g task and truncation rate tau:
    # every P mode's plug-in estimate (S - offset) / scale is (1 - tau) s exactly, every
    # O mode's (1 - tau) s + tau, every I mode's s (docs/statistics.md derivations).
    for g, s, tau in [(0.5, 0.55, 0.4), (1 / 12, 0.3, 0.25), (1 / 3, 0.0, 0.6), (0.0, 0.8, 0.1)]:
        n = 1000.0
        m = n * (1 - tau)
        c = m * (g + (1 - g) * s)
        frame = counts(c, m - c, 0, n - m, g * m, g * n)
        for mode in stats.MODES:
            successes, trials, offset, scale = stats.mode_map(frame, mode)
            estimate = (successes[0] - offset[0]) / scale[0]
            target = {"I": s, "P": (1 - tau) * s, "O": (1 - tau) * s + tau}[mode[2]]
            assert estimate == pytest.approx(target, abs=1e-12), (mode, g, s, tau)


def test_all_truncated_cell_is_never_better_than_chance():
    # n = 16 all truncated on a yes/no task (G = 0, G_all = 8): [0, U], U = CC-Wilson top of 0/16.
    top = scipy_cc(0, 16)[1]
    truncated = counts(0, 0, 0, 16, 0.0, 8.0)
    chance = counts(8, 8, 0, 0, 8.0, 8.0)        # answered everything, exactly at chance
    for mode in ("C_P", "E_P"):
        got = stats.mode_interval(truncated, mode, ZQ).iloc[0]
        assert (got["low"], got["high"]) == pytest.approx((0.0, top), abs=1e-12)
        at_chance = stats.mode_interval(chance, mode, ZQ).iloc[0]
        assert got["center"] <= at_chance["center"] and got["high"] <= at_chance["high"]


def test_mapped_top_is_capped_at_the_raw_top():
    # E_P when the truncated samples had a high guess chance (G = 4 of 40 answered,
    # G_all = 13): (q n - G) / (n - G_all) > q once q > G / G_all, so the top is capped.
    frame = counts(40, 0, 0, 10, 4.0, 13.0)
    got = stats.mode_interval(frame, "E_P", ZQ).iloc[0]
    top = scipy_cc(40, 50)[1]
    assert (top * 50 - 4) / 37 > top
    assert got["high"] == pytest.approx(top, abs=1e-12)


def test_guess_sum_all_fallback():
    # absent, NaN or impossible (< G, e.g. a sum of NULLs) -> G n / m
    expected = 9.0 * 50 / 45
    assert stats.guess_sum_all(counts(30, 10, 5, 5, 9.0))[0] == pytest.approx(expected)
    assert stats.guess_sum_all(counts(30, 10, 5, 5, 9.0, float("nan")))[0] == pytest.approx(expected)
    assert stats.guess_sum_all(counts(30, 10, 5, 5, 9.0, 0.0))[0] == pytest.approx(expected)
    assert stats.guess_sum_all(counts(30, 10, 5, 5, 9.0, 12.0))[0] == 12.0
    # m = 0: g comes from G_all / n
    assert stats.guess_rate(counts(0, 0, 0, 10, 0.0, 5.0))[0] == pytest.approx(0.5)


def test_modes_without_guessing_are_cc_wilson():
    frame = counts(40, 8, 2, 10, 0.0)
    for mode, (s, k) in {"E_I": (40, 50), "C_I": (40, 50), "E_P": (40, 60), "C_O": (50, 60)}.items():
        got = stats.mode_interval(frame, mode, ZQ).iloc[0]
        assert (got["low"], got["high"]) == pytest.approx(scipy_cc(s, k))


def test_wilson_cc_matches_scipy_on_random_counts():
    rng = np.random.default_rng(8)
    trials = rng.integers(1, 1500, size=200)
    successes = (rng.random(200) * (trials + 1)).astype(int).clip(0, trials)
    low, high = stats.wilson_cc_bounds(successes, trials, ZQ)
    for s, k, lo, hi in zip(successes, trials, low, high):
        assert (lo, hi) == pytest.approx(scipy_cc(int(s), int(k)), abs=1e-12)


def test_mode_interval_vectorised_equals_row_by_row():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "correct": rng.integers(0, 50, 40), "incorrect": rng.integers(0, 50, 40),
        "invalid": rng.integers(0, 5, 40), "truncated": rng.integers(0, 10, 40),
    })
    chance = rng.choice([0, 0.1, 0.25, 0.5], 40)
    frame["guess_sum"] = (frame["correct"] + frame["incorrect"] + frame["invalid"]) * chance
    frame["guess_sum_all"] = (frame["correct"] + frame["incorrect"] + frame["invalid"] + frame["truncated"]) * chance
    for mode in stats.MODES:
        whole = stats.mode_interval(frame, mode)
        for i in range(len(frame)):
            one = stats.mode_interval(frame.iloc[[i]], mode)
            assert whole.iloc[i].tolist() == pytest.approx(one.iloc[0].tolist())


def test_zero_samples_give_zero_interval():
    for mode in stats.MODES:
        assert stats.mode_interval(counts(0, 0, 0, 0, 0.0), mode).iloc[0].tolist() == [0.0, 0.0, 0.0, 0.0, False]
    row = stats.add_statistics(counts(0, 0, 0, 0, 0.0)).iloc[0]
    assert row["truncated_ratio"] == 0 and row["invalid_ratio"] == 0


def test_unknown_mode_is_user_error():
    with pytest.raises(UserError, match="valid: C_I"):
        stats.mode_interval(counts(*HAND), "X_Y")


def test_compare_modes_columns():
    frame = stats.compare_modes(counts(*HAND))
    assert list(frame.columns) == [f"{m}_{p}" for m in stats.MODES for p in ("center", "margin", "below_chance")]
    low, high = mapped(35, 50, 10.0, 40.0)
    assert frame["E_O_center"].iloc[0] == pytest.approx((low + high) / 2, abs=2e-5)


def test_reasonscore_geometric_mean_with_floor():
    # 1000 * (0.5 * 0.8 * 0.01) ** (1/3): the 0.005 cell is floored at 0.01.
    assert stats.reasonscore([0.5, 0.8, 0.005]) == pytest.approx(1000 * 0.004 ** (1 / 3))
    assert stats.reasonscore([0.811]) == pytest.approx(811.0)
    assert math.isnan(stats.reasonscore([]))


def test_grouped_reasonscore_matches_scalar():
    frame = pd.DataFrame({"eval_id": ["a", "a", "b", "b", "b"], "adjusted_score": [0.9, 0.4, 0.7, -0.2, 0.6]})
    got = stats.grouped_reasonscore(frame, ["eval_id"])
    assert got["a"] == pytest.approx(1000 * math.sqrt(0.9 * 0.4))
    assert got["b"] == pytest.approx(1000 * (0.7 * 0.01 * 0.6) ** (1 / 3))


def test_completion_tokens_mean_and_score_per_token():
    frame = counts(6, 2, 0, 2, 0.0)
    frame["completion_tokens_sum"] = [5000]
    assert stats.add_statistics(frame)["completion_tokens_mean"].iloc[0] == 500
    assert stats.score_per_token(800.0, 400.0) == 2.0
    assert math.isnan(stats.score_per_token(800.0, 0.0))


def test_is_incomplete():
    assert stats.is_incomplete(123, 200) is True
    assert stats.is_incomplete(200, 200) is False
    assert stats.is_incomplete(5, None) is False
    assert stats.is_incomplete(np.array([1, 2]), np.array([2.0, np.nan])).tolist() == [True, False]


# ------------------------------------------------------------ properties (hypothesis)

from hypothesis import (  # noqa: E402
    given,
    settings,
    strategies as st,  # noqa: E402
)

counts_strategy = st.tuples(
    st.integers(0, 500), st.integers(0, 500), st.integers(0, 50), st.integers(0, 100),
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 1 / 3]),
)


@settings(max_examples=120, deadline=None)
@given(counts_strategy)
def test_every_mode_gives_a_sane_interval(sample):
    c, x, v, t, chance = sample
    frame = counts(c, x, v, t, chance * (c + x + v))
    for mode in stats.MODES:
        interval = stats.mode_interval(frame, mode)
        center, margin = interval["center"].iat[0], interval["margin"].iat[0]
        assert np.isfinite(center) and np.isfinite(margin)
        assert margin >= 0
        assert -1e-12 <= center - margin and center + margin <= 1 + 1e-12
    row = stats.add_statistics(frame).iloc[0]
    assert 0 <= row["truncated_ratio"] <= 1 and 0 <= row["invalid_ratio"] <= 1


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 400), st.integers(0, 400))
def test_more_correct_never_lowers_the_center(k, s):
    s = min(s, k - 1)
    low = stats.wilson_interval(s, k)[0]
    high = stats.wilson_interval(s + 1, k)[0]
    assert high > low


@settings(max_examples=80, deadline=None)
@given(counts_strategy)
def test_optimistic_pessimistic_ignore_order(sample):
    # Truncations as successes can only help, as failures only hurt: E_P <= E_O.
    c, x, v, t, chance = sample
    frame = counts(c, x, v, t, chance * (c + x + v))
    pessimistic = stats.mode_interval(frame, "E_P")["center"].iloc[0]
    optimistic = stats.mode_interval(frame, "E_O")["center"].iloc[0]
    assert pessimistic <= optimistic + 1e-12
