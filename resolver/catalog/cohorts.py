"""Cohorts: one model's directory of run folders plus the evals.json that describes them.

This module finds cohorts and their run folders and works out which eval owns which
folder; data.py's scopes and the cohort.py operations build on it.

A *run folder* is a direct, non-hidden subdirectory of a cohort, as written by
runner.py (``<YYYY-MM-DD_HH-MM-SS>_<config>_<model>_<template>_<sampler>/``). An eval
*matches* a run folder when the eval's ``evaluate.glob`` matches NDJSON files inside it.
"""
from __future__ import annotations

import glob as globlib
import json
import re
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from resolver.catalog.datasets import EvalSpec, eval_files, load_dataset, load_evals
from resolver.catalog.manifest import load_manifest
from resolver.core import UserError, compile_search
from resolver.records import read_run_metadata

if TYPE_CHECKING:
    from resolver.records import RunMetadata

EVALS_FILE = "evals.json"


def is_cohort(path: str | PathLike[str]) -> bool:
    return (Path(path) / EVALS_FILE).is_file()


def find_cohorts(root: str | PathLike[str]) -> list:
    """Every directory under `root` (or `root` itself) holding an evals.json, sorted.

    Hidden directories (.blobs, .cache, .remote, unpack temps) are never searched.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    found = [root] if is_cohort(root) else []
    for evals in sorted(root.rglob(EVALS_FILE)):
        rel_parts = evals.parent.relative_to(root).parts
        if rel_parts and not any(part.startswith(".") for part in rel_parts):
            found.append(evals.parent)
    return sorted(set(found))


def resolve_cohorts(target: str | None, default_root: str | PathLike[str]) -> list:
    """Cohort directories named by a path, a glob, or (None) everything under `default_root`."""
    if not target:
        return find_cohorts(default_root)
    path = Path(target)
    if path.name == EVALS_FILE:
        path = path.parent
    if path.is_dir():
        cohorts = find_cohorts(path)
        if not cohorts:
            raise UserError(f"{target} holds no cohort (no evals.json in it or below it)")
        return cohorts
    matches = sorted(Path(m) for m in globlib.glob(str(path)))
    cohorts = sorted({c for m in matches if m.is_dir() for c in find_cohorts(m)}
                     | {m.parent for m in matches if m.name == EVALS_FILE})
    if not cohorts:
        raise UserError(f"no cohort matches {target!r}; {_nearby_cohorts_text(path, default_root)}; "
                        f"a published cohort is fetched with: python data.py pull cohort {target}")
    return cohorts


def _nearby_cohorts_text(path: Path, default_root: str | PathLike[str]) -> str:
    """The cohorts that do exist in the folder the missing one would be in (else under the data root)."""
    folder = next((p for p in (path.parent, Path(default_root)) if p.is_dir()), None)
    found = find_cohorts(folder) if folder is not None else []
    if not found:
        return "there are no cohorts here yet"
    shown = ", ".join(str(c) for c in found[:12]) + (", ..." if len(found) > 12 else "")
    return f"cohorts there: {shown}"


def run_folders(cohort_dir: str | PathLike[str]) -> list:
    """The run folders of a cohort: its direct, non-hidden subdirectories, sorted by name."""
    cohort_dir = Path(cohort_dir)
    if not cohort_dir.is_dir():
        return []
    return sorted(p for p in cohort_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def cohort_evals(cohort_dir: str | PathLike[str]) -> list:
    """The EvalSpecs of a cohort's evals.json ([] when the cohort has none)."""
    cohort_dir = Path(cohort_dir)
    if not is_cohort(cohort_dir):
        return []
    return load_evals(cohort_dir / EVALS_FILE, str(cohort_dir))


def folder_of(file: Path, cohort_dir: Path) -> Path | None:
    """The run folder (direct child of the cohort) that contains `file`, if any."""
    try:
        rel = Path(file).resolve().relative_to(Path(cohort_dir).resolve())
    except ValueError:
        return None
    return Path(cohort_dir) / rel.parts[0] if len(rel.parts) > 1 else None


def eval_folders(spec: EvalSpec, cohort_dir: Path) -> dict:
    """{run folder: [NDJSON files]} that an eval's glob matches inside the cohort."""
    folders: dict = {}
    for file in eval_files(spec):
        folder = folder_of(file, cohort_dir)
        if folder is not None:
            folders.setdefault(folder, []).append(file)
    return folders


def folder_evals(cohort_dir: str | PathLike[str], specs: list[EvalSpec] | None = None) -> dict:
    """{run folder: [eval_ids that match it]} for every run folder of the cohort."""
    cohort_dir = Path(cohort_dir)
    specs = cohort_evals(cohort_dir) if specs is None else specs
    mapping: dict[str, list[str]] = {folder: [] for folder in run_folders(cohort_dir)}
    for spec in specs:
        for folder in eval_folders(spec, cohort_dir):
            if folder in mapping and spec.eval_id not in mapping[folder]:
                mapping[folder].append(spec.eval_id)
    return mapping


