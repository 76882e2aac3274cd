"""Hazard and cumulative incidence against a small table computed by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from resolver.analysis.hazard import hazard_by, hazard_table, median_end_tokens
from resolver.core.errors import UserError

# 10 samples, bucket size 100. outcome: 0 correct, 1 incorrect, 2 invalid, 3 truncated.
TOKENS = [50, 60, 120, 130, 150, 180, 250, 260, 299, 299]
OUTCOMES = [0, 1, 0, 0, 2, 3, 1, 0, 3, 3]
# By hand:
# bucket 0 [0,100):   at risk 10, correct 1, incorrect 1, censored 0
#   h_c = 1/10, h_i = 1/10, S0 = 0.8, CIF_c = 0.1, CIF_i = 0.1
# bucket 1 [100,200): at risk 8, correct 2, incorrect 1 (invalid), censored 1
#   h_c = 2/8, h_i = 1/8, S1 = 0.8 * (1 - 3/8) = 0.5
#   CIF_c = 0.1 + 0.8 * 2/8 = 0.3, CIF_i = 0.1 + 0.8 * 1/8 = 0.2
# bucket 2 [200,300): at risk 4, correct 1, incorrect 1, censored 2
#   h_c = 1/4, h_i = 1/4, S2 = 0.5 * 0.5 = 0.25
#   CIF_c = 0.3 + 0.5/4 = 0.425, CIF_i = 0.2 + 0.5/4 = 0.325
EXPECTED = pd.DataFrame({
    "at_risk": [10, 8, 4], "correct": [1, 2, 1], "incorrect": [1, 1, 1], "censored": [0, 1, 2],
    "hazard_correct": [0.1, 0.25, 0.25], "hazard_incorrect": [0.1, 0.125, 0.25],
    "survival": [0.8, 0.5, 0.25], "cif_correct": [0.1, 0.3, 0.425], "cif_incorrect": [0.1, 0.2, 0.325],
})


def test_hazard_matches_hand_computed_table():
    table = hazard_table(TOKENS, OUTCOMES, bucket_size=100)
    assert list(table["start"]) == [0, 100, 200]
    for column in EXPECTED.columns:
        assert table[column].to_numpy() == pytest.approx(EXPECTED[column].to_numpy()), column


def test_incidences_and_survival_add_up_to_one():
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 4000, 500)
    outcomes = rng.integers(0, 4, 500)
    table = hazard_table(tokens, outcomes, bucket_size=256)
    total = table["cif_correct"] + table["cif_incorrect"] + table["survival"]
    assert total.to_numpy() == pytest.approx(np.ones(len(table)))
    assert table["at_risk"].iloc[0] == 500


def test_without_censoring_cumulative_incidence_is_the_plain_fraction():
    # no truncation: CIF of correct at the last bucket = share of correct answers
    tokens = [10, 20, 300, 310, 620, 700]
    outcomes = [0, 1, 0, 0, 1, 0]
    table = hazard_table(tokens, outcomes, bucket_size=256)
    assert table["cif_correct"].iloc[-1] == pytest.approx(4 / 6)
    assert table["cif_incorrect"].iloc[-1] == pytest.approx(2 / 6)


def test_median_end_and_bad_bucket_size():
    table = hazard_table(TOKENS, OUTCOMES, bucket_size=100)
    assert median_end_tokens(table) == 200.0  # survival 0.5 at the end of bucket 1
    with pytest.raises(UserError):
        hazard_table(TOKENS, OUTCOMES, bucket_size=0)


def test_hazard_by_splits_and_series():
    points = pd.DataFrame({
        "base_task": ["a", "a", "b"], "eval_id": ["x", "y", "x"],
        "completion_tokens": [TOKENS[:5], TOKENS[5:], [10, 20]],
        "outcome": [OUTCOMES[:5], OUTCOMES[5:], [0, 1]],
    })
    result = hazard_by(points, ["base_task"], bucket_size=100, series_by="eval_id")
    assert set(result) == {("a",), ("b",)}
    assert set(result[("a",)]) == {"x", "y"}
    pooled = hazard_by(points[points.base_task == "a"], [], bucket_size=100)[()]["all"]
    assert pooled["cif_correct"].to_numpy() == pytest.approx(EXPECTED["cif_correct"].to_numpy())
