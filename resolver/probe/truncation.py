"""Loop forensics of truncated samples (probe.py truncation).

Runs resolver.probe.loops.detect_loop on the full generated text (reasoning + answer) of
every truncated sample of the given points: one row per sample, plus the class
distribution.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

from resolver.ingest.raw_records import full_text, load_points, point_records, sample_index
from resolver.probe.loops import class_distribution, detect_loop

if TYPE_CHECKING:
    from resolver.pointsdb import PointsDB

COLUMNS = ["point_id", "key", "sample_index", "completion_tokens", "classification", "period",
           "repeats", "delta_tokens", "coverage", "start_token", "start_fraction", "severe", "unit_text"]


def truncation_report(db: PointsDB, point_ids: Iterable[int], tokenizer: Any = None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(points, per-sample loop table, class distribution) for the truncated samples."""
    points = load_points(db, point_ids)
    rows, reports = [], []
    for _, point in points.iterrows():
        for record in point_records(point, db.path.parent):
            if not record.get("is_truncated"):
                continue
            report = detect_loop(full_text(record), tokenizer=tokenizer)
            reports.append(report)
            usage = record.get("usage") or {}
            rows.append({"point_id": int(point["id"]), "key": record.get("key"),
                         "sample_index": sample_index(record),
                         "completion_tokens": usage.get("completion_tokens"),
                         "classification": report.label, "period": report.period,
                         "repeats": report.repeats, "delta_tokens": report.delta_tokens,
                         "coverage": report.coverage, "start_token": report.start_token,
                         "start_fraction": report.start_fraction, "severe": report.severe,
                         "unit_text": report.unit_text})
    return points, pd.DataFrame(rows, columns=COLUMNS), class_distribution(reports)
