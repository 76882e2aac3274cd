"""Incremental builds: what each eval's points depend on, and what a run must redo.

Every eval row stores a fingerprint of its input files (path, size, mtime) and of
the pipeline (ingest version, compressor and level, re-grading). A run compares the
dataset with the live DB's evals rows and plans: build (new or changed files),
relabel (metadata only), drop (no longer in the dataset), unchanged. The plan is
data (``Plan``, one dataclass per item) that the pipeline runs once.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from resolver import pointsdb
from resolver.catalog import EvalSpec, eval_file_paths
from resolver.core import UserError
from resolver.ingest.input_files import relative_names
from resolver.records import TEXT_SIZE_METHOD

if TYPE_CHECKING:
    from resolver.catalog import Dataset

# Bump when the meaning of stored numbers changes, so every eval is rebuilt once.
INGEST_VERSION = 2


def files_fingerprint(spec: EvalSpec, files: Sequence[str], base: Path | None, regrade_version: int | None = None,
                      sizes: list[int] | None = None) -> str:
    """What an eval's points depend on: its triple, its files (path, size, mtime), the pipeline.

    ``regrade_version``: the grader version of an --offline build (its verdicts are
    the current grader's, not the files'). ``sizes``: a list that receives each file's
    size (the scan plans its batches with them: one ``stat`` per file in all).
    """
    regrade = "" if regrade_version is None else f"|regrade{regrade_version}"
    h = hashlib.sha256(f"v{INGEST_VERSION}|{TEXT_SIZE_METHOD}{regrade}|{spec.model}|{spec.template}|{spec.sampler}".encode())
    for path, name in zip(files, relative_names(files, base)):
        st = os.stat(path)
        h.update(f"\n{name}|{st.st_size}|{st.st_mtime_ns}".encode())
        if sizes is not None:
            sizes.append(st.st_size)
    return h.hexdigest()[:20]


def existing_state(db_path: Path) -> tuple[dict[str, dict[str, Any]], dict]:
    """({eval_id: evals row}, meta) of the live DB; ({}, {}) when there is none or it is stale.

    A DB written by an older schema counts as empty (everything is rebuilt); a file
    that is not a PointsDB at all is never overwritten silently.
    """
    if not db_path.exists():
        return {}, {}
    try:
        pdb = pointsdb.open_pointsdb(db_path)
    except UserError:
        raise UserError(f"{db_path} exists but is not a readable PointsDB; move it away or delete it, then run again")
    with pdb:
        if pdb.meta().get("schema_version") != str(pointsdb.SCHEMA_VERSION):
            return {}, {}
        cursor = pdb.con.execute("SELECT * FROM evals")
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, values)) for values in cursor.fetchall()]
        meta = pdb.meta()
    for row in rows:
        row["groups"] = list(row["groups"]) if row["groups"] is not None else []
        row["tags"] = list(row["tags"]) if row["tags"] is not None else []
    return {row["eval_id"]: row for row in rows}, meta


_METADATA_KEYS = ("label", "groups", "facets", "tags", "hf_id", "cohort")


def _metadata_differs(spec: EvalSpec, old: dict) -> bool:
    new = spec.as_row()
    return any(_norm(new[k]) != _norm(old.get(k)) for k in _METADATA_KEYS)


def _norm(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("{"):
        return json.loads(value)
    if value is not None and not isinstance(value, (str, int, float, dict)):
        return list(value)
    return value



# ------------------------------------------------------------------ the plan
# plan_dataset / plan_interview return everything a run writes except what only the scan
# can tell (an eval's counts, EvalStats.counts_row): the pipeline runs the plan without
# coming back here (docs/decisions.md, *evaluate's build plan*).

@dataclass(frozen=True)
class Build:
    """An eval to (re)build: its files in merge order, their sizes, and its evals row
    without the counts the scan produces."""

    spec: EvalSpec
    files: list[str]
    sizes: list[int]
    row: dict                   # EvalSpec.as_row() and the fingerprint


@dataclass(frozen=True)
class Relabel:
    """An eval whose files did not change but whose metadata did: its new evals row (old
    fingerprint and counts) and the groups / facets copied onto each of its points."""

    spec: EvalSpec
    row: dict
    groups: tuple
    facets_json: str


@dataclass(frozen=True)
class NoFiles:
    """An eval whose glob matched no NDJSON file; ``kept``: the DB still holds its points."""

    spec: EvalSpec
    kept: bool


@dataclass(frozen=True)
class MetaUpdate:
    """The dataset-level rows to rewrite: the meta table and the config's expected points."""

    meta: dict
    config_path: Path | None
    dataset_path: Path
    density: str


