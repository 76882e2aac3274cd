"""Quick-start command 1, end to end, in a scratch copy of the project's data files."""
from __future__ import annotations

import hashlib
import json
import re
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
    # the demo ends with a paired comparison of two simulated models (docs/workflow.md, Step 5) ...
    ids = {e["filters"]["model"]: hashlib.sha256(
        f"{e['filters']['model']}|{e['filters']['template']}|{e['filters']['sampler']}".encode()).hexdigest()[:6]
        for c in dataset["cohorts"] for e in json.loads((tmp_path / "data" / c["path"]).read_text())}
    pair = [ids["sim-weak"], ids["sim-loopy"]]
    assert f"$ python analyze.py compare data/demo.json --filters '{json.dumps({'eval_id': pair})}'" in proc.stdout
    assert "# Paired comparison: B = Simulated loop-prone model" in proc.stdout
    # ... in which pairing decides more (tier, group) cells than the same test without pairing
    result = json.loads(subprocess.run(
        [sys.executable, str(REPO / "analyze.py"), "compare", "data/demo.json", "--filters",
         json.dumps({"eval_id": pair}), "--format", "json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True).stdout)
    assert (result["a"], result["b"]) == tuple(pair) and len(result["cells"]) == 6
    paired = {(c["tier"], c["group"]) for c in result["cells"] if c["verdict"] != "none"}
    unpaired = {(c["tier"], c["group"]) for c in result["cells"] if c["unpaired_verdict"] != "none"}
    assert unpaired <= paired and len(paired) > len(unpaired), (paired, unpaired)
    # and at least one of those cells has a paired 95% interval clear of 0 and an unpaired one across it
    only = [c for c in result["cells"] if (c["tier"], c["group"]) in paired - unpaired]
    assert any(c["paired"][0] > 0 > c["unpaired"][0] or c["paired"][1] < 0 < c["unpaired"][1] for c in only)
    # docs/workflow.md (Step 5) states these counts
    page = (REPO / "docs" / "workflow.md").read_text(encoding="utf-8")
    said = re.search(r"pairing decides (\d+) of (\d+) cells and the unpaired test (none|\d+)", " ".join(page.split()))
    assert said, "docs/workflow.md no longer gives the demo's counts"
    assert (int(said.group(1)), int(said.group(2)), 0 if said.group(3) == "none" else int(said.group(3))) == (
        len(paired), len(result["cells"]), len(unpaired))
