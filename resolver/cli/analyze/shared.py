"""What several analyze.py and probe.py handlers do alike: aggregate a selection, read the
series / facet / split dimensions, and split a frame by the values of some dimensions.
(A dataset opens by resolver.analysis.open_dataset alone; run_main words a missing PointsDB.)"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from resolver.analysis import common

if TYPE_CHECKING:
    import argparse

    import pandas as pd

__all__ = ["aggregate", "dims", "split_title", "split_values"]


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
