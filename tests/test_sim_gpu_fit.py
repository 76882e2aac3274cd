"""GPU mode on a fitted engine: resolver.sim.gpu.fit_curves against hand-computed fits, and a
model file given as `--gpu FILE.json` (docs/simulator.md, *Checked against vLLM's CPU build*)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from resolver.core import UserError
from resolver.run.batch import write_batch_file
from resolver.sim.gpu import PRESETS, GpuModel, fit_curves, gpu_preset, load_gpu_model
from tests.support.runner import REPO, TINY

# Points made by hand from step_ms = 2 + 0.5 n + 0.001 n x (prompt + steps / 2) and 0.5 ms per
# prompt token: prompt 100, 20 steps -> context 110: n=1 2.61, n=4 4.44; prompt 300 -> 310:
# n=2 3.62, n=8 8.48. Prefill: 100 tokens 0.05 s, 400 0.2 s, 600 0.3 s, 2,400 1.2 s.
CURVES = [
    {"prompt_len": 100, "steps": 20, "rows": [
        {"batch": 1, "step_ms": 2.61, "kernel_step_ms": None, "prefill_s": 0.05},
        {"batch": 4, "step_ms": 4.44, "prefill_s": 0.2},
        {"batch": 64, "error": "out of memory"}]},
    {"prompt_len": 300, "steps": 20, "rows": [
        {"batch": 2, "step_ms": 99.0, "kernel_step_ms": 3.62, "prefill_s": 0.3},   # the kernel figure counts
        {"batch": 8, "step_ms": 8.48, "prefill_s": 1.2}]},
]


def test_fit_curves_recovers_the_hand_made_model():
    model = fit_curves(CURVES, name="made", model_load_s=12.5)
    assert model.name == "made" and model.model_load_s == 12.5
    assert model.a_ms == pytest.approx(2.0, rel=1e-9)
    assert model.b_ms == pytest.approx(0.5, rel=1e-9)
    assert model.c_ms == pytest.approx(0.001, rel=1e-9)
    assert model.prefill_ms_per_token == pytest.approx(0.5, rel=1e-12)


def test_fit_curves_prefill_through_the_origin_by_hand():
    # 100 tokens in 40 ms, 200 in 100 ms, 100 (2 x 50) in 60 ms: ratios tokens/ms 2.5, 2 and 5/3;
    # the fit sum(r) / sum(r^2) = (37/6) / (469/36) = 222/469 ms per token
    curves = [{"prompt_len": 100, "steps": 2, "rows": [{"batch": 1, "step_ms": 1.0, "prefill_s": 0.04},
                                                       {"batch": 2, "step_ms": 1.5, "prefill_s": 0.1}]},
              {"prompt_len": 50, "steps": 2, "rows": [{"batch": 2, "step_ms": 1.2, "prefill_s": 0.06}]}]
    assert fit_curves(curves, name="x", model_load_s=0).prefill_ms_per_token == pytest.approx(222 / 469, rel=1e-12)


def test_a_model_file_round_trips_and_is_taken_by_gpu_preset(tmp_path):
    path = tmp_path / "engine.json"
    path.write_text('{"name": "cpu", "a_ms": 30, "b_ms": -0.5, "c_ms": 0.002, '
                    '"prefill_ms_per_token": 1.5, "model_load_s": 40}')
    assert gpu_preset(str(path)) == GpuModel("cpu", 30.0, -0.5, 0.002, 1.5, 40.0)
    again = tmp_path / "again.json"
    again.write_text(load_gpu_model(path).to_json())
    assert load_gpu_model(again) == load_gpu_model(path)
    assert gpu_preset("h200-8b") is PRESETS["h200-8b"]


@pytest.mark.parametrize("text, says", [
    ("not json", "cannot read"),
    ('{"name": "x"}', "exactly the keys"),
    ('{"name": "x", "a_ms": "1", "b_ms": 0, "c_ms": 0, "prefill_ms_per_token": 0, "model_load_s": 0}', "numbers"),
    ('{"name": "x", "a_ms": -1, "b_ms": 0, "c_ms": 0, "prefill_ms_per_token": 0, "model_load_s": 0}', "0 or more"),
])
def test_a_bad_model_file_is_one_user_error(text, says, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UserError, match=says):
        gpu_preset(str(path))
    with pytest.raises(UserError, match="cannot read"):
        gpu_preset(str(tmp_path / "missing.json"))


def test_run_batch_prices_a_file_model_by_hand(tmp_path):
    """One request on a file model of 10 ms a step, 2 ms a prompt token, 7 s load: the stand-in's
    total is 7 + (2 x prompt tokens + 10 x completion tokens) / 1000, from its own usage figures."""
    from resolver.client import request_key
    model = tmp_path / "slow.json"
    model.write_text(GpuModel("slow", 10.0, 0.0, 0.0, 2.0, 7.0).to_json())
    body = {"model": "sim-mid", "messages": [{"role": "user", "content": "What is 2 + 2?"}], "max_tokens": 40}
    write_batch_file(tmp_path / "in.ndjson", [(request_key(body), body)])
    done = subprocess.run([sys.executable, "-m", "resolver.simulator", "run-batch", "-i", str(tmp_path / "in.ndjson"),
                           "-o", str(tmp_path / "out.ndjson"), "--gpu", str(model), "--stats", str(tmp_path / "s.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    usage = json.loads((tmp_path / "out.ndjson").read_text())["response"]["body"]["usage"]
    stats = json.loads((tmp_path / "s.json").read_text())
    expected = 7 + (2 * usage["prompt_tokens"] + 10 * usage["completion_tokens"]) / 1000
    assert usage["completion_tokens"] > 0 and stats["total_seconds"] == pytest.approx(expected, abs=1e-5)


def test_a_bad_model_file_exits_2_in_a_real_process(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    done = subprocess.run([sys.executable, "-m", "resolver.simulator", "--config", str(TINY), "--gpu", str(bad),
                           "--port", "0"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "not a GPU model" in done.stderr and "Traceback" not in done.stderr
