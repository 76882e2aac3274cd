"""The leaderboard's data: ReasonScore results for any manifold / group selection, from memory.

At start-up the PointsDB is aggregated once by (eval, degree, manifold id, group). A
selection (which manifold entries, which groups) sums those counters and hands them to
the same computation as `analyze.py scores` (resolver.analysis.scores): the numbers in
the leaderboard are the numbers of the markdown table. Results are cached per selection.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Collection, Iterable, Sequence, TypeGuard

import numpy as np
import pandas as pd

from resolver.analysis import REASON_POINT_FIELDS, count_reasons, eval_labels, scores, skilled_first_key
from resolver.stats import add_statistics

if TYPE_CHECKING:
    from resolver.pointsdb import PointsDB

MANIFOLD_COLUMN = "manifold.id"
OVERALL = "overall"


@dataclass
class BoardView:
    """One selection's results: ranked entries (docs/analyze.md JSON shape) + tier-pooled cells."""

    results: list                      # summarize_scores output, ranked by ReasonScore
    pooled: dict                       # {(eval_id, group): task dict} with tiers pooled
    columns: dict                      # {tier: [groups]} and OVERALL: all groups


class Board:
    def __init__(self, db: PointsDB, group_by: str = "base_task"):
        self.group_by = group_by
        by = ("eval_id", scores.DEGREE_COLUMN, MANIFOLD_COLUMN, group_by)
        self.agg = db.aggregate(None, by=by)
        self.expected = db.expected() if group_by == "base_task" else None
        self.evals = db.evals()
        self.groups = sorted(set(self.agg[group_by].dropna().tolist()), key=_group_order)
        self.manifolds = sorted({str(m) for m in self.agg[MANIFOLD_COLUMN].dropna()})
        degrees = sorted({int(d) for d in self.agg[scores.DEGREE_COLUMN].dropna()})
        self.tiers = [scores.tier_name(d) for d in degrees] or [scores.NO_TIER]
        self.grader_versions = grader_versions(db)
        self.manifold_labels = manifold_labels(db)
        # per point, for the cells' invalid-answer breakdown (resolver.analysis.invalid_reasons)
        self.reason_points = db.points(None, columns=list(by) + list(REASON_POINT_FIELDS), decode_json=False)

    @lru_cache(maxsize=32)
    def cells(self, manifolds: tuple = ()) -> tuple:
        """(cells by eval x tier x group, {(eval_id, group): tiers-pooled task dict}) over manifold ids."""
        agg = self.agg
        if manifolds:
            agg = agg[agg[MANIFOLD_COLUMN].astype(str).isin(manifolds)]
        if agg.empty:
            return None, {}
        # Expected point counts describe whole tasks; with a manifold subset they no longer apply.
        expected = None if manifolds else self.expected
        by_tier = scores.score_cells(self._sum(agg, ("eval_id", scores.DEGREE_COLUMN, self.group_by)),
                                     self.group_by, expected)
        pooled_cells = scores.score_cells(self._sum(agg, ("eval_id", self.group_by)), self.group_by, expected)
        pooled = {(r["eval_id"], r["group"]): scores.task_entry(r) for r in pooled_cells.to_dict("records")}
        return by_tier, pooled

    @lru_cache(maxsize=32)
    def invalid_reasons(self, manifolds: tuple = ()) -> dict:
        """{(eval_id, tier or OVERALL, str(group)): {reason: count}} over the chosen manifold ids."""
        points = self.reason_points
        if manifolds:
            points = points[points[MANIFOLD_COLUMN].astype(str).isin(manifolds)]
        out = {}
        by_tier = count_reasons(points, ["eval_id", scores.DEGREE_COLUMN, self.group_by])
        for (eval_id, degree, group), counts in by_tier.items():
            out[(eval_id, scores.tier_name(None if pd.isna(degree) else degree), str(group))] = counts
        for (eval_id, group), counts in count_reasons(points, ["eval_id", self.group_by]).items():
            out[(eval_id, OVERALL, str(group))] = counts
        return out

    @lru_cache(maxsize=64)
    def mode_cells(self, manifolds: tuple = (), mode: str = "E_I") -> dict:
        """{(eval_id, tier or OVERALL, group): {center, margin, below_chance}} in another statistics mode.

        The same summed counters as `cells`, through resolver.stats.add_statistics (the one
        function behind every analysis), so a mode shows the number analyze.py shows for it.
        """
        agg = self.agg
        if manifolds:
            agg = agg[agg[MANIFOLD_COLUMN].astype(str).isin(manifolds)]
        out: dict[tuple, dict] = {}
        if agg.empty:
            return out
        for by, tier_of in ((("eval_id", scores.DEGREE_COLUMN, self.group_by), lambda r: scores.tier_name(r[scores.DEGREE_COLUMN])),
                            (("eval_id", self.group_by), lambda r: OVERALL)):
            frame = add_statistics(self._sum(agg, by), mode)
            for record in frame.to_dict("records"):
                out[(record["eval_id"], tier_of(record), str(record[self.group_by]))] = {
                    "center": float(record["center"]), "margin": float(record["margin"]),
                    "below_chance": bool(record.get("below_chance", False))}
        return out

    @lru_cache(maxsize=128)
    def view(self, manifolds: tuple = (), groups: tuple = ()) -> BoardView:
        """Scores over the chosen manifold ids and groups (empty tuple = all).

        Cell statistics depend only on the manifold choice (cached by `cells`); a group
        choice only decides which cells enter each ReasonScore.
        """
        cells, pooled = self.cells(manifolds)
        if cells is not None and groups:
            wanted = {str(g) for g in groups}
            cells = cells[cells["group"].astype(str).isin(wanted)]
            pooled = {k: v for k, v in pooled.items() if str(k[1]) in wanted}
        if cells is None or cells.empty:
            return BoardView([], {}, {OVERALL: []})
        results = scores.summarize_scores(cells, self.evals, sort="score")
        columns = {tier: sorted(groups, key=_group_order) for tier, groups in scores.score_table_columns(results).items()}
        columns[OVERALL] = [g for g in self.groups if any(g in c for c in columns.values())]
        return BoardView(results, pooled, columns)

    @staticmethod
    def _sum(agg: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
        numeric = [c for c in agg.columns if c not in (MANIFOLD_COLUMN, scores.DEGREE_COLUMN, "eval_id")
                   and pd.api.types.is_numeric_dtype(agg[c])]
        numeric = [c for c in numeric if c not in by]
        summed = agg.groupby(list(by), dropna=False, sort=False)[numeric].sum().reset_index()
        return summed


def _group_order(value: Any) -> tuple[int, float, str]:
    """Numbers before text, numbers numerically (4, 8, 12 ...), text alphabetically."""
    is_number = isinstance(value, numbers.Number) and not isinstance(value, bool)
    return (0, float(value), "") if is_number else (1, 0.0, str(value))


def rows_for(view: BoardView, tier: str, sort: str, eval_ids: Collection[str] | None = None) -> list:
    """Table rows for a tier (or OVERALL), sorted by 'score' or 'ratio', restricted to eval_ids.

    Each row: {eval_id, label, groups, score, incomplete, tokens, ratio, cells: {group: task|None}, skill}.
    Evals without evidence of skill above guessing (skill False) come after the others.
    Evals without data in the tier are left out.
    """
    rows, labels = [], eval_labels(view.results)
    for entry in view.results:
        if eval_ids is not None and entry["eval_id"] not in eval_ids:
            continue
        if tier == OVERALL:
            summary, cells = entry, {g: view.pooled.get((entry["eval_id"], g)) for g in view.columns[OVERALL]}
        elif tier in entry["tiers"]:
            summary = entry["tiers"][tier]
            cells = {g: summary["tasks"].get(g) for g in view.columns.get(tier, [])}
        else:
            continue
        rows.append({"eval_id": entry["eval_id"], "label": labels[entry["eval_id"]], "model": entry["model"],
                     "groups": entry.get("groups", []), "score": summary["reasonscore"],
                     "incomplete": summary["any_incomplete"], "tokens": summary["completion_tokens_mean"],
                     "ratio": summary["score_per_token"], "cells": cells,
                     "skill": entry.get("skill_evidence", True)})
    key = "ratio" if sort == "ratio" else "score"
    # evals without evidence of skill above guessing rank after all others (resolver.analysis.skill)
    rows.sort(key=lambda r: (skilled_first_key(r["skill"]), -_finite(r[key]), -_finite(r["score"]), r["eval_id"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def best_values(rows: list) -> dict:
    """The best value of every column over the rows: highest score / ratio / cell center, fewest tokens."""
    # a ratio without evidence of skill is no best: a guesser's short answers would win it
    skilled = [r for r in rows if r.get("skill", True)]
    best: dict[str, float | dict] = {
        "score": _max(r["score"] for r in rows), "ratio": _max(r["ratio"] for r in skilled),
        "tokens": -_max(-r["tokens"] for r in rows if _is_number(r["tokens"])) if rows else math.nan}
    groups = {g for r in rows for g in r["cells"]}
    best["cells"] = {g: _max(r["cells"][g]["center"] for r in rows if r["cells"].get(g)) for g in groups}
    return best


def _is_number(value: float | None) -> TypeGuard[float]:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _max(values: Iterable[float]) -> float:
    values = [v for v in values if _is_number(v)]
    return max(values) if values else math.nan


def _finite(value: float | None) -> float:
    return value if _is_number(value) and np.isfinite(value) else -math.inf


def grader_versions(db: PointsDB) -> dict:
    """{eval_id: "v1" or "v1-v2"} from the points' grader_version column; {} when the DB has none."""
    columns = set(db.query("SELECT * FROM points LIMIT 0").columns)
    if "grader_version" not in columns:
        return {}
    frame = db.query("SELECT eval_id, min(grader_version) AS lo, max(grader_version) AS hi FROM points "
                     "WHERE grader_version IS NOT NULL GROUP BY eval_id")
    return {str(eval_id): (f"v{int(lo)}" if lo == hi else f"v{int(lo)}-v{int(hi)}")
            for eval_id, lo, hi in frame.itertuples(index=False, name=None)}


def manifold_labels(db: PointsDB) -> dict:
    """{manifold id: "task · id (tier)"} so a manifold choice says which task and tier it belongs to."""
    frame = db.query("SELECT DISTINCT base_task, json_extract_string(manifold, '$.id') AS mid, "
                     "json_extract_string(manifold, '$.degree') AS degree FROM points")
    labels: dict = {}
    for base_task, mid, degree in frame.itertuples(index=False, name=None):
        if mid is None:
            continue
        tier = f" ({scores.tier_name(int(degree))})" if degree is not None else ""
        labels.setdefault(str(mid), []).append(f"{base_task} · {mid}{tier}")
    return {mid: " / ".join(sorted(set(names))) for mid, names in labels.items()}
