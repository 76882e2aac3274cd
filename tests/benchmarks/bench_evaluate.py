"""Benchmark: evaluate.py end to end against one DuckDB scan of the same NDJSON.

    .venv/bin/python tests/benchmarks/bench_evaluate.py [--parts r12,legacy,scale,breakdown,synthetic] [--parallel 2]

Trees (built on first use under tests/benchmarks/out/, which git ignores, and reused):

* ``r12``: real runner output against the simulator (tests/benchmarks/r12_tree.py):
  5 evals (one per simulator profile) of configs/r12.yaml at normal density, one
  NDJSON file per step, 16-32 records per file, ~156,000 records, ~1.1 GB;
* ``legacy``: the same tree without the ``text_size`` field the runner records (as
  older runs and other tools write it): evaluate.py deflates every text itself;
* ``scale``: the sim-mid eval of that tree copied to 16 evals (only the model name
  differs); 1x, 4x and 16x the data are its first 1, 4 and 16 evals;
* ``breakdown``: where one worker's CPU goes on the sim-mid eval (in-process, one
  DuckDB thread, best of 3): DuckDB's count(*), reading the needed fields, the checked
  query exported to Arrow, the whole scan_batch;
* ``synthetic``: the older generator's tree (256 records of ~12 KB per file, long
  answers, 12% repetition loops), ``--gb`` in size.

For every tree, in the same run: cold (the files' pages dropped from the page
cache with posix_fadvise before each side) and warm (read just before):

* baseline: ``SELECT count(*) FROM read_json(<files>, format='newline_delimited')``
  in this process (DuckDB's default threads: every core);
* ``evaluate.py --dataset <tree> --parallel N`` as a subprocess from an empty
  database.

RATIO = DuckDB seconds / evaluate.py seconds (bar >= 0.25). Cold: one run of each.
Warm: 3 evaluate.py runs, each after a DuckDB scan, plus one scan at the end; the
median run against the mean scan. The peak RSS of evaluate.py's process tree (polled
every 50 ms) comes from one more run of its own, as the polling takes CPU from the
timed process on a small machine. The figures also go to
tests/benchmarks/out/evaluate.json (merged with earlier runs' other parts); the last
line is the r12 tree's warm ratio.
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
import r12_tree
from benchlib import write_result

WARM_RUNS = 3
REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "benchmarks" / "out"

# ------------------------------------------------------------------ synthetic tree
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
        "task_version": 1, "grader_version": 1,
    }


def generate_synthetic(workdir: Path, gigabytes: float) -> Path:
    """Write the synthetic dataset (or reuse it) and return its dataset file."""
    marker = workdir / f".complete-{gigabytes}"
    dataset = workdir / "data" / "bench.json"
    if marker.exists():
        return dataset
    rng = random.Random(1234)
    paras = _paragraphs(rng)
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
        written, step = 0, 0
        while written < gigabytes * 1e9 / len(MODELS):
            task = TASKS[step % len(TASKS)]
            params = {"length": 4 + 2 * (step // len(TASKS)), "max_depth": 1 + step % 4}
            lines = [json.dumps(_record(rng, paras, model, task, step, i, params)) for i in range(SAMPLES_PER_STEP)]
            data = ("\n".join(lines) + "\n").encode()
            (run / f"{_step_name(task, step, params)}.ndjson").write_bytes(data)
            written += len(data)
            step += 1
    dataset.write_text(json.dumps({"name": "bench", "db": "pointsdb-bench.db", "cache": "bench/.cache",
                                   "cohorts": cohorts}))
    marker.write_text("done\n")
    return dataset


# ------------------------------------------------------------------ measuring

def _cpu(who) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def evict(files) -> None:
    """Drop the files' pages from the page cache (the next read comes from the disk).

    Pages of a file written moments ago are dirty and stay cached: fsync first."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def duckdb_scan(files: list) -> tuple:
    """(wall seconds, CPU seconds, record count) of DuckDB counting the records."""
    con = duckdb.connect()
    cpu, start = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    count = con.execute("SELECT count(*) FROM read_json(?, format='newline_delimited')", [files]).fetchone()[0]
    elapsed, cpu = time.perf_counter() - start, _cpu(resource.RUSAGE_SELF) - cpu
    con.close()
    return elapsed, cpu, count


