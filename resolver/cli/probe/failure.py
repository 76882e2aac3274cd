"""probe.py failure: the failed samples of chosen points and failures by genresult field."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output
from resolver.cli.probe import options

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_failure", "run_failure"]


def register_failure(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("failure", help="failed samples of points (raw answers) and failures by genresult field")
    flags.add_dataset_arg(p)
    options.add_point_ids(p)
    p.add_argument("--limit", type=flags.positive_int, default=None, help="show only the first N failures (default all)")
    p.add_argument("--full", action="store_true", help="show whole answers (default: head and tail of long ones)")
    flags.add_format_arg(p, ("markdown", "json"), "markdown")
    p.set_defaults(handler=run_failure)


def run_failure(args: argparse.Namespace) -> int:
    from resolver.analysis import output_json
    from resolver.probe import FailureOutput, failure_markdown, failure_report

    _, db = common.open_dataset(args.dataset)
    with db:
        report = failure_report(db, args.point_id, args.limit)
        labels = common.eval_labels(db.evals())
    if args.format == "json":
        output.write_output("failure.json", output_json(FailureOutput, report.output()), None)
    else:
        output.write_output("failure.md", failure_markdown(report, labels, args.full), None)
    return 0
