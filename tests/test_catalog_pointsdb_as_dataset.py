"""A PointsDB file where a dataset config goes, as a first-time user meets it: runner.py
against the simulator, `evaluate.py --interview 'results/*/*.ndjson'` in a folder kept
apart from the repository (relative paths), then analyze.py, probe.py and leaderboard.py
on pointsdb-interview.db -- all real subprocesses. Expected numbers are counted here from
the NDJSON records themselves."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from conftest import REPO, run_script
from test_evaluate_pipeline import check_against_raw

from resolver.catalog.datasets import dataset_from_pointsdb, eval_id, is_duckdb_file
from tests.support.runner import runner_args, simulator

pytestmark = pytest.mark.slow

MODELS = ("sim-mid", "sim-weak")
DB = "pointsdb-interview.db"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder outside the repository holding results/ of two simulated models and the interview DB."""
    folder = tmp_path_factory.mktemp("first-run")
    assert REPO not in folder.parents
    with simulator() as sim:
        for model in MODELS:
            run_script("runner.py", *runner_args(sim.url, folder, model=model), check=True, timeout=600)
    proc = run_script("evaluate.py", "--interview", "results/*/*.ndjson", "--parallel", "2", cwd=folder, check=True)
    folder.joinpath("evaluate.out").write_text(proc.stdout)
    return folder


def records(folder: Path) -> list:
    return [json.loads(line) for path in sorted(folder.glob("results/*/*.ndjson"))
            for line in path.read_text().splitlines() if line.strip()]


def triple(record) -> tuple:
    return record["model"], record["template"], record["sampler"]


