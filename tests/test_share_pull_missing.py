"""`data.py pull dataset --full` names the evals (and DB) nobody pushed and exits 1."""
from __future__ import annotations

import json

from conftest import run_script

from tests.support.cohort_factory import build_data_dir, eval_id


def data_py(root, remote, *args):
    return run_script("data.py", *args, "--remote", str(remote), cwd=root)


def test_full_pull_names_evals_that_were_never_pushed(tmp_path):
    paths = build_data_dir(tmp_path, models=("alpha", "beta", "gamma"))
    (paths["data"] / "pointsdb-demo.db").write_bytes(b"DUCK" * 100)
    remote = tmp_path / "remote"
    assert data_py(tmp_path, remote, "push", "dataset", "data/demo.json").returncode == 0      # DB only
    assert data_py(tmp_path, remote, "push", "cohort", "data/demo/alpha").returncode == 0      # one of three

    proc = data_py(tmp_path, remote, "pull", "dataset", "data/demo.json", "--full")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    beta, gamma = eval_id("beta", "zeroshot-nosys", "greedy-max"), eval_id("gamma", "zeroshot-nosys", "greedy-max")
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "never pushed" in lines[0], proc.stderr
    assert f"beta (greedy-max) (demo/beta/{beta})" in lines[0]
    assert f"gamma (greedy-max) (demo/gamma/{gamma})" in lines[0]
    assert "alpha" not in lines[0]
    assert "2 missing" in proc.stdout and "2 present" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if "| missing | — |" in line]
    assert sorted(r.split("|")[1].strip() for r in rows) == [f"demo/beta/{beta}", f"demo/gamma/{gamma}"]

    # Once everything is pushed the same pull is complete and exits 0.
    for model in ("beta", "gamma"):
        assert data_py(tmp_path, remote, "push", "cohort", f"data/demo/{model}").returncode == 0
    done = data_py(tmp_path, remote, "pull", "dataset", "data/demo.json", "--full")
    assert done.returncode == 0 and "missing" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "4 present" in done.stdout


def test_full_pull_names_a_database_that_was_never_pushed(tmp_path):
    build_data_dir(tmp_path, models=("alpha",))
    remote = tmp_path / "remote"
    assert data_py(tmp_path, remote, "push", "cohort", "data/demo/alpha").returncode == 0
    manifest = json.loads((tmp_path / "data" / "manifest.json").read_text())
    assert manifest["dbs"] == {}
    proc = data_py(tmp_path, remote, "pull", "dataset", "data/demo.json", "--full")
    assert proc.returncode == 1
    assert "the dataset's database (pointsdb-demo.db)" in proc.stderr
