"""Benchmark: do ART indexes speed up the PointsDB's point look-ups? (issue 36, docs/performance.md)

    .venv/bin/python tests/benchmarks/bench_pointsdb_index.py [--evals 60] [--points-per-task 90] [--lookups 200]

Builds the synthetic r12-sized PointsDB (tests/benchmarks/synth_db.py: 60 evals x 12
tasks x 90 points, r12's ~1,070 points per eval) and makes three copies of it, each
rewritten by DuckDB (indexes dropped or created, then CHECKPOINT, so their storage
layouts are alike): ``baseline`` without indexes (zone maps only), ``id`` with the index
on ``id`` alone, and ``both`` with it and the seeds' ``(eval_id, base_task, params)``.
Then, in the same run and interleaved (baseline, id, both, baseline, ...), times the
look-ups the tools make, each over the same random keys, on a fresh read-only
connection per repeat:

* ``id``: ``WHERE id = ?`` -- probe.py --point-id, the leaderboard diff, raw_records;
* ``identity``: ``WHERE eval_id = ? AND base_task = ? AND params = ?``;
* ``task_evals``: ``WHERE base_task = ? AND eval_id IN (?, ?, ?)`` -- the explorer's task frame
  (a tenth as many keys: each returns a few hundred rows).

Prints the medians per look-up and the RATIO of each indexed copy to the baseline (below
1: the index helps), plus the build-time and file-size cost of the indexes. Result JSON:
tests/benchmarks/out/pointsdb_index.json.
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

import duckdb  # noqa: E402
from benchlib import write_result  # noqa: E402

ID_INDEX = "CREATE INDEX points_id ON points (id)"
IDENTITY_INDEX = "CREATE INDEX points_identity ON points (eval_id, base_task, params)"
VARIANTS = {"baseline": (), "id": (ID_INDEX,), "both": (ID_INDEX, IDENTITY_INDEX)}
QUERIES = {
    "id": "SELECT * FROM points WHERE id = ?",
    "identity": "SELECT * FROM points WHERE eval_id = ? AND base_task = ? AND params = ?",
    "task_evals": "SELECT * FROM points WHERE base_task = ? AND eval_id IN (?, ?, ?)",
}


def lookup_keys(db: Path, n: int, seed: int = 7) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT id, eval_id, base_task, CAST(params AS VARCHAR) FROM points").fetchall()
    evals = [r[0] for r in con.execute("SELECT eval_id FROM evals").fetchall()]
    tasks = [r[0] for r in con.execute("SELECT DISTINCT base_task FROM points").fetchall()]
    con.close()
    rng = random.Random(seed)
    picked = rng.sample(rows, n)
    return {"id": [[r[0]] for r in picked], "identity": [list(r[1:]) for r in picked],
            # a tenth as many: each returns a few hundred whole rows (about 0.1 s)
            "task_evals": [[rng.choice(tasks), *rng.sample(evals, 3)] for _ in range(max(10, n // 10))]}


def time_lookups(db: Path, sql: str, keys: list) -> tuple[float, int]:
    """Seconds for all look-ups on one fresh connection, and the rows they returned."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        started = time.perf_counter()
        found = sum(len(con.execute(sql, k).fetchall()) for k in keys)
        return time.perf_counter() - started, found
    finally:
        con.close()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evals", type=int, default=60)
    parser.add_argument("--points-per-task", type=int, default=90)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--lookups", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from synth_db import write_synth_db

    with tempfile.TemporaryDirectory() as tmp:
        written = write_synth_db(Path(tmp) / "written.db", evals=args.evals, points_per_task=args.points_per_task,
                                 samples=args.samples)
        dbs, build = {}, {}
        for variant, indexes in VARIANTS.items():
            dbs[variant] = Path(tmp) / f"{variant}.db"
            shutil.copyfile(written, dbs[variant])
            con = duckdb.connect(str(dbs[variant]))
            for name in ("points_id", "points_identity"):      # none from the writer; to be sure
                con.execute(f"DROP INDEX IF EXISTS {name}")
            started = time.perf_counter()
            for statement in indexes:
                con.execute(statement)
            con.execute("CHECKPOINT")
            build[variant] = round(time.perf_counter() - started, 3)
            points = con.execute("SELECT count(*) FROM points").fetchone()[0]
            con.close()
        keys = lookup_keys(dbs["baseline"], args.lookups)
        result = {"duckdb": duckdb.__version__, "points": points, "lookups": args.lookups,
                  "repeats": args.repeats, "build_s": build,
                  "size_mb": {v: round(p.stat().st_size / 2**20, 1) for v, p in dbs.items()}, "queries": {}}
        for name, sql in QUERIES.items():
            times: dict[str, list] = {v: [] for v in VARIANTS}
            rows = {}
            for _ in range(args.repeats):
                for variant, db in dbs.items():
                    seconds, rows[variant] = time_lookups(db, sql, keys[name])
                    times[variant].append(seconds)
            assert len(set(rows.values())) == 1, f"{name}: the databases answered differently"
            medians = {v: statistics.median(t) for v, t in times.items()}
            result["queries"][name] = {
                "ms_per_lookup": {v: round(m / len(keys[name]) * 1e3, 3) for v, m in medians.items()},
                "ratio": {v: round(medians[v] / medians["baseline"], 3) for v in VARIANTS if v != "baseline"},
                "rows": rows["baseline"]}
    print(f"{points} points, duckdb {result['duckdb']}; index build + checkpoint s: {build}; MiB: {result['size_mb']}")
    for name, q in result["queries"].items():
        ms = "  ".join(f"{v} {t:.3f} ms" for v, t in q["ms_per_lookup"].items())
        ratios = "  ".join(f"{v}/baseline {r:.2f}" for v, r in q["ratio"].items())
        print(f"{name:11s} {ms}  RATIO {ratios}")
    write_result("pointsdb_index", result)


if __name__ == "__main__":
    main()
