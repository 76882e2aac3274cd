"""Invalid answers by reason: the one breakdown behind every view of it.

`analyze.py scores` (per eval), `probe.py failure` (per point) and the leaderboard's
cell hover (per eval x tier x group) all call `count_reasons` on PointsDB point rows,
so a number of "no marker" answers is the same wherever it is shown. A point's
`invalid_reasons` column holds its invalid samples counted by reason
(resolver.grading.answer_reasons); what a point's `invalid` count has beyond them (a PointsDB
written before reasons were counted, records without a reason) is "unknown".
The reasons and their families are described in docs/grading.md, *Invalid reasons*.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable

import pandas as pd

from resolver.grading import ALL_REASONS, UNKNOWN

if TYPE_CHECKING:
    from resolver.pointsdb import FiltersLike, PointsDB

# What kind of failure each reason is: the model's output did not follow the answer
# format, it never got to an answer, or it answered without committing to one option.
FAMILIES = {
    "format": ("no_marker", "placeholder", "unreadable"),
    "no answer": ("empty", "unfinished_reasoning", "truncated"),
    "commitment": ("hedge", "not_an_option"),
    "unknown": (UNKNOWN,),
}
LABELS = {reason: reason.replace("_", " ") for reason in ALL_REASONS}
REASON_POINT_FIELDS = ("invalid", "invalid_reasons")


def _point_reasons(invalid: float | None, stored: str | dict | None) -> dict:
    """One point's {reason: count}: its stored counts, the rest of its invalid samples unknown."""
    if isinstance(stored, str):
        stored = json.loads(stored) if stored else {}
    known = stored if isinstance(stored, dict) else {}
    counts = {k: int(v) for k, v in known.items() if k in ALL_REASONS and k != UNKNOWN}
    total = 0 if invalid is None or pd.isna(invalid) else int(invalid)
    rest = total - sum(counts.values())
    if rest > 0:
        counts[UNKNOWN] = rest
    return counts


def count_reasons(points: pd.DataFrame, by: Iterable[str]) -> dict:
    """{group key: {reason: count}} summed over point rows grouped by the `by` columns.

    `points` needs the `by` columns, `invalid` and `invalid_reasons` (JSON text, or
    null / absent for a PointsDB without it). A key is the tuple of the row's `by`
    values; reasons come in vocabulary order, zero counts left out.
    """
    by = list(by)
    stored = points["invalid_reasons"] if "invalid_reasons" in points.columns else [None] * len(points)
    totals: dict = {}
    for key, invalid, reasons in zip(points[by].itertuples(index=False, name=None), points["invalid"], stored):
        into = totals.setdefault(tuple(key), {})
        for reason, count in _point_reasons(invalid, reasons).items():
            into[reason] = into.get(reason, 0) + count
    return {key: {r: counts[r] for r in ALL_REASONS if counts.get(r)} for key, counts in totals.items()}


def families(breakdown: dict) -> dict:
    """{family: count} of one breakdown (families with no answers left out)."""
    out = {name: sum(breakdown.get(r, 0) for r in members) for name, members in FAMILIES.items()}
    return {name: n for name, n in out.items() if n}


def describe(breakdown: dict) -> str:
    """"format 12 (no marker 9, placeholder 3) · commitment 1 (hedge 1)"; "" when nothing is invalid."""
    parts = []
    for name, members in FAMILIES.items():
        present = [(r, breakdown[r]) for r in members if breakdown.get(r)]
        if present:
            total = sum(n for _, n in present)
            inner = ", ".join(f"{LABELS[r]} {n}" for r, n in present)
            parts.append(f"{name} {total} ({inner})")
    return " · ".join(parts)


def reasons_by_eval(db: PointsDB, filters: FiltersLike = None) -> dict:
    """{eval_id: {reason: count}} over the points matching `filters` (analyze.py scores)."""
    points = db.points(filters, columns=["eval_id", *REASON_POINT_FIELDS], decode_json=False)
    return {key[0]: counts for key, counts in count_reasons(points, ["eval_id"]).items()}


def add_to_scores(results: list, db: PointsDB, filters: FiltersLike = None) -> list:
    """Each eval entry of `analyze.py scores` gains `invalid_reasons` ({} when none is invalid)."""
    if results:
        by_eval = reasons_by_eval(db, filters)
        for entry in results:
            entry["invalid_reasons"] = by_eval.get(entry["eval_id"], {})
    return results


def reasons_by_point(db: PointsDB, point_ids: Iterable[int]) -> dict:
    """{point id: {reason: count}} of the given points (probe.py failure)."""
    ids = [int(p) for p in point_ids]
    if not ids:
        return {}
    stored = "invalid_reasons" if "invalid_reasons" in db.point_columns() else "NULL AS invalid_reasons"
    points = db.query(f"SELECT id, invalid, {stored} FROM points WHERE id IN ({', '.join('?' * len(ids))})", ids)
    found = count_reasons(points, ["id"])
    return {point: found.get((point,), {}) for point in ids}
