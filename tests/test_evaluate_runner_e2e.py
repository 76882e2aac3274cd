"""evaluate.py on what runner.py really writes: simulator -> runner.py into a cohort -> dataset DB."""
import json

import duckdb
import pytest
from conftest import run_script
from test_evaluate_pipeline import all_ndjson, check_against_raw

from resolver.catalog.datasets import eval_id
from resolver.config.loader import expected_points, load_config
from tests.support.runner import simulated_cohort

pytestmark = pytest.mark.slow


def test_runner_output_in_a_cohort_builds_the_dataset_db(tmp_path):
    root = tmp_path / "data"
    cohort = simulated_cohort(tmp_path)
    (cohort / "evals.json").write_text(json.dumps([{
        "evaluate": {"glob": "data/demo/sim-mid/*_sim-mid_*/*"},
        "filters": {"model": "sim-mid", "template": "zerocot-nosys", "sampler": "greedy-2k"},
        "label": "Simulated mid", "groups": ["arch:sim"], "tags": ["leaderboard"]}]))
    dataset = root / "demo.json"
    dataset.write_text(json.dumps({"name": "demo", "db": "pointsdb-demo.db", "cache": "demo/.cache",
                                   "config": "../configs/tiny.yaml",
                                   "cohorts": [{"path": "demo/sim-mid/evals.json", "filters": {"tags": "leaderboard"}}]}))
    proc = run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", cwd=tmp_path, check=True)
    assert "1 evals built" in proc.stdout, proc.stdout + proc.stderr
    db = root / "pointsdb-demo.db"
    check_against_raw(db, all_ndjson(cohort))
    con = duckdb.connect(str(db), read_only=True)
    expected = con.execute("SELECT base_task, degree, points FROM expected").fetchall()
    present = con.execute("""SELECT base_task, CAST(json_extract(manifold, '$.degree') AS INTEGER), count(*)
                             FROM points GROUP BY ALL""").fetchall()
    eids = con.execute("SELECT DISTINCT eval_id FROM points").fetchall()
    con.close()
    want = expected_points(load_config(tmp_path / "configs" / "tiny.yaml"))
    assert sorted(expected, key=str) == sorted(((t, d, n) for (t, d), n in want.items()), key=str)
    assert {(t, d): n for t, d, n in present} == {(t, d): n for t, d, n in expected}   # a complete run
    assert eids == [(eval_id("sim-mid", "zerocot-nosys", "greedy-2k"),)]
