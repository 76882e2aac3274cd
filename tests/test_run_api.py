"""runner.py in api mode, end to end: real runner subprocesses against simulator subprocesses.

The simulator answers deterministically per prompt, so two runs of the same
experiment must write the same records whatever happened in between (faults,
kill -9, a second runner sharing the cache, streaming).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from resolver.client.cache import request_key
from resolver.config.loader import load_config
from resolver.config.prompts import build_request, load_sampler
from resolver.grading.answers import grade_record
from resolver.records.schema import RECORD_FIELDS
from resolver.tasks import task_of_record
from tests.support.runner import (
    REPO,
    SAMPLER,
    TINY,
    LoopbackServer,
    cache_keys,
    comparable,
    read_folder,
    run_folders,
    runner_args,
    simulator,
    skill_by_root,
    write_json,
)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module")
def sim():
    with simulator(TINY) as server:
        yield server


@pytest.fixture(scope="module")
def reference(sim, tmp_path_factory):
    """An uninterrupted, fault-free run: the records every other run must reproduce."""
    from conftest import run_script
    tmp = tmp_path_factory.mktemp("reference")
    proc = run_script("runner.py", *runner_args(sim.url, tmp))
    assert proc.returncode == 0, proc.stderr
    [folder] = run_folders(tmp / "results")
    return proc, read_folder(folder)


def test_normal_run_writes_complete_graded_records(reference):
    proc, records = reference
    precision = next(iter(load_config(TINY).precision.values()))
    assert "samples:" in proc.stdout and "0 failed" in proc.stdout and "wall time" in proc.stdout
    by_step: dict[str, list] = {}
    for record in records:
        assert list(record)[:len(RECORD_FIELDS)] == list(RECORD_FIELDS)
        assert set(record) - set(RECORD_FIELDS) <= {"reasoning"}
        assert record["key"] == f"{record['task']}-{record['key'].rsplit('-', 1)[1]}"
        assert record["usage"]["completion_tokens"] > 0 and record["timings"]["finish_reason"] in ("stop", "length")
        assert {k: record[k] for k in ("normalized_answer", "extracted_answer", "is_valid", "is_correct",
                                       "is_truncated", "invalid_reason")} == grade_record(record, task_of_record(record))
        by_step.setdefault(record["task"], []).append(record)
    assert len(by_step) == 14
    for step, recs in by_step.items():
        indices = sorted(int(r["key"].rsplit("-", 1)[1]) for r in recs)
        assert indices == list(range(len(recs)))                       # every sample exactly once
        assert len(recs) % precision.count == 0 and len(recs) <= precision.count * precision.maxrounds
    _check_stopping_rule(by_step, precision)


def _check_stopping_rule(by_step, precision):
    """Every step's round count against the calibrated C_I margin, computed here by root-finding
    (tests.support.runner.skill_by_root): go on while the margin exceeds target_margin, stop once it
    does not (or at maxrounds); a step with nothing to measure (m - G = 0) runs every round."""
    checked = guessing = 0
    for recs in by_step.values():
        recs.sort(key=lambda r: int(r["key"].rsplit("-", 1)[1]))
        guessing += any(r["guess_chance"] for r in recs)
        for rounds in range(1, len(recs) // precision.count + 1):
            seen = [r for r in recs[:rounds * precision.count] if not r["is_truncated"]]
            correct = sum(r["is_correct"] for r in seen)
            guess = sum(r["guess_chance"] or 0.0 for r in seen)
            measured = len(seen) - guess > 1e-12
            if measured:
                low, high, _ = skill_by_root(correct, len(seen), guess)
                margin = (high - low) / 2
            last = rounds * precision.count == len(recs)
            if not last:
                assert not measured or margin > precision.target_margin     # it was right to go on
            elif rounds < precision.maxrounds:
                assert measured and margin <= precision.target_margin       # it was right to stop
        checked += 1
    assert checked == len(by_step) >= 8 and guessing >= 2


def test_fault_mode_completes_every_sample_once(reference, tmp_path):
    faults = "429=0.06,500=0.06,drop=0.04,malformed=0.04,stall=0.02"
    with simulator(TINY, faults=faults, extra_args=["--retry-after", "0.3", "--stall-seconds", "4"]) as sim:
        proc = _run(sim.url, tmp_path, "--timeout", "1", "--parallel", "32")
        stats = sim.stats()
    assert proc.returncode == 0, proc.stderr
    retries = int(proc.stdout.split("retries: ")[1].split()[0])
    # a drop on a pooled connection is sent again at once, not retried (docs/runner.md, *Pooled connections*)
    resent = int(proc.stdout.split("sent again at once: ")[1].split()[0]) if "sent again at once" in proc.stdout else 0
    assert retries >= 5 and sum(stats["faults"].values()) == retries + resent, (proc.stdout, stats)
    [folder] = run_folders(tmp_path / "results")
    assert comparable(read_folder(folder)) == comparable(reference[1])


def _run(url, tmp_path, *extra, model="sim-mid", **kw):
    from conftest import run_script
    return run_script("runner.py", *runner_args(url, tmp_path, model=model, extra=extra), **kw)


def _start_runner(url, tmp_path, *extra):
    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
    args = [sys.executable, str(REPO / "runner.py"), *map(str, runner_args(url, tmp_path, extra=extra))]
    return subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_answers(tmp_path, at_least, proc, limit=60):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if len(cache_keys(tmp_path / "cache")) >= at_least:
                return
        except Exception:
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the runner made no progress")


def _request_key_of(record) -> str:
    """Recompute a record's request from its messages and the sampler file (independently)."""
    return request_key(build_request(record["model"], record["messages"], load_sampler(SAMPLER)))