@dataclass
class Plan:
    """What a dataset run does, item by item (see the module docstring)."""

    db_path: Path
    reuse: bool = False                     # the live DB is a current-schema PointsDB: copy and update it
    build: list[Build] = field(default_factory=list)
    relabel: list[Relabel] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)          # eval ids no longer in the dataset
    unchanged: list[EvalSpec] = field(default_factory=list)
    no_files: list[NoFiles] = field(default_factory=list)
    meta: MetaUpdate | None = None          # None: the meta and expected tables stay

    def touches_db(self) -> bool:
        return bool(self.build or self.relabel or self.drop or self.meta)


def _build(spec: EvalSpec, files: list[str], sizes: list[int], fingerprint: str) -> Build:
    return Build(spec, files, sizes, {**spec.as_row(), "fingerprint": fingerprint})


def _relabel(spec: EvalSpec, old: dict) -> Relabel:
    row = {**spec.as_row(), "fingerprint": old.get("fingerprint")}
    row.update({k: old.get(k) for k in ("files", "samples", "points", "grader_version", "task_versions")})
    return Relabel(spec, row, tuple(spec.groups), pointsdb.canonical_json(spec.facets))


def plan_dataset(dataset: Dataset, regrade_version: int | None = None) -> Plan:
    """Compare the dataset with its live PointsDB: what to build, relabel, drop and keep.

    ``regrade_version``: the grader version of an --offline run (part of each fingerprint).
    """
    existing, old_meta = existing_state(dataset.db_path)
    plan = Plan(dataset.db_path, reuse=bool(old_meta))
    base = dataset.db_path.parent
    for spec in dataset.evals:
        files = eval_file_paths(spec)
        old = existing.get(spec.eval_id)
        if not files:
            plan.no_files.append(NoFiles(spec, old is not None))
            if old is not None and _metadata_differs(spec, old):
                plan.relabel.append(_relabel(spec, old))
            continue
        sizes: list[int] = []
        fingerprint = files_fingerprint(spec, files, base, regrade_version, sizes)
        if old is None or old.get("fingerprint") != fingerprint:
            plan.build.append(_build(spec, files, sizes, fingerprint))
        elif _metadata_differs(spec, old):
            plan.relabel.append(_relabel(spec, old))
        else:
            plan.unchanged.append(spec)
    wanted = {s.eval_id for s in dataset.evals}
    plan.drop = sorted(e for e in existing if e not in wanted)
    meta = dataset_meta(dataset)
    if {k: v for k, v in old_meta.items() if k != "schema_version"} != meta:
        plan.meta = MetaUpdate(meta, dataset.config_path, dataset.path, dataset.density)
    return plan


def plan_interview(evals: list[tuple[EvalSpec, list[str]]], base: Path | None) -> list[Build]:
    """Interview mode (rebuilt every time): one Build per eval found in the records, with its files."""
    out = []
    for spec, files in evals:
        sizes: list[int] = []
        out.append(_build(spec, files, sizes, files_fingerprint(spec, files, base, sizes=sizes)))
    return out


def dataset_meta(dataset: Dataset) -> dict:
    """What the expected table depends on: the config's content and the density."""
    config = dataset.config_path
    digest = hashlib.sha256(config.read_bytes()).hexdigest()[:20] if config and config.is_file() else ""
    return {"dataset": dataset.name, "config": str(config or ""), "config_sha": digest, "density": dataset.density}