# ---------------------------------------------------------------- datasets and manifest around a cohort

def _ancestors(cohort_dir: Path, levels: int = 3) -> list:
    return list(Path(cohort_dir).resolve().parents)[:levels]


def datasets_naming(cohort_dir: Path) -> list:
    """Dataset files (data/<name>.json) whose cohorts include this cohort, nearest first.

    Looks in the cohort's parent directories (up to three levels), which is where
    docs/cohort.md keeps them (data/r12.json next to data/r12/<Model>/).
    """
    evals = (Path(cohort_dir) / EVALS_FILE).resolve()
    found = []
    for folder in _ancestors(cohort_dir):
        for candidate in sorted(folder.glob("*.json")):
            if candidate.name in ("manifest.json", EVALS_FILE) or not looks_like_dataset(candidate):
                continue
            try:
                dataset = load_dataset(candidate)
            except UserError:
                continue
            if any(c.path == evals for c in dataset.cohorts):
                found.append(dataset)
    return found


def looks_like_dataset(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("cohorts"), list)


def manifest_runs_of(cohort_dir: Path) -> dict:
    """{run folder key: manifest entry} that data/manifest.json records for this cohort."""
    for folder in _ancestors(cohort_dir):
        path = folder / "manifest.json"
        if path.is_file():
            try:
                manifest = load_manifest(path)
            except UserError:
                return {}
            key = Path(cohort_dir).resolve().relative_to(folder.resolve()).as_posix()
            return {k: e for k, e in manifest.runs.items() if e.cohort == key}
    return {}


# ---------------------------------------------------------------- list / info summaries

def count_lines(path: Path) -> int:
    """Records in an NDJSON file: newline count, plus one for an unterminated last line."""
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


@dataclass
class FolderSummary:
    path: Path
    files: int
    samples: int
    bytes: int
    metadata: RunMetadata | None = None   # None for folders from before metadata.json
    metadata_problem: str = ""     # why its metadata.json could not be read ("" when it could, or has none)


@dataclass
class EvalSummary:
    spec: EvalSpec
    folders: list


@dataclass
class CohortSummary:
    path: Path
    evals: list
    orphans: list
    unpulled: int = 0          # run folders the manifest knows but are not here
    error: str | None = None   # evals.json could not be read


def summarize_folder(folder: Path) -> FolderSummary:
    files = sorted(folder.rglob("*.ndjson"))
    summary = FolderSummary(folder, len(files), sum(count_lines(f) for f in files),
                            sum(f.stat().st_size for f in files))
    try:
        summary.metadata = read_run_metadata(folder)
    except UserError as exc:
        summary.metadata_problem = str(exc)
    return summary


def summarize_cohort(cohort_dir: str | PathLike[str], search: re.Pattern[str] | None = None) -> CohortSummary:
    """Evals of a cohort with their matched run folders, plus folders no eval matches."""
    cohort_dir = Path(cohort_dir)
    try:
        specs = cohort_evals(cohort_dir)
    except UserError as exc:
        return CohortSummary(cohort_dir, [], [summarize_folder(f) for f in run_folders(cohort_dir)], error=str(exc))
    owners = folder_evals(cohort_dir, specs)
    summaries = {f: summarize_folder(f) for f in owners}
    evals = []
    for spec in specs:
        if search is None or _matches(search, cohort_dir, spec):
            mine = [summaries[f] for f, ids in owners.items() if spec.eval_id in ids]
            evals.append(EvalSummary(spec, mine))
    orphans = [summaries[f] for f, ids in owners.items() if not ids]
    unpulled = sum(1 for key in manifest_runs_of(cohort_dir) if not (cohort_dir / Path(key).name).exists())
    return CohortSummary(cohort_dir, evals, orphans, unpulled)


def _matches(pattern: re.Pattern[str], cohort_dir: Path, spec: EvalSpec) -> bool:
    fields = (str(cohort_dir), spec.model, spec.label, spec.template, spec.sampler, spec.hf_id or "",
              " ".join(spec.groups), " ".join(spec.tags))
    return any(pattern.search(text) for text in fields)


def list_cohorts(target: str | None, default_root: str | PathLike[str], search_text: str | None = None) -> list:
    """Summaries of the cohorts named by `target`, keeping those with an eval matching --search."""
    search = compile_search(search_text)
    summaries = [summarize_cohort(c, search) for c in resolve_cohorts(target, default_root)]
    if search is not None:
        summaries = [s for s in summaries if s.evals]
    return summaries
