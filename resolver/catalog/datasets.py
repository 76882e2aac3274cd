"""Datasets (data/<name>.json) and cohorts (evals.json), as described in docs/cohort.md.

A *cohort* is one model's directory holding an ``evals.json`` (which evaluations
exist and how to find their run folders) next to the raw run folders. A *dataset*
names a DB file, a cache directory, an experiment config and a list of cohorts, each
optionally narrowed by cohort-level filters (``{"tags": "leaderboard"}``).

Paths inside a dataset file are relative to the dataset file. Globs inside an
``evals.json`` are tried relative to the cohort directory first and then relative
to up to three of its ancestors (so the seed's repository-relative form
``data/r12/Model/*_slug_*/*`` works whatever the current directory is); the first
base that matches anything wins. A glob must be relative and free of ``..``, and
only files that resolve inside the base it matched from are used, so an
``evals.json`` cannot read files elsewhere on the machine (docs/security.md).
Unknown keys in a dataset file or an ``evals.json`` are refused, naming the
closest valid key.
"""
from __future__ import annotations

import glob as globlib
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Iterable

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationInfo, field_validator

from resolver.config import Density
from resolver.core import UserError, choices_text, did_you_mean, read_json_file
from resolver.core.typed import FileModel, validate_file

# Fields a cohort-level filter may test (docs/cohort.md shows tags and sampler).
EVAL_FILTER_KEYS = ("eval_id", "model", "template", "sampler", "label", "groups", "tags", "hf_id")


def eval_id(model: str, template: str, sampler: str) -> str:
    """The 6-character id of an evaluation triple: sha256("model|template|sampler")[:6]."""
    return hashlib.sha256(f"{model}|{template}|{sampler}".encode("utf-8")).hexdigest()[:6]


def facets_from_groups(groups: Iterable[str]) -> dict:
    """Decompose ``["arch:moe", "size:large"]`` into ``{"arch": "moe", "size": "large"}``.

    Only ``key:value`` items become facets (split at the first colon); a plain tag
    stays in ``groups`` only. When a key repeats, the last value wins.
    """
    facets = {}
    for item in groups or ():
        if isinstance(item, str) and ":" in item:
            key, value = item.split(":", 1)
            if key:
                facets[key] = value
    return facets


@dataclass(frozen=True)
class EvalSpec:
    """One evaluation of a cohort: the identity triple plus its metadata."""

    eval_id: str
    model: str
    template: str
    sampler: str
    label: str
    groups: tuple
    facets: dict
    tags: tuple
    hf_id: str | None
    cohort: str            # the cohort directory as named (relative to the dataset file when loaded from one)
    glob: str              # evaluate.glob exactly as written in evals.json
    cohort_dir: Path | None = None   # absolute cohort directory, used to resolve `glob`
    source: str = ""       # "<evals.json path>[index]" for error messages

    def as_row(self) -> dict:
        """The row written to the PointsDB ``evals`` table."""
        return {
            "eval_id": self.eval_id, "model": self.model, "template": self.template,
            "sampler": self.sampler, "label": self.label, "groups": list(self.groups),
            "facets": json.dumps(self.facets, sort_keys=True), "tags": list(self.tags),
            "hf_id": self.hf_id, "cohort": self.cohort,
        }


@dataclass(frozen=True)
class Cohort:
    """A dataset's reference to one cohort: its evals.json and the cohort-level filters."""

    path: Path             # absolute path of the evals.json
    name: str              # cohort directory as written in the dataset (relative to it)
    filters: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Dataset:
    """A parsed data/<name>.json with its cohorts' selected evals."""

    name: str
    path: Path
    db_path: Path
    cache_dir: Path
    config_path: Path | None
    density: str
    cohorts: list
    evals: list
    from_pointsdb: bool = False    # built from a PointsDB file itself (no config, no cohorts)


# ---------------------------------------------------------------- the files, as models

def _string_list(value: object, where: str, key: str) -> tuple:
    """Accept a string or a list of strings; anything else is a user error."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UserError(f"{where}: '{key}' must be a string or a list of strings, got {json.dumps(value)}")


def _as_strings(value: Any, info: ValidationInfo) -> Any:
    """A string or a list of strings, as a list (None is the empty list)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise ValueError(f"'{info.field_name}' must be a string or a list of strings, got {json.dumps(value)[:80]}")


def _no_change(value: Any) -> Any:
    return value


# A string or a list of strings in the file (checked by _as_strings, which names the key).
_Strings = Annotated[list[str], BeforeValidator(_no_change, json_schema_input_type=str | list[str] | None)]
_Text = Annotated[str, Field(min_length=1)]


