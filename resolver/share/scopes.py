"""What a data.py scope covers: the run folders and DB files of an eval, a cohort or a dataset.

Every item is named by a *key*: its path relative to the manifest's directory
(``data/``), in POSIX form. Two views of a scope exist:

* `local_items` - what is on disk now (what `push` would publish);
* `manifest_items` - what the manifest records (what `pull` would fetch).

`status` looks at both. Scopes (docs/cohort.md):

* ``eval <eval_id>`` or ``eval <cohort>/<eval_id>``: the run folders whose eval (by
  its evals.json glob) has that id;
* ``cohort <dir>``: every run folder of a ``data/<set>/<Model>/`` directory;
* ``dataset <data/name.json>``: the dataset's DB file; with ``--full`` also every
  run folder of every cohort the dataset names.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from resolver.catalog import cohorts as cohortlib, load_dataset
from resolver.catalog.manifest import Manifest
from resolver.core import UserError

SCOPES = ("eval", "cohort", "dataset")
_EVAL_ID = re.compile(r"^[0-9a-f]{6}$")


@dataclass
class Item:
    """One publishable thing: a run folder ("runs") or a DB file ("dbs")."""

    kind: str
    key: str
    path: Path
    cohort: str | None = None
    eval_ids: list = field(default_factory=list)
    datasets: list = field(default_factory=list)


@dataclass
class Scope:
    """A parsed scope argument: what to select, in terms of keys."""

    name: str                          # eval | cohort | dataset | all
    label: str                         # for messages
    cohorts: list = field(default_factory=list)     # cohort keys (runs of these)
    eval_id: str | None = None         # eval scope: only runs of this eval
    db_keys: list = field(default_factory=list)     # dataset scope: its DB
    datasets: list = field(default_factory=list)    # dataset keys that name the DB
    db_datasets: dict = field(default_factory=dict)  # everything scope: DB key -> dataset keys
    everything: bool = False
    evals: list = field(default_factory=list)       # dataset --full: (cohort key, eval_id, label) it names


def key_of(path: Path, data_dir: Path) -> str:
    """The manifest key of a local path; UserError when it lies outside the data directory."""
    path, data_dir = Path(path).resolve(), Path(data_dir).resolve()
    try:
        rel = path.relative_to(data_dir)
    except ValueError:
        raise UserError(f"{path} is outside the data directory {data_dir} that the manifest covers") from None
    if str(rel) == ".":
        raise UserError(f"{path} is the data directory itself; name a cohort, a dataset file or an eval_id")
    return rel.as_posix()


def _cohort_dir(target: str) -> Path:
    path = Path(target)
    if path.name == "evals.json":
        path = path.parent
    if path.exists() and not path.is_dir():
        raise UserError(f"cohort path {target} is not a directory; a cohort is data/<set>/<Model>/")
    return path


def parse_scope(scope: str | None, target: str | None, manifest: Manifest, full: bool = False,
                cohort: str | None = None) -> Scope:
    """Turn `data.py <action> <scope> <target>` into a Scope (UserError on bad input)."""
    data_dir = manifest.data_dir
    if scope is None:
        named = _all_dataset_dbs(data_dir)
        return Scope(name="all", label="everything", everything=True, db_keys=sorted(named), db_datasets=named)
    if scope not in SCOPES:
        raise UserError(f"unknown scope {scope!r}; valid: {', '.join(SCOPES)}")
    if not target:
        raise UserError(f"scope '{scope}' needs a target: eval <eval_id> | cohort <dir> | dataset <data/name.json>")
    if scope == "cohort":
        key = key_of(_cohort_dir(target), data_dir)
        return Scope(name="cohort", label=f"cohort {key}", cohorts=[key])
    if scope == "eval":
        if "/" in target.rstrip("/") and not cohort:      # data/r12/Model/1f0030 = --cohort + id
            cohort, target = target.rstrip("/").rsplit("/", 1)
        if not _EVAL_ID.match(target):
            raise UserError(f"eval scope takes a 6-character eval_id (e.g. 1f0030 or "
                            f"data/<set>/<Model>/1f0030), got {target!r}")
        cohorts = [key_of(_cohort_dir(cohort), data_dir)] if cohort else []
        return Scope(name="eval", label=f"eval {target}", eval_id=target, cohorts=cohorts)
    return _dataset_scope(Path(target), data_dir, full)


def _all_dataset_dbs(data_dir: Path) -> dict:
    """{DB key: [dataset keys naming it]} for every dataset file directly in the data directory."""
    named: dict = {}
    for path in sorted(Path(data_dir).glob("*.json")):
        if not cohortlib.looks_like_dataset(path):
            continue
        try:
            db_key = key_of(load_dataset(path).db_path, data_dir)
        except UserError:
            continue                   # a broken or foreign dataset file: status still works
        named.setdefault(db_key, []).append(key_of(path, data_dir))
    return named


def _dataset_scope(path: Path, data_dir: Path, full: bool) -> Scope:
    if path.is_dir() or path.suffix != ".json":
        raise UserError(f"dataset scope takes a dataset file such as data/r12.json, got {path}")
    dataset = load_dataset(path)
    cohorts = [key_of(c.path.parent, data_dir) for c in dataset.cohorts] if full else []
    evals = [(key_of(s.cohort_dir, data_dir), s.eval_id, s.label) for s in dataset.evals
             if s.cohort_dir is not None] if full else []
    return Scope(name="dataset", label=f"dataset {dataset.name}" + (" (full)" if full else ""),
                 cohorts=cohorts, db_keys=[key_of(dataset.db_path, data_dir)],
                 datasets=[key_of(path, data_dir)], evals=evals)


# ---------------------------------------------------------------- the two views

def manifest_items(scope: Scope, manifest: Manifest) -> list:
    """The manifest's entries that the scope selects."""
    data_dir = manifest.data_dir
    items = []
    for key, entry in sorted(manifest.dbs.items()):
        if scope.everything or key in scope.db_keys:
            items.append(Item("dbs", key, data_dir / key, datasets=list(entry.datasets)))
    for key, entry in sorted(manifest.runs.items()):
        if _run_selected(scope, entry.cohort, entry.eval_ids):
            items.append(Item("runs", key, data_dir / key, cohort=entry.cohort, eval_ids=list(entry.eval_ids)))
    return items


