"""analyze.py compression: gzip size against answer length (loops compress, reasoning does not)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_compression", "run_compression"]


def register_compression(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("compression", help="gzip size vs answer length: loops compress, reasoning does not")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    flags.add_dimension_arg(p, "--split-by", "base_task", "one output file per value")
    flags.add_dimension_arg(p, "--facet-by", "eval_id", "subplot rows within each file")
    flags.add_dimension_arg(p, "--group-by", "manifold.id", "coloured series within each panel")
    flags.add_format_arg(p, ("png", "markdown", "json"), "png")
    flags.add_width_arg(p, 1400)
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_compression)


def _sample_columns(*dims: str | None) -> list:
    base = ["id", "eval_id", "completion_tokens", "outcome", "answer_bytes", "compressed_bytes"]
    return list(dict.fromkeys([*base, *[d for d in dims if d]]))


def run_compression(args: argparse.Namespace) -> int:
    from resolver.analysis import CompressionOutput, compression_samples, compression_summary, output_json
    from resolver.plots import compression_figure

    split_by, facet_by, group_by = (common.parse_dimension(d) for d in (args.split_by, args.facet_by, args.group_by))
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        points = common.require_rows(db.points(filters, columns=_sample_columns(split_by, facet_by, group_by)),
                                     "points", args.filters)
        labels = common.eval_labels(db.evals())
    points = common.label_missing(points, [d for d in (split_by, facet_by, group_by) if d])
    samples = compression_samples(points, [split_by, facet_by, group_by, "eval_id"])
    if facet_by == "eval_id":
        samples["eval_id"] = [f"{labels.get(e, e)} ({e})" for e in samples["eval_id"]]
    if args.format != "png":
        summary = compression_summary(samples, [split_by, facet_by, group_by])
        text = output_json(CompressionOutput, summary.to_dict(orient="records")) if args.format == "json" \
            else common.frame_to_markdown(summary)
        output.write_output(f"compression.{'json' if args.format == 'json' else 'md'}", text,
                            args.output_dir)
        return 0
    for key, rows in shared.split_values(samples, [split_by] if split_by else []):
        title = f"Answer compression — {shared.split_title([split_by], key)}" if split_by else "Answer compression"
        fig = compression_figure(rows, facet_by, group_by, title, width=args.width)
        output.write_output(output.output_name("compression", *key, ext="png"), fig, args.output_dir)
    return 0