class Evaluate(FileModel):
    """Where an eval's run folders are: a glob relative to the cohort (or up to three of its parents)."""

    glob: _Text

    @field_validator("glob")
    @classmethod
    def _inside(cls, pattern: str) -> str:
        return _checked_glob(pattern, None)


class Identity(FileModel):
    """The evaluation triple an eval_id is made from."""

    model: _Text
    template: _Text
    sampler: _Text


class EvalEntry(FileModel):
    """One entry of a cohort's evals.json (docs/cohort.md); docs/schemas/evals.json is generated from it."""

    evaluate: Evaluate
    filters: Identity
    label: str | None = Field(None, description="display name (default: the model)")
    groups: _Strings = Field(default_factory=list, description="'key:value' facets and plain groups")
    tags: _Strings = Field(default_factory=list)
    hf_id: str | None = None

    _lists = field_validator("groups", "tags", mode="before")(_as_strings)


def _filter_values(filters: Any, info: ValidationInfo) -> Any:
    if filters is None:
        return {}
    if isinstance(filters, dict):
        for key, value in filters.items():
            if key not in EVAL_FILTER_KEYS:
                shown = json.dumps(str(key), ensure_ascii=False)[1:-1][:80]
                raise ValueError(f"unknown filter key '{shown}'{did_you_mean(key, EVAL_FILTER_KEYS)}; "
                                 f"valid: {choices_text(EVAL_FILTER_KEYS)}")
            if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
                raise ValueError(f"'{key}' must be a string or a list of strings, got {json.dumps(value)[:80]}")
    return filters


class CohortRef(FileModel):
    """A dataset's cohort: its evals.json (or the folder holding it) and cohort-level filters."""

    path: _Text
    filters: dict[str, str | list[str]] = Field(default_factory=dict, description=(
        f"eval field -> value or values; fields: {', '.join(EVAL_FILTER_KEYS)}"))

    _filters = field_validator("filters", mode="before")(_filter_values)


class DatasetFile(FileModel):
    """A dataset file (data/<name>.json, docs/cohort.md); paths are relative to it.

    docs/schemas/dataset.json is generated from it."""

    name: _Text | None = Field(None, description="the dataset's name (default: the file's stem)")
    db: _Text = Field(description="the PointsDB file")
    cache: _Text | None = None
    config: _Text | None = Field(None, description="the experiment config the runs used")
    cohorts: list[CohortRef]
    density: Density = "normal"

    @field_validator("cohorts", mode="before")
    @classmethod
    def _paths_alone(cls, cohorts: Any) -> Any:
        # A cohort may be written as its path alone.
        return [{"path": c} if isinstance(c, str) else c for c in cohorts] if isinstance(cohorts, list) else cohorts


_EVALS = TypeAdapter(list[EvalEntry])


def load_evals(evals_json_path: str | PathLike[str], cohort: str | None = None) -> list:
    """Parse a cohort's evals.json into EvalSpecs (UserError names the file and the entry)."""
    path = Path(evals_json_path)
    if path.is_dir():
        path = path / "evals.json"
    data = read_json_file(path, "evals.json")
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON array of evals, got {type(data).__name__}")
    entries = validate_file(_EVALS, data, str(path))
    cohort_dir = path.resolve().parent
    name = cohort if cohort is not None else str(path.parent)
    specs = [_spec(entry, f"{path}[{i}]", name, cohort_dir) for i, entry in enumerate(entries)]
    _reject_duplicates(specs)
    return specs


def _spec(entry: EvalEntry, where: str, cohort: str, cohort_dir: Path) -> EvalSpec:
    ident = entry.filters
    return EvalSpec(
        eval_id=eval_id(ident.model, ident.template, ident.sampler), model=ident.model, template=ident.template,
        sampler=ident.sampler, label=entry.label or ident.model, groups=tuple(entry.groups),
        facets=facets_from_groups(entry.groups), tags=tuple(entry.tags), hf_id=entry.hf_id or None,
        cohort=cohort, glob=entry.evaluate.glob, cohort_dir=cohort_dir, source=where,
    )


def _reject_duplicates(specs: list[EvalSpec]) -> None:
    seen: dict[str, str] = {}      # eval_id -> where it was first defined
    for spec in specs:
        if spec.eval_id in seen:
            raise UserError(
                f"{spec.source}: duplicate eval {spec.model}|{spec.template}|{spec.sampler} "
                f"(eval_id {spec.eval_id}) also defined at {seen[spec.eval_id]}")
        seen[spec.eval_id] = spec.source


# ---------------------------------------------------------------- cohort filters