def test_kill_9_then_rerun_sends_nothing_twice(reference, tmp_path):
    with simulator(TINY, latency_ms=150) as sim:
        proc = _start_runner(sim.url, tmp_path, "--parallel", "4")
        _wait_for_answers(tmp_path, 20, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        answered = cache_keys(tmp_path / "cache")
        [partial] = run_folders(tmp_path / "results")
        assert {_request_key_of(r) for r in read_folder(partial)} <= answered   # folder ⊆ cache
        before = sim.stats(keys=True)["received_keys"]
        rerun = _run(sim.url, tmp_path, "--parallel", "4")
        after = sim.stats(keys=True)["received_keys"]
    assert rerun.returncode == 0, rerun.stderr
    sent_again = {k for k, n in after.items() if n > before.get(k, 0)}
    assert sent_again and not (sent_again & answered)          # nothing answered was asked again
    total_requests = len({_request_key_of(r) for r in reference[1]})
    assert len(answered) + len(sent_again) == total_requests
    final = max(run_folders(tmp_path / "results"))
    assert comparable(read_folder(final)) == comparable(reference[1])


def test_two_runners_share_one_cache(reference, tmp_path):
    with simulator(TINY, latency_ms=20) as sim:
        first = _start_runner(sim.url, tmp_path / "a", "--cache", tmp_path / "shared", "--parallel", "8")
        second = _start_runner(sim.url, tmp_path / "b", "--cache", tmp_path / "shared", "--parallel", "8")
        outs = [p.communicate(timeout=120) for p in (first, second)]
        assert [first.returncode, second.returncode] == [0, 0], outs
    for side in ("a", "b"):
        [folder] = run_folders(tmp_path / side / "results")
        assert comparable(read_folder(folder)) == comparable(reference[1])
    assert cache_keys(tmp_path / "shared") == {_request_key_of(r) for r in reference[1]}


def test_streaming_gives_the_same_records(sim, reference, tmp_path):
    sampler = json.loads(SAMPLER.read_text())
    streamed = write_json(tmp_path / "greedy-2k.json", {**sampler, "extra_body": {"stream": True}})
    proc = _run(sim.url, tmp_path, "--sampler", streamed)
    assert proc.returncode == 0, proc.stderr
    [folder] = run_folders(tmp_path / "results")
    assert comparable(read_folder(folder)) == comparable(reference[1])


@pytest.mark.parametrize("style", ["reasoning_content", "reasoning"])
def test_reasoning_fields_are_recorded_not_graded(tmp_path, style):
    with simulator(TINY, extra_args=["--think-style", style]) as sim:
        proc = _run(sim.url, tmp_path, model="sim-thinker")
    assert proc.returncode == 0, proc.stderr
    records = read_folder(run_folders(tmp_path / "results")[0])
    with_reasoning = [r for r in records if r.get("reasoning")]
    assert len(with_reasoning) == len(records)
    assert all("<think>" not in (r["answer"] or "") for r in records)
    assert sum(r["is_correct"] for r in records) > len(records) // 3


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(reference, tmp_path):
    with simulator(TINY, latency_ms=200) as sim:
        proc = _start_runner(sim.url, tmp_path, "--parallel", "2")
        _wait_for_answers(tmp_path, 6, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "to resume, run the same command again" in out, (out, err)
        rerun = _run(sim.url, tmp_path)
    assert rerun.returncode == 0
    assert comparable(read_folder(max(run_folders(tmp_path / "results")))) == comparable(reference[1])


def test_connection_problems_are_one_line_errors(tmp_path):
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    free = sock.getsockname()[1]
    sock.close()
    refused = _run(f"http://127.0.0.1:{free}", tmp_path)
    assert refused.returncode == 2 and "connection refused" in refused.stderr
    bad = _run("localhost:3333", tmp_path)
    assert bad.returncode == 2 and "--apibase" in bad.stderr
    for proc in (refused, bad):
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_api_key_is_sent_and_a_wrong_one_is_one_line(tmp_path):
    with simulator(TINY, api_key="s3cret") as sim:
        denied = _run(sim.url, tmp_path / "x")
        assert denied.returncode == 2 and "rejected the API key" in denied.stderr
        assert len(denied.stderr.strip().splitlines()) == 1
        by_flag = _run(sim.url, tmp_path / "y", "--apikey", "s3cret")
        by_env = _run(sim.url, tmp_path / "z", env={"OPENAI_API_KEY": "s3cret"})
    assert by_flag.returncode == 0 and by_env.returncode == 0, by_env.stderr


class FailingProxy(LoopbackServer):
    """A loopback proxy to the simulator that answers HTTP 400 to every 5th distinct
    request while `failing` is set (a server refusing some prompts, e.g. too long)."""

    def __init__(self, upstream: str):
        self.upstream, self.failing, self.forwarded = upstream, True, []
        super().__init__()

    async def on_start(self):
        import aiohttp
        self._session = aiohttp.ClientSession()

    async def on_stop(self):
        await self._session.close()

    async def chat(self, request):
        from aiohttp import web
        raw = await request.read()
        key = request_key(json.loads(raw))
        if self.failing and int(key, 16) % 5 == 0:
            return web.json_response({"error": {"message": "refused by this server's content policy"}}, status=400)
        self.forwarded.append(key)
        async with self._session.post(f"{self.upstream}/v1/chat/completions", data=raw,
                                      headers={"Content-Type": "application/json"}) as resp:
            return web.Response(body=await resp.read(), status=resp.status, content_type="application/json")

    async def list_models(self, request):
        from aiohttp import web
        return web.json_response({"object": "list", "data": [{"id": "sim-mid"}]})


def test_refused_samples_fail_alone_and_a_rerun_asks_only_for_them(sim, reference, tmp_path):
    with FailingProxy(sim.url) as proxy:
        first = _run(proxy.url, tmp_path)
        refused = int(first.stdout.split(" sample(s) failed")[0].rsplit("\n", 1)[-1])
        assert first.returncode == 1 and refused > 0, first.stdout + first.stderr
        assert "HTTP 400: refused by this server's content policy" in first.stderr + first.stdout
        written = read_folder(run_folders(tmp_path / "results")[0])
        assert all(r["answer"] is not None for r in written)                     # failures are not written
        answered = cache_keys(tmp_path / "cache")
        assert answered == set(proxy.forwarded)                                  # ...nor cached
        proxy.failing, proxy.forwarded = False, []
        second = _run(proxy.url, tmp_path)
    assert second.returncode == 0, second.stderr
    assert proxy.forwarded and not (set(proxy.forwarded) & answered)           # only what was missing
    assert comparable(read_folder(max(run_folders(tmp_path / "results")))) == comparable(reference[1])


# ---------------------------------------------------------------- concurrency: --parallel per step x --threads
class CountingServer(LoopbackServer):
    """Answers every request "Final Answer: 1", holding it until `target` requests are in flight
    (or `hold` seconds pass), and counts the most in flight over all and per step. The step of a
    request is read from its prompt (`steps`: messages JSON -> the steps whose prompt it is)."""

    def __init__(self, target: int, steps: dict, hold: float = 1.0):
        self.target, self.steps, self.hold = target, steps, hold
        self.in_flight, self.most = 0, 0
        self.by_step: dict[str, int] = {}
        self.most_by_step: dict[str, int] = {}
        super().__init__()

    async def on_start(self):
        import asyncio
        self._full = asyncio.Event()

    async def chat(self, request):
        import asyncio

        from aiohttp import web
        body = await request.json()
        owners = self.steps.get(json.dumps(body["messages"], sort_keys=True), set())
        step = next(iter(owners)) if len(owners) == 1 else None     # a prompt two steps share: no step
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if step:
            self.by_step[step] = self.by_step.get(step, 0) + 1
            self.most_by_step[step] = max(self.most_by_step.get(step, 0), self.by_step[step])
        if self.in_flight >= self.target:
            self._full.set()
        try:
            await asyncio.wait_for(self._full.wait(), self.hold)
        except asyncio.TimeoutError:
            pass                                  # the run's tail: fewer requests than the target remain
        finally:
            self.in_flight -= 1
            if step:
                self.by_step[step] -= 1
            if self.in_flight < self.target:
                self._full.clear()
        return web.json_response({
            "id": "c", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Final Answer: 1"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})

    async def list_models(self, request):
        from aiohttp import web
        return web.json_response({"object": "list", "data": [{"id": "sim-mid"}]})


@pytest.fixture(scope="module")
def prompt_steps(tmp_path_factory):
    """messages JSON -> the steps that ask it, from --offline's prompts of tiny's medium level
    (8 samples a round, 3 rounds: a round is bigger than --parallel 4)."""
    from conftest import run_script
    tmp = tmp_path_factory.mktemp("prompts")
    args = [a for a in runner_args("x", tmp) if a not in ("--apibase", "x")]
    run_script("runner.py", *args, "--precision", "medium", "--offline", "3", check=True)
    [folder] = run_folders(tmp / "results")
    steps: dict[str, set] = {}
    for path in sorted(folder.glob("*.ndjson")):
        for line in path.read_text().splitlines():
            steps.setdefault(json.dumps(json.loads(line)["messages"], sort_keys=True), set()).add(path.stem)
    return steps


@pytest.mark.parametrize("flags,total,per_step", [
    (("--parallel", "4", "--threads", "4"), 16, 4),      # the seeds' meaning: 4 per step x 4 steps
    (("--parallel", "16"), 16, 8),                       # --threads 1: today's bound, a whole round per step
])
def test_parallel_per_step_times_threads_in_flight(prompt_steps, tmp_path, flags, total, per_step):
    with CountingServer(total, prompt_steps) as server:
        proc = _run(server.url, tmp_path, "--precision", "medium", *flags)
    assert proc.returncode == 0, proc.stderr
    assert server.most == total                              # reached, never exceeded
    assert max(server.most_by_step.values()) == per_step     # a step never has more than --parallel
    assert len(server.most_by_step) >= 8
