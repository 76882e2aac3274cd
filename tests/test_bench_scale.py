"""The cost-curve benchmark's arithmetic (tests/benchmarks/scalefit.py): exponents and table.

The benchmark itself (tests/benchmarks/bench_scale.py) is not run here: it times things.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))

from scalefit import fit_exponent, table  # noqa: E402


def test_exponent_of_exact_powers():
    # 3 * n**1 and 5 * n**0.5 through 1, 10, 50: the slopes are 1 and 0.5 exactly
    assert fit_exponent([1, 10, 50], [3, 30, 150]) == pytest.approx(1.0)
    assert fit_exponent([1, 10, 50], [5, 5 * 10 ** 0.5, 5 * 50 ** 0.5]) == pytest.approx(0.5)
    assert fit_exponent([1, 10, 50], [7, 7, 7]) == pytest.approx(0.0)


def test_exponent_least_squares_by_hand():
    # points (ln 1, ln 1), (ln 10, ln 100), (ln 100, ln 1000): x = 0, L, 2L; y = 0, 2L, 3L (L = ln 10)
    # slope = sum((x - L)(y - 5L/3)) / sum((x - L)^2) = (L * 5L/3 + L * 4L/3) / (2 L^2) = 1.5
    assert fit_exponent([1, 10, 100], [1, 100, 1000]) == pytest.approx(1.5)


def test_exponent_leaves_out_missing_values():
    assert fit_exponent([1, 10, 50], [None, 2, 10]) == pytest.approx(1.0)
    assert fit_exponent([1, 10, 50], [None, None, 10]) is None
    assert fit_exponent([1, 10, 50], [0, 0, 4]) is None


def test_table_rows_exponents_and_limits():
    rows = [{"evals": 1, "evaluate_s": 10.0, "scores_s": 2.0},
            {"evals": 10, "evaluate_s": 100.0, "scores_s": 20.0},
            {"evals": 50, "evaluate_s": 500.0, "scores_s": 40.0}]
    lines = table(rows).splitlines()
    assert lines[0] == "| figure | 1 evals | 10 evals | 50 evals | exponent | limit at the largest |"
    evaluate = next(line for line in lines if line.startswith("| evaluate.py first build (s) |"))
    assert evaluate == "| evaluate.py first build (s) | 10.0 | 100.0 | 500.0 | 1.00 | < 1800 s: met |"
    scores = next(line for line in lines if line.startswith("| analyze scores (s) |"))
    assert scores.endswith("| < 30 s: MISSED |")
    compare = next(line for line in lines if line.startswith("| analyze compare (s) |"))
    assert compare == "| analyze compare (s) | - | - | - | - | < 30 s: MISSED |"



def test_floor_page_holds_each_figure_at_its_size():
    from plotly_floor import floor_page

    figures = [{"data": [{"type": "surface", "z": [[0, 1], [1, 0]], "name": "a </script><b>"}], "layout": {},
                "width": 640, "height": 480},
               {"data": [], "layout": {"title": {"text": "t"}}, "width": 300, "height": 200}]
    page = floor_page(figures, {"displaylogo": False})
    assert '<div id="g0" style="display:inline-block;width:640px;height:480px">' in page
    assert '<div id="g1" style="display:inline-block;width:300px;height:200px">' in page
    # a trace name cannot close the page's script early: two scripts open, two close
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert '"name": "a <\\/script><b>"' in page
    assert "Plotly.newPlot('g' + i, f.data, f.layout, config)" in page and '{"displaylogo": false}' in page
