"""Per-eval profile across groups (tasks by default): the numbers behind a radar chart.

`spiderweb_table` is shared by ``analyze.py spiderweb`` (static PNG) and the
spiderweb.py web app: one row per (eval, group) with the accuracy interval of the
chosen mode, the truncation ratio and the mean completion tokens.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from resolver.stats import add_statistics

if TYPE_CHECKING:
    from resolver.pointsdb import FiltersLike, PointsDB

#: truncation above this share is marked on the chart (the same 2% that the
#: scores table uses for showing a truncation penalty).
TRUNCATION_MARK = 0.02


def spiderweb_from_aggregate(agg: pd.DataFrame, evals: pd.DataFrame, group_by: str = "base_task",
                             mode: str = "C_P") -> pd.DataFrame:
    """Radar numbers from ``PointsDB.aggregate(by=["eval_id", group_by])`` and ``PointsDB.evals()``.

    Columns: eval_id, label, model, group (the group_by value), mode, center, margin,
    low, high, below_chance (the data reject "at least chance": show "≤ chance"), truncated_ratio, truncation_marked,
    tokens_mean, tokens_scaled (tokens_mean
    / the largest tokens_mean in the table, for an overlay on the 0..1 axis),
    samples, points.
    """
    stats = add_statistics(agg, mode)
    labels = evals.set_index("eval_id")
    out = pd.DataFrame({
        "eval_id": stats["eval_id"],
        "label": [labels["label"].get(e) or labels["model"].get(e, e) if e in labels.index else e
                  for e in stats["eval_id"]],
        "model": [labels["model"].get(e, "") if e in labels.index else "" for e in stats["eval_id"]],
        "group": stats[group_by],
        "mode": mode, "center": stats["center"], "margin": stats["margin"],
        "low": np.clip(stats["low"], 0, 1), "high": np.clip(stats["high"], 0, 1),
        "below_chance": stats["below_chance"].astype(bool),
        "truncated_ratio": stats["truncated_ratio"],
        "tokens_mean": stats["completion_tokens_mean"],
        "samples": stats["samples"], "points": stats["points"],
    })
    out["truncation_marked"] = out["truncated_ratio"] > TRUNCATION_MARK
    top = out["tokens_mean"].max()
    out["tokens_scaled"] = out["tokens_mean"] / top if top and top > 0 else 0.0
    return out.reset_index(drop=True)


def spiderweb_table(db: PointsDB, filters: FiltersLike = None, group_by: str = "base_task", mode: str = "C_P") -> pd.DataFrame:
    """`spiderweb_from_aggregate` straight from an open PointsDB."""
    agg = db.aggregate(filters, by=["eval_id", group_by])
    return spiderweb_from_aggregate(agg, db.evals(), group_by, mode)