def ok(folder, script, *args):
    proc = run_script(script, *args, cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def one_line_error(folder, script, *args) -> str:
    proc = run_script(script, *args, cwd=folder)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_evaluate_interview_prints_the_next_command_and_builds_the_db(work):
    assert f"next: python analyze.py scores {DB}" in work.joinpath("evaluate.out").read_text()
    assert is_duckdb_file(work / DB)
    check_against_raw(work / DB, sorted(work.glob("results/*/*.ndjson")))


def test_scores_and_evals_on_the_interview_db(work):
    samples = Counter(triple(r) for r in records(work))
    assert {t[0] for t in samples} == set(MODELS)
    markdown = ok(work, "analyze.py", "scores", DB).stdout
    assert markdown.startswith("# ReasonScore — pointsdb-interview")
    for model in MODELS:
        assert re.search(rf"^\| {model} \| overall \|", markdown, re.M), markdown
    scores = json.loads(ok(work, "analyze.py", "scores", DB, "--format", "json").stdout)
    assert {e["eval_id"]: e["label"] for e in scores} == {eval_id(*t): t[0] for t in samples}
    for entry in scores:
        total = sum(task["samples"] for tier in entry["tiers"].values() for task in tier["tasks"].values())
        assert total == samples[(entry["model"], entry["template"], entry["sampler"])]
    evals = json.loads(ok(work, "analyze.py", "evals", DB, "--format", "json").stdout)
    assert {(e["eval_id"], e["model"], e["template"], e["sampler"], e["samples"]) for e in evals} == \
        {(eval_id(*t), *t, n) for t, n in samples.items()}
    table = ok(work, "analyze.py", "evals", DB).stdout
    assert all(model in table for model in MODELS)


def test_rank_and_probe_failure_on_the_interview_db(work):
    ranked = json.loads(ok(work, "analyze.py", "rank", DB, "--format", "json").stdout)
    assert {r["name"] for r in ranked["rows"]} == {eval_id(*triple(r)) for r in records(work)}
    assert all(r["rank"] is not None for r in ranked["rows"])
    con = duckdb.connect(str(work / DB), read_only=True)
    point_id, model, task = con.execute(
        "SELECT id, model, task FROM points ORDER BY incorrect + invalid + truncated DESC, id LIMIT 1").fetchone()
    con.close()
    failed = [r for r in records(work) if r["model"] == model and r["task"] == task
              and not (r["is_correct"] and not r["is_truncated"])]
    assert failed, "the simulator should fail some samples of the chosen point"
    report = json.loads(ok(work, "probe.py", "failure", DB, "--point-id", point_id, "--format", "json").stdout)
    assert sorted(f["key"] for f in report["failures"]) == sorted(r["key"] for r in failed)
    assert model in ok(work, "probe.py", "failure", DB, "--point-id", point_id).stdout   # the label, from the DB


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def served_layout(folder, script) -> str:
    """The /_dash-layout of a web app started as a subprocess on `DB` (JSON text, non-ASCII kept)."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(REPO / script), DB, "--port", str(port)], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, layout = time.monotonic() + 90, None
        while layout is None:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, f"{script} did not serve within 90 s"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_dash-layout", timeout=30) as resp:
                    layout = resp.read().decode()
            except OSError:
                time.sleep(0.3)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    return json.dumps(json.loads(layout), ensure_ascii=False)


def test_web_apps_serve_the_interview_db(work):
    assert "pointsdb-interview · 2 evals" in served_layout(work, "leaderboard.py")
    spider = served_layout(work, "spiderweb.py")       # its eval picker lists the labels in the layout
    assert "pointsdb-interview · 2 evals" in spider
    for model in MODELS:
        assert f'"label": "{model}"' in spider, spider[:2000]


def test_what_needs_a_config_says_so_in_one_line(work):
    for script, *args in (("probe.py", "fft", DB), ("analyze.py", "surface", DB),
                          ("evaluate.py", "--dataset", DB)):
        line = one_line_error(work, script, *args)
        assert "PointsDB" in line and "dataset config" in line and "data/r12.json" in line, line
    line = one_line_error(work, "analyze.py", "modelinfo", DB, "--output-dir", "info")
    assert "--hf-id" in line and "hf_id" in line, line


def test_a_pointsdb_is_recognised_by_its_header_not_its_name(work, tmp_path):
    renamed = tmp_path / "looks-like-a-config.json"
    shutil.copy(work / DB, renamed)
    evals = json.loads(ok(tmp_path, "analyze.py", "evals", renamed.name, "--format", "json").stdout)
    assert {e["model"] for e in evals} == set(MODELS)
    fake = tmp_path / "fake.db"
    fake.write_text('{"name": "x"}')          # JSON text named like a database: still a dataset file
    assert not is_duckdb_file(fake) and not is_duckdb_file(tmp_path / "missing.db")
    line = one_line_error(tmp_path, "analyze.py", "evals", "fake.db")
    assert line.startswith("analyze.py: error: fake.db: missing required key 'db'"), line   # read as a dataset config


def test_evals_sharing_a_label_are_told_apart(tmp_path):
    from resolver.pointsdb.writer import PointsWriter

    ids = {t: eval_id("m", t, "greedy") for t in ("zs", "cot")}
    with PointsWriter(tmp_path / "two.db", keep_existing=False) as writer:
        for template, eid in ids.items():
            writer.put_eval({"eval_id": eid, "model": "m", "template": template, "sampler": "greedy", "label": "m",
                             "groups": [], "facets": "{}", "tags": []})
        writer.put_eval({"eval_id": "ffffff", "model": "solo", "template": "zs", "sampler": "greedy",
                         "label": None, "groups": ["size:small"], "facets": '{"size": "small"}', "tags": []})
    dataset = dataset_from_pointsdb(tmp_path / "two.db")
    assert dataset.from_pointsdb and dataset.config_path is None and dataset.name == "two"
    labels = {spec.eval_id: spec.label for spec in dataset.evals}
    assert labels == {ids["zs"]: f"m [{ids['zs']}]", ids["cot"]: f"m [{ids['cot']}]", "ffffff": "solo"}
    solo = [s for s in dataset.evals if s.eval_id == "ffffff"][0]
    assert solo.groups == ("size:small",) and solo.facets == {"size": "small"}
