"""Simulated GPU time of a study under the runner's ways of running it (docs/performance.md, *GPU time*).

    .venv/bin/python tests/benchmarks/bench_gpu_time.py [--config configs/r12.yaml] [--density lowdef]
        [--profiles sim-strong,sim-loopy] [--only NAME ...] [--task TASK ...] [--gpu h200-8b] [--time-scale 20]

For each profile and configuration it starts the simulator in GPU mode (a subprocess,
docs/simulator.md *GPU mode*) with a fresh response cache and runs the real runner.py:

    parallel16           --parallel 16
    parallel16-threads4  --parallel 16 --threads 4   (the seeds: 16 per step x 4 steps = 64 in flight)
    batch-loop           --mode write-batch --rounds 1, run-batch stand-in, read-batch, until nothing is left
    batch-one            --mode write-batch at the default, the same loop (one cycle once batch writes every round)
    stop-loops           --parallel 16 with the sampler plus "stop_loops": true
                         (compare with parallel16)

API modes report the simulator's /stats: GPU busy seconds, the simulated span from the first
request to the last token, completion tokens decoded, the mean batch (tokens per decode
step), the most requests in flight. Batch
modes add up each cycle's run-batch stand-in (virtual time, one model load per cycle).
A configuration whose flag or sampler key this checkout's runner does not know yet is
skipped with a line saying so. Not a test: it prints a table and writes
tests/benchmarks/out/gpu_time.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import write_result  # noqa: E402

from resolver.sim.simulator import start_simulator_process  # noqa: E402

TEMPLATE = REPO / "templates" / "zerocot-nosys.json"
SAMPLER = REPO / "samplers" / "greedy-4k.json"
CONFIGS = ("parallel16", "parallel16-threads4", "batch-loop", "batch-one", "stop-loops")
ENV = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}


def runner_help() -> str:
    return subprocess.run([sys.executable, str(REPO / "runner.py"), "--help"], capture_output=True, text=True,
                          env=ENV, cwd=REPO).stdout


def unsupported(name: str, help_text: str) -> str | None:
    """Why this checkout cannot run configuration `name` yet (None: it can)."""
    if name == "batch-loop" and "--rounds" not in help_text:
        return "runner.py has no --rounds yet (issue 35 part 2)"
    if name == "stop-loops" and not any("stop_loops" in p.read_text(encoding="utf-8")
                                        for p in (REPO / "resolver").rglob("*.py") if "sim" not in p.parts):
        return 'the runner does not know the sampler key "stop_loops" yet (issue 35 part 3)'
    return None


def runner(args: list, work: Path, sampler: Path, opts) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(REPO / "runner.py"), "--config", opts.config, "--template", TEMPLATE,
           "--sampler", sampler, "--model", opts.profile, "--density", opts.density, "--seed", opts.seed,
           "--cache", work / "cache", "--output", work / "results", "--quiet",
           *[flag for task in opts.task for flag in ("--task", task)], *args]
    done = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=ENV, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"runner failed ({' '.join(map(str, args))}):\n{done.stdout}\n{done.stderr}")
    return done


def api_run(args: list, work: Path, sampler: Path, opts) -> dict:
    extra = ["--gpu", opts.gpu, "--time-scale", opts.time_scale]
    sim = start_simulator_process(opts.config, seed=int(opts.seed), extra_args=extra)
    try:
        started = time.perf_counter()
        runner(["--apibase", sim.url, *args], work, sampler, opts)
        real = time.perf_counter() - started
        stats = sim.stats()
    finally:
        sim.stop()
    gpu = stats["gpu"]
    return {"cycles": None, "busy_s": gpu["busy_seconds"], "sim_wall_s": gpu["span_seconds"], "real_s": real,
            "tokens": gpu["tokens_generated"], "steps": gpu["decode_steps"], "in_flight": stats["max_in_flight"],
            "cancelled": gpu["cancelled"]}


def batch_run(args: list, work: Path, sampler: Path, opts) -> dict:
    total = {"cycles": 0, "busy_s": 0.0, "sim_wall_s": 0.0, "real_s": 0.0, "tokens": 0, "steps": 0,
             "in_flight": None, "cancelled": 0}
    started = time.perf_counter()
    while True:
        written = runner(["--mode", "write-batch", *args], work, sampler, opts)
        batch = next((line.split(": ", 1)[1] for line in written.stdout.splitlines()
                      if line.startswith("batch file: ")), None)
        if batch is None:      # "nothing to ask": every step is complete
            break
        out, stats_file = work / f"out-{total['cycles']}.ndjson", work / f"stats-{total['cycles']}.json"
        cmd = [sys.executable, "-m", "resolver.simulator", "run-batch", "-i", batch, "-o", out,
               "--config", opts.config, "--seed", opts.seed, "--gpu", opts.gpu, "--stats", stats_file]
        subprocess.run(list(map(str, cmd)), check=True, capture_output=True, text=True, env=ENV, cwd=REPO)
        read = runner(["--mode", "read-batch", "--batch", out], work, sampler, opts)
        cost = json.loads(stats_file.read_text())
        total["cycles"] += 1
        total["busy_s"] += cost["busy_seconds"]
        total["sim_wall_s"] += cost["total_seconds"]
        total["tokens"] += cost["tokens_generated"]
        total["steps"] += cost["decode_steps"]
        if "all steps complete" in read.stdout:
            break
    total["real_s"] = time.perf_counter() - started
    return total


def run_one(name: str, opts, tmp: Path) -> dict:
    work = tmp / f"{opts.profile}-{name}"
    work.mkdir()
    if name == "parallel16":
        return api_run(["--parallel", "16"], work, SAMPLER, opts)
    if name == "parallel16-threads4":
        return api_run(["--parallel", "16", "--threads", "4"], work, SAMPLER, opts)
    if name == "stop-loops":
        sampler = work / "greedy-4k-stop-loops.json"
        sampler.write_text(json.dumps({**json.loads(SAMPLER.read_text()), "stop_loops": True}))
        return api_run(["--parallel", "16"], work, sampler, opts)
    if name == "batch-loop":
        return batch_run(["--rounds", "1"], work, SAMPLER, opts)
    return batch_run([], work, SAMPLER, opts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/r12.yaml")
    parser.add_argument("--density", default="lowdef")
    parser.add_argument("--seed", default="42")
    parser.add_argument("--profiles", default="sim-strong,sim-loopy")
    parser.add_argument("--only", action="append", choices=CONFIGS, help="run only this configuration (repeatable)")
    parser.add_argument("--task", action="append", default=[], help="run only this config task (repeatable; "
                        "runner.py --task)")
    parser.add_argument("--gpu", default="h200-8b")
    parser.add_argument("--time-scale", default="20", help="simulated seconds per real second in API modes")
    opts = parser.parse_args()
    help_text = runner_help()
    rows = []
    tasks = f", tasks {', '.join(opts.task)}" if opts.task else ""
    print(f"{opts.config} --density {opts.density}{tasks}, simulated {opts.gpu}, time scale {opts.time_scale}")
    print(f"{'profile':<11} {'configuration':<20} {'cycles':>6} {'GPU busy s':>11} {'sim wall s':>11} "
          f"{'real s':>7} {'tokens':>12} {'mean batch':>10} {'in flight':>9} {'stopped':>7}")
    with tempfile.TemporaryDirectory(prefix="bench-gpu-") as tmp:
        for profile in opts.profiles.split(","):
            opts.profile = profile
            for name in opts.only or CONFIGS:
                why = unsupported(name, help_text)
                if why:
                    print(f"{profile:<11} {name:<20} skipped: {why}", flush=True)
                    continue
                row = {"profile": profile, "configuration": name, **run_one(name, opts, Path(tmp))}
                rows.append(row)
                print(f"{profile:<11} {name:<20} {row['cycles'] or '-':>6} {row['busy_s']:>11,.0f} "
                      f"{row['sim_wall_s']:>11,.0f} {row['real_s']:>7.0f} {row['tokens']:>12,} "
                      f"{row['tokens'] / max(1, row['steps']):>10.1f} {row['in_flight'] or '-':>9} "
                      f"{row['cancelled']:>7}", flush=True)
    path = write_result("gpu_time", {"config": opts.config, "density": opts.density, "tasks": opts.task, "gpu": opts.gpu,
                                     "time_scale": opts.time_scale, "rows": rows})
    print(f"written: {path}")


if __name__ == "__main__":
    main()
