"""The adaptive stopping rule (docs/configs.md, docs/decisions.md "Adaptive rounds stop on the
calibrated interval"): after each round a step stops when the half-width of its calibrated
skill interval (mode C_I, continuity-corrected Wilson on raw counts mapped through the
guess rate) is at most target_margin, or after maxrounds rounds.

References are independent of the code under test: the continuity-corrected Wilson bounds
are found by scipy root-finding (tests/support/runner.py) of the score equation |p - pi| - 1/(2n) = z sqrt(pi(1 - pi)/n),
and round counts come from bounds worked out by hand (shown in the comments).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from resolver.config.loader import Precision
from resolver.run.rounds import Tally, needs_another_round
from resolver.run.summary import RunSummary
from resolver.stats import estimates as stats
from resolver.stats.intervals_light import skill_interval, skill_margin, wilson_cc_bounds
from tests.support.runner import Z95 as Z, cc_bounds_by_root, skill_by_root

REPO = Path(__file__).resolve().parent.parent


def record(correct=False, valid=True, truncated=False, guess=0.0):
    return {"is_correct": correct, "is_valid": valid, "is_truncated": truncated, "guess_chance": guess,
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


@pytest.mark.parametrize("s,n", [(0, 1), (1, 1), (0, 16), (3, 16), (8, 16), (16, 16), (14, 40), (337, 888),
                                 (1, 200), (199, 200)])
def test_cc_wilson_matches_root_finding(s, n):
    assert wilson_cc_bounds(s, n) == pytest.approx(cc_bounds_by_root(s, n), abs=1e-9)


def test_skill_interval_matches_resolver_stats_on_a_grid():
    """The pure-Python interval equals resolver.stats' vectorised C_I (and E_I) cell for cell."""
    rows = []
    for m in (1, 2, 5, 16, 32, 64, 100, 256):
        for g in (0.0, 1 / 12, 1 / 4, 1 / 3, 1 / 2, 0.9, 1.0):
            for c in sorted({0, 1, m // 4, m // 3, m // 2, (2 * m) // 3, m - 1, m}):
                if 0 <= c <= m:
                    rows.append({"correct": c, "incorrect": m - c, "invalid": 0, "truncated": 3, "guess_sum": g * m})
    frame = pd.DataFrame(rows)
    for mode in ("C_I", "E_I"):
        expected = stats.mode_interval(frame, mode)
        for i, row in frame.iterrows():
            low, high, below = skill_interval(row.correct, row.correct + row.incorrect, row.guess_sum)
            assert (low, high) == pytest.approx((expected.low[i], expected.high[i]), abs=1e-12), row.to_dict()
            assert below == bool(expected.below_chance[i]), row.to_dict()
            assert skill_margin(row.correct, row.correct + row.incorrect, row.guess_sum) == pytest.approx(
                expected.margin[i], abs=1e-12)
    assert len(frame) > 300


@pytest.mark.parametrize("c,m,guess", [(337, 888, 74.0), (16, 32, 16.0), (3, 16, 8.0), (20, 24, 2.0), (8, 16, 0.0)])
def test_skill_interval_matches_the_root_found_reference(c, m, guess):
    low, high, below = skill_interval(c, m, guess)
    ref_low, ref_high, ref_below = skill_by_root(c, m, guess)
    assert (low, high) == pytest.approx((ref_low, ref_high), abs=1e-9) and below == ref_below


def test_tally_on_the_spec_worked_example():
    # 12-choice point: c = 337, m = 888 (G = 74), 6 invalid, 8 truncated (docs/statistics.md).
    tally = Tally()
    for i in range(888):
        outcome = "c" if i < 337 else ("v" if i < 343 else "x")
        tally.add(record(correct=outcome == "c", valid=outcome != "v", guess=1 / 12))
    for _ in range(8):
        tally.add(record(truncated=True, valid=False, guess=1 / 12))
    assert (tally.correct, tally.invalid, tally.truncated, tally.untruncated) == (337, 6, 8, 888)
    assert tally.guess_sum == pytest.approx(74.0)
    assert tally.excess() == pytest.approx((337 - 74) / (888 - 74))       # 0.3231, the spec's point estimate
    low, high, below = tally.skill_interval()
    assert (low, high) == pytest.approx(skill_by_root(337, 888, 74.0)[:2], abs=1e-9) and not below
    # wider than docs/analyze.md: Wilson on 263 of 814 (margin 0.0321): it now covers at 95%
    assert tally.margin() == pytest.approx(0.035360, abs=1e-6)


# ---------------------------------------------------------------- the rule and round counts
def rounds_needed(per_round, precision) -> int:
    """Run the rule over rounds whose outcomes are given as lists of records."""
    tally = Tally()
    for done, outcomes in enumerate(per_round, 1):
        for r in outcomes:
            tally.add(r)
        if not needs_another_round(tally, done, precision):
            return done
    raise AssertionError("ran out of rounds")


def coin_round(count=32):
    """A zero-skill model on a yes/no task: exactly half of the answers right (g = 1/2)."""
    return [record(correct=i % 2 == 0, guess=0.5) for i in range(count)]


def test_zero_skill_on_a_two_choice_task_needs_four_rounds_not_one():
    """c = n/2, G = n/2: the mapping h(q) = 2q - 1 turns the raw interval [1 - U, U] into
    [0, 2U - 1] (low floored), so the margin is U - 1/2, U the raw corrected upper end:
      U = (2np + z^2 + 1 + z sqrt(z^2 + 2 - 1/n + 4p(n(1-p) - 1))) / (2(n + z^2)), p = 1/2:
      n =  96: (96 + 4.8416 + 1.96 sqrt(99.8312)) / 199.6832 = 0.603081 -> margin 0.1031 > 0.10
      n = 128: (128 + 4.8416 + 1.96 sqrt(131.8338)) / 263.6832 = 0.589139 -> margin 0.0891 <= 0.10
    so target_margin 0.10 with rounds of 32 stops after 4 rounds. Seed 001's rule (Wilson on
    c - G = 0 successes of m - G = 16 trials: margin z^2/32 / (1 + z^2/16) = 0.0968) stopped
    after one round, claiming +-0.10 from 16 coin flips."""
    precision = Precision(count=32, maxrounds=8, target_margin=0.10)
    assert skill_margin(48, 96, 48) == pytest.approx(0.103081, abs=1e-6)
    assert skill_margin(64, 128, 64) == pytest.approx(0.089139, abs=1e-6)
    assert rounds_needed([coin_round() for _ in range(8)], precision) == 4
    old_margin = stats.wilson_interval(0, 16)[1]                     # what the old rule compared
    assert old_margin == pytest.approx(Z * Z / 32 / (1 + Z * Z / 16)) and old_margin < 0.10


def test_perfect_and_half_right_free_answers():
    """g = 0: the interval is the corrected Wilson interval itself.
    16/16: low = (32 + 3.8416 - 1 - 1.96 sqrt(3.8416 - 2 - 1/16 + 4(0 + 1))) / 39.6832 = 0.759259,
           margin (1 - 0.759259)/2 = 0.1204 <= 0.2: one round.
    8/16:  U = (16 + 4.8416 + 1.96 sqrt(5.7791 + 2(8 - 1))) / 39.6832 = 0.744860, margin 0.2449 > 0.2;
    16/32: U = (32 + 4.8416 + 1.96 sqrt(5.8103 + 2(16 - 1))) / 71.6832 = 0.677573, margin 0.1776 <= 0.2."""
    precision = Precision(count=16, maxrounds=3, target_margin=0.2)
    assert Tally(correct=16).margin() == pytest.approx((1 - 0.759259) / 2, abs=1e-6)
    assert Tally(correct=8, incorrect=8).margin() == pytest.approx(0.744860 - 0.5, abs=1e-6)
    assert Tally(correct=16, incorrect=16).margin() == pytest.approx(0.677573 - 0.5, abs=1e-6)
    assert not needs_another_round(Tally(correct=16), 1, precision)
    half = [[record(correct=i % 2 == 0) for i in range(16)] for _ in range(3)]
    assert rounds_needed(half, precision) == 2


def test_maxrounds_ends_every_step_and_nothing_measured_runs_all_rounds():
    precision = Precision(count=16, maxrounds=3, target_margin=0.01)
    unsure = Tally(correct=8, incorrect=8)
    assert needs_another_round(unsure, 1, precision) and needs_another_round(unsure, 2, precision)
    assert not needs_another_round(unsure, 3, precision)
    for empty in (Tally(truncated=16), Tally(correct=8, incorrect=8, guess_sum=16.0)):   # no m - G to measure
        assert needs_another_round(empty, 2, precision) and not needs_another_round(empty, 3, precision)


def test_a_below_chance_step_stops():
    """3 right of 16 yes/no answers: U = (6 + 4.8416 + 1.96 sqrt(5.7791 + 0.75 * 12)) / 39.6832
    = 0.463081 < 1/2, the rate guessing alone gives: below chance, [0, 0], settled."""
    tally = Tally()
    for i in range(16):
        tally.add(record(correct=i < 3, guess=0.5))
    assert wilson_cc_bounds(3, 16)[1] == pytest.approx(0.463081, abs=1e-6)
    assert tally.skill_interval() == (0.0, 0.0, True)
    assert not needs_another_round(tally, 1, Precision(count=16, maxrounds=4, target_margin=0.05))


def test_the_runner_imports_neither_pandas_nor_scipy():
    code = ("import sys, resolver.run.api_runner, resolver.run.batch; "
            "print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_summary_counts_outcomes_and_tokens():
    summary = RunSummary()
    summary.count(record(correct=True), cached=True)
    summary.count(record(valid=False), cached=False)
    summary.count(record(truncated=True, valid=False), cached=False)
    assert (summary.samples, summary.from_cache, summary.correct, summary.invalid, summary.truncated) == (3, 1, 1, 1, 1)
    assert summary.prompt_tokens == 30 and summary.completion_tokens == 15
    text = "\n".join(summary.lines())
    assert "3 written (1 from cache" in text and "1 truncated, 1 invalid, 0 failed" in text


def test_runner_start_up_imports_no_analysis_stack():
    """runner.py's API path imports neither pandas nor scipy nor numpy (start-up cost, docs/decisions.md)."""
    import subprocess
    import sys

    from conftest import REPO

    code = ("import sys, runner, resolver.run.api_runner; "
            "print(sorted(m for m in ('pandas', 'scipy', 'numpy', 'pyarrow', 'duckdb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

