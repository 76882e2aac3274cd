"""cohort.py verify: check that a cohort's evals.json and its run folders agree.

For every eval of the cohort:

1. its glob matches at least one run folder;
2. every NDJSON line parses, and every record carries the eval's model, template
   and sampler (and a key and params, which evaluate.py needs);
3. the points its experiment config expects are present, per (task, degree), and
   each point has at least the sample count the records declare (params.count).

The config comes from a dataset file that names the cohort (its density too), or
else from configs/<name>.yaml where <name> is the config part of the run folder
name. When neither exists, point completeness is skipped with a note.

Problems carry file and line; `verify_cohort` returns them instead of printing.
"""
from __future__ import annotations

import json
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from resolver.catalog.cohorts import EVALS_FILE, cohort_evals, datasets_naming, eval_folders
from resolver.catalog.datasets import EvalSpec
from resolver.config import expected_points, load_config
from resolver.core import UserError, display_path
from resolver.records import iter_records, safe_name

if TYPE_CHECKING:
    from resolver.config import ExperimentConfig

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_")
MAX_PER_FILE = 5      # identical complaints per file before summarising the rest


@dataclass
class Problem:
    where: str          # "path" or "path:line"
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class EvalCheck:
    """What verify saw for one eval."""

    eval_id: str
    label: str
    folders: int = 0
    files: int = 0
    records: int = 0
    points: int = 0
    expected: int | None = None
    problems: list = field(default_factory=list)


@dataclass
class CohortCheck:
    path: Path
    evals: list = field(default_factory=list)
    problems: list = field(default_factory=list)     # cohort-level (evals.json) problems
    notes: list = field(default_factory=list)

    def all_problems(self) -> list:
        return self.problems + [p for e in self.evals for p in e.problems]


# ---------------------------------------------------------------- the config an eval was run with

def _config_for(cohort_dir: Path, config_names: Iterable[str], notes: list) -> tuple[ExperimentConfig | None, str | None]:
    """(ExperimentConfig, density) from a dataset naming the cohort or configs/<name>.yaml."""
    for dataset in datasets_naming(cohort_dir):
        if dataset.config_path is not None and dataset.config_path.is_file():
            return load_config(dataset.config_path), dataset.density
    for name in config_names:
        for base in [Path.cwd(), *Path(cohort_dir).resolve().parents]:
            candidate = base / "configs" / f"{name}.yaml"
            if name and candidate.is_file():
                return load_config(candidate), "normal"
    notes.append(f"{cohort_dir}: no dataset names this cohort and no configs/<name>.yaml was found; "
                 f"point completeness not checked")
    return None, None


def config_name(folder_name: str, spec: EvalSpec) -> str | None:
    """The <config> of a run folder <YYYY-MM-DD_HH-MM-SS>_<config>_<model>_<template>_<sampler>[-N]."""
    suffix = "_" + "_".join(safe_name(x) for x in (spec.model, spec.template, spec.sampler))
    name = re.sub(r"-\d+$", "", folder_name) if not folder_name.endswith(suffix) else folder_name
    if not (TIMESTAMP.match(name) and name.endswith(suffix)):
        return None
    return name[20:len(name) - len(suffix)] or None


# ---------------------------------------------------------------- records

class _FileReport:
    """Collects a file's complaints, keeping the first few of each kind and counting the rest."""

    def __init__(self, path: Path, sink: list):
        self.path, self.sink = display_path(path), sink
        self.counts: dict[str, int] = {}

    def add(self, line: int | None, kind: str, message: str) -> None:
        n = self.counts[kind] = self.counts.get(kind, 0) + 1
        if n <= MAX_PER_FILE:
            where = f"{self.path}:{line}" if line else str(self.path)
            self.sink.append(Problem(where, message))

    def close(self) -> None:
        for kind, n in self.counts.items():
            if n > MAX_PER_FILE:
                self.sink.append(Problem(str(self.path), f"... and {n - MAX_PER_FILE} more lines with {kind}"))


def _check_file(path: Path, spec: EvalSpec, check: EvalCheck, points: dict) -> None:
    report = _FileReport(path, check.problems)
    wanted = {"model": spec.model, "template": spec.template, "sampler": spec.sampler}
    for line, record, error in iter_records(path):
        if record is None:          # then `error` says why (iter_records)
            report.add(line, "unparsable JSON", (error or "").split(": ", 1)[-1])
            continue
        check.records += 1
        for name, value in wanted.items():
            if record.get(name) != value:
                report.add(line, f"a wrong {name}",
                           f"{name} is {record.get(name)!r} but eval {spec.eval_id} says {value!r}")
        _note_point(record, line, report, points)
    report.close()


