"""One cell, one number: the value a view shows for an (eval, group, tier) cell.

Every view that shows a cell's accuracy (analyze.py scores' ``modes``, cluster,
pairwise, spiderweb, the web apps) gets it from resolver.stats.mode_interval on the
cell's summed counters. This module is the short way to ask for one cell straight
from a PointsDB, and the one way to print it, with the mode named:

    from resolver.analysis.cell import cell_value, format_value, mode_label
    value = cell_value(db, "7d3e0d", "boolean", tier="medium", mode="C_P")
    format_value(value)   # '0.023 ± 0.023' or '≤ chance'
    mode_label("C_P")     # 'C_P: (1 - tau) * s, 95% interval'
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

from resolver import stats
from resolver.core import UserError

if TYPE_CHECKING:
    import pandas as pd

    from resolver.pointsdb import PointsDB

BELOW_CHANCE_MARK = "≤ chance"
TIER_DEGREES = {"easy": 0, "medium": 1, "hard": 2}
DEGREE_COLUMN = "manifold.degree"
VALUE_FIELDS = ("center", "margin", "low", "high", "below_chance")


def tier_degree(tier: str | int | None) -> int | None:
    """manifold.degree of a tier name (easy/medium/hard/'degree N'); None for no tier."""
    if tier is None or tier == "all":
        return None
    if tier in TIER_DEGREES:
        return TIER_DEGREES[tier]
    if isinstance(tier, str) and tier.startswith("degree "):
        return int(tier.split()[1])
    if isinstance(tier, int):
        return tier
    raise UserError(f"unknown tier {tier!r}; valid: easy, medium, hard, 'degree N' or all")


def cell_value(db: PointsDB, eval_id: str, group: object, tier: str | int | None = None, mode: str = stats.DEFAULT_MODE, group_by: str = "base_task",
               filters: dict | None = None) -> dict:
    """The interval of `mode` for one cell: {mode, center, margin, low, high,
    below_chance, samples, truncated_ratio}. tier None / "all" pools every tier;
    `filters` (PointsDB filter keys) narrow the cell further, e.g. to one
    params.length of a projection. A cell without data is a UserError."""
    stats.check_mode(mode)
    filters = dict(filters or {}, eval_id=[eval_id], **{group_by: [group]})
    degree = tier_degree(tier)
    if degree is not None:
        filters[DEGREE_COLUMN] = [degree]
    agg = db.aggregate(filters, by=())
    if agg.empty or int(agg["points"].iloc[0]) == 0:
        raise UserError(f"no points for eval {eval_id}, {group_by} {group!r}, tier {tier or 'all'}")
    row = stats.add_statistics(agg, mode).iloc[0]
    value: dict[str, str | bool | float | int] = {"mode": mode}
    value.update({name: bool(row[name]) if name == "below_chance" else float(row[name]) for name in VALUE_FIELDS})
    value.update(samples=int(row["samples"]), truncated_ratio=float(row["truncated_ratio"]))
    return value


def format_value(value: Mapping[str, Any] | pd.Series, digits: int = 3) -> str:
    """`center ± margin`, or `≤ chance` for a below-chance cell (never 0.000 ± 0.000)."""
    if value.get("below_chance"):
        return BELOW_CHANCE_MARK
    center, margin = value.get("center"), value.get("margin")
    if center is None or (isinstance(center, float) and math.isnan(center)):
        return "—"
    return f"{center:.{digits}f} ± {margin:.{digits}f}"


def mode_label(mode: str) -> str:
    """The name of what a number estimates, for a legend or tooltip next to it."""
    stats.check_mode(mode)
    return f"{mode}: {stats.MODE_ESTIMANDS[mode[2]]}, 95% interval"
