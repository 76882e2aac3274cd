"""Benchmark: generate every prompt of configs/r12.yaml at normal density, 64 samples per point.

Bar (docs/performance.md): under 20 s. Wall and process CPU time are both printed: on a
shared machine CPU time shows the generators' own cost. Baseline measured in the same run: the same number of
cases produced by a trivial generator (random ints formatted into a string, through
the same Task.generate_cases loop), so the ratio shows what the real generators
cost over the bare loop on this machine.

    .venv/bin/python tests/benchmarks/bench_generation.py [--samples 64]
Last line: the figures and the ratio. JSON: tests/benchmarks/out/generation.json
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchlib import write_result  # noqa: E402
from tqdm import tqdm  # noqa: E402

from resolver.config.loader import expand_steps, load_config  # noqa: E402
from resolver.config.prompts import load_template, render_messages  # noqa: E402
from resolver.tasks import TestCase, get_task  # noqa: E402


def generate_all(steps, samples: int, template) -> tuple[int, dict]:
    per_task: dict = {}
    total = 0
    for step in tqdm(steps, desc="generating", unit="step", file=sys.stderr):
        task = get_task(step.generator)
        started = time.perf_counter()
        for case in task.generate_cases(step.gen_params, random.Random(step.seed), samples):
            render_messages(template, task, step.gen_params, case)
            total += 1
        per_task[step.base_task] = per_task.get(step.base_task, 0.0) + time.perf_counter() - started
    return total, per_task


def baseline(count: int) -> float:
    rng = random.Random(0)
    started = time.perf_counter()
    for _ in range(count):
        TestCase(input=f"{rng.randint(0, 99)} + {rng.randint(0, 99)}", target="0")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=64)
    args = parser.parse_args()
    config = load_config(REPO / "configs" / "r12.yaml")
    template = load_template(REPO / "templates" / "zerocot-nosys.json")
    started, cpu_started = time.perf_counter(), time.process_time()
    steps = expand_steps(config)
    total, per_task = generate_all(steps, args.samples, template)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    base = baseline(total)
    result = {"points": len(steps), "samples_per_point": args.samples, "problems": total,
              "seconds": round(elapsed, 2), "cpu_seconds": round(cpu, 2), "baseline_seconds": round(base, 3),
              "problems_per_second": round(total / elapsed), "bar_seconds": 20,
              "ratio_to_trivial_loop": round(elapsed / base, 1),
              "ratio_cpu_to_bar": round(cpu / 20, 2), "ratio_wall_to_bar": round(elapsed / 20, 2),
              "per_task_seconds": {k: round(v, 2) for k, v in sorted(per_task.items())}}
    write_result("generation", result)
    for name, secs in sorted(per_task.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<11} {secs:6.2f} s")
    print(f"r12 normal: {len(steps)} points x {args.samples} = {total} prompts in {elapsed:.2f} s wall, "
          f"{cpu:.2f} s CPU (bar 20 s; trivial loop {base:.2f} s); "
          f"RATIO cpu/bar = {cpu / 20:.2f}, wall/bar = {elapsed / 20:.2f}")


if __name__ == "__main__":
    main()
