"""Markdown rendering of a shortcut audit (resolver.audit.shortcuts.AuditReport)."""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resolver.audit.shortcuts import AuditReport

from resolver.audit.film_reader import READINGS


def _pct(x: float) -> str:
    return f"{x:.3f}"


def summary_table(report: AuditReport) -> str:
    """One row per (task, tier): points, flagged points, the worst point and the best pooled rule."""
    by_key = defaultdict(list)
    for p in report.points:
        by_key[(p.base_task, p.tier)].append(p)
    pooled = {(r.base_task, r.tier): r for r in report.pooled}
    lines = ["| task | tier | points | flagged | worst point: best rule | its accuracy | guess | "
             "pooled best rule | pooled accuracy | pooled guess | pooled flagged |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(by_key):
        points = by_key[key]
        worst = max(points, key=lambda p: p.excess - p.allowance)
        r = pooled[key]
        lines.append(f"| {key[0]} | {key[1]} | {len(points)} | {sum(p.flagged for p in points)} | "
                     f"{worst.best_player} | {_pct(worst.best_accuracy)} | {_pct(worst.guess_chance)} | "
                     f"{r.player} | {_pct(r.accuracy)} | {_pct(r.guess_rate)} | {'yes' if r.flagged else 'no'} |")
    return "\n".join(lines)


def answer_facts(report: AuditReport) -> str:
    """Per (task, tier): how the targets are spread and what guess_chance declares."""
    by_key = defaultdict(list)
    for p in report.points:
        by_key[(p.base_task, p.tier)].append(p)
    lines = [f"| task | tier | distinct targets per {report.samples} samples (min-max) | "
             "most frequent target's share (mean, max) | guess_chance (min-max) |",
             "|---|---|---|---|---|"]
    for (task, tier), points in sorted(by_key.items()):
        distinct = [p.distinct_targets for p in points]
        share = [p.top_target_share for p in points]
        guess = [p.guess_chance for p in points]
        lines.append(f"| {task} | {tier} | {min(distinct)}-{max(distinct)} | "
                     f"{sum(share) / len(share):.3f}, {max(share):.3f} | {min(guess):.3f}-{max(guess):.3f} |")
    return "\n".join(lines)


def worst_points(report: AuditReport, top: int) -> str:
    """Per task, the `top` points whose best player comes closest to (or over) the bar."""
    by_task = defaultdict(list)
    for p in report.points:
        by_task[p.base_task].append(p)
    out = []
    for task in sorted(by_task):
        rows = sorted(by_task[task], key=lambda p: -(p.excess - p.allowance))[:top]
        out += [f"### {task}", "",
                "| step | best rule | accuracy | guess_chance | excess | allowed | flagged |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {p.step} | {p.best_player} | {_pct(p.best_accuracy)} | {_pct(p.guess_chance)} | "
                f"{p.excess:+.3f} | {_pct(p.allowance)} | {'**yes**' if p.flagged else 'no'} |" for p in rows]
        out.append("")
    return "\n".join(out)


def reader_table(report: AuditReport) -> str:
    """Per (task, tier) of the reader's check: cases, how many each reading determines
    (and of those, how many as the target), and the unfair cases; then every point with
    an unfair case."""
    by_tier = defaultdict(list)
    for r in report.readings:
        by_tier[(r.task, r.tier)].append(r)
    head = " | ".join(f"{r}: determined / target" for r in READINGS)
    lines = [f"| task | tier | points | cases | {head} | genres favour a wrong option | "
             "theme alone, one liked film | both not the target |",
             "|---|---|---|---|" + "---|" * len(READINGS) + "---|---|---|"]
    for (task, tier), rows in sorted(by_tier.items()):
        cells = " | ".join(f"{sum(x.determined[r] for x in rows)} / {sum(x.right[r] for x in rows)}"
                           for r in READINGS)
        lines.append(f"| {task} | {tier} | {len(rows)} | {sum(x.cases for x in rows)} | {cells} | "
                     f"{sum(x.genres_favour_wrong for x in rows)} | {sum(x.theme_alone_single for x in rows)} | "
                     f"{sum(x.both_not_target for x in rows)} |")
    bad = report.unfair_readings
    if bad:
        lines += ["", "Points with unfair cases:", ""]
        lines += [f"- {r.step}: genres favour a wrong option {r.genres_favour_wrong}, theme alone with one "
                  f"liked film {r.theme_alone_single}, both not the target {r.both_not_target}" for r in bad]
    return "\n".join(lines)


def audit_markdown(report: AuditReport, top: int = 3) -> str:
    verdict = ("PASS: no point and no (task, tier) is beaten by a question-blind rule"
               if not report.flagged_points and not report.flagged_pooled else
               f"FAIL: {len(report.flagged_points)} point(s) and {len(report.flagged_pooled)} (task, tier) "
               "pooled rule(s) beat guess_chance")
    if report.readings:
        bad = report.unfair_readings
        verdict += ("\n\nReader's check: " + (f"FAIL: {len(bad)} point(s) with cases a reader of the facts "
                                               "would not answer with the target" if bad else
                                               "PASS: every case's facts single out the target"))
    head = (f"# Shortcut audit: {report.config}\n\n{len(report.points)} points at density {report.density}, "
            f"{report.samples} samples each, seed {report.seed}.\n\n{verdict}\n")
    flagged = ""
    if report.flagged_pooled:
        flagged = "\n## Flagged (task, tier) rules\n\n" + "\n".join(
            f"- {r.base_task} tier {r.tier}: {r.player} {_pct(r.accuracy)} vs guess {_pct(r.guess_rate)} "
            f"(allowed {_pct(r.allowance)})" for r in report.flagged_pooled) + "\n"
    readers = f"\n## Reader's check (docs/tasks.md#movies)\n\n{reader_table(report)}\n" if report.readings else ""
    return (f"{head}\n## Summary\n\n{summary_table(report)}\n{flagged}{readers}\n"
            f"## Answer distribution\n\n{answer_facts(report)}\n\n"
            f"## Worst points per task\n\n{worst_points(report, top)}")
