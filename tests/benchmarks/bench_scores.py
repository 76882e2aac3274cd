"""Benchmark: `analyze.py scores` on a 60-eval r12-sized PointsDB, whole process wall time.

    .venv/bin/python tests/benchmarks/bench_scores.py [--points-per-task 90] [--repeats 5]

Builds the DB with tests/benchmarks/synth_db.py (the evaluate helper's synthetic
writer: 60 evals x 12 tasks, r12 is ~1,070 points per eval, so 90 points per task),
then times, in the same run and interleaved, the baseline process
`python -c "import duckdb, pandas"` and the real `python analyze.py scores <dataset>`
(markdown to /dev/null). Prints medians and, on the last line, the RATIO
scores / baseline. The bar (docs/performance.md) is scores under 2 s wall. Result JSON:
tests/benchmarks/out/scores.json.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from benchlib import add_synth_db_args, build_synth_dataset, write_result  # noqa: E402

BAR_SECONDS = 2.0


def wall(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TQDM_DISABLE": "1"})
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_synth_db_args(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-scores-") as tmp:
        start = time.perf_counter()
        dataset = build_synth_dataset(tmp, args)
        build_seconds = time.perf_counter() - start
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
    write_result("scores", result)
    print(f"DB: {args.evals} evals, {points} points ({args.samples} samples each), built in {build_seconds:.1f} s")
    print(f"baseline `python -c 'import duckdb, pandas'`: {base_s:.3f} s (median of {args.repeats})")
    print(f"analyze.py scores (whole process): {scores_s:.3f} s (median of {args.repeats}; bar {BAR_SECONDS} s)")
    print(f"RATIO scores/baseline = {ratio:.2f}")


if __name__ == "__main__":
    main()
