"""Loop forensics of truncated samples (probe.py truncation).

Runs resolver.probe.loops.detect_loop on the full generated text (reasoning + answer) of
every truncated sample of the given points: one TruncationSample per sample, plus the class
distribution; the markdown reads them as a table (`samples_table`).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

from resolver.ingest.raw_records import full_text, load_points, point_records, sample_index
from resolver.probe.loops import class_distribution, detect_loop
from resolver.probe.outputs import TruncationOutput, TruncationSample, probe_points

if TYPE_CHECKING:
    from resolver.pointsdb import PointsDB


def truncation_report(db: PointsDB, point_ids: Iterable[int],
                      tokenizer: Any = None) -> tuple[pd.DataFrame, list[TruncationSample], dict[str, int]]:
    """(points, one loop report per truncated sample, class distribution)."""
    points = load_points(db, point_ids)
    rows: list[TruncationSample] = []
    reports = []
    for _, point in points.iterrows():
        for record in point_records(point, db.path.parent):
            if not record.get("is_truncated"):
                continue
            report = detect_loop(full_text(record), tokenizer=tokenizer)
            reports.append(report)
            usage = record.get("usage") or {}
            rows.append(TruncationSample(
                point_id=int(point["id"]), key=record.get("key"), sample_index=sample_index(record),
                completion_tokens=usage.get("completion_tokens"), classification=report.label,
                period=report.period, repeats=report.repeats, delta_tokens=report.delta_tokens,
                coverage=report.coverage, start_token=report.start_token, start_fraction=report.start_fraction,
                severe=report.severe, unit_text=report.unit_text))
    return points, rows, class_distribution(reports)


def truncation_output(points: pd.DataFrame, samples: list[TruncationSample],
                      distribution: dict[str, int]) -> TruncationOutput:
    """probe.py truncation's JSON output (docs/probe.md) from truncation_report's result."""
    return TruncationOutput(points=probe_points(points), samples=samples, distribution=distribution)


def samples_table(samples: list[TruncationSample]) -> pd.DataFrame:
    """The samples as a table, one column per field (the markdown's view of the same rows)."""
    return pd.DataFrame([s.model_dump() for s in samples], columns=list(TruncationSample.model_fields))
