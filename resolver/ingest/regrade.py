"""`evaluate.py --offline --inplace`: write re-graded records back into their files.

Each file is rewritten to ``<file>.regrade-<pid>`` beside it and renamed over the
original when complete, so a crash leaves the original intact. Field order is kept;
lines that do not parse are copied through unchanged, as are lines too long to be
records (streamed, never held whole: longlines.py); every re-graded record gets the
current ``grader_version``.
"""
from __future__ import annotations

import json
import os
from typing import Iterable

from resolver.grading import GRADER_VERSION, grade_record
from resolver.pointsdb import outcome_of
from resolver.records import CUT_LIMIT, LongLine, bounded_lines, raw_line_problem
from resolver.tasks import task_of_record

GRADED_FIELDS = ("normalized_answer", "extracted_answer", "is_valid", "is_correct", "is_truncated", "invalid_reason")

# --offline's tallies per base task: [records re-graded, records whose verdict changed]
RegradeTally = dict[str, list[int]]


def add_regraded(total: RegradeTally, more: RegradeTally) -> None:
    """Add re-grading tallies ({base_task: [re-graded, changed verdict]}) into ``total``."""
    for task, (graded, changed) in more.items():
        tally = total.setdefault(task, [0, 0])
        tally[0] += graded
        tally[1] += changed


def regrade_record(record: dict) -> dict:
    """The record with the current grader's verdict fields and grader_version (in place)."""
    graded = grade_record(record, task_of_record(record))
    for name in GRADED_FIELDS:
        if name in graded:
            record[name] = graded[name]
    record["grader_version"] = GRADER_VERSION
    return record


def regrade_file_inplace(path: str) -> RegradeTally:
    """Re-grade one file in place; returns {base_task: [records re-graded, verdicts changed]}."""
    tally: dict[str, list[int]] = {}
    tmp, replaced = f"{path}.regrade-{os.getpid()}", False
    try:
        with open(path, "rb") as src, open(tmp, "wb") as out:
            for raw in bounded_lines(src, CUT_LIMIT, out.write):
                if isinstance(raw, LongLine):       # already copied through, piece by piece
                    continue
                record = _record(raw)
                if record is None:
                    out.write(raw)
                    continue
                before = outcome_of(record)
                regrade_record(record)
                counts = tally.setdefault(str(record.get("base_task")), [0, 0])
                counts[0] += 1
                counts[1] += int(outcome_of(record) != before)
                out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        os.replace(tmp, path)
        replaced = True
    finally:
        if not replaced and os.path.exists(tmp):
            os.unlink(tmp)
    return tally


def _record(raw: bytes) -> dict | None:
    """The record on a line that can be re-graded, else None (copied through unchanged)."""
    if not raw.strip() or raw_line_problem(raw):        # the scan refuses lines over 16 MB
        return None
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("base_task"), str) or "answer" not in record:
        return None
    if record.get("target") is None:                    # nothing to grade against
        return None
    return record


def remove_regrade_temps(files: Iterable[str]) -> None:
    """Delete `<file>.regrade-<pid>` copies of an interrupted --inplace run (originals are intact)."""
    for path in files:
        folder, name = os.path.split(path)
        for other in os.listdir(folder or "."):
            if other.startswith(name + ".regrade-"):
                os.unlink(os.path.join(folder, other))
