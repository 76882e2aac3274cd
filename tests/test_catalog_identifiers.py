"""Identifiers stay text (docs/decisions.md): eval_ids that look like numbers — all digits (299587),
a leading zero (097274), all zeros (000000), exponent-looking (3115e1) — go through every
analyze.py subcommand, data.py and the three web apps as the same strings, and a dataset
whose every eval_id is all digits shows the same labels, counts and rankings as the same
data under hex ids.

The data is the reduced simulated r12 study (tests/support/r12_study.py) with only the model
names changed; every command is a real subprocess.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import free_port
from tests.support.r12_study import EXPONENT_MODEL, ID_MODELS, REPO, SAMPLER, TEMPLATE, env, ids_root, run, study_root

pytestmark = [pytest.mark.slow, pytest.mark.seed_study]

DIGIT_IDS = [eid for _, eid in ID_MODELS.values()]
ODD_IDS = DIGIT_IDS + [EXPONENT_MODEL[2]]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return ids_root(study_root(tmp_path_factory))


def hex_id(model: str) -> str:
    return hashlib.sha256(f"{model}|{TEMPLATE}|{SAMPLER}".encode()).hexdigest()[:6]


@pytest.fixture(scope="module")
def id_map():
    """hex eval_id of each profile -> the digit id of its renamed copy."""
    return {hex_id(source): digit for source, digit in ID_MODELS.values()}


def ok(root, *argv) -> str:
    proc = run(root, argv, in_process=True)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    return proc.stdout


def test_the_ids_are_what_sha256_says():
    for model, (_, expected) in ID_MODELS.items():
        assert hashlib.sha256(f"{model}|zerocot-nosys|greedy-4k".encode()).hexdigest()[:6] == expected
    assert all(re.fullmatch(r"\d{6}", e) for e in DIGIT_IDS) and "000000" in DIGIT_IDS
    assert any(e.startswith("0") and e != "000000" for e in DIGIT_IDS)
    assert float(EXPONENT_MODEL[2]) == 31150.0   # what a number-guessing reader would make of it


def test_evals_same_labels_and_counts_as_hex(root, id_map):
    digits = json.loads(ok(root, "analyze.py", "evals", "data/digits.json", "--format", "json"))
    hexes = json.loads(ok(root, "analyze.py", "evals", "data/hexes.json", "--format", "json"))
    assert sorted(r["eval_id"] for r in digits) == sorted(DIGIT_IDS)
    assert all(isinstance(r["eval_id"], str) for r in digits)
    by_id = {r["eval_id"]: r for r in digits}
    for h in hexes:
        d = by_id[id_map[h["eval_id"]]]
        assert (d["label"], d["points"], d["samples"], d["groups"]) == (h["label"], h["points"], h["samples"], h["groups"])
        assert d["points"] > 0 and d["samples"] > 0
    table = ok(root, "analyze.py", "evals", "data/digits.json")
    assert all(f"\n{e} " in table for e in DIGIT_IDS)


def test_scores_same_ranking_as_hex(root, id_map):
    digits = json.loads(ok(root, "analyze.py", "scores", "data/digits.json", "--format", "json"))
    hexes = json.loads(ok(root, "analyze.py", "scores", "data/hexes.json", "--format", "json"))
    assert [d["eval_id"] for d in digits] == [id_map[h["eval_id"]] for h in hexes]
    assert [d["label"] for d in digits] == [h["label"] for h in hexes]
    assert [d["reasonscore"] for d in digits] == pytest.approx([h["reasonscore"] for h in hexes])
    assert not any(d["label"] in DIGIT_IDS for d in digits)
    markdown = ok(root, "analyze.py", "scores", "data/digits.json")
    assert all(h["label"] in markdown for h in hexes)


def _normalised_lines(text: str, id_map: dict) -> list:
    for hex_value, digit in id_map.items():
        text = text.replace(hex_value, digit)
    for model, (source, _) in ID_MODELS.items():
        text = re.sub(rf"\b{re.escape(source)}\b", model, text)
    return sorted(line for line in text.splitlines() if not line.startswith("# "))


@pytest.mark.parametrize("argv", [
    ["tokens"], ["tokens", "--group-by", "manifold.id"], ["cluster"], ["cluster", "--format", "json"],
    ["rank"], ["pairwise"], ["aggregate"], ["aggregate", "--compare-modes", "--raw-counters", "--tokens"],
    ["cluster", "--facet-by", "none"], ["rank", "--group-by", "eval_id", "--facet-by", "base_task"],
], ids=lambda a: " ".join(a))
def test_tables_match_hex_dataset(root, id_map, argv):
    """The same rows (labels, counts, statistics) whatever the ids look like."""
    digits = ok(root, "analyze.py", argv[0], "data/digits.json", *argv[1:])
    hexes = ok(root, "analyze.py", argv[0], "data/hexes.json", *argv[1:])
    assert _normalised_lines(digits, id_map) == _normalised_lines(hexes, id_map)
    assert any(e in digits for e in DIGIT_IDS) or argv[0] in ("tokens", "aggregate", "pairwise", "rank")


def test_filters_select_digit_ids_as_text(root):
    for eid in ODD_IDS:
        result = json.loads(ok(root, "analyze.py", "scores", "data/oddids.json", "--format", "json",
                               "--filters", json.dumps({"eval_id": [eid]})))
        assert [r["eval_id"] for r in result] == [eid]
    # a JSON number is not an eval_id: refused, naming the real ones
    proc = run(root, ["analyze.py", "scores", "data/digits.json", "--filters", '{"eval_id": [97274]}'], in_process=True)
    assert proc.returncode == 2 and "097274" in proc.stderr and proc.stderr.count("\n") == 1


def test_file_names_keep_the_ids(root, tmp_path):
    out = tmp_path
    ok(root, "analyze.py", "points", "data/oddids.json", "--split-by", "eval_id", "--output-dir", out / "points")
    assert sorted(p.name for p in (out / "points").iterdir()) == sorted(f"points_eval_id-{e}.md" for e in ODD_IDS)
    ok(root, "analyze.py", "spiderweb", "data/oddids.json", "--output-dir", out / "spider")
    names = [p.name for p in (out / "spider").iterdir()]
    assert len(names) == 4 and all(any(n.endswith(f"_{e}.png") for n in names) for e in ODD_IDS)
    ok(root, "analyze.py", "surface", "data/oddids.json", "--split-by", "eval_id",
       "--filters", '{"base_task": "arithmetic"}', "--output-dir", out / "surface")
    assert sorted(p.name for p in (out / "surface").iterdir()) == sorted(f"surface_{e}.png" for e in ODD_IDS)
    ok(root, "analyze.py", "hazard", "data/oddids.json", "--filters", '{"base_task": "boolean"}',
       "--output-dir", out / "hazard")
    assert sorted(p.name for p in (out / "hazard").iterdir()) == sorted(f"hazard_boolean_{e}.png" for e in ODD_IDS)
    ok(root, "analyze.py", "compression", "data/oddids.json", "--filters", '{"base_task": "boolean"}',
       "--split-by", "eval_id", "--facet-by", "none", "--output-dir", out / "compression")
    assert len(list((out / "compression").iterdir())) == 4
    text = ok(root, "analyze.py", "capacity", "data/oddids.json", "--frontier", "--filters",
              '{"base_task": "tables"}', "--format", "json")
    assert set(re.findall(r'"eval_id": "([^"]+)"', text)) <= set(ODD_IDS) and '"eval_id": 0' not in text


def test_modelinfo_names_the_eval(root, tmp_path):
    ok(root, "analyze.py", "modelinfo", "data/digits.json", "--eval-id", "000000", "--output-dir", tmp_path)
    text = (tmp_path / "MODELINFO.md").read_text()
    label = json.loads((root / "data/ids/sim-id22500203/evals.json").read_text())[0]["label"]
    assert f"- 000000: {label}" in text and "097274" not in text


def test_probe_reads_points_of_digit_evals(root, tmp_path):
    ok(root, "analyze.py", "points", "data/digits.json", "--format", "json", "--output-dir", tmp_path,
       "--filters", '{"eval_id": ["000000"], "base_task": "arithmetic"}')
    rows = json.loads((tmp_path / "points_base_task-arithmetic.json").read_text())
    assert {r["eval_id"] for r in rows} == {"000000"}
    failing = next(r for r in rows if r["incorrect"] + r["invalid"] + r["truncated"])
    text = ok(root, "probe.py", "failure", "data/digits.json", "--point-id", failing["id"], "--limit", "1")
    assert "000000" in text or "sim-id22500203" in text


def test_data_push_status_pull_keep_ids(root, tmp_path):
    work = tmp_path / "clone"
    shutil.copytree(root / "data" / "ids", work / "data" / "ids")
    shutil.copyfile(root / "data" / "digits.json", work / "data" / "digits.json")
    remote = tmp_path / "remote"
    ok(work, "data.py", "push", "eval", "000000", "--remote", remote)
    manifest = (work / "data" / "manifest.json").read_text()
    assert '"000000"' in manifest
    status = ok(work, "data.py", "status", "eval", "000000", "--remote", remote)
    assert "000000" in status and "present" in status
    folder = next((work / "data/ids/sim-id22500203").glob("20*"))
    files = sorted(p.name for p in folder.iterdir())
    shutil.rmtree(folder)
    ok(work, "data.py", "pull", "eval", "000000", "--remote", remote)
    assert sorted(p.name for p in folder.iterdir()) == files


def _serve(root, argv):
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(REPO / argv[0]), *argv[1:], "--port", str(port)], cwd=root,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{argv} exited {proc.returncode}: {proc.stdout.read()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                resp.read()
                return proc, port
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError(f"{argv} did not serve within 90 s")


def fetch_app(root, argv) -> tuple:
    """(page HTML, /_dash-layout JSON text) of a web app started as a subprocess."""
    proc, port = _serve(root, argv)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as resp:
            page = resp.read().decode()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_dash-layout", timeout=60) as resp:
            layout = resp.read().decode()
        assert proc.poll() is None
        return page, layout
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("script", ["leaderboard.py", "explorer.py", "spiderweb.py"])
def test_web_apps_show_digit_evals(root, script):
    _, layout = fetch_app(root, [script, "data/oddids.json"])
    if script == "leaderboard.py":      # its table is filled by a callback; the header counts the evals
        assert "oddids \\u00b7 4 evals" in layout
        return
    labels = {json.loads((root / "data/ids" / m / "evals.json").read_text())[0]["label"] for m in ID_MODELS}
    assert all(label in layout for label in labels), f"{script} layout lacks the eval labels"
