"""Quick-start command 1, end to end, in a scratch copy of the project's data files."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow


def test_demo_runs_the_whole_pipeline(tmp_path):
    for folder in ("configs", "templates", "samplers"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    shutil.copytree(REPO / "data" / "demo", tmp_path / "data" / "demo",
                    ignore=shutil.ignore_patterns("20*", ".cache"))
    shutil.copy(REPO / "data" / "demo.json", tmp_path / "data" / "demo.json")
    proc = subprocess.run(
        [sys.executable, "-m", "resolver.demo", "--no-serve", "--root", str(tmp_path), "--parallel", "16"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "REASONSCAPE_VENV": sys.prefix, "TQDM_DISABLE": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # every simulated model wrote a run folder into its cohort, and the scores table ranks all four
    dataset = json.loads((tmp_path / "data" / "demo.json").read_text())
    for cohort in dataset["cohorts"]:
        model = cohort["path"].split("/")[1]
        assert list((tmp_path / "data" / "demo" / model).glob(f"20*_{model}_*")), model
        assert "Simulated" in proc.stdout and model in (tmp_path / "data" / cohort["path"]).read_text()
    table_rows = [l for l in proc.stdout.splitlines() if l.startswith("| Simulated") and "| overall |" in l]
    assert len(table_rows) == 4
    assert (tmp_path / "data" / "pointsdb-demo.db").exists()
    # the strong profile outranks the weak one
    order = [row.split("|")[1].strip() for row in table_rows]
    assert order.index(next(r for r in order if "strong" in r)) < order.index(next(r for r in order if "weak" in r))
