"""analyze.py pairwise: head-to-head win probabilities and Bradley-Terry strengths."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_pairwise", "run_pairwise"]


def register_pairwise(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("pairwise", help="head-to-head win probabilities and Bradley-Terry strengths")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    flags.add_dimension_arg(p, "--group-by", "base_task", "comparison dimension (one contest per value)")
    flags.add_mode_arg(p, ("C_P", "C_I"), "C_P")
    p.add_argument("--sort", choices=["expected-wins", "bradley-terry"], default="expected-wins")
    flags.add_format_arg(p, ("markdown", "png"), "markdown")
    flags.add_width_arg(p, 1200)
    p.add_argument("--output", help="output file path (default: stdout for markdown, ./pairwise.png for png)")
    p.set_defaults(handler=run_pairwise, output_dir=None)


def run_pairwise(args: argparse.Namespace) -> int:
    from resolver.analysis import pairwise
    from resolver.analysis.pairwise import compute_pairwise

    group = common.parse_dimension(args.group_by)
    agg, labels = shared.aggregate(args, common.unique_dims(group, "eval_id"))
    result = compute_pairwise(agg, "eval_id", group, args.mode, args.sort)
    if len(result["names"]) < 2:
        raise UserError("pairwise needs at least two evals in the selection")
    if args.format == "png":
        from resolver.analysis import marked
        from resolver.plots import pairwise_figure

        shown = [marked(labels.get(n, n), k) for n, k in zip(result["names"], result["skill_evidence"])]
        content = pairwise_figure(result, shown, args.width, group)
        output.write_to("pairwise.png", content, args)   # the default its --help names: ./pairwise.png
    else:
        output.write_to("pairwise.md", pairwise.pairwise_markdown(result, labels, group), args)
    return 0
