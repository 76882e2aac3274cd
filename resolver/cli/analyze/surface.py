"""analyze.py surface: 3-D accuracy surfaces of the config's 2-dimensional views."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_surface", "run_surface"]


def register_surface(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("surface", help="3-D accuracy surfaces of every 2-dimensional view (rows = views, cols = evals)")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    p.add_argument("--view", action="append", metavar="VIEW",
                   help="view to draw (name or task/name; repeatable; default all 2-dimensional views)")
    flags.add_dimension_arg(p, "--split-by", "base_task", "one output file per value")
    flags.add_format_arg(p, ("png", "json"), "png")
    p.add_argument("--cell-size", type=flags.positive_int, default=420, help="pixels per grid cell (default 420)")
    flags.add_mode_arg(p)
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_surface)


def run_surface(args: argparse.Namespace) -> int:
    from resolver.analysis import COUNTERS, config_views, select_views, surface_table, view_columns
    from resolver.plots import surface_figure

    split_by = common.parse_dimension(args.split_by)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    common.require_config(dataset, "analyze.py surface")
    views = select_views(config_views(dataset.config_path, dims=2), args.view)
    if not views:
        raise UserError(f"config {dataset.config_path} has no 2-dimensional views (views with two group_by dimensions)")
    with db:
        columns = ["id", "eval_id", "base_task", *COUNTERS, *view_columns(views), *([split_by] if split_by else [])]
        points = common.require_rows(db.points(filters, columns=list(dict.fromkeys(columns))), "points", args.filters)
        labels = common.eval_labels(db.evals())
    results = {}
    for key, rows in shared.split_values(points, [split_by] if split_by else []):
        panels = [(v, surface_table(rows, v, args.mode)) for v in views]
        panels = [(v, t) for v, t in panels if len(t)]
        if not panels:
            continue
        evals = sorted(rows["eval_id"].unique().tolist())
        results[key] = panels
        if args.format == "png":
            fig = surface_figure(panels, evals, labels, f"Accuracy surfaces — {shared.split_title([split_by], key)}"
                                 if split_by else "Accuracy surfaces", cell=args.cell_size)
            output.write_output(output.output_name("surface", *key, ext="png"), fig, args.output_dir)
    if not results:
        raise UserError("no points fall in the selected views; check --view and --filters")
    if args.format == "json":
        data = {"/".join(map(str, k)) or "all": {v.ident: t.to_dict(orient="records") for v, t in panels}
                for k, panels in results.items()}
        from resolver.analysis.outputs import SurfaceOutput, output_json

        output.write_output("surface.json", output_json(SurfaceOutput, data), args.output_dir)
    return 0
