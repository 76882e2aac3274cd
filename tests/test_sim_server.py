"""the simulator (resolver.sim, `python -m resolver.simulator`) over real HTTP on loopback: endpoints, recognition, streaming, faults, CLI."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from resolver.core.errors import UserError
from resolver.run.experiment import CaseStreams, RunOptions, build_experiment, messages_for, request_for
from resolver.sim.faults import parse_faults
from resolver.sim.profiles import count_tokens
from resolver.sim.simulator import SimulatorServer
from tests.support.runner import REPO, SAMPLER, TEMPLATE, TINY, simulator


def http(url, body=None, headers=None, timeout=30):
    """(status, headers, raw body) of one request with urllib (an independent client)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture(scope="module")
def experiment():
    opts = RunOptions(config=str(TINY), template=str(TEMPLATE), sampler=str(SAMPLER), model="sim-mid",
                      apibase="http://127.0.0.1:1").checked()
    return build_experiment(opts)


def bodies(experiment, n_per_step=2, model="sim-mid"):
    out = []
    for step in experiment.steps:
        for _, case in experiment.cases(step, 0, n_per_step):
            out.append((case, {**request_for(experiment, messages_for(experiment, step, case)), "model": model}))
    return out


@pytest.fixture(scope="module")
def sim():
    with SimulatorServer(str(TINY), api_key=None) as server:
        yield server


def test_models_and_health(sim):
    status, _, raw = http(f"{sim.url}/v1/models")
    ids = [m["id"] for m in json.loads(raw)["data"]]
    assert status == 200 and len(ids) >= 4 and all(i.startswith("sim-") for i in ids)
    assert {"sim-strong", "sim-mid", "sim-weak", "sim-loopy"} <= set(ids)
    assert json.loads(http(f"{sim.url}/health")[2]) == {"status": "ok"}


def test_recognises_the_experiments_prompts_and_answers_consistently(sim, experiment):
    before = sim.stats.unrecognised
    graded = []
    for case, body in bodies(experiment):
        status, _, raw = http(f"{sim.url}/v1/chat/completions", body)
        reply = json.loads(raw)
        message, usage = reply["choices"][0]["message"], reply["usage"]
        assert status == 200 and reply["object"] == "chat.completion" and reply["model"] == "sim-mid"
        assert usage["completion_tokens"] == count_tokens(message["content"])
        assert usage["prompt_tokens"] == sum(count_tokens(m["content"]) for m in body["messages"])
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        if reply["choices"][0]["finish_reason"] == "length":
            assert usage["completion_tokens"] == body["max_tokens"]
        graded.append(f"Final Answer: {case.target}" in message["content"])
    assert sim.stats.unrecognised == before                  # every prompt was recognised
    assert sum(graded) >= len(graded) // 3                   # sim-mid answers many correctly
    again = json.loads(http(f"{sim.url}/v1/chat/completions", body)[2])
    assert again["choices"][0]["message"] == message         # deterministic per prompt


def test_unknown_prompt_gets_a_plausible_answer(sim):
    before = sim.stats.unrecognised
    body = {"model": "sim-weak", "messages": [{"role": "user", "content": "Pick one: (A) red (B) blue"}]}
    reply = json.loads(http(f"{sim.url}/v1/chat/completions", body)[2])
    assert sim.stats.unrecognised == before + 1 and reply["choices"][0]["message"]["content"]


def test_streaming_carries_the_same_answer(sim, experiment):
    case, body = bodies(experiment, 1)[3]
    plain = json.loads(http(f"{sim.url}/v1/chat/completions", body)[2])
    status, headers, raw = http(f"{sim.url}/v1/chat/completions",
                                {**body, "stream": True, "stream_options": {"include_usage": True}})
    events = [line[6:] for line in raw.decode().split("\n") if line.startswith("data: ")]
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream") and events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert text == plain["choices"][0]["message"]["content"]
    assert finish == [plain["choices"][0]["finish_reason"]] and chunks[-1]["usage"] == plain["usage"]