def _note_point(record: dict, line: int, report: _FileReport, points: dict) -> None:
    """Record the sample under its point identity; complain when key or params are unusable."""
    params, key = record.get("params"), record.get("key")
    if not isinstance(params, dict) or not isinstance(key, str) or "-" not in key:
        report.add(line, "no key/params", "record lacks a 'key' (<step>-<index>) or a 'params' object")
        return
    identity_params = {k: v for k, v in params.items() if k != "count"}
    manifold = record.get("manifold")
    if not isinstance(manifold, dict):
        manifold = {}
    point = (record.get("base_task"), manifold.get("degree"), json.dumps(identity_params, sort_keys=True))
    entry = points.setdefault(point, {"samples": set(), "count": params.get("count"), "where": f"{report.path}:{line}"})
    entry["samples"].add(key.rsplit("-", 1)[1])


# ---------------------------------------------------------------- completeness

def _check_points(points: dict, config: ExperimentConfig | None, density: str | None, check: EvalCheck,
                  warnings: list) -> None:
    check.points = len(points)
    short = [(p, e) for p, e in points.items() if isinstance(e["count"], int) and len(e["samples"]) < e["count"]]
    for (task, _, params), entry in short[:MAX_PER_FILE]:
        check.problems.append(Problem(entry["where"], f"point {task} {params} has {len(entry['samples'])} "
                                                      f"of its {entry['count']} samples"))
    if len(short) > MAX_PER_FILE:
        check.problems.append(Problem(f"eval {check.eval_id}", f"... and {len(short) - MAX_PER_FILE} more short points"))
    if config is None:
        return
    assert density is not None, "_config_for gives a config with its density"
    expected = expected_points(config, density=density)
    check.expected = sum(expected.values())
    observed: dict = {}
    for task, degree, _ in points:
        observed[(task, degree)] = observed.get((task, degree), 0) + 1
    for key in sorted(set(expected) | set(observed), key=str):
        have, want = observed.get(key, 0), expected.get(key, 0)
        label = f"task {key[0]}" + (f" degree {key[1]}" if key[1] is not None else "")
        if have < want:
            check.problems.append(Problem(f"eval {check.eval_id}", f"{label}: {have} of the {want} points "
                                                                   f"config {config.name} expects ({density})"))
        elif have > want:
            warnings.append(f"eval {check.eval_id}: {label}: {have} points, more than the {want} "
                            f"config {config.name} expects at density {density}")


# ---------------------------------------------------------------- one cohort

def verify_cohort(cohort_dir: str | PathLike[str], progress: Callable[..., Any] | None = None) -> CohortCheck:
    """Check one cohort; problems are collected, never raised.

    `progress`: a tqdm-like factory the command hands in for a bar over each eval's bytes
    read (none: no bar).
    """
    cohort_dir = Path(cohort_dir)
    result = CohortCheck(cohort_dir)
    try:
        specs = cohort_evals(cohort_dir)
    except UserError as exc:
        result.problems.append(Problem(str(cohort_dir / EVALS_FILE), str(exc)))
        return result
    if not specs:
        result.problems.append(Problem(str(cohort_dir / EVALS_FILE), "defines no evals"))
    matched = {spec.eval_id: eval_folders(spec, cohort_dir) for spec in specs}
    config, density = (None, None)
    if any(matched.values()):
        names = sorted({n for spec in specs for f in matched[spec.eval_id]
                        if (n := config_name(f.name, spec)) is not None})
        try:
            config, density = _config_for(cohort_dir, names, result.notes)
        except UserError as exc:
            result.notes.append(f"config could not be loaded ({exc}); point completeness not checked")
    for spec in specs:
        result.evals.append(_verify_eval(spec, matched[spec.eval_id], config, density, result.notes, progress))
    return result


def _verify_eval(spec: EvalSpec, folders: dict, config: ExperimentConfig | None, density: str | None, notes: list,
                 progress: Callable[..., Any] | None) -> EvalCheck:
    check = EvalCheck(spec.eval_id, spec.label, folders=len(folders))
    if not folders:
        check.problems.append(Problem(spec.source, f"glob {spec.glob!r} matches no run folder "
                                                   f"(not pulled? python data.py pull eval {spec.eval_id})"))
        return check
    files = sorted(f for fs in folders.values() for f in fs)
    check.files = len(files)
    points: dict = {}
    total = sum(f.stat().st_size for f in files)
    bar = (progress(total=total, unit="B", unit_scale=True, desc=f"verify {spec.eval_id}", leave=False)
           if progress is not None else None)
    with bar if bar is not None else nullcontext():
        for path in files:
            _check_file(path, spec, check, points)
            if bar is not None:
                bar.update(path.stat().st_size)
    _check_points(points, config, density, check, notes)
    return check
