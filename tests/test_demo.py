"""Quick-start command 1 (`python -m resolver.demo --no-serve`), end to end, in a scratch copy
of the project's data files: the simulator, runner.py and evaluate.py for real, run once for
this module. Then every forensics subcommand on the dataset it built (analyze.py spiderweb /
surface / compression / hazard / capacity, probe.py fft / failure / truncation)."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import duckdb
import pytest
from conftest import REPO
from PIL import Image

import analyze as analyze_script
import probe as probe_script
from resolver.probe.loops import CLASSES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo's scratch root and its finished process (stdout holds what it printed)."""
    root = tmp_path_factory.mktemp("demo")
    for folder in ("configs", "templates", "samplers"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copytree(REPO / "data" / "demo", root / "data" / "demo", ignore=shutil.ignore_patterns("20*", ".cache"))
    shutil.copy(REPO / "data" / "demo.json", root / "data" / "demo.json")
    proc = subprocess.run(
        [sys.executable, "-m", "resolver.demo", "--no-serve", "--root", str(root), "--parallel", "16"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "REASONSCAPE_VENV": sys.prefix, "TQDM_DISABLE": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return SimpleNamespace(root=root, proc=proc)


@pytest.fixture(scope="module")
def demo(demo_run):
    return demo_run.root / "data" / "demo.json"


def test_demo_runs_the_whole_pipeline(demo_run):
    root, proc = demo_run.root, demo_run.proc
    # every simulated model wrote a run folder into its cohort, and the scores table ranks all four
    dataset = json.loads((root / "data" / "demo.json").read_text())
    for cohort in dataset["cohorts"]:
        model = cohort["path"].split("/")[1]
        assert list((root / "data" / "demo" / model).glob(f"20*_{model}_*")), model
        assert "Simulated" in proc.stdout and model in (root / "data" / cohort["path"]).read_text()
    table_rows = [l for l in proc.stdout.splitlines() if l.startswith("| Simulated") and "| overall |" in l]
    assert len(table_rows) == 4
    assert (root / "data" / "pointsdb-demo.db").exists()
    # the strong profile outranks the weak one
    order = [row.split("|")[1].strip() for row in table_rows]
    assert order.index(next(r for r in order if "strong" in r)) < order.index(next(r for r in order if "weak" in r))
    # the demo ends with a paired comparison of two simulated models (docs/workflow.md, Step 5) ...
    ids = {e["filters"]["model"]: hashlib.sha256(
        f"{e['filters']['model']}|{e['filters']['template']}|{e['filters']['sampler']}".encode()).hexdigest()[:6]
        for c in dataset["cohorts"] for e in json.loads((root / "data" / c["path"]).read_text())}
    pair = [ids["sim-weak"], ids["sim-loopy"]]
    assert f"$ python analyze.py compare data/demo.json --filters '{json.dumps({'eval_id': pair})}'" in proc.stdout
    assert "# Paired comparison: B = Simulated loop-prone model" in proc.stdout
    # ... in which pairing decides more (tier, group) cells than the same test without pairing
    result = json.loads(subprocess.run(
        [sys.executable, str(REPO / "analyze.py"), "compare", "data/demo.json", "--filters",
         json.dumps({"eval_id": pair}), "--format", "json"],
        cwd=root, capture_output=True, text=True, timeout=120, check=True).stdout)
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


def _run(main, args, capsys):
    code = main([str(a) for a in args])
    return SimpleNamespace(returncode=code or 0, stdout=capsys.readouterr().out)


def _valid_pngs(directory) -> list:
    files = sorted(directory.glob("*.png"))
    for path in files:
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert min(image.size) >= 300, path
    return files


def test_every_analyze_forensics_subcommand_writes_valid_images(demo, tmp_path, capsys):
    commands = {
        "spiderweb": ["spiderweb", demo],
        "spiderweb-bars": ["spiderweb", demo, "--format", "barpng"],
        "surface": ["surface", demo],
        "compression": ["compression", demo],
        "hazard": ["hazard", demo],
        "capacity": ["capacity", demo, "--frontier", "--size-param", "params.length", "--format", "png"],
    }
    for name, args in commands.items():
        out = tmp_path / name
        assert _run(analyze_script.main, [*args, "--output-dir", out], capsys).returncode == 0
        assert _valid_pngs(out), name
    evals = len(json.loads(demo.read_text())["cohorts"])
    assert len(_valid_pngs(tmp_path / "spiderweb")) == evals          # one per eval
    assert len(_valid_pngs(tmp_path / "hazard")) == 3 * evals           # per task and eval
    assert len(_valid_pngs(tmp_path / "surface")) == 3                  # per task


def test_probe_subcommands_on_the_demo(demo, tmp_path, capsys):
    assert _run(probe_script.main, ["fft", demo, "--output-dir", tmp_path, "--quiet"], capsys).returncode == 0
    assert _valid_pngs(tmp_path)
    con = duckdb.connect(str(demo.parent / "pointsdb-demo.db"), read_only=True)
    pid, truncated = con.execute("SELECT id, truncated FROM points WHERE model LIKE '%loopy%' "
                                 "ORDER BY truncated DESC, id LIMIT 1").fetchone()
    con.close()
    data = json.loads(_run(probe_script.main, ["truncation", demo, "--point-id", pid, "--format", "json"],
                           capsys).stdout)
    assert len(data["samples"]) == truncated > 0
    # the simulated loop-prone model loops on every truncated answer
    assert all(s["classification"] in CLASSES for s in data["samples"])
    failure = _run(probe_script.main, ["failure", demo, "--point-id", pid, "--limit", "2"], capsys).stdout
    assert failure.count("### Sample") == 2 and "## Failures by genresult field" in failure