def eval_matches(spec: EvalSpec, filters: dict) -> bool:
    """True when the eval passes every filter (AND across keys, OR across listed values).

    For list fields (tags, groups) a value matches when the eval carries it; for the
    other fields a value matches by equality.
    """
    for key, wanted in filters.items():
        wanted = _string_list(wanted, "filters", key)
        have = getattr(spec, key)
        have = set(have) if isinstance(have, tuple) else {have}
        if not have.intersection(wanted):
            return False
    return True


# ---------------------------------------------------------------- datasets

def _parse_cohort(ref: CohortRef, base: Path) -> Cohort:
    path = (base / ref.path).resolve()
    if path.is_dir():
        path = path / "evals.json"
    name = str(Path(ref.path).parent) if ref.path.endswith(".json") else ref.path.rstrip("/")
    return Cohort(path=path, name=name, filters=dict(ref.filters))


def load_dataset(path: str | PathLike[str], allow_pointsdb: bool = False) -> Dataset:
    """Parse data/<name>.json and the evals of its cohorts (cohort filters applied).

    With ``allow_pointsdb`` a PointsDB file (recognised by its DuckDB header, whatever
    its name) stands for a dataset of its own evals (``dataset_from_pointsdb``);
    otherwise it is refused in one line that says a dataset config is needed.
    """
    path = Path(path)
    if is_duckdb_file(path):
        if allow_pointsdb:
            return dataset_from_pointsdb(path)
        raise UserError(f"{path} is a PointsDB file, not a dataset config; this needs a dataset config JSON "
                        f"whose 'db' names the database (e.g. data/r12.json, see docs/data.md)")
    data = read_json_file(path, "dataset file")
    where = str(path)
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with keys name, db, cache, config, cohorts")
    spec = validate_file(DatasetFile, data, where)
    base = path.resolve().parent
    name = spec.name or path.stem
    cohorts = [_parse_cohort(c, base) for c in spec.cohorts]
    evals: list[EvalSpec] = []
    for cohort in cohorts:
        evals.extend(s for s in load_evals(cohort.path, cohort.name) if eval_matches(s, cohort.filters))
    _reject_duplicates(evals)
    cache = (base / spec.cache).resolve() if spec.cache else (base / f".cache-{name}").resolve()
    return Dataset(
        name=name, path=path.resolve(), db_path=(base / spec.db).resolve(), cache_dir=cache,
        config_path=(base / spec.config).resolve() if spec.config else None,
        density=spec.density, cohorts=cohorts, evals=evals,
    )


# ---------------------------------------------------------------- a PointsDB as a dataset

# A DuckDB database file carries this tag after its 8-byte header checksum.
DUCKDB_MAGIC = b"DUCK"
DUCKDB_MAGIC_OFFSET = 8