def run_evaluate(dataset: Path, parallel: int, watch_memory: bool = False) -> dict:
    """One evaluate.py --dataset subprocess: seconds, CPU seconds, summary line and, with
    ``watch_memory``, the peak RSS of its process tree.

    Memory is watched in a run of its own: polling every process's RSS every 50 ms costs
    CPU on the cores evaluate.py runs on, and the timed runs, like the DuckDB scans they
    are compared with, run without an observer.
    """
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cpu, start = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(REPO / "evaluate.py"), "--dataset", str(dataset),
                             "--parallel", str(parallel), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    peak_tree = 0
    if watch_memory:
        parent = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                peak_tree = max(peak_tree, sum(p.memory_info().rss for p in [parent] + parent.children(recursive=True)))
            except psutil.Error:
                pass
            time.sleep(0.05)
    out, err = proc.communicate()
    elapsed, cpu = time.perf_counter() - start, _cpu(resource.RUSAGE_CHILDREN) - cpu
    if proc.returncode != 0:
        raise SystemExit(f"evaluate.py failed ({proc.returncode}):\n{err}")
    return {"seconds": elapsed, "cpu": cpu, "peak_rss_mb": peak_tree / 2**20, "summary": out.strip().splitlines()[-1]}


def _fresh_db(dataset: Path) -> None:
    db = dataset.parent / json.loads(dataset.read_text())["db"]
    for path in (db, db.with_name(db.name + ".wal")):
        if path.exists():
            path.unlink()


def measure(name: str, dataset: Path, files: list, parallel: int) -> dict:
    """Cold and warm ratios of one tree (see the module docstring)."""
    size = sum(os.path.getsize(f) for f in files)
    evict(files)
    cold_duck, cold_duck_cpu, count = duckdb_scan(files)
    evict(files)
    _fresh_db(dataset)
    cold = run_evaluate(dataset, parallel)
    # warm: WARM_RUNS timed runs from an empty database, each after a DuckDB scan (and one
    # more scan at the end); the median run against the mean scan
    scans, runs = [], []
    for _ in range(WARM_RUNS):
        scans.append(duckdb_scan(files)[:2])
        _fresh_db(dataset)
        runs.append(run_evaluate(dataset, parallel))
    scans.append(duckdb_scan(files)[:2])
    warm = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
    warm_duck, duck_cpu = (sum(s[i] for s in scans) / len(scans) for i in (0, 1))
    _fresh_db(dataset)
    memory = run_evaluate(dataset, parallel, watch_memory=True)
    noop = run_evaluate(dataset, parallel)
    result = {
        "tree": name, "bytes": size, "files": len(files), "records": count, "parallel": parallel,
        "cold": {"duckdb_s": cold_duck, "duckdb_cpu_s": cold_duck_cpu, "evaluate_s": cold["seconds"],
                 "evaluate_cpu_s": cold["cpu"], "ratio": cold_duck / cold["seconds"]},
        "warm": {"duckdb_s": warm_duck, "duckdb_cpu_s": duck_cpu, "evaluate_s": warm["seconds"],
                 "evaluate_runs_s": [r["seconds"] for r in runs], "duckdb_runs_s": [s[0] for s in scans],
                 "evaluate_cpu_s": warm["cpu"], "ratio": warm_duck / warm["seconds"],
                 "evaluate_records_s": count / warm["seconds"], "evaluate_mb_s": size / warm["seconds"] / 1e6},
        "peak_rss_mb": memory["peak_rss_mb"], "noop_rerun_s": noop["seconds"], "summary": warm["summary"],
    }
    print(f"[{name}] {size / 1e9:.2f} GB, {len(files)} files, {count} records")
    for kind in ("cold", "warm"):
        r = result[kind]
        print(f"[{name}] {kind}: duckdb count(*) {r['duckdb_s']:.2f} s ({r['duckdb_cpu_s']:.2f} CPU s); "
              f"evaluate.py {r['evaluate_s']:.2f} s ({r['evaluate_cpu_s']:.2f} CPU s) -> RATIO {r['ratio']:.3f}")
    print(f"[{name}] warm runs: evaluate.py {', '.join(f'{x:.2f}' for x in result['warm']['evaluate_runs_s'])} s "
          f"(median taken); DuckDB {', '.join(f'{x:.2f}' for x in result['warm']['duckdb_runs_s'])} s (mean taken); "
          f"peak RSS of evaluate.py's processes {result['peak_rss_mb']:.0f} MB (a run of its own)")
    print(f"[{name}] second run, nothing changed: {noop['seconds']:.2f} s -> {noop['summary']}")
    return result


