"""The published output schemas (docs/schemas/*-output.json, leaderboard-export.json) against
real outputs: the real analyze.py run as a subprocess on the hand dataset
(test_analyze_fixture), each JSON checked with `jsonschema` (a validator apart from pydantic).

The models shape the JSON, so the JSON text is also compared with the standard library's
own dump of the computation's dict: the model must not add, drop, reorder or reformat
anything (docs/analyze.md, "The JSON contract").
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pydantic
import pytest
from conftest import run_script
from test_analyze_fixture import OUTCOMES, hand_dataset, model_eval_id

from resolver.analysis import CompareOutput, EvalsOutput, output_json, to_plain

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = REPO / "docs" / "schemas"


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    return hand_dataset(tmp_path_factory)


def _validate(data, schema_name: str) -> None:
    schema = json.loads((SCHEMAS / schema_name).read_text(encoding="utf-8"))
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def _json_of(*args) -> object:
    proc = run_script("analyze.py", *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


ALPHA, GAMMA = model_eval_id("Alpha"), model_eval_id("Gamma")
SLOW = pytest.mark.slow      # each run is seconds of subprocess: the fast tier keeps scores (below), compare, cluster
RUNS = [
    ("scores-output.json", ("scores", "--group-by", "manifold.degree"), SLOW),
    ("compare-output.json", ("compare", "--filters", json.dumps({"eval_id": [GAMMA, ALPHA]})), ()),
    ("compare-output.json", ("compare", "--filters", json.dumps({"eval_id": [GAMMA, ALPHA]}),
                             "--group-by", "params.length"), SLOW),
    ("cluster-output.json", ("cluster",), ()),
    ("cluster-output.json", ("cluster", "--group-by", "base_task", "--facet-by", "none"), SLOW),
    ("rank-output.json", ("rank",), SLOW),
    ("evals-output.json", ("evals",), SLOW),
    ("tasks-output.json", ("tasks",), SLOW),
    ("tokens-output.json", ("tokens",), SLOW),
    ("aggregate-output.json", ("aggregate", "--raw-counters", "--tokens"), SLOW),
    ("aggregate-output.json", ("aggregate", "--group-by", "params.length", "--compare-modes"), SLOW),
    ("spiderweb-output.json", ("spiderweb",), SLOW),
    ("surface-output.json", ("surface",), SLOW),
    ("capacity-output.json", ("capacity", "--frontier", "--size-param", "params.length"), SLOW),
    ("capacity-output.json", ("capacity", "--peak", "--size-param", "params.length"), SLOW),
    ("compression-output.json", ("compression",), SLOW),
    ("hazard-output.json", ("hazard",), SLOW),
]


@pytest.mark.parametrize("schema,args", [pytest.param(s, a, marks=m, id=f"{a[0]}-{i}")
                                         for i, (s, a, m) in enumerate(RUNS)])
def test_real_outputs_conform_to_the_published_schema(hand, schema, args):
    command, rest = args[0], args[1:]
    _validate(_json_of(command, hand, *rest), schema)


@pytest.mark.slow
def test_points_and_probe_outputs_conform(hand, tmp_path):
    """analyze.py points (one file per task) and probe.py failure / truncation on a point
    with truncated answers (Beta's arithmetic)."""
    proc = run_script("analyze.py", "points", hand, "--format", "json", "--output-dir", tmp_path)
    assert proc.returncode == 0, proc.stderr
    files = sorted(tmp_path.glob("points_*.json"))
    assert [f.name for f in files] == ["points_base_task-arithmetic.json", "points_base_task-boolean.json"]
    rows = [row for f in files for row in json.loads(f.read_text())]
    for f in files:
        _validate(json.loads(f.read_text()), "points-output.json")
    beta = next(r["id"] for r in rows if r["eval_id"] == model_eval_id("Beta") and r["truncated"])
    for command, schema in (("failure", "failure-output.json"), ("truncation", "truncation-output.json")):
        proc = run_script("probe.py", command, hand, "--point-id", beta, "--format", "json")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        _validate(data, schema)
        assert [p["id"] for p in data["points"]] == [beta]
    assert len(data["samples"]) == 1          # truncation: Beta has one truncated answer per point


@pytest.mark.slow
def test_the_shortcut_audit_conforms(tmp_path):
    target = tmp_path / "audit.json"
    proc = run_script("probe.py", "shortcuts", "--config", REPO / "configs" / "tiny.yaml", "--samples", 16,
                      "--json", target, "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(target.read_text())
    _validate(data, "shortcuts-output.json")
    assert data["samples"] == 16 and data["seed"] == 42


def test_scores_json_holds_the_missing_and_incomplete_cells(hand):
    """The hand dataset's holes reach the JSON as the schema allows them: Gamma never ran
    boolean (missing tasks), Delta lacks one deep arithmetic point (incomplete)."""
    data = _json_of("scores", hand)
    _validate(data, "scores-output.json")
    by_eval = {e["eval_id"]: e for e in data}
    assert set(by_eval) == {model_eval_id(m) for m in OUTCOMES}
    assert by_eval[GAMMA]["tiers"]["easy"]["missing_tasks"] == ["boolean"]
    delta = by_eval[model_eval_id("Delta")]["tiers"]["medium"]["tasks"]["arithmetic"]
    assert (delta["point_count"], delta["expected_points"], delta["is_incomplete"]) == (1, 2, True)


def test_the_leaderboard_download_conforms_to_its_schema(hand):
    from resolver.analysis.leaderboard_scores import Board
    from resolver.pointsdb import open_pointsdb
    from resolver.web import leaderboard_table
    from resolver.web.leaderboard import state_from_url

    with open_pointsdb(hand.parent / "hand.db", read_only=True) as db:
        board = Board(db, "base_task")
        for search, arithmetic_points in (("", 4), ("?mode=C_P&tier=easy", 2)):
            state = state_from_url(board, search, [])
            data = json.loads(leaderboard_table.export_json(board, leaderboard_table.selected_rows(board, state), state))
            _validate(data, "leaderboard-export.json")
            assert {r["eval_id"] for r in data["rows"]} == {model_eval_id(m) for m in OUTCOMES}
            gamma = next(r for r in data["rows"] if r["eval_id"] == GAMMA)
            assert gamma["boolean points"] is None and gamma["arithmetic points"] == arithmetic_points


def test_the_spiderweb_download_conforms_to_its_schema(hand):
    """The spiderweb's JSON download: valid against its schema, and the same text as the export
    frame's rows written by pandas and the standard library (what the download always was)."""
    import pandas as pd

    from resolver.pointsdb import open_pointsdb
    from resolver.web.spiderweb import Profiles, export_frame, export_json

    with open_pointsdb(hand.parent / "hand.db", read_only=True) as db:
        profiles = Profiles(db, "base_task")
    for mode in ("C_P", "C_I"):
        frame = export_frame(profiles, [GAMMA, ALPHA], mode)
        text = export_json(frame, mode, "base_task")
        data = json.loads(text)
        _validate(data, "spiderweb-export.json")
        assert text == json.dumps({"mode": mode, "group_by": "base_task",
                                   "rows": json.loads(frame.to_json(orient="records"))}, indent=1)
        assert {r["eval_id"] for r in data["rows"]} == {GAMMA, ALPHA}
        groups = {e: {r["group"] for r in data["rows"] if r["eval_id"] == e} for e in (GAMMA, ALPHA)}
        assert groups == {GAMMA: {"arithmetic"}, ALPHA: {"arithmetic", "boolean"}}     # Gamma never ran boolean
        assert all(r["mode"] == mode and r["archetype"] for r in data["rows"])
    with pytest.raises(pydantic.ValidationError, match="archetype"):
        export_json(pd.DataFrame([{"mode": "C_P"}]), "C_P", "base_task")


def test_the_model_keeps_the_text_of_the_dict_it_is_given(hand):
    """Key order, integers, floats and nulls as the standard library writes the same dict."""
    from resolver.analysis.compare import compare_evals
    from resolver.pointsdb import open_pointsdb

    with open_pointsdb(hand.parent / "hand.db", read_only=True) as db:
        result = compare_evals(db, GAMMA, ALPHA)
    result["labels"] = {"a": "Gamma model", "b": "Alpha model"}
    result["sampling"] = {"target_per_point": None, "level": None, "commands": [], "tasks": [], "note": ""}
    expected = json.dumps(to_plain(result, finite=True), indent=2, ensure_ascii=False)
    assert output_json(CompareOutput, result) == expected
    assert '"alpha": 0.05,' in expected and '"family": ' in expected


def test_a_key_the_model_does_not_declare_is_refused():
    row = {"eval_id": "abc123", "label": "A", "model": "a", "template": None, "sampler": None, "groups": [],
           "hf_id": None, "points": 1, "samples": 20, "grader_version": 3, "task_versions": {"arithmetic": [1]}}
    assert json.loads(output_json(EvalsOutput, [row])) == [row]
    with pytest.raises(pydantic.ValidationError, match="surprise"):
        output_json(EvalsOutput, [dict(row, surprise=1)])
    with pytest.raises(jsonschema.ValidationError):
        _validate([dict(row, surprise=1)], "evals-output.json")


def test_the_run_summary_conforms_to_its_schema(tmp_path):
    """resolver.run.RunSummary, as run_api returns it after counting records, dumps to JSON
    that docs/schemas/run-summary.json accepts; a wrong type is refused when it is made."""
    from resolver.run import RunSummary

    summary = RunSummary(folder=tmp_path, steps_total=2)
    record = {"is_correct": False, "is_truncated": True, "is_valid": False, "prompt_too_long": True,
              "usage": {"prompt_tokens": 9000, "completion_tokens": 0}}
    summary.count(record, cached=False)
    summary.failures["HTTP 500 from the server"] += 2
    summary.incomplete.append(("000_arithmetic_length-4", 1, 12))
    summary.retry_reasons = {"HTTP 429": 3}
    data = pydantic.TypeAdapter(RunSummary).dump_python(summary, mode="json")
    _validate(data, "run-summary.json")
    assert data["folder"] == str(tmp_path) and data["incomplete"] == [["000_arithmetic_length-4", 1, 12]]
    assert (data["samples"], data["truncated"], data["prompt_too_long"], data["prompt_tokens"]) == (1, 1, 1, 9000)
    with pytest.raises(jsonschema.ValidationError):
        _validate(dict(data, samples="many"), "run-summary.json")
    with pytest.raises(jsonschema.ValidationError, match="'cpu' is a required property"):
        _validate({k: v for k, v in data.items() if k != "cpu"}, "run-summary.json")
    with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
        _validate(dict(data, samples_total=1), "run-summary.json")
    with pytest.raises(pydantic.ValidationError):
        RunSummary(steps_total="many")
