"""probe.py truncation: loop detection on every truncated sample of chosen points."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output
from resolver.cli.probe import options

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_truncation", "run_truncation"]


def register_truncation(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("truncation", help="loop detection on every truncated sample of a point")
    flags.add_dataset_arg(p)
    options.add_point_ids(p)
    options.add_tokenizer(p, "default: a word/punctuation approximation")
    flags.add_format_arg(p, ("markdown", "json"), "markdown")
    p.set_defaults(handler=run_truncation)


def run_truncation(args: argparse.Namespace) -> int:
    from resolver.analysis import output_json
    from resolver.probe import TruncationOutput, load_tokenizer, truncation_markdown, truncation_output, truncation_report

    tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None
    _, db = common.open_dataset(args.dataset)
    with db:
        points, samples, distribution = truncation_report(db, args.point_id, tokenizer)
        labels = common.eval_labels(db.evals())
    if args.format == "json":
        output.write_output("truncation.json",
                            output_json(TruncationOutput, truncation_output(points, samples, distribution)), None)
    else:
        output.write_output("truncation.md", truncation_markdown(points, samples, distribution, labels), None)
    return 0