def is_duckdb_file(path: str | PathLike[str]) -> bool:
    """True when `path` is a DuckDB database file (by its header bytes, not its name)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError:
        return False
    return head[DUCKDB_MAGIC_OFFSET:] == DUCKDB_MAGIC


def distinct_labels(rows: Iterable[tuple[str, object, object]]) -> dict:
    """{eval_id: display label} from (eval_id, label, model) rows: the label, else the
    model; evals sharing a label get their eval id appended ("Model [a1b2c3]")."""
    labels: dict[str, str] = {}
    seen: dict[str, int] = {}
    for eid, label, model in rows:
        text = label if isinstance(label, str) and label else (model if isinstance(model, str) and model else eid)
        seen[text] = seen.get(text, 0) + 1
        labels[eid] = text
    return {eid: (text if seen[text] == 1 else f"{text} [{eid}]") for eid, text in labels.items()}


def _listed(value: Iterable[object] | None) -> tuple:
    return tuple(str(v) for v in value) if value is not None and not isinstance(value, str) else ()


def dataset_from_pointsdb(path: str | PathLike[str]) -> Dataset:
    """A Dataset standing for a PointsDB file (e.g. evaluate.py --interview's output).

    Each eval identity (model/template/sampler) of the database's evals table becomes
    an eval; its label, groups, tags and hf_id are the stored ones (interview mode
    stores the model as the label), and evals sharing a label are told apart by
    ``distinct_labels``. Nothing here names an experiment config or cohorts: what
    needs them says so (resolver.analysis.common.require_config).
    """
    from resolver.pointsdb import open_pointsdb

    path = Path(path)
    with open_pointsdb(path, read_only=True) as db:
        rows = db.evals().to_dict("records")
    labels = distinct_labels((r["eval_id"], r.get("label"), r.get("model")) for r in rows)
    evals = []
    for row in rows:
        groups = _listed(row.get("groups"))
        hf_id = row.get("hf_id")
        evals.append(EvalSpec(
            eval_id=row["eval_id"], model=row.get("model") or "", template=row.get("template") or "",
            sampler=row.get("sampler") or "", label=labels[row["eval_id"]], groups=groups,
            facets=dict(row.get("facets") or {}), tags=_listed(row.get("tags")),
            hf_id=hf_id if isinstance(hf_id, str) and hf_id else None, cohort=row.get("cohort") or "",
            glob="", source=f"{path}[{row['eval_id']}]"))
    resolved = path.resolve()
    return Dataset(name=path.stem, path=resolved, db_path=resolved, cache_dir=resolved.parent / f".cache-{path.stem}",
                   config_path=None, density="normal", cohorts=[], evals=evals, from_pointsdb=True)


# ---------------------------------------------------------------- finding an eval's files

GLOB_BASE_LEVELS = 3      # cohort dir data/<set>/<Model> and up to the repository root


def _checked_glob(pattern: str, where: str | None) -> str:
    """An evaluate.glob stays inside the tree it is resolved from: relative, no '..' parts.

    ValueError (for the model's validator) when `where` is None, else UserError naming it."""
    if pattern.startswith(("/", "~", "\\")) or ":" in pattern.split("/")[0] or \
            any(part == ".." for part in pattern.replace("\\", "/").split("/")):
        if where is None:
            raise ValueError(f"{pattern!r} must be a relative pattern without '..' (e.g. "
                             f"data/r12/Model/*_model_zeroshot_greedy/*); globs cannot leave the dataset's tree")
        raise UserError(f"{where}: {pattern!r} must be a relative pattern without '..' "
                        f"(e.g. data/r12/Model/*_model_zeroshot_greedy/*); globs cannot leave the dataset's tree")
    return pattern


def _glob_bases(spec: EvalSpec) -> list:
    """Where a glob is tried: the cohort directory, then up to GLOB_BASE_LEVELS of its parents."""
    if spec.cohort_dir is None:
        return [Path.cwd()]
    return [spec.cohort_dir, *list(spec.cohort_dir.parents)[:GLOB_BASE_LEVELS]]


def _ndjson_under(match: str, real_folders: dict) -> list:
    """Resolved paths (text) of the NDJSON files a glob match names: the file itself, or
    every *.ndjson below a folder (symlinked files are followed, symlinked folders are not,
    as ``Path.rglob`` does).

    Only symlinks are resolved one by one; a plain file's real path is its folder's real
    path plus its name (one ``realpath`` per folder, cached in ``real_folders``, instead of
    one per file: 5,000 step files cost ~0.4 s the other way), and a matched file costs
    one ``lstat``.
    """
    try:
        mode = os.lstat(match).st_mode
    except OSError:
        return []
    if stat.S_ISLNK(mode):
        if os.path.isdir(match):
            mode = stat.S_IFDIR
        else:
            return [os.path.realpath(match)] if match.endswith(".ndjson") and os.path.isfile(match) else []
    if not stat.S_ISDIR(mode):
        if not (match.endswith(".ndjson") and stat.S_ISREG(mode)):
            return []
        folder, name = os.path.split(match)
        real = real_folders.get(folder)
        if real is None:
            real = real_folders[folder] = os.path.realpath(folder)
        return [os.path.join(real, name)]
    out, stack = [], [(match, os.path.realpath(match))]
    while stack:
        folder, real_folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:                 # unreadable folder: skipped, as rglob does
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, os.path.join(real_folder, entry.name)))
            elif entry.name.endswith(".ndjson") and entry.is_file():
                out.append(os.path.realpath(entry.path) if entry.is_symlink()
                           else os.path.join(real_folder, entry.name))
    return out


def _path_order(path: str) -> list:
    """Sort key giving the order of ``sorted(Path(...))`` (component by component) for text paths."""
    return path.split(os.sep)


def eval_file_paths(spec: EvalSpec) -> list:
    """The NDJSON files of an eval, as text: its glob's matches (files, or *.ndjson under folders).

    Returns absolute resolved paths, de-duplicated and sorted component by component (the
    order of sorted Paths); an empty list when the glob matches nothing (callers warn,
    naming the eval).
    """
    pattern_text = _checked_glob(spec.glob, spec.source or "evaluate.glob")
    for base in _glob_bases(spec):
        root = base.resolve()
        matches = globlib.glob(globlib.escape(str(root)) + "/" + pattern_text, recursive=True)
        # A symlink inside the tree could still point out of it: keep only what resolves inside.
        inside = str(root).rstrip(os.sep) + os.sep
        real_folders: dict[str, str] = {}
        files = {f for m in matches for f in _ndjson_under(m, real_folders) if f.startswith(inside)}
        if files:
            return sorted(files, key=_path_order)
    return []


def eval_files(spec: EvalSpec) -> list:
    """``eval_file_paths`` as Paths."""
    return [Path(f) for f in eval_file_paths(spec)]
