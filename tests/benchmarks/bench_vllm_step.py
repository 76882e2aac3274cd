"""The simulator's GPU model checked against a real batching engine: vLLM's CPU build serving SmolLM2
(docs/simulator.md, *Checked against vLLM's CPU build*).

    .venv/bin/python tests/benchmarks/bench_vllm_step.py [--config configs/r12.yaml] [--task arithmetic]
        [--density lowdef] [--count 2] [--max-tokens 64] [--batches 1,2,4,8,16,32] [--prompts 100,300] [--steps 32]
        [--only measure|runs]

Needs vLLM installed as the suite installs it (`bash tests/install-vllm.sh`; $REASONSCAPE_VLLM_VENV
or .venv-vllm). Five parts, one sitting:

1. starts vLLM on SmolLM2 (tests/support/vllm_server.py, the suite's flags) and times the start;
2. decode step time against batch size: N streamed requests at once (distinct prompts, so no
   prefix cache hit; `ignore_eos`, `--steps` tokens each); a step is the time between two of
   the stream's tokens while all N decode, prefill the time until the last first token.
   Written as tests/benchmarks/data/decode_curve_vllm_cpu.json, in the shape of the H200
   reference data;
3. fits the simulator's model to it (resolver.sim.gpu.fit_curves): a GPU model file the
   simulator takes as `--gpu FILE.json` (tests/benchmarks/data/vllm_cpu_smollm2.json);
4. runs the real runner.py against vLLM: `--parallel 16`, `--parallel 16 --threads 4`, and one
   batch cycle (write-batch, vLLM's run_batch, read-batch), each with a fresh cache, on
   `--config`/`--task`, greedy with `max_tokens` = `--max-tokens` and `ignore_eos` (every answer
   has exactly that many tokens, whatever the model writes);
5. predicts the same three with the simulator in GPU mode on the fitted file (sim-thinker, whose
   answers all run past `--max-tokens`, so its token counts are the real run's): the runner
   against `python -m resolver.simulator --gpu FILE --time-scale 1`, and the run-batch stand-in
   (virtual time) plus the runner's own write-batch and read-batch.

Prints the curve, the fit and predicted against measured wall seconds with the ratio and the
load average; writes tests/benchmarks/out/vllm_step.json. Not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
import yaml  # noqa: E402
from benchlib import write_result  # noqa: E402

from resolver.sim.gpu import GpuModel, fit_curves, load_gpu_model  # noqa: E402
from resolver.sim.simulator import start_simulator_process  # noqa: E402
from tests.support.vllm_server import MODEL, VllmServer, run_batch, unavailable_reason, vllm_metrics  # noqa: E402

OUT = REPO / "tests" / "benchmarks" / "out"
DATA = REPO / "tests" / "benchmarks" / "data"      # the measured curve and its fit, kept as reference data
TEMPLATE = REPO / "templates" / "zerocot-nosys.json"
SIM_PROFILE = "sim-thinker"       # long answers: every one runs into max_tokens, as ignore_eos makes vLLM's
ENV = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
WORDS = ("apple river stone cloud paper seven orange table window garden music silver yellow horse "
         "bridge candle forest winter button pocket ladder mirror rocket tiger valley basket").split()
# SmolLM2-135M's KV cache: 30 layers x 2 x 3 KV heads x 64 x 4 bytes = 46,080 bytes a token, so
# the suite's 1 GiB (VLLM_CPU_KVCACHE_SPACE) holds about 23,000 tokens; a batch beyond that would
# wait or be preempted, which is not the step time being measured
KV_TOKENS = 20_000
RUNS = ("parallel16", "parallel16-threads4", "batch-cycle")


def load_now() -> str:
    """The 1-, 5- and 15-minute load averages (the machine is shared: docs/simulator.md)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "-"


# ---------------------------------------------------------------- decode step time against batch size
def prompt_text(index: int, words: int) -> str:
    """A prompt of about `words` tokens, different from the first word on (no prefix-cache hit)."""
    rng = random.Random(index)
    return f"Note {index}: " + " ".join(rng.choice(WORDS) for _ in range(words))


