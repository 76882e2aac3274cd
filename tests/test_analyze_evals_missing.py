"""`analyze.py evals` when only some evals name an hf_id: the others show "—" in the
tables (never pandas' "nan") and null in JSON."""
from __future__ import annotations

import json

import pytest
from conftest import evaluate_hand_dataset, run_script
from test_analyze_fixture import CONFIG, OUTCOMES, model_eval_id, write_cohort


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("hfid")
    for model in OUTCOMES:
        write_cohort(root / "data", model)
    evals_json = root / "data" / "hand" / "Gamma" / "evals.json"
    entries = json.loads(evals_json.read_text())
    del entries[0]["hf_id"]
    evals_json.write_text(json.dumps(entries))
    return evaluate_hand_dataset(root, "hand", CONFIG, OUTCOMES)


def evals(dataset, fmt):
    proc = run_script("analyze.py", "evals", dataset, "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_json_keeps_null_for_a_missing_hf_id(dataset):
    by_model = {e["model"]: e for e in json.loads(evals(dataset, "json"))}
    assert by_model["Gamma"]["hf_id"] is None
    assert by_model["Alpha"]["hf_id"] == "org/Alpha"


@pytest.mark.parametrize("fmt", ["markdown", "table"])
def test_tables_show_a_dash_for_a_missing_hf_id(dataset, fmt):
    text = evals(dataset, fmt)
    assert "nan" not in text.lower().replace("\u2014", "")
    gamma = next(line for line in text.splitlines() if model_eval_id("Gamma") in line)
    cells = [c.strip() for c in gamma.strip("|").split("|")] if fmt == "markdown" else gamma.split()
    assert "\u2014" in cells and "org/Gamma" not in gamma
    alpha = next(line for line in text.splitlines() if model_eval_id("Alpha") in line)
    assert "org/Alpha" in alpha