def test_errors_for_bad_requests(sim):
    assert http(f"{sim.url}/v1/chat/completions", {"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]})[0] == 404
    assert http(f"{sim.url}/v1/chat/completions", {"model": "sim-mid", "messages": []})[0] == 400


@pytest.mark.parametrize("style", ["reasoning_content", "reasoning"])
def test_reasoning_in_a_separate_field(experiment, style):
    with SimulatorServer(str(TINY), think_style=style) as server:
        _, body = bodies(experiment, 1, model="sim-thinker")[0]
        message = json.loads(http(f"{server.url}/v1/chat/completions", {**body, "max_tokens": 16000})[2])["choices"][0]["message"]
    assert message[style] and "<think>" not in message["content"] and "Final Answer" in message["content"]


def test_api_key_is_enforced():
    with SimulatorServer(None, api_key="s3cret") as server:
        assert http(f"{server.url}/v1/models")[0] == 401
        assert http(f"{server.url}/v1/models", headers={"Authorization": "Bearer s3cret"})[0] == 200


def test_fault_kinds_on_the_wire():
    body = {"model": "sim-mid", "messages": [{"role": "user", "content": "q"}], "max_tokens": 50}
    with SimulatorServer(None, faults={"429": 1.0}, retry_after=2) as server:
        status, headers, raw = http(f"{server.url}/v1/chat/completions", body)
        assert status == 429 and headers["Retry-After"] == "2" and "error" in json.loads(raw)
    with SimulatorServer(None, faults={"500": 1.0}) as server:
        assert http(f"{server.url}/v1/chat/completions", body)[0] == 500
    with SimulatorServer(None, faults={"malformed": 1.0}) as server:
        status, _, raw = http(f"{server.url}/v1/chat/completions", body)
        with pytest.raises(ValueError):
            json.loads(raw)
    with SimulatorServer(None, faults={"drop": 1.0}) as server:
        with pytest.raises((urllib.error.URLError, ConnectionError, http_client_errors())):
            http(f"{server.url}/v1/chat/completions", body)
    with SimulatorServer(None, faults={"stall": 1.0}, stall_seconds=5) as server:
        with pytest.raises((TimeoutError, urllib.error.URLError)):
            http(f"{server.url}/v1/chat/completions", body, timeout=0.5)
        assert server.stats.faults == {"stall": 1}


def http_client_errors():
    import http.client
    return http.client.HTTPException


def test_fault_spec_parsing():
    assert parse_faults("429=0.1,drop=0.05") == {"429": 0.1, "drop": 0.05}
    even = parse_faults(None, 0.5)
    assert set(even) == {"429", "500", "stall", "drop", "malformed"} and abs(sum(even.values()) - 0.5) < 1e-12
    for bad in ("429", "teapot=0.1", "500=x", "500=2"):
        with pytest.raises(UserError):
            parse_faults(bad)


def test_cli_errors_are_one_line(capsys, monkeypatch):
    def run(*args):
        """A real interpreter: these two fail only once the server starts (a port, a config)."""
        return subprocess.Popen([sys.executable, "-m", "resolver.simulator", *args], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ended(proc):
        _, err = proc.communicate(timeout=60)
        return proc.returncode, err

    def in_process(*args):
        """Flags refused before anything is served, checked through the command's own run_main."""
        from resolver.cli import run_main
        from resolver.cli.simulator import main

        with pytest.raises(SystemExit) as exited:
            run_main(main, list(args))
        return exited.value.code, capsys.readouterr().err

    monkeypatch.chdir(REPO)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    busy_proc, missing_proc = run("--port", str(taken.getsockname()[1])), run("--config", "configs/nope.yaml")
    try:
        code, err = in_process("--faults", "429=lots")
        assert code == 2 and len(err.strip().splitlines()) == 1 and "429=lots" in err
        code, err = in_process("--config", "configs/tiny.yaml", "--density", "sparse")
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert all(d in err for d in ("sparse", "normal", "lowdef", "corner"))
        code, err = ended(busy_proc)
        assert code == 2 and "pick another --port" in err and "Traceback" not in err
        code, err = ended(missing_proc)
        assert code == 2 and "Traceback" not in err
    finally:
        taken.close()
        for proc in (busy_proc, missing_proc):      # one that did not end (a failed check) is stopped
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def test_subprocess_start_and_stop():
    with simulator(TINY, latency_ms=5) as sim:
        status, _, raw = http(f"{sim.url}/v1/models")
        assert status == 200 and sim.stats()["requests"] == 0
        pid = sim.pid
    assert sim.proc.poll() is not None and pid > 0


def test_index_deepens_for_later_rounds_of_this_config_only():
    from resolver.sim.problems import ExperimentProblems
    problems = ExperimentProblems(str(TINY), precision="low")
    assert (problems.depth, problems.max_depth) == (4, 8)          # low: count 4 x maxrounds 2
    step = problems.steps[5]
    [(_, late)] = CaseStreams().cases(step, 6, 7)      # drawn apart from the simulator's own streams
    from resolver.tasks import get_task
    prefix = get_task(step.generator).description_for(step.gen_params) + "\n"
    assert problems.lookup("some other benchmark's question") is None and problems.depth == 4
    found = problems.lookup(prefix + late.input)
    assert found is not None and found.target == str(late.target) and problems.depth == 8
    assert ExperimentProblems(str(TINY)).max_depth == 24              # deepest level: medium 8 x 3


def test_density_bounds_the_grid_it_recognises(tmp_path):
    """--density corner keeps each axis's first and last value (the runner's corner grid), so a
    problem of an inner length is not indexed; normal (the default) has every point."""
    from resolver.sim.problems import ExperimentProblems
    from resolver.tasks import get_task

    config = tmp_path / "lengths.yaml"
    config.write_text("name: lengths\nprecision:\n  low: {count: 2, maxrounds: 1, target_margin: 0.25}\n"
                      "tasks:\n  - name: arithmetic\n    generator: arithmetic\n    mode: grid\n    manifolds:\n"
                      "      - id: m\n        grid: {length: [4, 8, 12, 16], max_depth: 1}\n")
    full, corner = ExperimentProblems(str(config)), ExperimentProblems(str(config), density="corner")
    assert sorted(s.params["length"] for s in full.steps) == [4, 8, 12, 16]
    assert sorted(s.params["length"] for s in corner.steps) == [4, 16]
    inner = next(s for s in full.steps if s.params["length"] == 8)
    [(_, case)] = CaseStreams().cases(inner, 0, 1)
    prompt = get_task(inner.generator).description_for(inner.gen_params) + "\n" + case.input
    assert full.lookup(prompt) is not None and corner.lookup(prompt) is None