def never_pushed(scope: Scope, manifest: Manifest) -> list:
    """[(key, what)] of what a `dataset --full` scope names but the manifest lacks: the DB
    file, and each eval (key ``<cohort key>/<eval_id>``) with no run folder recorded in
    its cohort. A pull cannot deliver these, so it must say so rather than look complete."""
    missing = [(key, "the dataset's database") for key in scope.db_keys if key not in manifest.dbs] \
        if scope.evals else []
    published = {(e.cohort, eval_id) for e in manifest.runs.values() for eval_id in e.eval_ids}
    missing += [(f"{cohort}/{eval_id}", label) for cohort, eval_id, label in scope.evals
                if (cohort, eval_id) not in published]
    return missing


def _run_selected(scope: Scope, cohort: str | None, eval_ids: Iterable[str]) -> bool:
    if scope.everything:
        return True
    if scope.eval_id is not None:
        return scope.eval_id in eval_ids and (not scope.cohorts or cohort in scope.cohorts)
    return cohort in scope.cohorts


def local_items(scope: Scope, data_dir: Path, require_db: bool = False) -> list:
    """What exists on disk in the scope: DB files and run folders with their eval_ids."""
    data_dir = Path(data_dir)
    items = []
    for key in scope.db_keys:
        path = data_dir / key
        if path.is_file():
            items.append(Item("dbs", key, path, datasets=list(scope.db_datasets.get(key, scope.datasets))))
        elif require_db:
            raise UserError(f"database {path} does not exist yet; build it with: "
                            f"python evaluate.py --dataset {data_dir / scope.datasets[0]}")
    for cohort_dir in _local_cohort_dirs(scope, data_dir):
        cohort_key = key_of(cohort_dir, data_dir)
        for folder, eval_ids in cohortlib.folder_evals(cohort_dir).items():
            if scope.eval_id is None or scope.eval_id in eval_ids:
                items.append(Item("runs", key_of(folder, data_dir), folder, cohort=cohort_key,
                                  eval_ids=sorted(eval_ids)))
    return items


def _local_cohort_dirs(scope: Scope, data_dir: Path) -> list:
    if scope.everything or (scope.eval_id is not None and not scope.cohorts):
        return cohortlib.find_cohorts(data_dir)
    return [data_dir / key for key in scope.cohorts if (data_dir / key).is_dir()]
