"""evaluate.py: turn runner NDJSON into a PointsDB (see docs/evaluate.md)."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Sequence

from resolver.cli.base import ArgParser, refuse_file_parents
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from resolver.core.progress import Bar

INTERVIEW_DB = "pointsdb-interview.db"


def build_parser() -> ArgParser:
    parser = ArgParser(prog="evaluate.py", description="Process raw NDJSON results into the PointsDB DuckDB database.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="dataset config JSON (processes all its evals), e.g. data/r12.json")
    source.add_argument("--interview", nargs="+", metavar="SPEC",
                        help="NDJSON paths, globs or comma-separated lists (folders: their *.ndjson); "
                             "several may follow, as an unquoted shell glob expands to")
    parser.add_argument("--parallel", type=int, default=16, help="worker processes scanning files (default 16)")
    parser.add_argument("--offline", action="store_true",
                        help="re-grade stored answers with the current grader (files are not changed without --inplace)")
    parser.add_argument("--inplace", action="store_true",
                        help="write re-graded records back to the NDJSON files (requires --offline)")
    parser.add_argument("--db", help=f"interview mode: the PointsDB to write (default: {INTERVIEW_DB} in the "
                                     "current directory, rebuilt on every run)")
    parser.add_argument("--quiet", action="store_true", help="less output: no progress bar, no per-eval lines")
    return parser


MAX_PARALLEL = 256


def check_args(args: argparse.Namespace) -> None:
    if args.parallel < 1:
        raise UserError(f"--parallel must be at least 1, got {args.parallel}")
    if args.inplace and not args.offline:
        raise UserError("--inplace requires --offline (it writes the re-graded records back)")
    if args.dataset and args.inplace:
        raise UserError("--inplace works with --interview only; --dataset --offline re-grades without changing files")
    if args.dataset and args.db:
        raise UserError("--db is for --interview; a dataset names its database in its 'db' key")
    if args.parallel > MAX_PARALLEL:
        raise UserError(f"--parallel must be at most {MAX_PARALLEL} worker processes, got {args.parallel}")
    if args.db:
        check_db_path(args.db, "--db")


def check_db_path(path_text: str, what: str) -> None:
    """Refuse a database path that cannot be written, before any work is done."""
    from pathlib import Path

    path = Path(path_text)
    if path.is_dir():
        raise UserError(f"{what} {path_text} is a directory; give a database file such as results/interview.db")
    refuse_file_parents(path_text, what)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    check_args(args)
    # evaluate.py does no linear algebra; OpenBLAS would start a spinning thread per core
    # when numpy is imported (~0.1 CPU s taken from the workers on a 2-core machine).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from resolver import ingest
    from resolver.ingest import keep_pandas_out

    keep_pandas_out()

    if args.dataset:
        from resolver.catalog import load_dataset

        check_db_path(str(load_dataset(args.dataset).db_path), f"the database named by {args.dataset}")
        report = ingest.evaluate_dataset(args.dataset, parallel=args.parallel, quiet=args.quiet, offline=args.offline,
                                         progress=progress_bar)
    else:
        report = ingest.evaluate_interview(",".join(args.interview), db_path=args.db or INTERVIEW_DB, parallel=args.parallel,
                                           quiet=args.quiet, offline=args.offline, inplace=args.inplace,
                                           progress=progress_bar)
    for line in report.warnings + ingest.problem_lines(report) + ingest.stale_grader_warnings(report):
        sys.stderr.write(f"evaluate.py: warning: {line}\n")
    lines = ingest.summary_lines(report)
    for line in lines if not args.quiet else lines[-1:]:
        print(line)
    if args.interview and report.written:
        print(next_command(args.db or INTERVIEW_DB))
    return 0


def progress_bar(**kwargs: Any) -> Bar:
    """evaluate.py's progress bar on stderr (the pipeline says what it counts)."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, dynamic_ncols=True, **kwargs)


def next_command(db_path: str) -> str:
    """What to run on a fresh interview database (a PointsDB file stands for a dataset)."""
    import shlex

    return f"next: python analyze.py scores {shlex.quote(str(db_path))}"

