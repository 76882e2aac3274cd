"""Two evals that share a label stay two rows everywhere: analyze.py scores / evals and the web apps
all call resolver.analysis.eval_labels, which adds " [eval_id]" to a repeated label."""
from __future__ import annotations

import json
import re

import pytest
from conftest import evaluate_hand_dataset, run_script
from test_analyze_fixture import CONFIG, OUTCOMES, model_eval_id, write_cohort

from resolver.analysis import eval_labels

TWINS = ("Alpha", "Beta")


def test_eval_labels_by_hand():
    rows = [{"eval_id": "e1", "label": "Same", "model": "a"}, {"eval_id": "e2", "label": "Same", "model": "b"},
            {"eval_id": "e3", "label": None, "model": "solo"}, {"eval_id": "e4", "label": "", "model": None}]
    assert eval_labels(rows) == {"e1": "Same [e1]", "e2": "Same [e2]", "e3": "solo", "e4": "e4"}


@pytest.fixture(scope="module")
def twin_dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("twins")
    for model in TWINS:
        write_cohort(root / "data", model)
        evals_file = root / "data" / "hand" / model / "evals.json"
        entries = json.loads(evals_file.read_text())
        entries[0]["label"] = "Twin"
        evals_file.write_text(json.dumps(entries))
    return evaluate_hand_dataset(root, "hand", CONFIG, {m: OUTCOMES[m] for m in TWINS})


@pytest.mark.parametrize("command", [["scores"], ["evals", "--format", "markdown"], ["evals"]])
def test_analyze_shows_twins_apart(twin_dataset, command):
    proc = run_script("analyze.py", command[0], twin_dataset, *command[1:])
    assert proc.returncode == 0, proc.stderr
    for model in TWINS:
        assert f"Twin [{model_eval_id(model)}]" in proc.stdout
    assert model_eval_id("Alpha") != model_eval_id("Beta")


def test_scores_json_keeps_the_stored_label(twin_dataset):
    proc = run_script("analyze.py", "scores", twin_dataset, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(e["label"] for e in json.loads(proc.stdout)) == ["Twin", "Twin"]


def test_probe_reports_tell_twins_apart(twin_dataset):
    """probe.py labels evals by the same rule (eval_labels): each twin's point heading carries
    its " [eval_id]", as analyze.py's tables do."""
    import duckdb

    con = duckdb.connect(str(twin_dataset.parent / "hand.db"), read_only=True)
    try:
        ids = {model: con.execute("SELECT min(id) FROM points WHERE model = ? AND incorrect > 0",
                                  [model]).fetchone()[0] for model in TWINS}
    finally:
        con.close()
    proc = run_script("probe.py", "failure", twin_dataset, *(a for m in TWINS for a in ("--point-id", ids[m])))
    assert proc.returncode == 0, proc.stderr
    for model in TWINS:
        eid = model_eval_id(model)
        # "## Point <id> — <step> — <label> (<eval_id>)"; before, both labels read "Twin"
        assert re.search(rf"^## Point {ids[model]} — \S+ — Twin \[{eid}\] \({eid}\)$", proc.stdout, re.M), proc.stdout[:600]
