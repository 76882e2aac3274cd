"""Failure inspection (probe.py failure; also the explorer's point inspection).

``failure_report(db, point_ids)`` reads the raw records of the points and returns the
failed samples (incorrect, invalid or truncated) with the raw answer, the extracted
and the reference answers, plus a breakdown of failures by the generator's
``genresult`` fields: for every field value, how many samples had it and how many of
those failed -- which generator choices fail most. Each point row also gets
``invalid_reasons``, its invalid samples by reason (resolver.analysis.invalid_reasons,
the breakdown every view shows), and each invalid failure the record's reason.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from resolver.analysis import reasons_by_point, to_plain
from resolver.grading import INVALID_REASONS, UNKNOWN
from resolver.ingest.raw_records import full_text, load_points, outcome_name, point_records, sample_index
from resolver.probe.outputs import BreakdownRow, FailureOutput, FailureSample, probe_points

if TYPE_CHECKING:
    from resolver.pointsdb import PointsDB

#: genresult values longer than this are summarised (whole problems are not facets).
MAX_VALUE_CHARS = 80


@dataclass
class FailureReport:
    points: pd.DataFrame                     # the point rows (id, eval_id, task, counters...)
    failures: list[FailureSample] = field(default_factory=list)
    samples: int = 0                         # answered samples read
    breakdown: pd.DataFrame = field(default_factory=pd.DataFrame)

    def output(self) -> FailureOutput:
        """The report as probe.py failure's JSON output (docs/probe.md); the markdown reads the same report."""
        rows = to_plain(self.breakdown.to_dict(orient="records"), finite=True)
        return FailureOutput(points=probe_points(self.points), samples=self.samples, failures=self.failures,
                             breakdown=[BreakdownRow.model_validate(row) for row in rows])


def _failure_row(point: pd.Series, record: dict) -> FailureSample:
    usage = record.get("usage") or {}
    return FailureSample(
        point_id=int(point["id"]), eval_id=point["eval_id"], task=point["task"],
        key=record.get("key"), sample_index=sample_index(record),
        outcome=outcome_name(record), truncated=bool(record.get("is_truncated")),
        target=record.get("target"), extracted=record.get("extracted_answer"),
        normalized=record.get("normalized_answer"), answer=full_text(record),
        completion_tokens=usage.get("completion_tokens"), genresult=record.get("genresult") or {},
        # as evaluate.py counts it: a record graded before reasons were recorded is "unknown"
        invalid_reason=(_reason(record.get("invalid_reason")) if outcome_name(record) == "invalid" else None),
    )


def _reason(value: object) -> str:
    return value if value in INVALID_REASONS else UNKNOWN


def _facet_values(value: object) -> list[str]:
    """A genresult value as facet values: list items one by one, everything as short text."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        text = item if isinstance(item, str) else json.dumps(item, sort_keys=True)
        out.append(text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS - 1] + "…")
    return list(dict.fromkeys(out))


def genresult_breakdown(observations: Iterable[tuple[object, bool]]) -> pd.DataFrame:
    """Rows field, value, samples, failures, failure_rate from (genresult, failed) pairs.

    Fields whose every value is unique (e.g. the problem text itself) say nothing
    about which choices fail, so they are left out. Sorted by field, then failures.
    """
    counts: dict[tuple[str, str], list[int]] = {}
    for genresult, failed in observations:
        if not isinstance(genresult, dict):
            continue
        for name, value in genresult.items():
            for text in _facet_values(value):
                cell = counts.setdefault((name, text), [0, 0])
                cell[0] += 1
                cell[1] += int(failed)
    frame = pd.DataFrame([(f, v, n, k) for (f, v), (n, k) in counts.items()],
                         columns=["field", "value", "samples", "failures"])
    if frame.empty:
        return frame.assign(failure_rate=pd.Series(dtype=float))
    informative = frame.groupby("field")["samples"].transform("max") > 1
    frame = frame[informative].copy()
    frame["failure_rate"] = frame["failures"] / frame["samples"]
    return frame.sort_values(["field", "failures", "failure_rate", "value"],
                             ascending=[True, False, False, True]).reset_index(drop=True)


def failure_report(db: PointsDB, point_ids: Iterable[int], limit: int | None = None) -> FailureReport:
    """Failed samples of the points (at most `limit` listed) and the genresult breakdown."""
    points = load_points(db, point_ids)
    by_point = reasons_by_point(db, points["id"].tolist())
    points["invalid_reasons"] = [by_point.get(int(p), {}) for p in points["id"]]
    report = FailureReport(points=points)
    observations = []
    for _, point in points.iterrows():
        for record in point_records(point, db.path.parent):
            failed = not record.get("is_correct")
            report.samples += 1
            observations.append((record.get("genresult"), failed))
            if failed and (limit is None or len(report.failures) < limit):
                report.failures.append(_failure_row(point, record))
    report.breakdown = genresult_breakdown(observations)
    return report