async def one_stream(session: aiohttp.ClientSession, url: str, text: str, steps: int) -> dict:
    body = {"model": MODEL, "messages": [{"role": "user", "content": text}], "max_tokens": steps,
            "temperature": 0.0, "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    sent = time.perf_counter()
    times: list[float] = []
    usage: dict = {}
    async with session.post(url + "/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for raw in resp.content:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                usage = chunk["usage"]
            if any((c.get("delta") or {}).get("content") for c in chunk.get("choices", [])):
                times.append(time.perf_counter())
    return {"sent": sent, "times": times, "usage": usage}


async def one_batch(url: str, batch: int, words: int, steps: int, first: int) -> dict:
    timeout = aiohttp.ClientTimeout(total=900)
    async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as session:
        streams = await asyncio.gather(*(one_stream(session, url, prompt_text(first + i, words), steps)
                                         for i in range(batch)))
    start = min(s["sent"] for s in streams)
    all_first = max(s["times"][0] for s in streams)        # every sequence is decoding from here
    all_last = min(s["times"][-1] for s in streams)        # ... to here
    # tokens each stream received inside that window: the steps it spans (one token per step each)
    counts = sorted(sum(all_first < t <= all_last for t in s["times"]) for s in streams)
    window_steps = counts[len(counts) // 2]
    step = (all_last - all_first) / window_steps if window_steps else float("nan")
    prompt = sorted(s["usage"]["prompt_tokens"] for s in streams)[len(streams) // 2]
    made = sum(s["usage"]["completion_tokens"] for s in streams)
    if made != batch * steps:
        raise SystemExit(f"vLLM decoded {made} tokens for {batch} x {steps}: ignore_eos was not honoured")
    return {"batch": batch, "step_ms": round(step * 1000, 3), "tokens_per_s": round(batch / step, 1),
            "kernel_step_ms": None, "kernel_tokens_per_s": None,
            "prefill_s": round(all_first - start, 4),
            "prefill_tokens_per_s": round(batch * prompt / (all_first - start), 1),
            "prompt_tokens": prompt, "window_steps": window_steps, "load": load_now()}


def measure_curves(url: str, opts) -> list[dict]:
    asyncio.run(one_batch(url, 2, 50, 8, 10**6))          # warm-up: the first requests pay one-off costs
    curves, first = [], 0
    for words in opts.prompts:
        rows = []
        for batch in opts.batches:
            if batch * (words + opts.steps + 40) > KV_TOKENS:
                print(f"  prompt ~{words} words batch {batch}: skipped, more tokens than the KV cache holds", flush=True)
                continue
            row = asyncio.run(one_batch(url, batch, words, opts.steps, first))
            first += batch
            rows.append(row)
            print(f"  prompt ~{row['prompt_tokens']:>4} tokens  batch {batch:>3}: step {row['step_ms']:8.2f} ms "
                  f"({row['tokens_per_s']:7.1f} tokens/s)  prefill {row['prefill_s']:6.2f} s "
                  f"({row['prefill_tokens_per_s']:7.0f} tokens/s)  load {row['load']}", flush=True)
        prompt_len = sorted(r["prompt_tokens"] for r in rows)[len(rows) // 2]
        best = max(r["tokens_per_s"] for r in rows)
        for r in rows:
            r["share_of_best"] = round(r["tokens_per_s"] / best, 3)
        curves.append({"size": "smollm2-135m", "params": 134515008, "prompt_len": prompt_len,
                       "steps": opts.steps, "rows": rows})
    return curves


# ---------------------------------------------------------------- the runner, real and predicted
def runner(args: list, work: Path, model: str, opts) -> tuple[subprocess.CompletedProcess, float, float]:
    """runner.py with the workload's flags; (the process, wall seconds, its CPU seconds)."""
    cmd = [sys.executable, str(REPO / "runner.py"), "--config", opts.workload, "--template", TEMPLATE,
           "--sampler", work.parent / "sampler.json", "--model", model, "--density", opts.density,
           "--seed", "42", "--cache", work / "cache", "--output", work / "results", "--quiet",
           *[flag for task in opts.task for flag in ("--task", task)], *args]
    cpu0 = _child_cpu()
    started = time.perf_counter()
    done = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=ENV, cwd=REPO)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"runner failed ({' '.join(map(str, args))}):\n{done.stdout}\n{done.stderr[-3000:]}")
    return done, wall, _child_cpu() - cpu0


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def batch_file(written: subprocess.CompletedProcess) -> str:
    path = next((line.split(": ", 1)[1] for line in written.stdout.splitlines() if line.startswith("batch file: ")),
                None)
    if path is None:
        raise SystemExit(f"write-batch wrote no batch file:\n{written.stdout}\n{written.stderr[-2000:]}")
    return path


def count_lines(path: str | Path) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for _ in handle)


def api_real(server: VllmServer, args: list, work: Path, opts) -> dict:
    before = vllm_metrics(server.url)
    load = load_now()
    _, wall, cpu = runner(["--apibase", server.url, *args], work, MODEL, opts)
    after = vllm_metrics(server.url)
    delta = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in
             ("vllm:request_success_total", "vllm:prompt_tokens_total", "vllm:generation_tokens_total")}
    return {"wall_s": wall, "runner_cpu_s": cpu, "requests": int(delta["vllm:request_success_total"]),
            "prompt_tokens": int(delta["vllm:prompt_tokens_total"]),
            "tokens": int(delta["vllm:generation_tokens_total"]), "load": load}


def batch_real(work: Path, opts) -> dict:
    load = load_now()
    written, write_s, cpu_w = runner(["--mode", "write-batch"], work, MODEL, opts)
    source = batch_file(written)
    out = work / "batch-output.ndjson"
    started = time.perf_counter()
    done = run_batch(Path(source), out, timeout=1800)
    engine_s = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"vLLM run_batch failed:\n{done.stderr[-3000:]}")
    _, read_s, cpu_r = runner(["--mode", "read-batch", "--batch", out], work, MODEL, opts)
    lines = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    usage = [line["response"]["body"]["usage"] for line in lines if line.get("response")]
    return {"wall_s": write_s + engine_s + read_s, "engine_s": engine_s, "runner_s": write_s + read_s,
            "runner_cpu_s": cpu_w + cpu_r, "requests": len(usage),
            "prompt_tokens": sum(u["prompt_tokens"] for u in usage),
            "tokens": sum(u["completion_tokens"] for u in usage), "load": load}


