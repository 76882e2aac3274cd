"""Runner dispatch benchmark (docs/performance.md): the whole runner vs a bare aiohttp loop.

    .venv/bin/python tests/benchmarks/bench_runner.py [--samples 4000] [--latency 200] [--parallel 256]

The simulator runs as a subprocess pinned to CPU 0 with 200 ms latency per answer.
In the same run, against the same server:

* baseline: a bare aiohttp loop sends exactly the requests the runner will send
  (pre-rendered, `--parallel` in flight) and parses each reply;
* runner: `runner.py` (generate, template, request, grade, cache, write) with
  `--parallel`, a fresh cache and output directory, pinned to CPU 1.

Two runner rates: over the sending phase (the runner's own wall-time line, from its
first request to its last record) and over the whole process (from spawning
`python runner.py` to its exit: interpreter start, imports, config loading,
generation included). The baseline is the bare loop's sending phase in both. The
bar is the whole runner process >= 80% of the baseline; the last line printed is
that ratio. Results: tests/benchmarks/out/runner.json.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchlib import write_result  # noqa: E402

from resolver.run.experiment import RunOptions, build_experiment, messages_for, request_for  # noqa: E402
from resolver.sim.simulator import start_simulator_process  # noqa: E402

TEMPLATE = REPO / "templates" / "zerocot-nosys.json"
SAMPLER = REPO / "samplers" / "greedy-2k.json"
MODEL = "sim-strong"
BAR = 0.80             # whole runner process / bare loop (docs/performance.md)


def bench_config(path: Path, samples: int) -> Path:
    """36 steps of the tiny tasks, one round each, `samples` requests in total."""
    count = max(1, samples // 36)
    path.write_text(f"""
name: benchrunner
precision:
  bench: {{count: {count}, maxrounds: 1, target_margin: 0.01}}
tasks:
  - name: arithmetic
    label: Arithmetic
    mode: grid
    manifolds:
      - id: a
        grid: {{length: [4, 6, 8, 10, 12, 16], max_depth: [1, 2, 3]}}
  - name: boolean
    label: Boolean
    mode: grid
    manifolds:
      - id: b
        grid: {{length: [4, 6, 8], format: [0, 3]}}
  - name: brackets
    label: Brackets
    mode: grid
    manifolds:
      - id: c
        grid: {{length: [6, 8, 12], max_depth: [2, 4]}}
""")
    return path


def runner_requests(config: Path) -> list[bytes]:
    opts = RunOptions(config=str(config), template=str(TEMPLATE), sampler=str(SAMPLER), model=MODEL,
                      apibase="http://unused").checked()
    exp = build_experiment(opts)
    return [json.dumps(request_for(exp, messages_for(exp, step, case))).encode()
            for step in exp.steps for _, case in exp.cases(step, 0, exp.precision.count)]


async def bare_loop(url: str, bodies: list[bytes], parallel: int) -> tuple[float, float]:
    """Samples/s of plain aiohttp: `parallel` in flight, read + json-parse every reply."""
    connector = aiohttp.TCPConnector(limit=parallel)
    async with aiohttp.ClientSession(connector=connector) as session:
        gate = asyncio.Semaphore(parallel)

        async def one(body: bytes):
            async with gate:
                async with session.post(f"{url}/v1/chat/completions", data=body,
                                        headers={"Content-Type": "application/json"}) as resp:
                    json.loads(await resp.read())

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(b) for b in bodies))
        return (len(bodies) / (time.perf_counter() - started),
                len(bodies) / max(1e-9, time.process_time() - cpu))


def run_runner(url: str, config: Path, work: Path, parallel: int) -> tuple:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
    args = [sys.executable, str(REPO / "runner.py"), "--config", config, "--template", TEMPLATE,
            "--sampler", SAMPLER, "--model", MODEL, "--apibase", url, "--parallel", parallel,
            "--cache", work / "cache", "--output", work / "results", "--quiet"]
    started = time.perf_counter()
    proc = subprocess.run(list(map(str, args)), capture_output=True, text=True, env=env,
                          preexec_fn=lambda: os.sched_setaffinity(0, {1}))
    whole = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"runner failed:\n{proc.stdout}\n{proc.stderr}")
    timing = re.search(r"wall time: [\d.]+ s \(([\d.]+) samples/s, ([\d.]+) s CPU\)", proc.stdout)
    samples = int(re.search(r"samples: (\d+) written", proc.stdout).group(1))
    return float(timing.group(1)), samples, samples / max(1e-9, float(timing.group(2))), samples / whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--latency", type=float, default=200.0, help="simulator latency, ms")
    parser.add_argument("--parallel", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2, help="best of N for each side")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        config = bench_config(tmp / "bench.yaml", args.samples)
        bodies = runner_requests(config)
        sim = start_simulator_process(str(config), latency_ms=args.latency, cpu=0)
        try:
            os.sched_setaffinity(0, {1})
            bare, runner, bare_cpu, runner_cpu, whole = [], [], [], [], []
            for i in range(args.repeats):
                rate, per_cpu = asyncio.run(bare_loop(sim.url, bodies, args.parallel))
                bare.append(rate)
                bare_cpu.append(per_cpu)
                rate, written, per_cpu, whole_rate = run_runner(sim.url, config, tmp / f"run{i}", args.parallel)
                assert written == len(bodies), (written, len(bodies))
                runner.append(rate)
                runner_cpu.append(per_cpu)
                whole.append(whole_rate)
                print(f"repeat {i + 1}: bare aiohttp {bare[-1]:.0f} samples/s ({bare_cpu[-1]:.0f} per CPU-second), "
                      f"runner {rate:.0f} samples/s ({per_cpu:.0f} per CPU-second), "
                      f"whole runner process {whole_rate:.0f} samples/s")
        finally:
            sim.stop()
    ideal = args.parallel / (args.latency / 1000.0)
    result = {"samples": len(bodies), "latency_ms": args.latency, "parallel": args.parallel,
              "ideal_rate": ideal, "bare_rate": max(bare), "runner_rate": max(runner),
              "bare_per_cpu_second": max(bare_cpu), "runner_per_cpu_second": max(runner_cpu),
              "whole_process_rate": max(whole), "sending_ratio": max(runner) / max(bare),
              "ratio": max(whole) / max(bare), "bar": BAR, "load_average": os.getloadavg()[0]}
    write_result("runner", result)
    print(f"load average {result['load_average']:.1f} on {os.cpu_count()} cores")
    print(f"ideal {ideal:.0f} samples/s; bare aiohttp {result['bare_rate']:.0f} samples/s "
          f"({result['bare_rate'] / ideal:.0%} of ideal); runner {result['runner_rate']:.0f} samples/s "
          f"({result['runner_rate'] / ideal:.0%} of ideal)")
    print(f"sending phase: runner/bare = {result['sending_ratio']:.2f}")
    print(f"RATIO whole runner process/bare = {result['ratio']:.2f} (bar >= {BAR:.2f})")


if __name__ == "__main__":
    main()
