"""resolver.stats against independent references: spec 03's worked example, seed 001's
ReasonScore cell, scipy's Wilson interval and hand computations of every mode."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm

from resolver import stats
from resolver.errors import UserError


# scipy uses the exact 97.5% normal quantile; the toolkit's default is spec 03's 1.96.
# Comparisons with scipy pass scipy's z so that they test the formula itself.
ZQ = float(norm.ppf(0.975))


def scipy_wilson(successes: int, trials: int):
    ci = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return (ci.low + ci.high) / 2, (ci.high - ci.low) / 2


def counts(c, x, v, t, g):
    return pd.DataFrame({"correct": [c], "incorrect": [x], "invalid": [v], "truncated": [t], "guess_sum": [g]})


def test_spec03_worked_example():
    # 12-choice point: c = 337, m = 888, G = 74, 6 invalid, 8 truncated.
    frame = stats.add_statistics(counts(337, 888 - 337 - 6, 6, 8, 74.0), mode="E_I")
    row = frame.iloc[0]
    assert row["adjusted_successes"] == 263
    assert row["adjusted_trials"] == 814
    assert 263 / 814 == pytest.approx(0.3230958, abs=5e-8)
    assert row["adjusted_center"] == pytest.approx(0.3239268, abs=5e-8)
    assert row["adjusted_margin"] == pytest.approx(0.0320624, abs=5e-8)
    assert row["center"] == row["adjusted_center"]
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


# c = 30, x = 10, v = 5, t = 5, G = 9  ->  m = 45, n = 50, g = 0.2
HAND = (30, 10, 5, 5, 9.0)


@pytest.mark.parametrize("mode,successes,trials", [
    ("E_I", 30 - 9, 45 - 9),
    ("E_P", 30 - 9, 50 - 9),
    ("E_O", 35 - 9, 50 - 9),
])
def test_excess_modes_by_hand(mode, successes, trials):
    got = stats.mode_interval(counts(*HAND), mode, ZQ).iloc[0]
    ref_c, ref_m = scipy_wilson(successes, trials)
    assert got["center"] == pytest.approx(ref_c, abs=1e-12)
    assert got["margin"] == pytest.approx(ref_m, abs=1e-12)


@pytest.mark.parametrize("mode,successes,trials", [("C_I", 30, 45), ("C_P", 30, 50), ("C_O", 35, 50)])
def test_corrected_modes_by_hand(mode, successes, trials):
    got = stats.mode_interval(counts(*HAND), mode, ZQ).iloc[0]
    ci = binomtest(successes, trials).proportion_ci(method="wilson")
    low, high = (max(0.0, (q - 0.2) / 0.8) for q in (ci.low, ci.high))
    assert got["center"] == pytest.approx((low + high) / 2, abs=1e-12)
    assert got["margin"] == pytest.approx((high - low) / 2, abs=1e-12)


def test_corrected_mode_floors_at_zero():
    # 3 of 10 right with a coin-flip guess rate: the lower end maps below zero.
    got = stats.mode_interval(counts(3, 7, 0, 0, 5.0), "C_I", ZQ).iloc[0]
    ci = binomtest(3, 10).proportion_ci(method="wilson")
    high = (ci.high - 0.5) / 0.5
    assert high > 0 and ci.low < 0.5
    assert got["center"] == pytest.approx(high / 2)
    assert got["margin"] == pytest.approx(high / 2)


def test_modes_without_guessing_agree_with_plain_wilson():
    frame = counts(40, 8, 2, 10, 0.0)
    for mode, (s, k) in {"E_I": (40, 50), "C_I": (40, 50), "E_P": (40, 60), "C_O": (50, 60)}.items():
        got = stats.mode_interval(frame, mode, ZQ).iloc[0]
        assert (got["center"], got["margin"]) == pytest.approx(scipy_wilson(s, k))


def test_mode_interval_vectorised_equals_row_by_row():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "correct": rng.integers(0, 50, 40), "incorrect": rng.integers(0, 50, 40),
        "invalid": rng.integers(0, 5, 40), "truncated": rng.integers(0, 10, 40),
    })
    frame["guess_sum"] = (frame["correct"] + frame["incorrect"] + frame["invalid"]) * rng.choice([0, 0.1, 0.25, 0.5], 40)
    for mode in stats.MODES:
        whole = stats.mode_interval(frame, mode)
        for i in range(len(frame)):
            one = stats.mode_interval(frame.iloc[[i]], mode)
            assert whole.iloc[i].tolist() == pytest.approx(one.iloc[0].tolist())


def test_zero_samples_give_zero_interval():
    for mode in stats.MODES:
        assert stats.mode_interval(counts(0, 0, 0, 0, 0.0), mode).iloc[0].tolist() == [0.0, 0.0]
    row = stats.add_statistics(counts(0, 0, 0, 0, 0.0)).iloc[0]
    assert row["truncated_ratio"] == 0 and row["invalid_ratio"] == 0


def test_unknown_mode_is_user_error():
    with pytest.raises(UserError, match="valid: C_I"):
        stats.mode_interval(counts(*HAND), "X_Y")


def test_compare_modes_columns():
    frame = stats.compare_modes(counts(*HAND))
    assert list(frame.columns) == [f"{m}_{p}" for m in stats.MODES for p in ("center", "margin")]
    assert frame["C_P_center"].iloc[0] == stats.mode_interval(counts(*HAND), "C_P")["center"].iloc[0]


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

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

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
        center, margin = stats.mode_interval(frame, mode).iloc[0]
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
