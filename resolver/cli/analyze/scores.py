"""analyze.py scores: the ReasonScore ranking as markdown, JSON or PNG heat bars."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output

if TYPE_CHECKING:
    import argparse

    from matplotlib.figure import Figure

    from resolver.cli.base import ArgParser

__all__ = ["register_scores", "run_scores"]


def register_scores(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("scores", help="ReasonScore ranking (markdown table, JSON or PNG heat bars)")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    flags.add_dimension_arg(p, "--group-by", "base_task", "aggregation dimension for the ReasonScore cells",
                             allow_none=False)
    p.add_argument("--sort", choices=["score", "ratio"], default="score", help="score (ReasonScore) or ratio (score/token)")
    p.add_argument("--top", type=flags.positive_int, help="limit to the top N by rank")
    flags.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    flags.add_width_arg(p, 1400)
    flags.add_output_dir_arg(p)
    p.add_argument("--output", help="output file path (instead of --output-dir)")
    p.add_argument("--show-token-counts", action="store_true", help="add a table of mean completion tokens per cell")
    p.set_defaults(handler=run_scores)


def run_scores(args: argparse.Namespace) -> int:
    from resolver.analysis.scores import compute_scores, scores_markdown

    group = common.parse_dimension(args.group_by, allow_none=False)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    with db:
        results = compute_scores(db, filters, group, args.sort, args.top)
        if not results:
            common.select_or_explain(None, db, filters, args.filters, args.dataset)
    title = f"ReasonScore — {dataset.name}" + ("" if group == "base_task" else f" by {group}")
    if args.format == "png":
        from resolver.plots import scores_figure

        content: Figure | str = scores_figure(results, args.width, title)
    elif args.format == "json":
        from resolver.analysis.outputs import ScoresOutput, output_json

        content = output_json(ScoresOutput, results)
    else:
        content = scores_markdown(results, title, args.show_token_counts)
    ext = {"markdown": "md", "json": "json", "png": "png"}[args.format]
    name = output.output_name("scores", None if group == "base_task" else f"by_{group}", ext=ext)
    output.write_to(name, content, args)
    return 0
