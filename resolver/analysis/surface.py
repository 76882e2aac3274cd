"""Accuracy surfaces over the 2-dimensional views of a config.

A view (config ``views:``) is a named query recipe: ``group_by`` dimensions, optional
``filters``. Views with two group_by dimensions are surfaces: accuracy over a grid of
(x, y) coordinates. Views with one are projections (used by probe.py fft).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Collection

import pandas as pd

from resolver.config import load_config
from resolver.core import UserError, choices_text
from resolver.stats import add_statistics

if TYPE_CHECKING:
    from pathlib import Path

COUNTERS = ["correct", "incorrect", "invalid", "truncated", "guess_sum", "guess_sum_all", "completion_tokens_sum"]


@dataclass(frozen=True)
class TaskView:
    """One view of one task: ``base_task``, ``view`` name, ``dims`` (group_by), ``filters``,
    and ``facet_by`` (dimensions that split the view into one panel per value)."""

    base_task: str
    view: str
    dims: tuple
    filters: dict = field(default_factory=dict)
    facet_by: tuple = ()

    @property
    def ident(self) -> str:
        return f"{self.base_task}/{self.view}"


def config_views(config_path: str | Path | None, dims: int | None = None) -> list[TaskView]:
    """Every view of every task in the experiment config, optionally only those of `dims` dimensions."""
    if config_path is None:
        raise UserError("the dataset names no config, so it has no views; add \"config\" to the dataset file")

    config = load_config(config_path)
    views = []
    for task in config.tasks:
        for view in task.views:
            if dims is None or len(view.group_by) == dims:
                views.append(TaskView(task.name, view.view, tuple(view.group_by), dict(view.filters or {}),
                                      tuple(view.facet_by or ())))
    return views


def select_views(views: list[TaskView], wanted: Collection[str] | None) -> list[TaskView]:
    """Keep the views named in `wanted` (view name or task/view); all when empty."""
    if not wanted:
        return views
    known = {v.view for v in views} | {v.ident for v in views}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise UserError(f"unknown view {unknown[0]!r}; valid: {choices_text(known)}")
    return [v for v in views if v.view in wanted or v.ident in wanted]


def view_points(points: pd.DataFrame, view: TaskView) -> pd.DataFrame:
    """The points of a frame that belong to a view: its task and its filters."""
    mask = points["base_task"] == view.base_task
    for key, value in view.filters.items():
        if key not in points.columns:
            raise UserError(f"view {view.ident} filters on {key}, which the points lack")
        allowed = value if isinstance(value, list) else [value]
        mask &= points[key].astype(str).isin([str(a) for a in allowed])
    return points[mask]


def view_columns(views: list[TaskView]) -> list[str]:
    """The dotted dimensions any of the views needs (to fetch them in one query)."""
    names: list[str] = []
    for view in views:
        names.extend(view.dims)
        names.extend(view.filters)
        names.extend(view.facet_by)
    return list(dict.fromkeys(names))


def surface_table(points: pd.DataFrame, view: TaskView, mode: str = "C_P") -> pd.DataFrame:
    """Accuracy per (eval_id, x, y) of a 2-D view: summed counters + statistics."""
    x, y = view.dims
    part = view_points(points, view)
    if part.empty:
        return pd.DataFrame(columns=["eval_id", x, y, "center", "margin"])
    agg = part.groupby(["eval_id", x, y], sort=True)[COUNTERS].sum().reset_index()
    agg["points"] = part.groupby(["eval_id", x, y], sort=True).size().to_numpy()
    return add_statistics(agg, mode)
