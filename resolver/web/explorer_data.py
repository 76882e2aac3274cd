"""The explorer's data: points of every view, surfaces, projections, token samples, point details.

Counters and view coordinates of all points are loaded once at start-up; surfaces and
projections are summed from them in memory (resolver.analysis.surface does the sums and
resolver.stats the intervals). Per-sample token arrays, point details and failure samples
are read from the database on demand, one small query each, through a lock.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pandas as pd

from resolver.analysis import COUNTERS, TaskView, config_views, eval_labels, surface_table, view_columns, view_points
from resolver.core import UserError
from resolver.probe import fft_table, fft_tokenizers
from resolver.stats import add_statistics
from resolver.web.data import LockedDB, ranked_eval_ids
from resolver.web.samples import point_samples

if TYPE_CHECKING:
    from collections.abc import Iterable

    from resolver.catalog import Dataset
    from resolver.pointsdb import PointsDB

MODE = "C_P"                # the default mode (analyze.py surface's); the app lets the user switch
ALL_MANIFOLDS = "*"         # the manifold choice meaning "every manifold entry of the task"
MANIFOLD_ID, DEGREE = "manifold.id", "manifold.degree"


class Landscape:
    def __init__(self, dataset: Dataset, db: PointsDB, tokenizer: Any = None, tokenizers: dict | None = None):
        views = _task_views(dataset, db)
        evals = db.evals()
        self.labels = eval_labels(evals)
        columns = ["id", "eval_id", "base_task", *COUNTERS, "prompt_tokens", MANIFOLD_ID, DEGREE,
                   *view_columns(views)]
        self.points = db.points(None, columns=list(dict.fromkeys(columns)))
        self._by_task = {task: frame for task, frame in self.points.groupby("base_task", sort=False)}
        # Only tasks (and views) with points are offered: a task nobody ran has nothing to draw.
        self.views = [v for v in views if v.base_task in self._by_task]
        self.tasks = list(dict.fromkeys(v.base_task for v in self.views))
        present = set(self.points["eval_id"])
        self.eval_ids = sorted((e for e in evals["eval_id"] if e in present), key=lambda e: self.labels[e].lower())
        self.ranked = ranked_eval_ids(db, self.eval_ids)
        self.db = LockedDB(db)
        # --tokenizer for every eval, else each eval's own (its hf_id, found in the local cache), else
        # bytes: the rule of probe.py fft (resolver.probe.fft_tokenizers) for any eval not handed in
        self.tokenizers = {e: tokenizer for e in self.eval_ids} if tokenizer else dict(tokenizers or {})
        missing = evals[evals["eval_id"].isin(set(self.eval_ids) - set(self.tokenizers))]
        if len(missing):
            self.tokenizers.update(fft_tokenizers(missing, None))

    def task_views(self, task: str) -> list[TaskView]:
        return [v for v in self.views if v.base_task == task]

    def view(self, ident: str) -> TaskView:
        for v in self.views:
            if v.ident == ident:
                return v
        raise UserError(f"unknown view {ident!r}")

    def has_view(self, ident: str | None) -> TypeGuard[str]:
        return any(v.ident == ident for v in self.views)

    def top_evals(self, count: int) -> list:
        """The best `count` evals by overall ReasonScore (analyze.py scores' ranking)."""
        return self.ranked[:count]

    @lru_cache(maxsize=64)
    def manifolds(self, task: str) -> tuple:
        """((manifold id, degree, points), ...) of a task, easiest first."""
        frame = self._task_points(task)
        if MANIFOLD_ID not in frame.columns or frame[MANIFOLD_ID].isna().all():
            return ()
        grouped = frame.groupby(MANIFOLD_ID, sort=False).agg(degree=(DEGREE, "min"), points=("id", "size"))
        rows = [(str(m), None if pd.isna(r.degree) else int(r.degree), int(r.points)) for m, r in grouped.iterrows()]
        return tuple(sorted(rows, key=lambda r: (r[1] if r[1] is not None else 99, r[0])))

    def default_manifold(self, ident: str) -> str:
        """The task's manifold entry with the most points (its axes are one grid, not a union of grids);
        all entries when the view itself has the manifold as an axis or the task has one entry."""
        view = self.view(ident)
        entries = self.manifolds(view.base_task)
        if MANIFOLD_ID in view.dims or len(entries) <= 1:
            return ALL_MANIFOLDS
        return max(entries, key=lambda r: (r[2], -(r[1] or 0)))[0]

    def _eval_points(self, eval_ids: Iterable[str]) -> pd.DataFrame:
        return self.points[self.points["eval_id"].isin(list(eval_ids))]

    def _task_points(self, task: str, manifold: str = ALL_MANIFOLDS) -> pd.DataFrame:
        return _in_manifold(self._by_task.get(task, self.points.iloc[0:0]), manifold)

    @lru_cache(maxsize=128)
    def view_surface(self, ident: str, manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> pd.DataFrame:
        """Accuracy per (eval, x, y) of a 2-D view for every eval at once (analyze.py surface's table)."""
        view = self.view(ident)
        return surface_table(self._task_points(view.base_task, manifold), view, mode)

    @lru_cache(maxsize=256)
    def categories(self, ident: str, dim: str, manifold: str = ALL_MANIFOLDS) -> tuple[str, ...] | None:
        """Text values of a dimension of a view, or None when its values are numbers.

        Ordered by difficulty (the mean manifold.degree of the points holding each value, so
        easy, medium, hard and never alphabetically), then by name.
        """
        view = self.view(ident)
        part = view_points(self._task_points(view.base_task, manifold), view)
        values = part[dim].dropna()
        if pd.api.types.is_numeric_dtype(values):
            return None
        if DEGREE in part.columns and part[DEGREE].notna().any():
            order = part.assign(_v=part[dim].astype(str)).groupby("_v")[DEGREE].mean()
            return tuple(sorted(order.index, key=lambda v: (order[v] if pd.notna(order[v]) else 99, v)))
        return tuple(sorted({str(v) for v in values}))

    def surface(self, ident: str, eval_id: str, manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> pd.DataFrame:
        """One eval's rows of view_surface."""
        table = self.view_surface(ident, manifold, mode)
        return table[table["eval_id"] == eval_id]

    @lru_cache(maxsize=128)
    def view_projection(self, ident: str, dim: str, manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> pd.DataFrame:
        """Accuracy per value of one dimension of a view (summed over the others), every eval at once."""
        view = self.view(ident)
        part = view_points(self._task_points(view.base_task, manifold), view)
        if part.empty:
            return pd.DataFrame(columns=["eval_id", dim, "center", "margin"])
        grouped = part.groupby(["eval_id", dim], sort=True)
        agg = grouped[COUNTERS].sum().reset_index()
        agg["points"] = grouped.size().to_numpy()
        table = add_statistics(agg, mode)
        order = self.categories(ident, dim, manifold)
        if order is not None:      # text values in difficulty order, not alphabetical
            rank = {v: i for i, v in enumerate(order)}
            table = table.assign(_o=table[dim].astype(str).map(rank)).sort_values(["eval_id", "_o"]).drop(columns="_o")
        return table

    def projection(self, ident: str, dim: str, eval_ids: tuple, manifold: str = ALL_MANIFOLDS,
                   mode: str = MODE) -> pd.DataFrame:
        table = self.view_projection(ident, dim, manifold, mode)
        return table[table["eval_id"].isin(list(eval_ids))]

    def points_at(self, ident: str, eval_id: str, coords: dict, manifold: str = ALL_MANIFOLDS) -> pd.DataFrame:
        """The point rows of an eval at the given view coordinates ({dim: value})."""
        part = _in_manifold(view_points(self._eval_points([eval_id]), self.view(ident)), manifold)
        for dim, value in coords.items():
            part = part[_same(part[dim], value)]
        return part

    @lru_cache(maxsize=128)
    def token_histogram(self, task: str, eval_ids: tuple, bins: int = 40) -> tuple:
        """(bin edges, {eval_id: answers per bin}) of completion tokens per answer, shared bins.

        Binned here with numpy so the browser gets 40 numbers per eval, not every answer.
        """
        marks = ", ".join("?" for _ in eval_ids)
        flat = self.db.call("query", "SELECT eval_id, unnest(completion_tokens) AS tokens FROM points "
                                     f"WHERE base_task = ? AND eval_id IN ({marks})", [task, *eval_ids])
        if flat.empty:
            return np.array([0.0, 1.0]), {}
        values = flat["tokens"].to_numpy(dtype=float)
        edges = np.histogram_bin_edges(values, bins=bins)
        counts = {e: np.histogram(values[(flat["eval_id"] == e).to_numpy()], bins=edges)[0] for e in eval_ids}
        return edges, counts

    @lru_cache(maxsize=32)
    def samples(self, point_ids: tuple) -> list:
        """Every answered sample of the points (prompt, reasoning, answer, grading), in sample order."""
        return self.db.run(point_samples, list(point_ids))

    @lru_cache(maxsize=64)
    def spectra(self, ident: str, dim: str, eval_id: str) -> pd.DataFrame:
        """Mean prompt FFT per value of `dim` for one eval (probe.py fft's computation)."""
        view = self.view(ident)
        one_d = TaskView(view.base_task, f"{view.view}:{dim}", (dim,), view.filters)
        columns = ["id", "eval_id", "model", "template", "sampler", "base_task", "task_version", "params", "sources",
                   *view_columns([one_d])]
        points = self.db.call("points", {"eval_id": [eval_id], "base_task": view.base_task}, columns)
        return fft_table(points, [one_d], self.db.db.path.parent, {eval_id: self.tokenizers[eval_id]}, progress=False)


def _in_manifold(frame: pd.DataFrame, manifold: str) -> pd.DataFrame:
    if not manifold or manifold == ALL_MANIFOLDS:
        return frame
    return frame[frame[MANIFOLD_ID].astype(str) == manifold]


def _same(series: pd.Series, value: float | str) -> np.ndarray | pd.Series:
    """Equality that treats 4, 4.0 and "4" alike (click data comes back through JSON)."""
    try:
        return np.isclose(pd.to_numeric(series, errors="raise").astype(float), float(value))
    except (TypeError, ValueError):
        return series.astype(str) == str(value)


def _task_views(dataset: Dataset, db: PointsDB) -> list[TaskView]:
    """The config's views; without a config (or views in it), views inferred from the params."""
    if dataset.config_path is not None and dataset.config_path.is_file():
        views = config_views(dataset.config_path)
        if views:
            return views
    return inferred_views(db)


def inferred_views(db: PointsDB, max_values: int = 200) -> list[TaskView]:
    """Per task: a 2-D view over its first two numeric params that vary, and a 1-D view per such param.

    For datasets whose config is unavailable; params with one value or non-numeric values
    (or more than max_values distinct values) make no useful axis and are skipped.
    """
    keys = db.query("SELECT DISTINCT base_task, unnest(json_keys(params)) AS key FROM points ORDER BY 1, 2")
    views = []
    for task, group in keys.groupby("base_task", sort=True):
        axes = []
        for key in group["key"]:
            dim = f"params.{key}"
            values = db.dimension_values(dim, {"base_task": task})
            if 1 < len(values) <= max_values and all(isinstance(v, (int, float)) for v in values):
                axes.append(dim)
        if len(axes) >= 2:
            views.append(TaskView(str(task), "_".join(a.split(".", 1)[1] for a in axes[:2]), tuple(axes[:2])))
        views.extend(TaskView(str(task), a.split(".", 1)[1], (a,)) for a in axes)
    if not views:
        raise UserError("no task has a numeric parameter that varies, so there is nothing to draw; "
                        "add the experiment config (with views:) to the dataset file")
    return views


def pivot(surface: pd.DataFrame, x: str, y: str, value: str) -> tuple[list, list, list]:
    """(xs, ys, z rows) for a plotly surface: z[i][j] at (xs[j], ys[i]); gaps are None.

    Plain numpy placement (pandas' pivot_table costs ~30 ms a call, too much per click).
    """
    xs = sorted(surface[x].unique().tolist())
    ys = sorted(surface[y].unique().tolist())
    z = np.full((len(ys), len(xs)), np.nan)
    col = {v: j for j, v in enumerate(xs)}
    row = {v: i for i, v in enumerate(ys)}
    for vx, vy, vz in zip(surface[x].tolist(), surface[y].tolist(), surface[value].tolist()):
        if np.isnan(z[row[vy], col[vx]]):      # first value wins, as pivot_table(aggfunc="first")
            z[row[vy], col[vx]] = vz
    return xs, ys, [[None if np.isnan(v) else float(v) for v in line] for line in z]
