"""Cohorts: one model's directory of run folders plus the evals.json that describes them.

This module finds cohorts and their run folders and works out which eval owns which
folder; data.py's scopes and the cohort.py operations build on it.

A *run folder* is a direct, non-hidden subdirectory of a cohort, as written by
runner.py (``<YYYY-MM-DD_HH-MM-SS>_<config>_<model>_<template>_<sampler>/``). An eval
*matches* a run folder when the eval's ``evaluate.glob`` matches NDJSON files inside it.
"""
from __future__ import annotations

import glob as globlib
from pathlib import Path

from resolver.datasets import eval_files, load_evals
from resolver.errors import UserError

EVALS_FILE = "evals.json"


def is_cohort(path) -> bool:
    return (Path(path) / EVALS_FILE).is_file()


def find_cohorts(root) -> list:
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


def resolve_cohorts(target: str | None, default_root) -> list:
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
        raise UserError(f"no cohort matches {target!r}; give a cohort directory (data/<set>/<Model>) or a glob of them")
    return cohorts


def run_folders(cohort_dir) -> list:
    """The run folders of a cohort: its direct, non-hidden subdirectories, sorted by name."""
    cohort_dir = Path(cohort_dir)
    if not cohort_dir.is_dir():
        return []
    return sorted(p for p in cohort_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def cohort_evals(cohort_dir) -> list:
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


def eval_folders(spec, cohort_dir) -> dict:
    """{run folder: [NDJSON files]} that an eval's glob matches inside the cohort."""
    folders: dict = {}
    for file in eval_files(spec):
        folder = folder_of(file, cohort_dir)
        if folder is not None:
            folders.setdefault(folder, []).append(file)
    return folders


def folder_evals(cohort_dir, specs=None) -> dict:
    """{run folder: [eval_ids that match it]} for every run folder of the cohort."""
    cohort_dir = Path(cohort_dir)
    specs = cohort_evals(cohort_dir) if specs is None else specs
    mapping = {folder: [] for folder in run_folders(cohort_dir)}
    for spec in specs:
        for folder in eval_folders(spec, cohort_dir):
            if folder in mapping and spec.eval_id not in mapping[folder]:
                mapping[folder].append(spec.eval_id)
    return mapping
