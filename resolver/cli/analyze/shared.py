"""What several analyze.py and probe.py handlers do alike: aggregate a selection, read the
series / facet / split dimensions, and split a frame by the values of some dimensions.
(A dataset opens by resolver.analysis.open_dataset alone; run_main words a missing PointsDB.)"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, Sequence

from resolver.analysis import common
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    import pandas as pd

    from resolver.analysis import TaskView
    from resolver.catalog import Dataset

__all__ = ["ViewPoints", "aggregate", "dims", "split_title", "split_values", "view_points"]

_DIMENSIONS = {1: "one group_by dimension", 2: "two group_by dimensions"}


class ViewPoints(NamedTuple):
    """The points of a config's views that a command draws (view_points)."""

    dataset: Dataset
    views: list[TaskView]
    split_by: str | None
    points: pd.DataFrame
    evals: pd.DataFrame
    db_dir: Path


def view_points(args: argparse.Namespace, command: str, dims: int, columns: Sequence[str]) -> ViewPoints:
    """The dataset's `dims`-dimensional views chosen by --view, and the points of --filters with `columns`,
    the views' own and the --split-by one (analyze.py surface, probe.py fft)."""
    from resolver.analysis import config_views, select_views, view_columns

    split_by = common.parse_dimension(args.split_by)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    common.require_config(dataset, command)
    views = select_views(config_views(dataset.config_path, dims=dims), args.view)
    if not views:
        raise UserError(f"config {dataset.config_path} has no {dims}-dimensional views "
                        f"(views with {_DIMENSIONS[dims]})")
    with db:
        wanted = [*columns, *view_columns(views), *([split_by] if split_by else [])]
        points = common.require_rows(db.points(filters, columns=list(dict.fromkeys(wanted))), "points", args.filters)
        return ViewPoints(dataset, views, split_by, points, db.evals(), db.path.parent)


def aggregate(args: argparse.Namespace, dims: Sequence[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Aggregated counters per dims for args.filters -> (agg, {eval_id: label})."""
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        agg = common.select_or_explain(db.aggregate(filters, by=dims), db, filters, args.filters, args.dataset)
        labels = common.eval_labels(db.evals())
    return common.label_missing(agg, dims), labels


def dims(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    """(series, facet, split) from --group-by / --facet-by / --split-by."""
    series = common.parse_dimension(args.group_by, allow_none=False)
    facet = common.parse_dimension(args.facet_by)
    split = common.parse_dimension(getattr(args, "split_by", None))
    if series in (facet, split):
        # Legal (README.md itself splits cluster output by eval_id) but each section then
        # holds a single series; say so rather than leave the user puzzled.
        sys.stderr.write(f"note: --group-by {series} is also a facet/split dimension; each section holds one {series}\n")
    return series, facet, split


def split_values(frame: pd.DataFrame, dims: Sequence[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """(key tuple, rows) per distinct value combination of `dims`; one group when dims is empty."""
    if not dims:
        return [((), frame)]
    out = []
    for key, rows in frame.groupby(list(dims), sort=True):
        out.append((key if isinstance(key, tuple) else (key,), rows))
    return out


def split_title(dims: Iterable[str | None], key: Iterable[object]) -> str:
    return ", ".join(f"{d}={v}" for d, v in zip(dims, key)) or "all points"