def breakdown(files: list, expect: tuple, repeats: int = 3) -> dict:
    """Where one worker's CPU goes on one eval: in-process, one DuckDB thread, best of `repeats`."""
    sys.path.insert(0, str(REPO))
    from resolver.ingest.record_checks import FIELDS
    from resolver.ingest.scan import _RAW, ScanJob, _params, _query, scan_batch

    con = duckdb.connect(config={"threads": 1})
    job = ScanJob(tuple(files), expect)

    def best(step) -> float:
        times = []
        for _ in range(repeats):
            cpu = _cpu(resource.RUSAGE_SELF)
            step()
            times.append(_cpu(resource.RUSAGE_SELF) - cpu)
        return min(times)

    fields = ", ".join(f"count({name})" for name in FIELDS)
    result = {
        "duckdb_count": best(lambda: con.execute(
            "SELECT count(*) FROM read_json(?, format='newline_delimited')", [files]).fetchall()),
        "read_fields": best(lambda: con.sql(f"SELECT {fields} FROM ({_RAW})", params={
            k: v for k, v in _params(job).items() if k == "files"}).fetchall()),
        "checked_query_to_arrow": best(lambda: [b for b in con.sql(_query(job), params=_params(job)).to_arrow_reader(2048)]),
        "scan_batch": best(lambda: scan_batch(job)),
    }
    for name, value in result.items():
        print(f"[breakdown] {name}: {value:.3f} CPU s for {len(files)} files")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="r12,legacy,scale,breakdown",
                        help="comma-separated: r12, legacy, scale, breakdown, synthetic")
    parser.add_argument("--parallel", type=int, default=2, help="evaluate.py --parallel (default 2, docs/performance.md)")
    parser.add_argument("--gb", type=float, default=0.6, help="size of the synthetic tree (default 0.6)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    results = {"cpu_count": os.cpu_count(), "load_avg_start": os.getloadavg()}
    if parts & {"r12", "legacy", "scale", "breakdown"}:
        dataset = r12_tree.build()
    if "breakdown" in parts:
        results["breakdown"] = breakdown(r12_tree.ndjson_files(r12_tree.DEFAULT_DIR, ["sim-mid"]),
                                         ("sim-mid", r12_tree.TEMPLATE, r12_tree.SAMPLER))
    if "r12" in parts:
        results["r12"] = measure("r12", dataset, r12_tree.ndjson_files(r12_tree.DEFAULT_DIR), args.parallel)
    if "legacy" in parts:
        legacy_root = OUT / "r12-legacy"
        legacy = r12_tree.legacy_copy(r12_tree.DEFAULT_DIR, legacy_root)
        results["legacy"] = measure("r12 without text_size", legacy, r12_tree.ndjson_files(legacy_root),
                                    args.parallel)
    if "scale" in parts:
        scaled_root = OUT / "r12-scaled"
        big = r12_tree.scaled_copy(r12_tree.DEFAULT_DIR, scaled_root, 16, models=("sim-mid",))
        names = [m for m in ["sim-mid"] + [f"sim-mid-x{k}" for k in range(1, 16)]]
        results["scale"] = []
        for factor in (1, 4, 16):
            chosen = names[:factor]
            subset = r12_tree.write_dataset(scaled_root, chosen, f"r12-{factor}x") if factor < 16 else big
            files = r12_tree.ndjson_files(scaled_root, chosen)
            results["scale"].append(dict(measure(f"{factor}x", subset, files, args.parallel), factor=factor))
    if "synthetic" in parts:
        workdir = OUT / "synthetic-tree"
        dataset = generate_synthetic(workdir, args.gb)
        files = sorted(str(p) for p in (workdir / "data" / "bench").rglob("*.ndjson"))
        results["synthetic"] = measure("synthetic", dataset, files, args.parallel)
    results["load_avg_end"] = os.getloadavg()
    previous = OUT / "evaluate.json"          # a run of some parts keeps the other parts' figures
    merged = json.loads(previous.read_text()) if previous.exists() else {}
    write_result("evaluate", {**merged, **results})
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if "r12" in results:
        print(f"RATIO evaluate/duckdb (r12 tree, warm) = {results['r12']['warm']['ratio']:.3f} (bar >= 0.25)")


if __name__ == "__main__":
    main()
