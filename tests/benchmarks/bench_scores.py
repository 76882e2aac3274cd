"""Benchmark: `analyze.py scores` on a 60-eval r12-sized PointsDB, whole process wall time.

    .venv/bin/python tests/benchmarks/bench_scores.py [--points-per-task 90] [--repeats 5]

Builds the DB with tests/benchmarks/synth_db.py (the evaluate helper's synthetic
writer: 60 evals x 12 tasks, r12 is ~1,070 points per eval, so 90 points per task),
then times, in the same run and interleaved, the baseline process
`python -c "import duckdb, pandas"` and the real `python analyze.py scores <dataset>`
(markdown to /dev/null). Prints medians and, on the last line, the RATIO
scores / baseline. The bar (spec 07) is scores under 2 s wall. Result JSON:
tests/benchmarks/out/scores.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from synth_db import write_synth_db  # noqa: E402

BAR_SECONDS = 2.0


def wall(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TQDM_DISABLE": "1"})
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=60)
    parser.add_argument("--points-per-task", type=int, default=90)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-scores-") as tmp:
        db = Path(tmp) / "synth.db"
        start = time.perf_counter()
        write_synth_db(db, evals=args.evals, points_per_task=args.points_per_task, samples=args.samples, dataset=True)
        build_seconds = time.perf_counter() - start
        dataset = Path(tmp) / "synth.json"
        baseline_cmd = [sys.executable, "-c", "import duckdb, pandas"]
        scores_cmd = [sys.executable, str(ROOT / "analyze.py"), "scores", str(dataset)]
        wall(scores_cmd)  # warm the OS file cache once, as a user's second run would be
        baseline, scores = [], []
        for _ in range(args.repeats):
            baseline.append(wall(baseline_cmd))
            scores.append(wall(scores_cmd))
    base_s, scores_s = statistics.median(baseline), statistics.median(scores)
    ratio = scores_s / base_s
    points = args.evals * 12 * args.points_per_task
    result = {"evals": args.evals, "points": points, "samples_per_point": args.samples, "build_db_s": build_seconds,
              "baseline_import_duckdb_pandas_s": base_s, "scores_s": scores_s, "ratio": ratio,
              "bar_s": BAR_SECONDS, "meets_bar": scores_s < BAR_SECONDS, "repeats": args.repeats}
    out = ROOT / "tests" / "benchmarks" / "out" / "scores.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"DB: {args.evals} evals, {points} points ({args.samples} samples each), built in {build_seconds:.1f} s")
    print(f"baseline `python -c 'import duckdb, pandas'`: {base_s:.3f} s (median of {args.repeats})")
    print(f"analyze.py scores (whole process): {scores_s:.3f} s (median of {args.repeats}; bar {BAR_SECONDS} s)")
    print(f"RATIO scores/baseline = {ratio:.2f}")


if __name__ == "__main__":
    main()
