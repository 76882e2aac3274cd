"""Incremental builds: what each eval's points depend on, and what a run must redo.

Every eval row stores a fingerprint of its input files (path, size, mtime) and of
the pipeline (ingest version, compressor and level, re-grading). A run compares the
dataset with the live DB's evals rows and plans: build (new or changed files),
relabel (metadata only), drop (no longer in the dataset), unchanged.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from resolver import pointsdb
from resolver.catalog import EvalSpec, eval_file_paths
from resolver.core import UserError
from resolver.ingest.input_files import relative_names
from resolver.records import TEXT_SIZE_METHOD

if TYPE_CHECKING:
    from resolver.catalog import Dataset

# Bump when the meaning of stored numbers changes, so every eval is rebuilt once.
INGEST_VERSION = 2


def files_fingerprint(spec: EvalSpec, files, base: Path, regrade_version: int | None = None,
                      sizes: list | None = None) -> str:
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


def eval_row(spec: EvalSpec, fingerprint: str, stats, old: dict | None = None) -> dict:
    row = spec.as_row()
    row["fingerprint"] = fingerprint
    if stats is not None:
        row.update(files=stats.files, samples=stats.samples, points=stats.points,
                   grader_version=min(stats.grader_versions) if stats.grader_versions else None,
                   task_versions=pointsdb.canonical_json(stats.task_versions))
    elif old is not None:
        row.update({k: old.get(k) for k in ("files", "samples", "points", "grader_version", "task_versions")})
    return row


def existing_state(db_path: Path):
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


def _norm(value):
    if isinstance(value, str) and value.startswith("{"):
        return json.loads(value)
    if value is not None and not isinstance(value, (str, int, float, dict)):
        return list(value)
    return value


@dataclass
class Plan:
    build: list = field(default_factory=list)        # (spec, files (text), fingerprint, sizes)
    relabel: list = field(default_factory=list)      # (spec, old row)
    drop: list = field(default_factory=list)         # eval ids
    unchanged: list = field(default_factory=list)    # specs
    no_files: list = field(default_factory=list)     # (spec, kept: bool)
    meta: dict = field(default_factory=dict)
    meta_changed: bool = False

    def touches_db(self) -> bool:
        return bool(self.build or self.relabel or self.drop or self.meta_changed)


def plan_dataset(dataset: Dataset, existing: dict, old_meta: dict, regrade_version: int | None = None) -> Plan:
    plan = Plan()
    base = dataset.db_path.parent
    for spec in dataset.evals:
        files = eval_file_paths(spec)
        old = existing.get(spec.eval_id)
        if not files:
            plan.no_files.append((spec, old is not None))
            if old is not None and _metadata_differs(spec, old):
                plan.relabel.append((spec, old))
            continue
        sizes: list[int] = []
        fingerprint = files_fingerprint(spec, files, base, regrade_version, sizes)
        if old is None or old.get("fingerprint") != fingerprint:
            plan.build.append((spec, files, fingerprint, sizes))
        elif _metadata_differs(spec, old):
            plan.relabel.append((spec, old))
        else:
            plan.unchanged.append(spec)
    wanted = {s.eval_id for s in dataset.evals}
    plan.drop = sorted(e for e in existing if e not in wanted)
    plan.meta = dataset_meta(dataset)
    plan.meta_changed = {k: v for k, v in old_meta.items() if k != "schema_version"} != plan.meta
    return plan


def dataset_meta(dataset: Dataset) -> dict:
    """What the expected table depends on: the config's content and the density."""
    config = dataset.config_path
    digest = hashlib.sha256(config.read_bytes()).hexdigest()[:20] if config and config.is_file() else ""
    return {"dataset": dataset.name, "config": str(config or ""), "config_sha": digest, "density": dataset.density}


def expected_rows(dataset: Dataset, warn) -> list:
    """(base_task, degree, points) from the dataset's config, or [] (with a warning) when unavailable."""
    config = dataset.config_path
    if config is None:
        return []
    if not config.is_file():
        warn(f"config {config} named by {dataset.path} not found; completeness (N/M) will be unknown")
        return []
    try:
        from resolver.config import expected_points, load_config
    except ImportError as exc:
        warn(f"cannot compute expected points ({exc}); completeness (N/M) will be unknown")
        return []
    counts = expected_points(load_config(config, check_points=False), density=dataset.density)
    return sorted(((task, degree, int(n)) for (task, degree), n in counts.items()),
                  key=lambda r: (r[0], -1 if r[1] is None else r[1]))
