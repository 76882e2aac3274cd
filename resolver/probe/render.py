"""Markdown renderings of the probe.py reports (JSON goes through common.to_json)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from resolver.analysis import describe, frame_to_markdown
from resolver.core import markdown_table
from resolver.probe.loops import SEVERE_COVERAGE
from resolver.probe.truncation import samples_table

if TYPE_CHECKING:
    import pandas as pd

    from resolver.probe.failure import FailureReport
    from resolver.probe.outputs import FailureSample, TruncationSample

#: without --full, answers longer than this show their head and tail only
SHOWN_CHARS = 1200
#: genresult values listed per field in the breakdown
TOP_VALUES = 10


def clip_answer(text: str, full: bool) -> str:
    """The answer as shown: whole with --full, else head and tail around an omission mark."""
    if full or len(text) <= SHOWN_CHARS:
        return text
    half = SHOWN_CHARS // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half} characters omitted; --full shows all] …\n{text[-half:]}"


def _point_heading(point: pd.Series, labels: Mapping[str, str]) -> str:
    label = labels.get(point["eval_id"], point["eval_id"])
    reasons = describe(point.get("invalid_reasons") or {})
    return (f"## Point {point['id']} — {point['task']} — {label} ({point['eval_id']})\n\n"
            f"correct {point['correct']}, incorrect {point['incorrect']}, invalid {point['invalid']}, "
            f"truncated {point['truncated']}" + (f"\n\ninvalid by reason: {reasons}" if reasons else ""))


def failure_markdown(report: FailureReport, labels: dict, full: bool) -> str:
    parts = [f"# Failure analysis of point(s) {', '.join(str(i) for i in report.points['id'])}",
             f"{report.samples} answered samples read, {len(report.failures)} failures shown."]
    by_point: dict[int, list[FailureSample]] = {}
    for row in report.failures:
        by_point.setdefault(row.point_id, []).append(row)
    for _, point in report.points.iterrows():
        parts.append(_point_heading(point, labels))
        for row in by_point.get(int(point["id"]), []):
            outcome = row.outcome + (f" ({row.invalid_reason})" if row.invalid_reason else "")
            parts.append(f"### Sample {row.sample_index} — {outcome} — extracted `{row.extracted}` "
                         f"vs reference `{row.target}` — {row.completion_tokens} completion tokens")
            parts.append("````text\n" + clip_answer(row.answer or "(empty answer)", full) + "\n````")
    parts.append("## Failures by genresult field")
    if report.breakdown.empty:
        parts.append("No genresult fields with repeated values: nothing to break down.")
    for field, rows in report.breakdown.groupby("field", sort=True):
        parts.append(f"### {field}")
        parts.append(frame_to_markdown(rows.head(TOP_VALUES), ["value", "samples", "failures", "failure_rate"]))
    return "\n\n".join(parts)


def _snippet(text: str, chars: int = 60) -> str:
    """The start of a repeated unit on one table line: newlines shown as ⏎, code marks removed."""
    flat = (text or "").replace("\n", "⏎").replace("`", "'")
    return f"`{flat[:chars]}{'…' if len(flat) > chars else ''}`" if flat else ""


def truncation_markdown(points: pd.DataFrame, samples: list[TruncationSample], distribution: dict, labels: dict) -> str:
    table = samples_table(samples)
    parts = [f"# Loop analysis of truncated samples — point(s) {', '.join(str(i) for i in points['id'])}"]
    for _, point in points.iterrows():
        parts.append(_point_heading(point, labels))
    if table.empty:
        parts.append("No truncated samples in these points.")
        return "\n\n".join(parts)
    shown = table.assign(severe=["SEVERE" if s else "" for s in table["severe"]],
                         repeated=[_snippet(t) for t in table["unit_text"]])
    parts.append(frame_to_markdown(shown, ["point_id", "sample_index", "completion_tokens", "classification",
                                           "period", "repeats", "delta_tokens", "coverage", "start_fraction",
                                           "severe", "repeated"], floats=3))
    total = sum(distribution.values())
    rows = [(name, count, f"{count / total:.0%}") for name, count in distribution.items() if count]
    parts.append("## Class distribution")
    parts.append(markdown_table(rows, ["class", "samples", "share"], ["l", "r", "r"]))
    severe = int(table["severe"].sum())
    parts.append(f"{severe} of {total} truncated samples are severe (loop coverage > {SEVERE_COVERAGE:.0%}). "
                 "period = segments per repeated unit (characters for DEGENERATE); delta_tokens = mean change "
                 "in unit length between repeats; start_fraction = where in the answer the loop begins; "
                 "repeated = the start of the first repeat.")
    return "\n\n".join(parts)
