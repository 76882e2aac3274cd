"""analyze.py evals, tasks, tokens and points: what a dataset holds (docs/analyze.md).

Each subcommand is ``register_<name>(subparsers)`` plus ``run_<name>(args)``, which opens the
dataset, calls the computation in resolver.analysis, renders it and writes it out.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared
from resolver.core import UserError
from resolver.pointsdb import COUNTER_COLUMNS

if TYPE_CHECKING:
    import argparse

    from resolver.catalog import Dataset
    from resolver.cli.base import ArgParser
    from resolver.config import ExperimentConfig

__all__ = [
    "load_config_or_none",
    "register_evals",
    "register_points",
    "register_tasks",
    "register_tokens",
    "run_evals",
    "run_points",
    "run_tasks",
    "run_tokens",
]


def register_evals(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("evals", help="list the evaluations of a dataset (run this first for eval_ids)",
                              description="List evals: eval_id, label, model, template, sampler, groups, hf_id, point counts.")
    flags.add_dataset_arg(p)
    p.add_argument("--search", help="regex on model name or label (case-insensitive)")
    p.add_argument("--facets", help="comma-separated key:value group tags, all required (e.g. size:small,arch:moe)")
    p.add_argument("--groups", help="same as --facets (older spelling)")
    flags.add_format_arg(p, ("table", "markdown", "json"), "table")
    p.set_defaults(handler=run_evals)


def run_evals(args: argparse.Namespace) -> int:
    from resolver.analysis import inventory
    from resolver.analysis.inventory import list_evals, parse_tag_list

    tags = parse_tag_list(args.facets) + parse_tag_list(args.groups)
    dataset, db = common.open_dataset(args.dataset)
    with db:
        counts = db.aggregate(None, by=("eval_id",))
        counts["samples"] = counts[list(COUNTER_COLUMNS)].sum(axis=1)
        rows = list_evals(db.evals(), counts, dataset.evals, args.search, tags)
    if not rows:   # a search that finds nothing is an answer, not a mistake: empty table, exit 0
        sys.stderr.write("analyze.py: no evals match --search/--facets; run `analyze.py evals "
                         f"{args.dataset}` without them to see all\n")
    output.write_output("evals", inventory.evals_text(rows, args.format), None)
    return 0


def register_tasks(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("tasks", help="list base tasks with their views and point counts")
    flags.add_dataset_arg(p)
    p.add_argument("--search", help="regex on task name (case-insensitive)")
    flags.add_format_arg(p, ("markdown", "json"), "markdown")
    p.set_defaults(handler=run_tasks)


def run_tasks(args: argparse.Namespace) -> int:
    from resolver.analysis import inventory
    from resolver.analysis.inventory import list_tasks
    from resolver.analysis.outputs import TasksOutput, output_json

    dataset, db = common.open_dataset(args.dataset)
    with db:
        counts = db.query("SELECT base_task, count(*) AS points, count(DISTINCT eval_id) AS evals "
                          "FROM points GROUP BY base_task ORDER BY base_task")
    config = load_config_or_none(dataset)
    rows = list_tasks(counts, config, args.search)
    if not rows:
        raise UserError(f"no tasks match --search {args.search!r}" if args.search else "the dataset has no tasks")
    text = output_json(TasksOutput, rows) if args.format == "json" else \
        inventory.tasks_markdown(rows, config.description if config is not None else "")
    output.write_output("tasks", text, None)
    return 0


def load_config_or_none(dataset: Dataset) -> ExperimentConfig | None:
    """The dataset's experiment config (for views), or None when it names none."""
    if not getattr(dataset, "config_path", None):
        return None
    from resolver.config import load_config

    assert dataset.config_path is not None  # the getattr above found it set
    return load_config(dataset.config_path)


def register_tokens(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("tokens", help="token utilisation per (eval, group)")
    flags.add_dataset_arg(p)
    flags.add_dimension_arg(p, "--group-by", "base_task", "grouping dimension")
    flags.add_filters_arg(p)
    flags.add_format_arg(p, ("markdown", "json"), "markdown")
    flags.add_output_dir_arg(p)
    p.set_defaults(handler=run_tokens)


def run_tokens(args: argparse.Namespace) -> int:
    from resolver.analysis.outputs import TokensOutput, output_json
    from resolver.analysis.token_usage import compute_tokens

    group = common.parse_dimension(args.group_by)
    agg, labels = shared.aggregate(args, common.unique_dims("eval_id", group))
    table = compute_tokens(agg, common.unique_dims("eval_id", group))
    table.insert(1, "label", [labels.get(e, e) for e in table["eval_id"]])
    text = output_json(TokensOutput, table.to_dict("records")) if args.format == "json" else \
        f"# Token utilisation by {group or 'eval'}\n\n" + common.frame_to_markdown(table, floats=1)
    ext = "json" if args.format == "json" else "md"
    output.write_output(output.output_name("tokens", "by", group or "eval", ext=ext), text, args.output_dir)
    return 0


def register_points(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("points", help="per-point listing with point ids for probe.py")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    flags.add_dimension_arg(p, "--split-by", "base_task", "dimension for separate output files")
    p.add_argument("--sort", action="append", default=[], metavar="PARAM",
                   help="sort by a param (name without p. prefix); repeatable, first is primary")
    flags.add_format_arg(p, ("md", "json"), "md")
    flags.add_output_dir_arg(p, default=".")
    p.set_defaults(handler=run_points)


def run_points(args: argparse.Namespace) -> int:
    from resolver.analysis import points
    from resolver.analysis.outputs import PointsOutput, output_json
    from resolver.analysis.points import POINT_FIELDS, compute_points

    split = common.parse_dimension(args.split_by)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        columns = POINT_FIELDS + ([split] if split and split not in POINT_FIELDS else [])
        frame = db.points(filters, columns=columns)
        frame = common.select_or_explain(frame, db, filters, args.filters, args.dataset)
    for value, table in compute_points(frame, split, args.sort):
        ext = "json" if args.format == "json" else "md"
        name = output.output_name("points", f"{split}-{value}" if split else None, ext=ext)
        text = output_json(PointsOutput, table.to_dict("records")) if ext == "json" else \
            points.points_markdown(table, split, value)
        output.write_output(name, text, args.output_dir)
    return 0