def api_predicted(model_file: Path, args: list, work: Path, opts) -> dict:
    sim = start_simulator_process(str(opts.workload), seed=42, extra_args=["--gpu", str(model_file), "--time-scale", "1"])
    try:
        load = load_now()
        _, wall, cpu = runner(["--apibase", sim.url, *args], work, SIM_PROFILE, opts)
        stats = sim.stats()
    finally:
        sim.stop()
    gpu = stats["gpu"]
    return {"wall_s": wall, "runner_cpu_s": cpu, "requests": stats["completions"],
            "prompt_tokens": gpu["prompt_tokens"], "tokens": gpu["tokens_generated"],
            "engine_s": gpu["span_seconds"], "load": load}


def batch_predicted(model_file: Path, work: Path, opts) -> dict:
    load = load_now()
    written, write_s, cpu_w = runner(["--mode", "write-batch"], work, SIM_PROFILE, opts)
    out, stats_file = work / "batch-output.ndjson", work / "stats.json"
    cmd = [sys.executable, "-m", "resolver.simulator", "run-batch", "-i", batch_file(written), "-o", out,
           "--config", opts.workload, "--seed", "42", "--gpu", model_file, "--stats", stats_file]
    subprocess.run(list(map(str, cmd)), check=True, capture_output=True, text=True, env=ENV, cwd=REPO)
    _, read_s, cpu_r = runner(["--mode", "read-batch", "--batch", out], work, SIM_PROFILE, opts)
    cost = json.loads(stats_file.read_text())
    return {"wall_s": write_s + cost["total_seconds"] + read_s, "engine_s": cost["total_seconds"],
            "runner_s": write_s + read_s, "runner_cpu_s": cpu_w + cpu_r, "requests": count_lines(out),
            "prompt_tokens": cost["prompt_tokens"], "tokens": cost["tokens_generated"], "load": load}


