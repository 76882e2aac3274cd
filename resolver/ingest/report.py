"""What an evaluate.py run did, as data (Report) and as console text."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from resolver.grading import GRADER_VERSION
from resolver.ingest.points import EvalStats
from resolver.ingest.regrade import RegradeTally

MAX_REPORTED_PROBLEMS = 20  # per eval on the console; the summary counts them all


@dataclass
class Report:
    """What a run did, for printing: per-eval stats, warnings, what was skipped."""

    db_path: Path | None = None
    evals: list[EvalStats] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unchanged: int = 0
    dropped: int = 0
    relabelled: int = 0
    written: bool = False
    regraded: RegradeTally = field(default_factory=dict)   # --offline only

    @property
    def problems(self) -> int:
        return sum(len(e.problems) for e in self.evals)


def summary_lines(report: Report) -> list[str]:
    """A short human summary of a run (evaluate.py prints it)."""
    lines = []
    for e in report.evals:
        extra = []
        if e.duplicates:
            extra.append(f"{e.duplicates} duplicate samples counted once")
        if e.unanswered:
            extra.append(f"{e.unanswered} unanswered records")
        if e.problems:
            extra.append(f"{len(e.problems)} bad records skipped")
        tail = f" ({'; '.join(extra)})" if extra else ""
        lines.append(f"{e.eval_id}  {e.label}: {e.points} points, {e.samples} samples from {e.files} files{tail}")
    lines.extend(regrade_lines(report))
    verb = "built" if report.db_path is not None else "evaluated (no --db: nothing written)"
    done = f"{len(report.evals)} evals {verb}"
    if report.unchanged:
        done += f", {report.unchanged} unchanged"
    if report.relabelled:
        done += f", {report.relabelled} relabelled"
    if report.dropped:
        done += f", {report.dropped} dropped"
    if report.db_path is not None:
        done += f" -> {report.db_path}" if report.written else f"; {report.db_path} is up to date"
    lines.append(done + (f"; {report.problems} bad records skipped" if report.problems else ""))
    return lines


def regrade_lines(report: Report) -> list[str]:
    """--offline: per task, how many records the current grader judged differently."""
    if not report.regraded:
        return []

    total = sum(v[0] for v in report.regraded.values())
    changed = sum(v[1] for v in report.regraded.values())
    lines = [f"re-graded {total} records with grader v{GRADER_VERSION}: {changed} changed verdict"]
    for task, (graded, moved) in sorted(report.regraded.items()):
        lines.append(f"  {task}: {moved} of {graded} changed verdict")
    return lines


def problem_lines(report: Report) -> list[str]:
    """Bad records with file:line, at most MAX_REPORTED_PROBLEMS per eval (the rest counted)."""
    lines = []
    for e in report.evals:
        lines.extend(e.problems[:MAX_REPORTED_PROBLEMS])
        if len(e.problems) > MAX_REPORTED_PROBLEMS:
            lines.append(f"... and {len(e.problems) - MAX_REPORTED_PROBLEMS} more bad records in eval {e.eval_id}")
    return lines


def stale_grader_warnings(report: Report) -> list[str]:
    """Evals whose samples were graded by an older grader than the current one."""
    out = []
    for e in report.evals:
        old = [v for v in e.grader_versions if v < GRADER_VERSION]
        if old and not report.regraded:
            out.append(f"eval {e.eval_id} ({e.label}): samples graded by grader v{min(old)}, current is "
                       f"v{GRADER_VERSION}; re-grade with evaluate.py --offline")
    return out
