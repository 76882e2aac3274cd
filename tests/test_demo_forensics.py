"""Every forensics subcommand (analyze.py spiderweb / surface / compression / hazard /
capacity, probe.py fft / failure / truncation) end to end on the demo dataset, built
here by quick-start command 1 (`python -m resolver.demo --no-serve`) in a scratch copy
of the project's data files: the simulator, runner.py and evaluate.py for real."""
from __future__ import annotations

import json
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
def demo(tmp_path_factory):
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
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return root / "data" / "demo.json"


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
