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
from pathlib import Path

from resolver.core import UserError, choices_text, did_you_mean, read_json_file, refuse_unknown_keys

DENSITIES = ("normal", "lowdef", "corner")
# Fields a cohort-level filter may test (docs/cohort.md shows tags and sampler).
EVAL_FILTER_KEYS = ("eval_id", "model", "template", "sampler", "label", "groups", "tags", "hf_id")
# The keys each file may hold (docs/cohort.md); anything else is refused with "did you mean ...".
EVAL_KEYS = ("evaluate", "filters", "label", "groups", "tags", "hf_id")
EVALUATE_KEYS = ("glob",)
IDENTITY_KEYS = ("model", "template", "sampler")
DATASET_KEYS = ("name", "db", "cache", "config", "cohorts", "density")
COHORT_KEYS = ("path", "filters")


def eval_id(model: str, template: str, sampler: str) -> str:
    """The 6-character id of an evaluation triple: sha256("model|template|sampler")[:6]."""
    return hashlib.sha256(f"{model}|{template}|{sampler}".encode("utf-8")).hexdigest()[:6]


def facets_from_groups(groups) -> dict:
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


# ---------------------------------------------------------------- loading helpers

def _read_json(path: Path, what: str):
    return read_json_file(path, what)


def _string_list(value, where: str, key: str) -> tuple:
    """Accept a string or a list of strings; anything else is a user error."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UserError(f"{where}: '{key}' must be a string or a list of strings, got {json.dumps(value)}")


def _required_str(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise UserError(f"{where}: '{key}' must be a non-empty string")
    return value


def _parse_eval_entry(entry, where: str, cohort: str, cohort_dir: Path) -> EvalSpec:
    if not isinstance(entry, dict):
        raise UserError(f"{where}: each eval must be a JSON object with keys evaluate, filters, label, groups")
    refuse_unknown_keys(entry, EVAL_KEYS, where)
    evaluate = entry.get("evaluate")
    if not isinstance(evaluate, dict):
        raise UserError(f"{where}: 'evaluate' must be an object like {{\"glob\": \"<pattern>\"}}")
    refuse_unknown_keys(evaluate, EVALUATE_KEYS, f"{where}.evaluate")
    pattern = _checked_glob(_required_str(evaluate, "glob", f"{where}.evaluate"), f"{where}.evaluate.glob")
    filters = entry.get("filters")
    if not isinstance(filters, dict):
        raise UserError(f"{where}: 'filters' must be an object with model, template and sampler")
    refuse_unknown_keys(filters, IDENTITY_KEYS, f"{where}.filters")
    model = _required_str(filters, "model", f"{where}.filters")
    template = _required_str(filters, "template", f"{where}.filters")
    sampler = _required_str(filters, "sampler", f"{where}.filters")
    groups = _string_list(entry.get("groups"), where, "groups")
    label = entry.get("label") or model
    if not isinstance(label, str):
        raise UserError(f"{where}: 'label' must be a string")
    hf_id = entry.get("hf_id")
    if hf_id is not None and not isinstance(hf_id, str):
        raise UserError(f"{where}: 'hf_id' must be a string")
    return EvalSpec(
        eval_id=eval_id(model, template, sampler), model=model, template=template,
        sampler=sampler, label=label, groups=groups, facets=facets_from_groups(groups),
        tags=_string_list(entry.get("tags"), where, "tags"), hf_id=hf_id or None,
        cohort=cohort, glob=pattern, cohort_dir=cohort_dir, source=where,
    )


def load_evals(evals_json_path, cohort: str | None = None) -> list:
    """Parse a cohort's evals.json into EvalSpecs (UserError names the file and the entry)."""
    path = Path(evals_json_path)
    if path.is_dir():
        path = path / "evals.json"
    data = _read_json(path, "evals.json")
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON array of evals, got {type(data).__name__}")
    cohort_dir = path.resolve().parent
    name = cohort if cohort is not None else str(path.parent)
    specs = [_parse_eval_entry(entry, f"{path}[{i}]", name, cohort_dir) for i, entry in enumerate(data)]
    _reject_duplicates(specs)
    return specs


def _reject_duplicates(specs) -> None:
    seen = {}
    for spec in specs:
        if spec.eval_id in seen:
            raise UserError(
                f"{spec.source}: duplicate eval {spec.model}|{spec.template}|{spec.sampler} "
                f"(eval_id {spec.eval_id}) also defined at {seen[spec.eval_id]}")
        seen[spec.eval_id] = spec.source


# ---------------------------------------------------------------- cohort filters

