"""The logistic capacity fit recovers known midpoints; the peak table by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from resolver.analysis.capacity import fit_logistic, logistic, peak_from_points, prompt_budgets


@pytest.mark.parametrize("x50, slope", [(60.0, 3.0), (200.0, 1.5), (25.0, 6.0)])
def test_fit_recovers_the_midpoint_of_sampled_logistic_data(x50, slope):
    rng = np.random.default_rng(11)
    sizes = np.geomspace(5, 800, 12)
    truth = 1 / (1 + (sizes / x50) ** slope)          # the same curve written independently
    trials = 400
    correct = rng.binomial(trials, truth)
    fit = fit_logistic(sizes, correct / trials, sigma=np.sqrt(truth * (1 - truth) / trials) + 1e-3)
    assert fit["fitted"]
    assert fit["x50"] == pytest.approx(x50, rel=0.08)
    assert fit["slope"] == pytest.approx(slope, rel=0.2)
    assert fit["x50_low"] < fit["x50"] < fit["x50_high"]
    assert fit["r2"] > 0.95


def test_logistic_is_one_half_at_the_midpoint():
    assert logistic(np.log(40.0), np.log(40.0), 3.0) == pytest.approx(0.5)


def test_too_few_sizes_is_not_fitted():
    assert not fit_logistic([10, 20], [0.9, 0.1])["fitted"]
    assert not fit_logistic([0, 10, 20], [1, 0.9, 0.1])["fitted"]


def test_peak_from_points_by_hand():
    # three budgets for one eval; no guessing; accuracy = correct / (correct + incorrect)
    points = pd.DataFrame({
        "eval_id": ["e"] * 3, "manifold.target_tokens": [1000, 2000, 4000],
        "params.num_rows": [10, 20, 40],
        "correct": [90, 60, 10], "incorrect": [10, 40, 90], "invalid": [0, 0, 0],
        "truncated": [0, 0, 0], "guess_sum": [0.0, 0.0, 0.0],
    })
    table, summary = peak_from_points(points, ["eval_id"], "params.num_rows", "C_I", 0.5)
    # C_I with g = 0 is the continuity-corrected Wilson interval (docs/statistics.md): its
    # midpoint and lower end, from scipy
    cis = [binomtest(c, 100).proportion_ci(method="wilsoncc") for c in (90, 60, 10)]
    assert table["center"].to_numpy() == pytest.approx([sum(ci) / 2 for ci in cis], rel=1e-4)  # z = 1.96 vs exact
    lows = np.array([ci.low for ci in cis])
    assert table["effective_capacity"].to_numpy() == pytest.approx(lows * [10, 20, 40], rel=1e-3)
    row = summary.iloc[0]
    assert row["peak_budget_tokens"] == 2000 and row["budget"] == "manifold.target_tokens"
    assert row["capacity"] == 20.0


def test_prompt_budget_is_the_power_of_two_the_mean_prompt_fits_in():
    # mean prompt tokens per sample: 300/2 = 150 -> 256; 4096/4 = 1024 -> 1024 (exactly fits);
    # 1025 -> 2048; no samples or no tokens -> no budget
    points = pd.DataFrame({"prompt_tokens": [300, 4096, 1025, 0, 50],
                           "correct": [1, 2, 1, 1, 0], "incorrect": [1, 1, 0, 0, 0],
                           "invalid": [0, 1, 0, 0, 0], "truncated": [0, 0, 0, 0, 0]})
    budgets = prompt_budgets(points)
    assert budgets.iloc[:3].tolist() == [256.0, 1024.0, 2048.0]
    assert budgets.iloc[3:].isna().all()


class _GridDB:
    """A stand-in PointsDB answering `points()` with a grid task's frame (no target_tokens)."""

    def __init__(self, frame):
        self.frame = frame

    def points(self, filters=None, columns=None):
        return self.frame.reindex(columns=columns)


def test_peak_on_a_grid_groups_points_by_their_prompt_budget():
    from resolver.analysis.capacity import peak

    # sizes 4 and 8 both fit 512 tokens (mean prompts 300 and 500), 16 needs 1024 (900)
    frame = pd.DataFrame({
        "eval_id": ["e"] * 3, "params.num_rows": [4, 8, 16], "prompt_tokens": [3000, 5000, 9000],
        "correct": [10, 6, 1], "incorrect": [0, 4, 9], "invalid": [0, 0, 0], "truncated": [0, 0, 0],
        "guess_sum": [0.0] * 3, "guess_sum_all": [0.0] * 3})
    table, summary = peak(_GridDB(frame), mode="C_I")
    assert table["prompt_budget"].tolist() == [512, 1024]
    assert table["size"].tolist() == [6.0, 16.0]                       # mean size within the budget
    assert (table["correct"].tolist(), table["incorrect"].tolist()) == ([16, 1], [4, 9])
    assert summary.iloc[0]["budget"] == "prompt_budget" and summary.iloc[0]["peak_budget_tokens"] == 512
