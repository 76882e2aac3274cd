"""analyze.py compare end to end on a small PointsDB with hand-chosen per-sample outcomes
(written with the real PointsWriter): pairing rules, hand-counted differences, the JSON
contract, the PNG, the sampling plan and one-line errors for bad input.

    eval          template  arithmetic (guess 0)                         boolean (guess 1/2)
    alpha (A)     zs        easy {4}: 10 of 20 right; easy {8}: 12 of 20;  easy {4}: 12 of 20
                            medium {12}: 6 of 20
    beta  (B)     zs        easy {4}: A's right ones + 8 more, plus 4      easy {4}: A's 12 + 4 more
                            samples A lacks (indices 20-23); easy {8}: = A;
                            medium {12}: 6 of 20, other ones than A's
    beta          cot       the same outcomes as beta/zs (another template: the same problems)
    gamma         zs        arithmetic at task version 2 (other problems); boolean = A
"""
from __future__ import annotations

import contextlib
import io
import json

import pytest
from conftest import run_script
from PIL import Image

from tests.support.paired_db import write_paired_db

# analyze.py run as a subprocess many times: end to end, so left out of `tests/run.sh --fast`
pytestmark = pytest.mark.slow

N = 20


def outcomes(correct_indices, n=N):
    return [0 if i in set(correct_indices) else 1 for i in range(n)]


ALPHA = [
    {"base_task": "arithmetic", "params": {"length": 4}, "degree": 0, "outcomes": outcomes(range(10))},
    {"base_task": "arithmetic", "params": {"length": 8}, "degree": 0, "outcomes": outcomes(range(12))},
    {"base_task": "arithmetic", "params": {"length": 12}, "degree": 1, "outcomes": outcomes(range(6))},
    {"base_task": "boolean", "params": {"length": 4}, "degree": 0, "outcomes": outcomes(range(12)), "guess": 0.5},
]
BETA = [
    {"base_task": "arithmetic", "params": {"length": 4}, "degree": 0,
     "outcomes": outcomes(range(18), 24), "indices": list(range(24))},
    {"base_task": "arithmetic", "params": {"length": 8}, "degree": 0, "outcomes": outcomes(range(12))},
    {"base_task": "arithmetic", "params": {"length": 12}, "degree": 1, "outcomes": outcomes(range(14, 20))},
    {"base_task": "boolean", "params": {"length": 4}, "degree": 0, "outcomes": outcomes(range(16)), "guess": 0.5},
]
GAMMA = [dict(p, version=2) for p in ALPHA[:3]] + [ALPHA[3]]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "pairs.db"
    ids = write_paired_db(path, {("alpha", "zs"): ALPHA, ("beta", "zs"): BETA, ("beta", "cot"): BETA,
                                 ("gamma", "zs"): GAMMA})
    return path, {"alpha": ids[("alpha", "zs")], "beta": ids[("beta", "zs")], "beta_cot": ids[("beta", "cot")],
                  "gamma": ids[("gamma", "zs")]}


@pytest.fixture(scope="module")
def ab(db):
    """The default JSON of B = beta/zs minus A = alpha/zs."""
    path, ids = db
    return compare_json(path, ids["alpha"], ids["beta"])