def check_eval_filters(filters, where: str) -> dict:
    """Validate cohort-level filters: keys among EVAL_FILTER_KEYS, values str or list of str."""
    if filters is None:
        return {}
    if not isinstance(filters, dict):
        raise UserError(f"{where}: 'filters' must be an object, e.g. {{\"tags\": \"leaderboard\"}}")
    for key, value in filters.items():
        if key not in EVAL_FILTER_KEYS:
            shown = json.dumps(str(key), ensure_ascii=False)[1:-1][:80]
            raise UserError(f"{where}: unknown filter key '{shown}'{did_you_mean(key, EVAL_FILTER_KEYS)}; "
                            f"valid: {choices_text(EVAL_FILTER_KEYS)}")
        _string_list(value, where, key)
    return dict(filters)


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

def _dataset_path(obj: dict, key: str, base: Path, where: str, required: bool) -> Path | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise UserError(f"{where}: '{key}' must be a path (relative to the dataset file)")
    return (base / value).resolve()


def _parse_cohort(entry, where: str, base: Path) -> Cohort:
    if isinstance(entry, str):
        entry = {"path": entry}
    if not isinstance(entry, dict):
        raise UserError(f"{where}: each cohort must be an object like {{\"path\": \"r12/Model/evals.json\"}}")
    refuse_unknown_keys(entry, COHORT_KEYS, where)
    raw = _required_str(entry, "path", where)
    path = (base / raw).resolve()
    if path.is_dir():
        path = path / "evals.json"
    name = str(Path(raw).parent) if raw.endswith(".json") else raw.rstrip("/")
    return Cohort(path=path, name=name, filters=check_eval_filters(entry.get("filters"), where))


def load_dataset(path, allow_pointsdb: bool = False) -> Dataset:
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
    data = _read_json(path, "dataset file")
    where = str(path)
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with keys name, db, cache, config, cohorts")
    refuse_unknown_keys(data, DATASET_KEYS, where)
    base = path.resolve().parent
    cohorts_raw = data.get("cohorts")
    if not isinstance(cohorts_raw, list):
        raise UserError(f"{where}: 'cohorts' must be a list of {{\"path\": ..., \"filters\": ...}} objects")
    density = data.get("density", "normal")
    if density not in DENSITIES:
        raise UserError(f"{where}: 'density' must be one of {choices_text(DENSITIES)}, got {json.dumps(density)}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise UserError(f"{where}: 'name' must be a non-empty string")
    cohorts = [_parse_cohort(c, f"{where}: cohorts[{i}]", base) for i, c in enumerate(cohorts_raw)]
    evals = []
    for cohort in cohorts:
        evals.extend(s for s in load_evals(cohort.path, cohort.name) if eval_matches(s, cohort.filters))
    _reject_duplicates(evals)
    cache = _dataset_path(data, "cache", base, where, required=False) or (base / f".cache-{name}").resolve()
    return Dataset(
        name=name, path=path.resolve(), db_path=_dataset_path(data, "db", base, where, required=True),
        cache_dir=cache, config_path=_dataset_path(data, "config", base, where, required=False),
        density=density, cohorts=cohorts, evals=evals,
    )


# ---------------------------------------------------------------- a PointsDB as a dataset

# A DuckDB database file carries this tag after its 8-byte header checksum.
DUCKDB_MAGIC = b"DUCK"
DUCKDB_MAGIC_OFFSET = 8


def is_duckdb_file(path) -> bool:
    """True when `path` is a DuckDB database file (by its header bytes, not its name)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError:
        return False
    return head[DUCKDB_MAGIC_OFFSET:] == DUCKDB_MAGIC


def distinct_labels(rows) -> dict:
    """{eval_id: display label} from (eval_id, label, model) rows: the label, else the
    model; evals sharing a label get their eval id appended ("Model [a1b2c3]")."""
    labels, seen = {}, {}
    for eid, label, model in rows:
        text = label if isinstance(label, str) and label else (model if isinstance(model, str) and model else eid)
        seen[text] = seen.get(text, 0) + 1
        labels[eid] = text
    return {eid: (text if seen[text] == 1 else f"{text} [{eid}]") for eid, text in labels.items()}


def _listed(value) -> tuple:
    return tuple(str(v) for v in value) if value is not None and not isinstance(value, str) else ()


def dataset_from_pointsdb(path) -> Dataset:
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


def _checked_glob(pattern: str, where: str) -> str:
    """An evaluate.glob stays inside the tree it is resolved from: relative, no '..' parts."""
    if pattern.startswith(("/", "~", "\\")) or ":" in pattern.split("/")[0] or \
            any(part == ".." for part in pattern.replace("\\", "/").split("/")):
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
        real_folders = {}
        files = {f for m in matches for f in _ndjson_under(m, real_folders) if f.startswith(inside)}
        if files:
            return sorted(files, key=_path_order)
    return []


def eval_files(spec: EvalSpec) -> list:
    """``eval_file_paths`` as Paths."""
    return [Path(f) for f in eval_file_paths(spec)]
