"""analyze.py capacity: the accuracy-vs-size frontier, or peak capacity against the token budget."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_capacity", "run_capacity"]


def register_capacity(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("capacity", help="effective capacity: accuracy-vs-size frontier, or peak vs token budget")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--frontier", nargs="?", const="eval_id", metavar="GROUP_BY",
                       help="accuracy vs size with a logistic fit, one series per eval (and GROUP_BY value)")
    which.add_argument("--peak", nargs="?", const="eval_id", metavar="GROUP_BY",
                       help="effective capacity vs manifold.target_tokens, one series per eval (and GROUP_BY value)")
    flags.add_dimension_arg(p, "--facet-by", None, "subplot columns")
    p.add_argument("--size-param", default="params.num_rows",
                   help="the numeric size dimension (default params.num_rows)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="--peak: accuracy a size must keep to count toward capacity (default 0.5)")
    flags.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    flags.add_width_arg(p, 1200)
    flags.add_mode_arg(p)
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_capacity)


def run_capacity(args: argparse.Namespace) -> int:
    from resolver.analysis import CapacityOutput, capacity, output_json
    from resolver.plots import frontier_figure, peak_figure

    if not 0 < args.threshold < 1:
        raise UserError(f"--threshold must be between 0 and 1, got {args.threshold}")
    group_by = common.parse_dimension(args.frontier or args.peak)
    facet_by = common.parse_dimension(args.facet_by)
    size_param = common.parse_dimension(args.size_param, allow_none=False)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        labels = common.eval_labels(db.evals())
        if args.frontier:
            table, summary = capacity.frontier(db, filters, size_param, group_by, facet_by, args.mode)
        else:
            table, summary = capacity.peak(db, filters, size_param, group_by, facet_by, args.mode, args.threshold)
    keys = list(dict.fromkeys(d for d in ("eval_id", facet_by, group_by) if d))
    kind = "frontier" if args.frontier else "peak"
    out_dir = args.output_dir
    if args.format == "png":
        fig = frontier_figure(table, summary, size_param, keys, facet_by, labels, args.mode, width=args.width) \
            if args.frontier else peak_figure(table, summary, keys, facet_by, labels, args.threshold, width=args.width)
        output.write_output(output.output_name("capacity", kind, ext="png"), fig, args.output_dir)
    elif args.format == "json":
        data = CapacityOutput(summary=summary.to_dict(orient="records"), table=table.to_dict(orient="records"))
        output.write_output(output.output_name("capacity", kind, ext="json"), output_json(CapacityOutput, data),
                            out_dir)
    else:
        summary.insert(1, "label", [labels.get(e, e) for e in summary["eval_id"]])
        text = f"## Capacity {kind} ({size_param})\n\n" + common.frame_to_markdown(summary)
        output.write_output(output.output_name("capacity", kind, ext="md"), text, out_dir)
    return 0
