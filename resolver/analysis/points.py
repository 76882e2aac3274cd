"""Per-point listing (analyze.py points): the bridge from aggregates to probe.py.

One table per split value with the point id (the input of probe.py --point-id),
the point's parameters, its excess-accuracy (E_I) center and margin and the raw
counters.
"""
from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from resolver import stats
from resolver.analysis.common import frame_to_markdown, label_missing
from resolver.core import UserError, choices_text

POINT_FIELDS = ["id", "eval_id", "model", "template", "sampler", "base_task", "task", "params", "manifold",
                "correct", "incorrect", "invalid", "truncated", "guess_sum", "completion_tokens_sum"]


def param_frame(points: pd.DataFrame) -> pd.DataFrame:
    """The params dicts spread into one column per parameter name."""
    frame = pd.DataFrame(list(points["params"]), index=points.index)
    return frame.reindex(sorted(frame.columns), axis=1)


def sort_points(frame: pd.DataFrame, params: pd.DataFrame, sort_keys: Iterable[str] | None) -> pd.DataFrame:
    """Sort by the given parameter names (numbers numerically), then by id."""
    sort_keys = [k[2:] if k.startswith("p.") else k for k in (sort_keys or [])]
    unknown = [k for k in sort_keys if k not in params.columns]
    if unknown:
        raise UserError(f"--sort {unknown[0]!r} is not a parameter of these points; valid: {choices_text(params.columns)}")
    keyed = frame.copy()
    keys = []
    for i, key in enumerate(sort_keys):
        column = pd.to_numeric(params[key], errors="coerce")
        keyed[f"_sort{i}"] = column if column.notna().all() else params[key].astype(str)
        keys.append(f"_sort{i}")
    keyed = keyed.sort_values(keys + ["id"], kind="stable")
    return keyed.drop(columns=keys)


def _split_parts(frame: pd.DataFrame, split: str) -> list:
    """(value, rows) per split value in sorted order; numbers before text, and points
    without the dimension grouped under "(none)" rather than dropped."""
    frame = label_missing(frame, [split])
    values = sorted(set(frame[split]), key=lambda v: (isinstance(v, str), v if not isinstance(v, str) else 0, str(v)))
    return [(value, frame[frame[split] == value]) for value in values]


def compute_points(points: pd.DataFrame, split: str | None = None, sort_keys: Iterable[str] | None = ()) -> list:
    """[(split value or None, table DataFrame)] ready to render.

    `points` comes from PointsDB.points(columns=POINT_FIELDS + [split]) with params
    decoded. The table columns: id, eval_id, model, base_task, manifold_id, one per
    parameter, center, margin (E_I) and the counters.
    """
    frame = stats.add_statistics(points, mode="E_I")
    parts: list[tuple[Any, pd.DataFrame]] = [(None, frame)] if split is None else _split_parts(frame, split)
    tables = []
    for value, part in parts:
        params = param_frame(part)
        ordered = sort_points(part, params, sort_keys)
        params = params.loc[ordered.index]
        table = pd.DataFrame({"id": ordered["id"], "eval_id": ordered["eval_id"], "model": ordered["model"],
                              "base_task": ordered["base_task"],
                              "manifold_id": [m.get("id") if isinstance(m, dict) else None for m in ordered["manifold"]]})
        table = table.join(params.drop(columns=[c for c in params.columns if c in table.columns]))
        table["center"] = ordered["adjusted_center"]
        table["margin"] = ordered["adjusted_margin"]
        for name in ("correct", "incorrect", "invalid", "truncated"):
            table[name] = ordered[name].astype("int64")
        tables.append((value.item() if hasattr(value, "item") else value, table.reset_index(drop=True)))
    return tables


def points_markdown(table: pd.DataFrame, split: str | None, value: object) -> str:
    """One split's points as markdown; ids feed probe.py --point-id."""
    title = "# Points" + (f" — {split} = {value}" if split else "")
    note = f"{len(table)} points. Use an id with: python probe.py failure <dataset> --point-id <id>"
    return f"{title}\n\n{note}\n\n" + frame_to_markdown(table, floats=4)
