"""resolver.stats.paired against independent references: explicit counting, numpy's sample
variance, a root-finding continuity-corrected Wilson interval fed into Newcombe's
published method-10 formulas, scipy's exact McNemar (binomial) test, a hand-worked Holm
example and the normal power formula."""
from collections import Counter

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binomtest, norm, pearsonr

from resolver.stats import paired

Z = 1.96


def table_of(a_outcomes, b_outcomes):
    return paired.joint_table(np.array(a_outcomes), np.array(b_outcomes), np.zeros(len(a_outcomes), int), 1)


def binary_table(both, a_only, b_only, neither):
    """A 2 x 2 paired table (1 = correct) as per-pair outcome codes: 0 correct, 1 incorrect."""
    a = [0] * both + [0] * a_only + [1] * b_only + [1] * neither
    b = [0] * both + [1] * a_only + [0] * b_only + [1] * neither
    return a, b


def compare_binary(a, b, guess=0.0, mode="C_P"):
    joint = table_of(a, b)
    n = len(a)
    answered_a = sum(o != 3 for o in a)
    answered_b = sum(o != 3 for o in b)
    return paired.compare_joint(joint, [guess * answered_a], [guess * answered_b], [guess * n], mode).iloc[0]


def wilson_cc_by_roots(successes, n, z=Z):
    """Continuity-corrected score interval: the pi with |p - pi| - 1/(2n) = z sqrt(pi (1 - pi) / n)."""
    p = successes / n
    low = 0.0 if successes == 0 else brentq(
        lambda pi: (p - pi) - 1 / (2 * n) - z * np.sqrt(pi * (1 - pi) / n), 1e-12, min(p, 1 - 1e-12))
    high = 1.0 if successes == n else brentq(
        lambda pi: (pi - p) - 1 / (2 * n) - z * np.sqrt(pi * (1 - pi) / n), max(p, 1e-12), 1 - 1e-12)
    return low, high


