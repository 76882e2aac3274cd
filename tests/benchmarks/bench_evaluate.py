"""Benchmark: evaluate.py end to end against DuckDB scanning the same NDJSON.

    .venv/bin/python tests/benchmarks/bench_evaluate.py [--gb 1.2] [--workdir DIR]

Writes a dataset of realistic runner NDJSON (long answers: prose-like reasoning,
some repetition loops that hit the token limit; prompts repeated in `messages`, as
the runner writes them) into --workdir (reused when already there), then in the
same run measures

* baseline: ``SELECT count(*) FROM read_json(<files>, format='newline_delimited')``
  in DuckDB (all cores), run before and after evaluate.py, the mean is used;
* ``evaluate.py --dataset <bench.json> --parallel 2`` as a real subprocess from an
  empty database, with the peak resident memory of its whole process tree
  (main process + workers, polled every 50 ms);
* a second evaluate.py run (nothing changed: must be a no-op).

The last line printed is the ratio evaluate rate / DuckDB rate (bar: >= 0.25);
the figures also go to tests/benchmarks/out/evaluate.json.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import psutil
from benchlib import write_result  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MODELS = ("bench-alpha", "bench-beta", "bench-gamma", "bench-delta")
TASKS = ("arithmetic", "boolean", "dates", "cars", "brackets", "movies")
SAMPLES_PER_STEP = 256


def _paragraphs(rng: random.Random, count: int = 4000) -> list:
    """Distinct prose-like paragraphs (pseudo-words with a Zipf-ish frequency)."""
    letters = "etaoinshrdlucmfwypvbgkqjxz"
    weights = [26 - i for i in range(26)]
    vocab = ["".join(rng.choices(letters, weights, k=rng.randint(1, 9))) for _ in range(6000)]
    vocab_weights = [1.0 / (i + 1) for i in range(len(vocab))]
    paras = []
    for _ in range(count):
        words = rng.choices(vocab, vocab_weights, k=rng.randint(40, 110))
        paras.append(" ".join(words).capitalize() + f". So the value is {rng.randint(0, 9999)}.")
    return paras


def _answer(rng: random.Random, paras: list, truncated: bool) -> str:
    if truncated:   # a repetition loop that runs into the token limit
        head = " ".join(rng.sample(paras, 2))
        loop = f"Wait, let me recount step {rng.randint(1, 9)}: " + rng.choice(paras)[:120] + "\n"
        return head + "\n" + loop * rng.randint(40, 160)
    body = "\n\n".join(rng.sample(paras, rng.randint(3, 28)))
    return f"<think>\n{body}\n</think>\nFinal Answer: {rng.randint(0, 99)}"


def _step_name(task: str, step: int, params: dict) -> str:
    return f"{step:03d}_{task}_" + "_".join(f"{k}-{v}" for k, v in sorted(params.items()))


def _record(rng, paras, model, task, step, index, params) -> dict:
    name = _step_name(task, step, params)
    prompt = "\n".join(rng.sample(paras, rng.randint(1, 4)))
    truncated = rng.random() < 0.12
    correct = not truncated and rng.random() < 0.55
    valid = not truncated and (correct or rng.random() < 0.9)
    tokens = 4096 if truncated else rng.randint(200, 3800)
    return {
        "task": name, "version": 1, "base_task": task, "key": f"{name}-{index}", "input": prompt,
        "target": str(rng.randint(0, 99)), "response_enum": None, "genresult": {"terms": rng.randint(2, 40)},
        "messages": [{"role": "user", "content": "Solve this problem step by step.\n" + prompt}],
        "answer": _answer(rng, paras, truncated),
        "usage": {"completion_tokens": tokens, "prompt_tokens": rng.randint(100, 900), "total_tokens": tokens + 500},
        "timings": {"termination_reason": None, "finish_reason": "length" if truncated else "stop"},
        "step": step, "params": dict(params, count=SAMPLES_PER_STEP), "model": model,
        "template": "zeroshot-nosys", "sampler": "greedy-4k", "guess_chance": 0.5 if task == "boolean" else 0.0,
        "normalized_answer": None, "extracted_answer": None, "is_valid": valid, "is_correct": correct,
        "is_truncated": truncated, "manifold": {"id": "grid", "degree": step % 3},
    }


def generate(workdir: Path, gigabytes: float) -> Path:
    """Write the benchmark dataset (or reuse it) and return its dataset file."""
    marker = workdir / f".complete-{gigabytes}"
    dataset = workdir / "data" / "bench.json"
    if marker.exists():
        return dataset
    rng = random.Random(1234)
    paras = _paragraphs(rng)
    target = gigabytes * 1e9
    written, step = 0, 0
    cohorts = []
    for model in MODELS:
        cohort = workdir / "data" / "bench" / model
        run = cohort / f"2026-01-01_00-00-00_bench_{model}_zeroshot-nosys_greedy-4k"
        run.mkdir(parents=True, exist_ok=True)
        (cohort / "evals.json").write_text(json.dumps([{
            "evaluate": {"glob": f"*_{model}_zeroshot-nosys_greedy-4k/*"},
            "filters": {"model": model, "template": "zeroshot-nosys", "sampler": "greedy-4k"},
            "label": model, "groups": ["arch:dense", "size:mid"], "tags": ["leaderboard"]}]))
        cohorts.append({"path": f"bench/{model}/evals.json"})
    per_model = target / len(MODELS)
    for model in MODELS:
        run = next((workdir / "data" / "bench" / model).glob("2026-*"))
        model_written, step = 0, 0
        while model_written < per_model:
            task = TASKS[step % len(TASKS)]
            params = {"length": 4 + 2 * (step // len(TASKS)), "max_depth": 1 + step % 4}
            lines = [json.dumps(_record(rng, paras, model, task, step, i, params)) for i in range(SAMPLES_PER_STEP)]
            data = ("\n".join(lines) + "\n").encode()
            (run / f"{_step_name(task, step, params)}.ndjson").write_bytes(data)
            model_written += len(data)
            step += 1
        written += model_written
        print(f"generated {model}: {step} files, {model_written / 1e6:.0f} MB", file=sys.stderr)
    dataset.write_text(json.dumps({"name": "bench", "db": "pointsdb-bench.db", "cache": "bench/.cache",
                                   "cohorts": cohorts}))
    marker.write_text(str(written))
    return dataset


def ndjson_files(workdir: Path) -> list:
    return sorted(str(p) for p in (workdir / "data" / "bench").rglob("*.ndjson"))


def _cpu(who) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def duckdb_scan(files: list) -> tuple:
    """(wall seconds, CPU seconds, record count) of DuckDB counting the records."""
    con = duckdb.connect()
    cpu, start = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    count = con.execute("SELECT count(*) FROM read_json(?, format='newline_delimited')", [files]).fetchone()[0]
    elapsed, cpu = time.perf_counter() - start, _cpu(resource.RUSAGE_SELF) - cpu
    con.close()
    return elapsed, cpu, count


def run_evaluate(dataset: Path) -> tuple:
    """(seconds, CPU seconds of the tree, peak RSS of the tree in bytes, peak RSS of one process, stdout)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cpu, start = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(REPO / "evaluate.py"), "--dataset", str(dataset),
                             "--parallel", "2", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    parent = psutil.Process(proc.pid)
    peak_tree = peak_one = 0
    while proc.poll() is None:
        try:
            procs = [parent] + parent.children(recursive=True)
            rss = [p.memory_info().rss for p in procs]
            peak_tree, peak_one = max(peak_tree, sum(rss)), max(peak_one, max(rss))
        except psutil.Error:
            pass
        time.sleep(0.05)
    out, err = proc.communicate()
    elapsed, cpu = time.perf_counter() - start, _cpu(resource.RUSAGE_CHILDREN) - cpu
    if proc.returncode != 0:
        raise SystemExit(f"evaluate.py failed ({proc.returncode}):\n{err}")
    return elapsed, cpu, peak_tree, peak_one, out.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.2, help="size of the NDJSON to generate (default 1.2)")
    parser.add_argument("--workdir", default="/tmp/reasonscape-bench-evaluate")
    args = parser.parse_args()
    workdir = Path(args.workdir)
    dataset = generate(workdir, args.gb)
    files = ndjson_files(workdir)
    size = sum(os.path.getsize(f) for f in files)
    db = dataset.parent / "pointsdb-bench.db"
    if db.exists():
        db.unlink()
    duck1, duck_cpu1, count = duckdb_scan(files)
    ev_time, ev_cpu, peak_tree, peak_one, summary = run_evaluate(dataset)
    duck2, duck_cpu2, _ = duckdb_scan(files)
    noop_time, _, _, _, noop_summary = run_evaluate(dataset)
    duck, duck_cpu = (duck1 + duck2) / 2, (duck_cpu1 + duck_cpu2) / 2
    ratio = duck / ev_time
    result = {
        "bytes": size, "files": len(files), "records": count,
        "duckdb_seconds": [round(duck1, 3), round(duck2, 3)], "duckdb_mb_s": round(size / duck / 1e6, 1),
        "evaluate_seconds": round(ev_time, 3), "evaluate_mb_s": round(size / ev_time / 1e6, 1),
        "evaluate_records_s": round(count / ev_time), "peak_rss_tree_mb": round(peak_tree / 2**20),
        "peak_rss_process_mb": round(peak_one / 2**20), "noop_rerun_seconds": round(noop_time, 3),
        "duckdb_cpu_seconds": round(duck_cpu, 3), "evaluate_cpu_seconds": round(ev_cpu, 3),
        "cpu_ratio": round(duck_cpu / ev_cpu, 3), "ratio": round(ratio, 3), "bar": 0.25, "cpu_count": os.cpu_count(), "load_avg": os.getloadavg(),
    }
    write_result("evaluate", result)
    print(f"input: {size / 1e9:.2f} GB, {len(files)} files, {count} records")
    print(f"duckdb read_json count(*): {duck:.2f} s ({result['duckdb_mb_s']} MB/s; runs {duck1:.2f} / {duck2:.2f} s)")
    print(f"evaluate.py --parallel 2: {ev_time:.2f} s ({result['evaluate_mb_s']} MB/s, "
          f"{result['evaluate_records_s']} records/s) -> {summary.splitlines()[-1]}")
    print(f"peak RSS: {result['peak_rss_tree_mb']} MB for the process tree, {result['peak_rss_process_mb']} MB largest process")
    print(f"CPU seconds: duckdb {duck_cpu:.2f}, evaluate.py {ev_cpu:.2f} (CPU ratio {duck_cpu / ev_cpu:.3f}); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"second run (nothing changed): {noop_time:.2f} s -> {noop_summary.splitlines()[-1]}")
    print(f"RATIO evaluate/duckdb = {ratio:.3f} (bar >= 0.25)")


if __name__ == "__main__":
    main()
