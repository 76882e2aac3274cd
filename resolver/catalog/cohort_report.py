"""Markdown renderings of cohort.py's results (list / info, verify, context)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.core import markdown_table

if TYPE_CHECKING:
    from resolver.catalog.cohort_context import ContextResult
    from resolver.catalog.cohort_verify import CohortCheck
    from resolver.catalog.cohorts import CohortSummary, EvalSummary, FolderSummary


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _eval_row(summary: EvalSummary) -> list:
    spec, folders = summary.spec, summary.folders
    return [spec.eval_id, spec.label, spec.model, spec.template, spec.sampler, len(folders),
            sum(f.files for f in folders), sum(f.samples for f in folders), ", ".join(spec.groups),
            ", ".join(spec.tags), spec.hf_id or ""]


EVAL_HEADERS = ("eval_id", "label", "model", "template", "sampler", "run folders", "NDJSON files", "samples",
                "groups", "tags", "hf_id")
EVAL_ALIGN = ("l",) * 5 + ("r",) * 3 + ("l",) * 3


def render_list(summaries: list[CohortSummary], detail: bool = False) -> str:
    """One section per cohort: the evals table, orphans, and (detail) every run folder."""
    if not summaries:
        return "no cohorts found (a cohort is a directory with an evals.json)"
    parts = []
    for cohort in summaries:
        parts.append(f"## {cohort.path}\n")
        if cohort.error:
            parts.append(f"evals.json could not be read: {cohort.error}\n")
        if cohort.evals:
            parts.append(markdown_table([_eval_row(e) for e in cohort.evals], EVAL_HEADERS, EVAL_ALIGN) + "\n")
        if detail:
            parts.extend(_folder_details(cohort))
        if cohort.orphans:
            rows = [[o.path.name, o.files, o.samples, _size(o.bytes)] for o in cohort.orphans]
            parts.append("Run folders no eval matches (orphans):\n")
            parts.append(markdown_table(rows, ("run folder", "NDJSON files", "samples", "size"), "lrrr") + "\n")
        if cohort.unpulled:
            parts.append(f"{cohort.unpulled} run folder(s) are published but not here: "
                         f"python data.py pull cohort {cohort.path}\n")
    return "\n".join(parts)


def _folder_details(cohort: CohortSummary) -> list:
    parts = []
    for summary in cohort.evals:
        spec = summary.spec
        parts.append(f"### {spec.eval_id} {spec.label}\n")
        parts.append(f"glob `{spec.glob}`; facets {spec.facets or '{}'}\n")
        if not summary.folders:
            parts.append("no run folder matches this eval's glob\n")
            continue
        rows = [[f.path.name, f.files, f.samples, _size(f.bytes), *_run_columns(f)] for f in summary.folders]
        parts.append(markdown_table(rows, ("run folder", "NDJSON files", "samples", "size", *RUN_HEADERS),
                                    "lrrr" + "l" * len(RUN_HEADERS)) + "\n")
    return parts


# What a folder's metadata.json says (resolver/records/run_metadata.py); "-" for folders without one.
RUN_HEADERS = ("mode", "precision", "density", "seed", "started", "ended")


def _run_columns(folder: FolderSummary) -> list:
    meta = folder.metadata
    if meta is None:
        return ["unreadable metadata.json" if folder.metadata_problem else "-"] + ["-"] * (len(RUN_HEADERS) - 1)
    return [meta.mode, meta.precision.name, meta.density, meta.seed, meta.started,
            meta.ended or "not recorded (running, or stopped abruptly)"]


def render_verify(checks: list[CohortCheck]) -> str:
    parts = []
    for check in checks:
        problems = check.all_problems()
        parts.append(f"## {check.path}: {'OK' if not problems else f'{len(problems)} problem(s)'}\n")
        if check.evals:
            rows = [[e.eval_id, e.label, e.folders, e.files, e.records,
                     f"{e.points}" + (f" / {e.expected}" if e.expected is not None else ""),
                     "ok" if not e.problems else f"{len(e.problems)} problem(s)"] for e in check.evals]
            parts.append(markdown_table(rows, ("eval_id", "label", "run folders", "NDJSON files", "records",
                                               "points / expected", "status"), "llrrrrl") + "\n")
        for note in check.notes:
            parts.append(f"note: {note}")
        if problems:
            parts.append("Problems:\n")
            parts.extend(f"- {p}" for p in problems)
        parts.append("")
    return "\n".join(parts)


def render_context(result: ContextResult) -> str:
    lines = [
        f"created {result.folder}",
        f"new eval {result.eval_id}: sampler {result.sampler}, label {result.entry['label']!r}",
        f"{result.clipped} of {result.samples} samples cut to the context limit "
        f"(counts: {'usage + proportional cut by characters' if result.counter == 'usage' else result.counter})",
    ]
    if result.uncounted:
        lines.append(f"{result.uncounted} samples had no token counts and were copied unchanged")
    if result.skipped_lines:
        lines.append(f"{len(result.skipped_lines)} unreadable line(s) skipped, first: {result.skipped_lines[0]}")
    lines.extend(f"note: {n}" for n in result.notes)
    lines.append("next, rebuild the database:")
    lines.extend(f"  {c}" for c in result.commands)
    return "\n".join(lines)