def compare(path, a, b, *args):
    proc = run_script("analyze.py", "compare", path, "--filters", json.dumps({"eval_id": [a, b]}), *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def compare_json(path, a, b, *args):
    """The JSON in-process (analyze.main; the subprocess tests below cover the script itself)."""
    import analyze

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert analyze.main(["compare", str(path), "--filters", json.dumps({"eval_id": [a, b]}), "--format", "json",
                             *map(str, args)]) == 0
    return json.loads(out.getvalue())


def cell(result, tier, group):
    [found] = [c for c in result["cells"] if c["tier"] == tier and c["group"] == group]
    return found


def test_cells_hold_the_hand_counted_differences(db, ab):
    _, ids = db
    result = ab
    assert result["a"] == ids["alpha"] and result["b"] == ids["beta"] and result["mode"] == "C_P"
    easy = cell(result, "easy", "arithmetic")
    # 40 pairs (the 4 samples only B has are left out): A 22 right, B 30 right
    assert easy["pairs"] == 40 and easy["points"] == 2
    assert easy["a"] == pytest.approx(22 / 40) and easy["b"] == pytest.approx(30 / 40)
    assert easy["diff"] == pytest.approx(8 / 40)
    assert easy["only_b"] == 4 and easy["only_a"] == 0
    medium = cell(result, "medium", "arithmetic")
    assert medium["diff"] == pytest.approx(0.0) and medium["discordant"] == 12
    # boolean, guess 1/2: C_P = (c/n - 1/2) / (1/2); A 12/20 -> 0.2, B 16/20 -> 0.6
    boolean = cell(result, "easy", "boolean")
    assert boolean["a"] == pytest.approx(0.2) and boolean["b"] == pytest.approx(0.6)
    assert result["overall"]["pairs"] == 80 and result["overall"]["only_b"] == 4
    assert result["unpaired_samples"] == {"only_a": 0, "only_b": 4, "only_a_points": 0, "only_b_points": 1}


def test_pairing_narrows_where_the_models_agree_and_widens_where_they_disagree(db, ab):
    _, ids = db
    result = ab
    easy = cell(result, "easy", "arithmetic")          # B right wherever A is: strongly correlated
    assert easy["phi"] > 0.3
    assert easy["paired"][1] - easy["paired"][0] < easy["unpaired"][1] - easy["unpaired"][0]
    assert easy["paired"][0] > 0 and easy["verdict"] == "b"
    medium = cell(result, "medium", "arithmetic")      # right on disjoint problems: negative correlation
    assert medium["phi"] < 0 and medium["verdict"] == "none"
    assert medium["paired"][1] - medium["paired"][0] > medium["unpaired"][1] - medium["unpaired"][0]
    assert isinstance(medium["samples_needed"], int) and medium["samples_needed"] > 0
    assert easy["samples_needed"] is None
    for row in result["cells"] + [result["overall"]]:
        assert row["paired"][0] <= row["diff"] <= row["paired"][1]
        assert 0 <= row["p_value"] <= row["p_holm"] <= 1


def test_json_contract(db):
    path, ids = db
    result = compare_json(path, ids["alpha"], ids["beta"], "--mode", "C_I", "--top", "3")
    assert {"a", "b", "mode", "cells", "points", "overall", "correction", "family", "delta"} <= set(result)
    assert result["mode"] == "C_I" and result["correction"] == "holm" and result["family"] == 4
    for row in result["cells"]:
        assert {"tier", "group", "diff", "paired", "unpaired", "verdict", "samples_needed"} <= set(row)
        assert row["verdict"] in ("a", "b", "none") and len(row["paired"]) == 2 and len(row["unpaired"]) == 2
    assert len(result["points"]) == 3
    top = result["points"][0]
    # the largest |B - A| of one point: arithmetic {4}, 10 of 20 vs 18 of 20
    assert top["base_task"] == "arithmetic" and json.loads(top["params"]) == {"length": 4}
    assert top["diff"] == pytest.approx(0.4) and top["a_id"] >> 20 == int(ids["alpha"], 16)
    assert top["paired"][0] <= top["diff"] <= top["paired"][1]


def test_another_template_still_pairs_another_task_version_does_not(db):
    path, ids = db
    other_template = compare_json(path, ids["alpha"], ids["beta_cot"])
    assert other_template["overall"]["pairs"] == 80 and not other_template["version_mismatch"]
    versions = compare_json(path, ids["alpha"], ids["gamma"])
    assert versions["overall"]["pairs"] == 20        # only boolean pairs
    assert versions["version_mismatch"] == [{"base_task": "arithmetic", "points": 3, "a_versions": [1],
                                             "b_versions": [2]}]
    assert versions["unpaired_samples"]["only_a"] == 60 and versions["unpaired_samples"]["only_b"] == 60
    text = compare(path, ids["alpha"], ids["gamma"]).stdout
    assert "Task versions differ on arithmetic" in text and "do not pair" in text


def test_markdown_lists_cells_points_and_the_runner_command(db):
    path, ids = db
    text = compare(path, ids["alpha"], ids["beta"]).stdout
    assert text.startswith("# Paired comparison: B = beta")
    assert "| medium | arithmetic | 40 |" not in text and "| medium | arithmetic | 20 |" in text
    assert "Holm" in text and "## Points where A and B differ most" in text
    assert "Not paired (one eval only): 0 samples of A on 0 points, 4 samples of B on 1 points" in text
    assert "python runner.py --config <config.yaml> --template templates/zs.json --sampler samplers/greedy.json " \
           "--model alpha" in text


def test_search_picks_the_two_evals_and_keeps_the_filter_order(db):
    path, ids = db
    proc = run_script("analyze.py", "compare", path, "--search", "^(alpha|gamma)$", "--format", "json",
                      "--filters", json.dumps({"eval_id": [ids["gamma"], ids["alpha"]]}))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["a"], result["b"]) == (ids["gamma"], ids["alpha"])


