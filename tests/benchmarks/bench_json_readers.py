"""Benchmark: what reading one eval's NDJSON costs with each JSON reader at hand (issue 38's ingest bar).

    .venv/bin/python tests/benchmarks/bench_json_readers.py [--eval DIR] [--repeat 3] [--extra PATH]

The ingest bar compares evaluate.py with DuckDB's own ``count(*)`` of ``read_json`` over the
same files, a scan that parses every line and keeps nothing. This measures, on one eval's
step files (default: the first eval by name of the scale tree, tests/benchmarks/out/scale-tree, or
``--eval DIR``), the CPU seconds of: that count with one DuckDB thread (the baseline); DuckDB's
``from_json`` of the fields evaluate.py reads (the scan's parse, resolver.ingest's FIELDS);
and Python readers, each reading the files and parsing every line: the standard library's
json, and where importable orjson, msgspec (generic, and a Struct of the same fields) and
pysimdjson (parse only, and parse plus the fields). Those three are not project dependencies;
to include them: ``pip install --target DIR orjson msgspec pysimdjson`` and ``--extra DIR``.
Prints each reader's best CPU seconds and RATIO = baseline / reader (above 1: cheaper than
DuckDB's own count). Result: tests/benchmarks/out/json_readers.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchlib import OUT, write_result  # noqa: E402

from resolver.ingest.record_checks import FIELDS, TEXT_FIELDS  # noqa: E402


def _lines(files):
    for path in files:
        with open(path, "rb") as f:
            yield from f.read().splitlines()


def duckdb_readers(files: list) -> dict:
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 1")
    structure = json.dumps({name: "VARCHAR" if name in TEXT_FIELDS else "JSON" for name in FIELDS})
    fields = ", ".join(f"r.{name}" for name in FIELDS)
    count = "SELECT count(*) FROM read_json(?, format = 'newline_delimited')"
    parse = (f"SELECT count(*), sum(length(concat_ws('', {fields}))) FROM "
             f"(SELECT from_json(json, '{structure}') AS r FROM read_ndjson_objects(?))")
    return {"duckdb count(*) (baseline)": lambda: con.execute(count, [files]).fetchone(),
            "duckdb from_json of the scan's fields": lambda: con.execute(parse, [files]).fetchone()}


def python_readers(files: list) -> dict:
    readers = {"json.loads (standard library)": lambda: [json.loads(line) for line in _lines(files)]}
    try:
        import orjson
        readers["orjson.loads"] = lambda: [orjson.loads(line) for line in _lines(files)]
    except ImportError:
        pass
    try:
        import msgspec
        generic = msgspec.json.Decoder()
        record = msgspec.defstruct("Record", [(name, object, None) for name in FIELDS])
        typed = msgspec.json.Decoder(record)
        readers["msgspec, any JSON"] = lambda: [generic.decode(line) for line in _lines(files)]
        readers["msgspec, Struct of the scan's fields"] = lambda: [typed.decode(line) for line in _lines(files)]
    except ImportError:
        pass
    try:
        import simdjson
        parser = simdjson.Parser()

        def parse_only():
            for line in _lines(files):
                parser.parse(line)

        def parse_fields():
            for line in _lines(files):
                doc = parser.parse(line)
                [doc.get(name) for name in FIELDS]
                del doc          # the parser is reused only once no proxy of its last document is alive

        readers["pysimdjson, parse only"] = parse_only
        readers["pysimdjson, parse + the scan's fields"] = parse_fields
    except ImportError:
        pass
    return readers


def best_cpu(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", help="a folder of step files (*.ndjson, searched recursively)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--extra", action="append", default=[], help="a folder to import readers from")
    args = parser.parse_args()
    sys.path[:0] = args.extra
    evals = OUT / "scale-tree" / "data" / "r12"
    folder = Path(args.eval) if args.eval else min(evals.iterdir(), default=evals) if evals.is_dir() else evals
    files = sorted(str(p) for p in folder.rglob("*.ndjson")) if folder.is_dir() else []
    if not files:
        print(f"no *.ndjson under {folder}; build the scale tree first (bench_scale.py) or pass --eval DIR",
              file=sys.stderr)
        sys.exit(2)
    size_mb = sum(Path(p).stat().st_size for p in files) / 1e6
    records = sum(1 for _ in _lines(files))
    print(f"{folder}: {len(files)} files, {records:,} records, {size_mb:.1f} MB; best of {args.repeat}, CPU seconds")
    results = {}
    for name, run in {**duckdb_readers(files), **python_readers(files)}.items():
        results[name] = best_cpu(run, args.repeat)
    baseline = results["duckdb count(*) (baseline)"]
    for name, seconds in results.items():
        print(f"  {name:<42} {seconds:6.3f} s   {size_mb / seconds:6.0f} MB/s   RATIO {baseline / seconds:.2f}")
    write_result("json_readers", {"eval": str(folder), "files": len(files), "records": records, "mb": size_mb,
                                  "cpu_s": results})


if __name__ == "__main__":
    main()