def workload_config(opts, tmp: Path) -> Path:
    """The config with one precision level of `--count` samples per point and one round."""
    source = Path(opts.config) if Path(opts.config).exists() else REPO / opts.config
    config = yaml.safe_load(source.read_text(encoding="utf-8"))
    config["precision"] = {"low": {"count": opts.count, "maxrounds": 1, "target_margin": 0.5}}
    path = tmp / "workload.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


API_ARGS = {"parallel16": ["--parallel", "16"], "parallel16-threads4": ["--parallel", "16", "--threads", "4"]}


def omp_binding(server: VllmServer) -> str:
    """What vLLM's log says about its OpenMP threads' cores (on x86 it keeps one core back for
    its scheduler unless told otherwise: docs/simulator.md)."""
    text = Path(server._log.name).read_text(encoding="utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if "core ids=" in line or "reserved_cpus=" in line
             or "KV cache size" in line]
    return "; ".join(lines) or "(not in the log)"


# ---------------------------------------------------------------- main
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/r12.yaml")
    parser.add_argument("--task", action="append", default=[], help="config task to run (repeatable; default arithmetic)")
    parser.add_argument("--density", default="lowdef")
    parser.add_argument("--count", type=int, default=2, help="samples per point, one round (default 2: the "
                        "config's precision levels are replaced by this one, to keep a CPU run to minutes)")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens of every answer in the runs (default 64)")
    parser.add_argument("--batches", default="1,2,4,8,16,32", help="batch sizes of the step curve")
    parser.add_argument("--prompts", default="100,300", help="prompt lengths of the step curve, about, in words")
    parser.add_argument("--steps", type=int, default=32, help="tokens decoded per request of the curve (default 32)")
    parser.add_argument("--model-file", help="with --only runs: a fitted GPU model file to predict with")
    parser.add_argument("--only", choices=("measure", "runs"), help="only the curve and fit, or only the runs")
    opts = parser.parse_args()
    opts.task = opts.task or ["arithmetic"]
    opts.batches = [int(b) for b in opts.batches.split(",")]
    opts.prompts = [int(p) for p in opts.prompts.split(",")]
    return opts


def print_fit(model: GpuModel, curves: list[dict]) -> list[dict]:
    print(f"fit: a = {model.a_ms:.4g} ms, b = {model.b_ms:.4g} ms per sequence, c = {model.c_ms:.4g} ms per "
          f"context token, prefill {model.prefill_ms_per_token:.4g} ms per prompt token, load {model.model_load_s:.1f} s")
    rows = []
    for curve in curves:
        context = curve["prompt_len"] + curve["steps"] / 2
        for r in curve["rows"]:
            step = model.step_ms(r["batch"], int(r["batch"] * context))
            pre = model.prefill_ms(r["batch"] * curve["prompt_len"]) / 1000
            rows.append({"prompt": curve["prompt_len"], "batch": r["batch"], "step_ms": r["step_ms"],
                         "model_step_ms": round(step, 3), "prefill_s": r["prefill_s"], "model_prefill_s": round(pre, 4)})
            print(f"  prompt {curve['prompt_len']:>4} batch {r['batch']:>3}: step {r['step_ms']:8.2f} ms, model "
                  f"{step:8.2f} ({(step / r['step_ms'] - 1) * 100:+5.1f}%); prefill {r['prefill_s']:6.2f} s, model "
                  f"{pre:6.2f} ({(pre / r['prefill_s'] - 1) * 100:+5.1f}%)")
    return rows


