"""analyze.py hazard: when during generation answers end, correct against incorrect."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_hazard", "run_hazard"]


def register_hazard(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("hazard", help="survival analysis: when during generation answers end (correct vs incorrect)")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    p.add_argument("--split-by", action="append", metavar="DIM",
                   help="dimension for separate files (repeatable; default base_task and eval_id; 'none' for one file)")
    flags.add_dimension_arg(p, "--group-by", None, "series within each file")
    p.add_argument("--bucket-size", type=flags.positive_int, default=256,
                   help="token bucket size for the time grid (default 256)")
    flags.add_format_arg(p, ("png", "markdown", "json"), "png")
    flags.add_width_arg(p, 1200)
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_hazard)


def run_hazard(args: argparse.Namespace) -> int:
    from resolver.analysis import HazardOutput, hazard_by, median_end_tokens, output_json
    from resolver.plots import hazard_figure

    raw_splits = args.split_by or ["base_task", "eval_id"]
    split_by = [d for d in (common.parse_dimension(s) for s in raw_splits) if d]
    group_by = common.parse_dimension(args.group_by)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        columns = list(dict.fromkeys(["id", "eval_id", "completion_tokens", "outcome", *split_by,
                                      *([group_by] if group_by else [])]))
        points = common.require_rows(db.points(filters, columns=columns), "points", args.filters)
        labels = common.eval_labels(db.evals())
    points = common.label_missing(points, [*split_by, *([group_by] if group_by else [])])
    results = hazard_by(points, split_by, args.bucket_size, group_by)
    if args.format != "png":
        records = [{**dict(zip(split_by, key)), "series": name, "median_end_tokens": median_end_tokens(table),
                    "buckets": table.to_dict(orient="records")}
                   for key, series in results.items() for name, table in series.items()]
        if args.format == "json":
            text = output_json(HazardOutput, records)
        else:
            text = "\n\n".join(f"### {shared.split_title(split_by, key)} — {name}\n\n" + common.frame_to_markdown(table)
                               for key, series in results.items() for name, table in series.items())
        output.write_output(f"hazard.{'json' if args.format == 'json' else 'md'}", text,
                            args.output_dir)
        return 0
    for key, series in results.items():
        shown = [f"{d}={labels.get(v, v) if d == 'eval_id' else v}" for d, v in zip(split_by, key)]
        title = "When answers end — " + (", ".join(shown) or "all points")
        names = labels if group_by == "eval_id" else {}
        fig = hazard_figure(series, title, args.bucket_size, width=args.width, names=names)
        output.write_output(output.output_name("hazard", *key, ext="png"), fig, args.output_dir)
    return 0