def newcombe_method10(both, a_only, b_only, neither, z=Z):
    """Newcombe (1998b) method 10 for B - A, written from the paper's formulas."""
    n = both + a_only + b_only + neither
    p_a, p_b = (both + a_only) / n, (both + b_only) / n
    l_a, u_a = wilson_cc_by_roots(both + a_only, n, z)
    l_b, u_b = wilson_cc_by_roots(both + b_only, n, z)
    cross = both * neither - a_only * b_only
    if cross > 0:
        cross = max(cross - n / 2, 0)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    phi = cross / np.sqrt(margins) if margins else 0.0
    d = p_b - p_a
    lower = d - np.sqrt((p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2)
    upper = d + np.sqrt((u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2)
    return phi, lower, upper


def test_joint_table_counts_pairs_like_a_counter():
    rng = np.random.default_rng(3)
    a, b, groups = rng.integers(0, 4, 500), rng.integers(0, 4, 500), rng.integers(0, 3, 500)
    joint = paired.joint_table(a, b, groups, 3)
    counted = Counter(zip(groups.tolist(), a.tolist(), b.tolist()))
    for (g, i, j), n in counted.items():
        assert joint[g, i, j] == n
    assert joint.sum() == 500


@pytest.mark.parametrize("cells", [(30, 9, 3, 18), (12, 5, 11, 2), (40, 0, 7, 3), (5, 6, 6, 5), (50, 1, 0, 0)])
def test_binary_paired_interval_is_newcombe_method_10(cells):
    phi, lower, upper = newcombe_method10(*cells)
    row = compare_binary(*binary_table(*cells))
    assert row["phi"] == pytest.approx(phi, abs=1e-12)
    assert row["paired_low"] == pytest.approx(lower, abs=1e-7)
    assert row["paired_high"] == pytest.approx(upper, abs=1e-7)


def test_negative_association_phi_is_pearson_of_the_indicators():
    a, b = binary_table(3, 20, 18, 4)
    row = compare_binary(a, b)
    expected = pearsonr(np.array(a) == 0, np.array(b) == 0).statistic
    assert expected < 0 and row["phi"] == pytest.approx(expected)


def test_unpaired_interval_is_square_and_add_of_the_two_intervals():
    a, b = binary_table(30, 9, 3, 18)
    row = compare_binary(a, b)
    l_a, u_a = wilson_cc_by_roots(39, 60)
    l_b, u_b = wilson_cc_by_roots(33, 60)
    d = 33 / 60 - 39 / 60
    assert row["unpaired_low"] == pytest.approx(d - np.hypot(33 / 60 - l_b, u_a - 39 / 60), abs=1e-7)
    assert row["unpaired_high"] == pytest.approx(d + np.hypot(u_b - 33 / 60, 39 / 60 - l_a), abs=1e-7)


def test_guess_correction_maps_both_ends_like_the_single_model_mode():
    # g = 1/2, no truncation, C_I: each model's interval is (q - g) / (1 - g) of its Wilson interval,
    # floored at 0; the estimates are (c/n - g) / (1 - g).
    a, b = binary_table(30, 4, 12, 14)
    row = compare_binary(a, b, guess=0.5, mode="C_I")
    n = 60
    assert row["a"] == pytest.approx((34 / n - 0.5) / 0.5)
    assert row["b"] == pytest.approx((42 / n - 0.5) / 0.5)
    l_a, u_a = (np.array(wilson_cc_by_roots(34, n)) - 0.5) / 0.5
    l_b, u_b = (np.array(wilson_cc_by_roots(42, n)) - 0.5) / 0.5
    l_a = max(l_a, 0.0)
    assert row["unpaired_low"] == pytest.approx(row["diff"] - np.hypot(row["b"] - l_b, u_a - row["a"]), abs=1e-7)


def test_truncation_counts_as_failure_in_p_and_success_in_o():
    # A: 10 correct, 10 truncated; B: 20 correct, on the same 20 problems.
    a, b = [0] * 10 + [3] * 10, [0] * 20
    p_row = compare_binary(a, b, mode="C_P")
    o_row = compare_binary(a, b, mode="C_O")
    i_row = compare_binary(a, b, mode="C_I")
    assert p_row["diff"] == pytest.approx(0.5)
    assert o_row["diff"] == pytest.approx(0.0)
    assert i_row["diff"] == pytest.approx(0.0)


def test_pair_sd_is_the_sample_sd_of_the_paired_differences():
    a, b = binary_table(30, 9, 3, 18)
    diffs = (np.array(b) == 0).astype(float) - (np.array(a) == 0)
    sd = paired.pair_sd(table_of(a, b), [0.0], "C_P")[0]
    assert sd == pytest.approx(np.std(diffs, ddof=1))


def test_p_value_agrees_with_its_interval_and_with_mcnemar():
    rng = np.random.default_rng(11)
    tables = rng.multinomial(200, rng.dirichlet([3, 1, 1, 3], size=300))
    joint = np.zeros((len(tables), 4, 4))
    joint[:, 0, 0], joint[:, 0, 1], joint[:, 1, 0], joint[:, 1, 1] = tables.T
    zeros = np.zeros(len(tables))
    result = paired.compare_joint(joint, zeros, zeros, zeros, "C_P")
    excludes = (result["paired_low"] > 0) | (result["paired_high"] < 0)
    assert ((result["p_value"] < 0.05) == excludes).all()
    exact = np.array([binomtest(int(c), int(b + c), 0.5).pvalue if b + c else 1.0 for _, b, c, _ in tables])
    assert (result["p_value"][exact < 0.001] < 0.05).all()
    assert (result["p_value"][exact > 0.5] > 0.05).all()
    assert (exact < 0.001).sum() > 10 and (exact > 0.5).sum() > 10     # both kinds were seen


def test_holm_hand_worked():
    rejected, adjusted = paired.holm([0.01, 0.04, 0.03, 0.005], 0.05)
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 -> running max 0.06
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert rejected.tolist() == [True, False, False, True]


def test_samples_needed_reaches_80_percent_power_and_not_one_point_less():
    sd, delta, tests, points, pairs = 0.4, 0.03, 7, 20, 20 * 16
    more = int(paired.samples_needed([sd], [pairs], [points], delta, tests)[0])
    z = norm.isf(0.05 / (2 * tests))

    def power(n):
        return norm.cdf(delta * np.sqrt(n) / sd - z)

    assert power(pairs + more * points) >= 0.8
    assert power(pairs + (more - 1) * points) < 0.8


def test_samples_needed_floors_the_spread_at_the_discordance_a_difference_needs():
    # no discordant pair observed: deciding a 0.03 difference still needs the pairs a 3% discordance needs
    floor = paired.samples_needed([0.0], [0], [1], 0.03, 1)[0]
    z = norm.isf(0.025) + norm.ppf(0.8)
    assert floor == int(np.ceil((z / 0.03) ** 2 * 0.03 * 0.97))