def main() -> None:
    opts = parse_args()
    why = unavailable_reason()
    if why:
        raise SystemExit(f"bench_vllm_step.py: {why}")
    OUT.mkdir(parents=True, exist_ok=True)
    result: dict = {"config": opts.config, "tasks": opts.task, "density": opts.density, "max_tokens": opts.max_tokens,
                    "cpus": os.cpu_count()}
    model_file = Path(opts.model_file) if opts.model_file else DATA / "vllm_cpu_smollm2.json"
    with tempfile.TemporaryDirectory(prefix="bench-vllm-step-") as tmp_name:
        tmp = Path(tmp_name)
        opts.workload = workload_config(opts, tmp)
        (tmp / "sampler.json").write_text(json.dumps({"temperature": 0.0, "max_tokens": opts.max_tokens,
                                                      "ignore_eos": True}))
        print(f"load before start: {load_now()}", flush=True)
        started = time.perf_counter()
        server = VllmServer()
        start_s = time.perf_counter() - started
        print(f"vLLM started in {start_s:.1f} s ({server.url})", flush=True)
        binding = omp_binding(server)
        print(f"vLLM's OpenMP binding: {binding}", flush=True)
        result.update(vllm_start_s=start_s, omp_binding=binding)
        measured: dict = {}
        try:
            if opts.only != "runs":
                curves = measure_curves(server.url, opts)
                data = {"device": f"CPU, {os.cpu_count()} cores", "engine": "vLLM CPU build, --enforce-eager, float32",
                        "models": curves}
                DATA.mkdir(exist_ok=True)
                (DATA / "decode_curve_vllm_cpu.json").write_text(json.dumps(data, indent=1) + "\n")
                model = fit_curves(curves, name="vllm-cpu-smollm2", model_load_s=round(start_s, 1))
                model_file.write_text(model.to_json())
                result.update(curves=curves, model=json.loads(model.to_json()), fit=print_fit(model, curves))
                print(f"written: {DATA / 'decode_curve_vllm_cpu.json'}, {model_file}", flush=True)
            if opts.only != "measure":
                for name, args in API_ARGS.items():
                    (tmp / f"real-{name}").mkdir()
                    measured[name] = api_real(server, args, tmp / f"real-{name}", opts)
                    print(f"  measured {name}: {measured[name]}", flush=True)
        finally:
            server.stop()
        if opts.only == "measure":
            write_result("vllm_step", result)
            return
        (tmp / "real-batch").mkdir()
        measured["batch-cycle"] = batch_real(tmp / "real-batch", opts)
        print(f"  measured batch-cycle: {measured['batch-cycle']}", flush=True)
        predicted: dict = {}
        for name in RUNS:
            work = tmp / f"sim-{name}"
            work.mkdir()
            predicted[name] = (batch_predicted(model_file, work, opts) if name == "batch-cycle"
                               else api_predicted(model_file, API_ARGS[name], work, opts))
            print(f"  predicted {name}: {predicted[name]}", flush=True)
    print(f"\n{opts.config} --task {' --task '.join(opts.task)} --density {opts.density}, {opts.count} per point, max_tokens "
          f"{opts.max_tokens} (ignore_eos), model {model_file.name}")
    print(f"{'run':<20} {'predicted s':>11} {'corrected s':>11} {'measured s':>10} {'ratio':>6} {'requests':>9} "
          f"{'prompt tok':>13} {'tokens':>7} {'runner CPU s':>12}  load (measured run)")
    rows = []
    model = load_gpu_model(model_file)
    for name in RUNS:
        p, m = predicted[name], measured[name]
        # the simulator counts prompt tokens its own way (docs/simulator.md, *Tokens and usage*); the
        # model's prefill is linear, so the real count's prefill is the simulated one's plus the difference
        corrected = p["wall_s"] + model.prefill_ms(m["prompt_tokens"] - p["prompt_tokens"]) / 1000
        ratio = corrected / m["wall_s"]
        rows.append({"run": name, "predicted": p, "measured": m, "corrected_s": corrected, "ratio": ratio})
        print(f"{name:<20} {p['wall_s']:>11.1f} {corrected:>11.1f} {m['wall_s']:>10.1f} {ratio:>6.2f} "
              f"{p['requests']:>4}/{m['requests']:<4} {p['prompt_tokens']:>6}/{m['prompt_tokens']:<6} "
              f"{m['tokens']:>7} {p['runner_cpu_s']:>5.1f}/{m['runner_cpu_s']:<6.1f}  {m['load']}")
    result.update(rows=rows)
    print(f"written: {write_result('vllm_step', result)}")


if __name__ == "__main__":
    main()
