"""analyze.py cluster, rank and aggregate: the series / facet / split family (docs/analyze.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared

if TYPE_CHECKING:
    import argparse

    from matplotlib.figure import Figure

    from resolver.cli.base import ArgParser

__all__ = ["register_aggregate", "register_cluster", "register_rank", "run_aggregate", "run_cluster", "run_rank"]


def _add_series_facet_split(p: argparse.ArgumentParser, group_default: str, facet_default: str | None,
                            split_default: str | None = None, split: bool = True) -> None:
    flags.add_filters_arg(p)
    flags.add_dimension_arg(p, "--group-by", group_default, "series dimension: the things compared", allow_none=False)
    flags.add_dimension_arg(p, "--facet-by", facet_default, "facet dimension: sections within each output")
    if split:
        flags.add_dimension_arg(p, "--split-by", split_default, "split dimension: one output file per value")
    flags.add_mode_arg(p)


def register_cluster(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("cluster", help="clusters of statistically indistinguishable models (CI overlap cliques)")
    flags.add_dataset_arg(p)
    _add_series_facet_split(p, "eval_id", "base_task")
    flags.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    flags.add_width_arg(p, 1200)
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_cluster)


def run_cluster(args: argparse.Namespace) -> int:
    from resolver.analysis import cluster
    from resolver.analysis.cluster import compute_clusters
    from resolver.analysis.outputs import ClusterOutput, output_json

    series, facet, split = shared.dims(args)
    agg, labels = shared.aggregate(args, common.unique_dims(split, facet, series))
    for value, part in common.split_frames(agg, split):
        sections = compute_clusters(part, series, facet, args.mode)
        title = cluster.cluster_title(series, facet, split, value, args.mode)
        name_parts = ("cluster", series, "by", facet or "all", f"{split}-{value}" if split else None)
        if args.format == "png":
            from resolver.plots import cluster_figure

            content: Figure | str = cluster_figure(sections, cluster.namer(series, labels), title, args.width, facet)
        elif args.format == "json":
            content = output_json(ClusterOutput, cluster.cluster_json(sections, series, facet, split, value, args.mode,
                                                                      labels))
        else:
            content = cluster.cluster_markdown(sections, series, facet, title, labels)
        ext = {"markdown": "md", "json": "json", "png": "png"}[args.format]
        output.write_output(output.output_name(*name_parts, ext=ext), content, output.split_dir(args, split))
    return 0


def register_rank(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("rank", help="rank aggregation across facets from per-facet cluster positions")
    flags.add_dataset_arg(p)
    _add_series_facet_split(p, "eval_id", "base_task", split=False)
    flags.add_format_arg(p, ("markdown", "json"), "markdown")
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_rank)


def run_rank(args: argparse.Namespace) -> int:
    from resolver.analysis import rank
    from resolver.analysis.rank import compute_rank

    series, facet, _ = shared.dims(args)
    agg, labels = shared.aggregate(args, common.unique_dims(facet, series))
    result = compute_rank(agg, series, facet, args.mode)
    if args.format == "json":
        from resolver.analysis.outputs import RankOutput, output_json

        content = output_json(RankOutput, rank.rank_json(result, series, facet, args.mode, labels))
    else:
        content = rank.rank_markdown(result, series, facet, args.mode, labels)
    ext = "json" if args.format == "json" else "md"
    output.write_output(output.output_name("rank", series, "by", facet or "all", ext=ext), content, args.output_dir)
    return 0


def register_aggregate(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("aggregate", help="raw aggregated statistics (debugging, custom analysis)")
    flags.add_dataset_arg(p)
    _add_series_facet_split(p, "eval_id", "base_task")
    p.add_argument("--compare-modes", action="store_true", help="show all six estimators side by side")
    p.add_argument("--raw-counters", action="store_true", help="add n_u, n_t, n_e and g columns")
    p.add_argument("--tokens", action="store_true", help="add token average columns")
    flags.add_format_arg(p, ("markdown", "json"), "markdown")
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_aggregate)


def run_aggregate(args: argparse.Namespace) -> int:
    from resolver.analysis.aggregate import compute_aggregate
    from resolver.analysis.outputs import AggregateOutput, output_json

    series, facet, split = shared.dims(args)
    dims = common.unique_dims(split, facet, series)
    agg, labels = shared.aggregate(args, dims)
    table = compute_aggregate(agg, dims, args.mode, args.compare_modes, args.raw_counters, args.tokens)
    if series == "eval_id":
        table.insert(dims.index(series) + 1, "label", [labels.get(e, e) for e in table["eval_id"]])
    for value, part in common.split_frames(table, split):
        title = f"Aggregate of {series}" + (f" by {facet}" if facet else "") + (f" — {split} = {value}" if split else "") \
            + f" (mode {args.mode})"
        if args.format == "json":
            content = output_json(AggregateOutput, part.to_dict("records"))
        else:
            content = common.sectioned_markdown(part.drop(columns=[split] if split else []), facet, title)
        ext = "json" if args.format == "json" else "md"
        name = output.output_name("aggregate", series, "by", facet or "all", f"{split}-{value}" if split else None, ext=ext)
        output.write_output(name, content, output.split_dir(args, split))
    return 0
