"""Invalid reasons end to end: simulator -> runner.py -> evaluate.py -> analyze.py scores / probe.py failure.

The simulator ends an invalid answer in one of two ways it documents (resolver/sim/profiles.py,
`invalid_final`): no final-answer marker at all, or "Final Answer: I cannot determine this
from the information given." The reason a reader gives for each is known by hand: no
marker; for a closed task (choice or literal options) not an option, otherwise unreadable.
The runner's records must carry that reason, and both views must count what the raw
records say.
"""
from __future__ import annotations

import json
from collections import Counter

import duckdb
import pytest
from conftest import run_script

from tests.support.runner import read_folder, simulated_cohort

pytestmark = pytest.mark.slow

CLOSED_TASKS = {"boolean", "dates", "movies", "shapes", "shuffle"}      # choice / literal answers


def _expected_reason(record: dict) -> str:
    if "Final Answer:" not in (record["answer"] or ""):
        return "no_marker"
    return "not_an_option" if record["base_task"] in CLOSED_TASKS else "unreadable"


def _is_invalid(record: dict) -> bool:
    return not record["is_valid"] and not record["is_truncated"]


def test_reasons_travel_from_runner_records_to_scores_and_failure(tmp_path):
    root = tmp_path / "data"
    # sim-weak answers 8% of problems unreadably by design (sim-mid only 3%, about 3 of tiny.yaml's
    # 112 records), so the run holds invalid answers of both kinds for this to check.
    cohort = simulated_cohort(tmp_path, model="sim-weak")
    records = [r for folder in cohort.iterdir() if folder.is_dir() for r in read_folder(folder)]
    invalid = [r for r in records if _is_invalid(r)]
    assert len(invalid) >= 3, "the simulator profile should produce some invalid answers"
    for record in records:
        assert record["invalid_reason"] == (_expected_reason(record) if _is_invalid(record) else
                                            "truncated" if record["is_truncated"] else None), record["answer"]
    expected = Counter(r["invalid_reason"] for r in invalid)
    assert "no_marker" in expected and len(expected) >= 2, expected

    (cohort / "evals.json").write_text(json.dumps([{
        "evaluate": {"glob": "data/demo/sim-weak/*_sim-weak_*/*"},
        "filters": {"model": "sim-weak", "template": "zerocot-nosys", "sampler": "greedy-2k"},
        "label": "Simulated weak", "groups": ["arch:sim"], "tags": ["leaderboard"]}]))
    dataset = root / "demo.json"
    dataset.write_text(json.dumps({"name": "demo", "db": "pointsdb-demo.db", "cache": "demo/.cache",
                                   "config": "../configs/tiny.yaml", "cohorts": [{"path": "demo/sim-weak/evals.json"}]}))
    run_script("evaluate.py", "--dataset", dataset, "--quiet", cwd=tmp_path, check=True)

    scores = json.loads(run_script("analyze.py", "scores", dataset, "--format", "json", cwd=tmp_path, check=True).stdout)
    assert [entry["invalid_reasons"] for entry in scores] == [dict(expected)]

    con = duckdb.connect(str(root / "pointsdb-demo.db"), read_only=True)
    point_id, point_invalid = con.execute("SELECT id, invalid FROM points WHERE invalid > 0 ORDER BY invalid DESC, id "
                                          "LIMIT 1").fetchone()
    con.close()
    failure = json.loads(run_script("probe.py", "failure", dataset, "--point-id", point_id, "--format", "json",
                                    cwd=tmp_path, check=True).stdout)
    [point] = failure["points"]
    rows = [row for row in failure["failures"] if row["outcome"] == "invalid"]
    assert len(rows) == point_invalid
    assert point["invalid_reasons"] == dict(Counter(row["invalid_reason"] for row in rows))