def test_png_heat_map(db, tmp_path):
    path, ids = db
    target = tmp_path / "diff.png"
    compare(path, ids["alpha"], ids["beta"], "--format", "png", "--width", "900", "--output", target)
    with Image.open(target) as image:
        assert image.format == "PNG" and image.size[0] == 900


def test_sampling_plan_picks_the_smallest_precision_level_that_reaches_the_target(db, ab):
    from resolver.analysis.compare import sampling_plan
    from resolver.pointsdb import open_pointsdb

    path, _ = db
    result = ab
    with open_pointsdb(path) as handle:
        evals = handle.evals()
    target = max(-(-c["pairs"] // c["points"]) + c["samples_needed"]
                 for c in result["cells"] + [result["overall"]] if c["samples_needed"])
    levels = {"low": (16, 2), "big": (target, 1), "huge": (target, 4)}
    plan = sampling_plan(result, evals, "configs/r12.yaml", levels)
    assert plan["target_per_point"] == target and plan["level"] == "big"
    assert all("--precision big" in c and "--config configs/r12.yaml" in c for c in plan["commands"])
    assert len(plan["commands"]) == 2
    small = sampling_plan(result, evals, "configs/r12.yaml", {"low": (16, 2)})
    assert small["level"] == "low" and "add a level" in small["note"]


def one_line_error(*args) -> str:
    proc = run_script("analyze.py", "compare", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_bad_input_is_one_line_and_exit_2(db):
    path, ids = db
    one = json.dumps({"eval_id": [ids["alpha"]]})
    three = json.dumps({"eval_id": [ids["alpha"], ids["beta"], ids["gamma"]]})
    pair = json.dumps({"eval_id": [ids["alpha"], ids["beta"]]})
    assert "exactly two evals" in one_line_error(path, "--filters", one)
    assert "exactly two evals" in one_line_error(path, "--filters", three)
    assert "exactly two evals" in one_line_error(path)          # four evals in the database
    assert "unknown eval ffffff" in one_line_error(path, "--filters", json.dumps({"eval_id": ["ffffff", ids["beta"]]}))
    for delta in ("0", "abc"):
        assert "--delta must be a number between 0 and 1" in one_line_error(path, "--filters", pair, "--delta", delta)
    assert "two different evals" in one_line_error(path, "--filters", json.dumps({"eval_id": [ids["alpha"]] * 2}))
    assert "not a valid regular expression" in one_line_error(path, "--search", "(")
    assert "share no problem" in one_line_error(path, "--filters", json.dumps(
        {"eval_id": [ids["alpha"], ids["gamma"]], "base_task": "arithmetic"}))


def test_cells_follow_group_by(db):
    path, ids = db
    result = compare_json(path, ids["alpha"], ids["beta"], "--group-by", "params.length")
    groups = {(c["tier"], c["group"]): c["pairs"] for c in result["cells"]}
    # easy length 4: arithmetic (20 paired of B's 24) + boolean (20); easy 8: 20; medium 12: 20
    assert groups == {("easy", 4): 40, ("easy", 8): 20, ("medium", 12): 20}
    assert result["group_by"] == "params.length" and result["overall"]["pairs"] == 80
