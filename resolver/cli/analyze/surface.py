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
    from resolver.analysis import COUNTERS, surface_table
    from resolver.plots import surface_figure

    _, views, split_by, points, eval_table, _ = shared.view_points(args, "analyze.py surface", 2,
                                                                  ["id", "eval_id", "base_task", *COUNTERS])
    labels = common.eval_labels(eval_table)
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
