"""analyze.py spiderweb: one radar or bar chart of accuracy by group per eval."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_spiderweb", "run_spiderweb"]


def register_spiderweb(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("spiderweb", help="radar or bar chart of each eval's accuracy by group (one PNG per eval)",
                              description="Per-eval radar (webpng) or bar (barpng) chart of accuracy with its 95%% "
                                          "interval, mean completion tokens overlaid and truncation marked.")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    flags.add_dimension_arg(p, "--group-by", "base_task", "slice dimension (spokes / bars)")
    flags.add_format_arg(p, ("webpng", "barpng", "json"), "webpng")
    flags.add_width_arg(p, 1000)
    p.add_argument("--height", type=flags.positive_int, default=700, help="PNG height in pixels (default 700)")
    flags.add_mode_arg(p)
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_spiderweb)


def run_spiderweb(args: argparse.Namespace) -> int:
    from resolver.analysis import spiderweb_table
    from resolver.plots import bar_figure, radar_figure

    group_by = common.parse_dimension(args.group_by, allow_none=False)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        table = common.require_rows(spiderweb_table(db, filters, group_by, args.mode), "points", args.filters)
    if args.format == "json":
        from resolver.analysis.outputs import SpiderwebOutput, output_json

        output.write_output("spiderweb.json", output_json(SpiderwebOutput, table.to_dict(orient="records")),
                            args.output_dir)
        return 0
    draw = radar_figure if args.format == "webpng" else bar_figure
    max_tokens = float(table["tokens_mean"].max() or 0)
    for eval_id, rows in table.groupby("eval_id", sort=True):
        fig = draw(rows.reset_index(drop=True), group_by, args.mode, args.width, args.height, max_tokens)
        name = output.output_name("spiderweb", rows.iloc[0]["label"], eval_id, "bars" if args.format == "barpng" else "",
                                  ext="png")
        output.write_output(name, fig, args.output_dir)
    return 0
