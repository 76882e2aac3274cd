"""Experiment configs (docs/configs.md): load and validate the YAML, expand it into steps.

A config names precision levels and tasks; each task has named manifold entries
(grids of generator parameters, or calibration targets) and views (query recipes
for analysis). `expand_steps` turns the entries into runner steps:

* density thins every list of a grid (normal: all; lowdef: every other value, the
  first and the last always kept; corner: first and last only);
* `--degree N` (docs/runner.md) is the degree of the entries that do not specify one: their
  points record degree N; entries with a degree keep theirs and every entry runs;
* a step's parameters are exactly the grid's values (no defaults, no `count`), in
  the order the grid writes them; its name is `NNN_<task>_<p>-<v>...` with the
  parameters sorted by name, and its seed is the last 8 hex digits of
  sha256(json.dumps(params, sort_keys=True)) plus the run seed;
* a parameter set already produced by an earlier entry of the same task is not
  repeated (the first entry keeps it), so each point is one step.

Every problem is a UserError naming the file, the key path and the valid choices.
"""
from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from resolver.config.point_identity import canonical_params, identity_text, step_seed
from resolver.core import UserError, choices_text, did_you_mean, file_not_found, read_yaml_file

DENSITIES = ("normal", "lowdef", "corner")
MODES = ("grid", "calibrate")
VIEW_PREFIXES = ("params", "manifold")
MANIFOLD_KEYS = ("id", "degree", "target_tokens")
DEFAULT_PRECISION = {"default": {"count": 32, "maxrounds": 1, "target_margin": 0.05}}

_TOP_KEYS = {"name", "description", "precision", "tasks"}
_TASK_KEYS = {"name", "label", "generator", "mode", "manifolds", "views", "description"}
_ENTRY_KEYS = {"id", "grid", "degree", "calibrate", "description"}
MAX_GRID_POINTS = 100_000       # points of one manifold entry's grid (docs/security.md)
MAX_CONFIG_POINTS = 1_000_000   # points of all grids of a config together
_VIEW_KEYS = {"view", "group_by", "filters", "facet_by", "description"}
_PRECISION_KEYS = {"count", "maxrounds", "target_margin"}
# Task names become parts of step and file names.
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Precision:
    count: int
    maxrounds: int = 1
    target_margin: float = 0.05


@dataclass(frozen=True)
class View:
    view: str
    group_by: list
    filters: dict = field(default_factory=dict)
    facet_by: list | None = None


@dataclass(frozen=True)
class ManifoldEntry:
    id: str
    grid: dict                      # param -> list of values (scalars become one-item lists)
    degree: int | None = None
    calibrate: dict | None = None   # {"param": name, "target_tokens": [int, ...]}


@dataclass(frozen=True)
class TaskConfig:
    name: str
    label: str
    generator: str
    mode: str
    manifolds: list
    views: list


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    path: str
    precision: dict
    tasks: list

    def task(self, name: str) -> TaskConfig:
        for t in self.tasks:
            if t.name == name:
                return t
        raise UserError(f"{self.path}: no task {name!r}; valid tasks: {choices_text(self.task_names())}")

    def task_names(self) -> list[str]:
        return [t.name for t in self.tasks]

    def precision_level(self, name: str | None) -> tuple[str, Precision]:
        """The named precision level, or the first defined one when name is None."""
        if name is None:
            name = next(iter(self.precision))
        if name not in self.precision:
            raise UserError(f"{self.path}: --precision {name!r} is not defined; "
                            f"valid: {choices_text(self.precision)}")
        return name, self.precision[name]


@dataclass(frozen=True)
class Step:
    index: int
    name: str
    base_task: str
    generator: str
    params: dict        # the grid values, validated, without count
    manifold: dict
    seed: int
    gen_params: dict = field(default_factory=dict)  # params + the generator's defaults


# ---------------------------------------------------------------- helpers
class _Where:
    """Builds "file: key.path" prefixes for error messages."""

    def __init__(self, path: str, key: str = ""):
        self.path, self.key = path, key

    def __truediv__(self, part) -> "_Where":
        if not isinstance(part, int) and not str(part).isprintable():
            part = repr(str(part))        # a key like "\n" must not break the one-line message
        part = f"[{part}]" if isinstance(part, int) else (f".{part}" if self.key else str(part))
        return _Where(self.path, self.key + part)

    def fail(self, message: str):
        raise UserError(f"{self.path}: {self.key}: {message}" if self.key else f"{self.path}: {message}")


def _mapping(value, where: _Where, allowed: set) -> dict:
    if not isinstance(value, dict):
        where.fail(f"must be a mapping, got {type(value).__name__}")
    unknown = [k for k in value if k not in allowed]
    if unknown:
        (where / str(unknown[0])).fail(f"unknown key{did_you_mean(unknown[0], allowed)}; "
                                       f"valid keys: {choices_text(allowed)}")
    return value


def _string(value, where: _Where) -> str:
    if not isinstance(value, str) or not value.strip():
        where.fail(f"must be a non-empty string, got {value!r}")
    return value


def _int(value, where: _Where, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        where.fail(f"must be an integer >= {low}, got {value!r}")
    return value


def _string_list(value, where: _Where) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        where.fail("must be a non-empty list of strings")
    return [_string(v, where / i) for i, v in enumerate(value)]


# ---------------------------------------------------------------- loading
def load_config(path, check_points: bool = True) -> ExperimentConfig:
    """Read and validate an experiment config (UserError on any problem).

    ``check_points=False`` skips the generators' cross-parameter check of every grid
    point (the config's structure, names and values are still checked): for callers
    that only count points, such as evaluate.py's completeness table.
    """
    p = Path(path)
    if p.is_dir():
        raise UserError(f"config {str(path)!r} is a directory; expected a YAML file such as configs/tiny.yaml")
    if not p.is_file():
        raise file_not_found("config", path, (".yaml", ".yml"))
    data = read_yaml_file(p, "config")
    where = _Where(str(path))
    if data is None:
        where.fail("the file is empty; expected a mapping with name, precision and tasks")
    data = _mapping(data, where, _TOP_KEYS)
    name = _string(data.get("name", p.stem), where / "name")
    precision = _load_precision(data.get("precision", DEFAULT_PRECISION), where / "precision")
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        (where / "tasks").fail("must be a non-empty list of tasks")
    tasks = [_load_task(t, where / "tasks" / i, check_points) for i, t in enumerate(raw_tasks)]
    total = sum(math.prod(len(v) for v in e.grid.values()) for t in tasks for e in t.manifolds)
    if total > MAX_CONFIG_POINTS:
        (where / "tasks").fail(f"the grids hold {total:,} points in all; the limit is {MAX_CONFIG_POINTS:,} "
                               f"(docs/security.md)")
    names = [t.name for t in tasks]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        (where / "tasks").fail(f"task name {duplicate!r} is used twice; task names must be unique")
    return ExperimentConfig(name, str(path), precision, tasks)


def _load_precision(raw, where: _Where) -> dict:
    if not isinstance(raw, dict) or not raw:
        where.fail("must be a mapping of level name -> {count, maxrounds, target_margin}")
    levels = {}
    for level, spec in raw.items():
        at = where / str(level)
        spec = _mapping(spec, at, _PRECISION_KEYS)
        if "count" not in spec:
            at.fail("needs 'count' (samples per round)")
        margin = spec.get("target_margin", 0.05)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < 1:
            (at / "target_margin").fail(f"must be a number between 0 and 1, got {margin!r}")
        levels[str(level)] = Precision(_int(spec["count"], at / "count", 1),
                                       _int(spec.get("maxrounds", 1), at / "maxrounds", 1), float(margin))
    return levels


def _load_task(raw, where: _Where, check_points: bool = True) -> TaskConfig:
    from resolver.tasks import get_task

    raw = _mapping(raw, where, _TASK_KEYS)
    name = _string(raw.get("name"), where / "name")
    if not _SAFE_NAME.fullmatch(name):
        (where / "name").fail(f"{name!r} is not valid; use letters, digits, '_', '-' and '.'")
    generator = _string(raw.get("generator", name), where / "generator")
    try:
        task = get_task(generator)
    except UserError as exc:
        (where / "generator").fail(str(exc))
    mode = raw.get("mode", "grid")
    if mode not in MODES:
        (where / "mode").fail(f"{mode!r} is not valid; valid: {choices_text(MODES)}")
    entries_raw = raw.get("manifolds")
    if not isinstance(entries_raw, list) or not entries_raw:
        (where / "manifolds").fail("must be a non-empty list of named entries")
    entries = [_load_entry(e, where / "manifolds" / i, task, mode, check_points) for i, e in enumerate(entries_raw)]
    ids = [e.id for e in entries]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        (where / "manifolds").fail(f"id {duplicate!r} is used twice; ids must be unique within a task")
    views_raw = raw.get("views", [])
    if not isinstance(views_raw, list):
        (where / "views").fail("must be a list of views")
    views = [_load_view(v, where / "views" / i, task) for i, v in enumerate(views_raw)]
    return TaskConfig(name, str(raw.get("label", name)), generator, mode, entries, views)


def _load_grid(raw, where: _Where, task) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        where.fail("must be a mapping of parameter -> value or list of values")
    known = {p.name: p for p in task.params}
    grid = {}
    for pname, values in raw.items():
        at = where / str(pname)
        if pname == "count":
            at.fail("count is not a grid parameter; samples per point come from 'precision'")
        if pname not in known:
            at.fail(f"unknown parameter for generator {task.name!r}; valid: {choices_text(known)}")
        values = values if isinstance(values, list) else [values]
        if not values:
            at.fail("an empty list gives no points")
        try:
            grid[pname] = [known[pname].check(v, task.name) for v in values]
        except UserError as exc:
            at.fail(str(exc))
    return grid


def _load_entry(raw, where: _Where, task, mode: str, check_points: bool = True) -> ManifoldEntry:
    raw = _mapping(raw, where, _ENTRY_KEYS)
    entry_id = _string(raw.get("id"), where / "id")
    grid = _load_grid(raw.get("grid"), where / "grid", task)
    degree = raw.get("degree")
    if degree is not None:
        degree = _int(degree, where / "degree", 0)
    calibrate = None
    if mode == "calibrate":
        calibrate = _load_calibrate(raw.get("calibrate"), where / "calibrate", task, grid)
    elif "calibrate" in raw:
        (where / "calibrate").fail("only allowed when the task has 'mode: calibrate'")
    entry = ManifoldEntry(entry_id, grid, degree, calibrate)
    points = math.prod(len(v) for v in grid.values())
    if points > MAX_GRID_POINTS:       # estimated before anything is expanded
        (where / "grid").fail(f"has {points:,} points; the limit is {MAX_GRID_POINTS:,} per manifold entry "
                              f"(docs/security.md); split it or use fewer values")
    if calibrate is None and check_points:
        for combo in _combos(grid):  # cross-parameter rules (e.g. min <= max) per point
            try:
                task.validate(combo)
            except UserError as exc:
                (where / "grid").fail(f"point {combo}: {exc}")
    return entry


def _load_calibrate(raw, where: _Where, task, grid: dict) -> dict:
    raw = _mapping(raw, where, {"param", "target_tokens"})
    param = _string(raw.get("param"), where / "param")
    names = task.param_names()
    if param not in names:
        (where / "param").fail(f"unknown parameter for generator {task.name!r}; valid: {choices_text(names)}")
    if param in grid:
        (where / "param").fail(f"{param!r} is calibrated, so it cannot also be in the grid")
    targets = raw.get("target_tokens")
    targets = targets if isinstance(targets, list) else [targets]
    targets = [_int(t, where / "target_tokens" / i, 1) for i, t in enumerate(targets)]
    return {"param": param, "target_tokens": targets}


def _check_dimension(dim, where: _Where, task) -> str:
    dim = _string(dim, where)
    prefix, _, key = dim.partition(".")
    if prefix not in VIEW_PREFIXES or not key:
        where.fail(f"{dim!r} is not a task dimension; use params.<name> or manifold.<{'|'.join(MANIFOLD_KEYS)}>")
    if prefix == "params" and key not in task.param_names():
        where.fail(f"{dim!r}: generator {task.name!r} has no parameter {key!r}; "
                   f"valid: {choices_text(task.param_names())}")
    if prefix == "manifold" and key not in MANIFOLD_KEYS:
        where.fail(f"{dim!r}: valid manifold keys: {choices_text(MANIFOLD_KEYS)}")
    return dim


def _load_view(raw, where: _Where, task) -> View:
    raw = _mapping(raw, where, _VIEW_KEYS)
    name = _string(raw.get("view"), where / "view")
    group_by = [_check_dimension(d, where / "group_by" / i, task)
                for i, d in enumerate(_string_list(raw.get("group_by"), where / "group_by"))]
    filters = raw.get("filters") or {}
    if not isinstance(filters, dict):
        (where / "filters").fail("must be a mapping of dimension -> value")
    for key in filters:
        _check_dimension(key, where / "filters" / str(key), task)
    facet_by = raw.get("facet_by")
    if facet_by is not None:
        facet_by = [_check_dimension(d, where / "facet_by" / i, task)
                    for i, d in enumerate(_string_list(facet_by, where / "facet_by"))]
    return View(name, group_by, dict(filters), facet_by)


# ---------------------------------------------------------------- expansion
def thin(values: list, density: str) -> list:
    """Apply a density to one list of grid values."""
    if density == "normal" or len(values) <= 2:
        return list(values)
    if density == "corner":
        return [values[0], values[-1]]
    kept = values[::2]
    return kept if kept[-1] == values[-1] else kept + [values[-1]]


def _thin_entry(entry: ManifoldEntry, density: str) -> ManifoldEntry:
    grid = {k: thin(v, density) for k, v in entry.grid.items()}
    calibrate = entry.calibrate
    if calibrate is not None:
        calibrate = {**calibrate, "target_tokens": thin(calibrate["target_tokens"], density)}
    return replace(entry, grid=grid, calibrate=calibrate)


def _combos(grid: dict) -> list[dict]:
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def _value_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("/", "_").replace(" ", "")


def step_name(index: int, task_name: str, params: dict) -> str:
    """`NNN_<task>_<p1>-<v1>_...` with parameters sorted by name."""
    parts = [f"{k}-{_value_text(params[k])}" for k in sorted(params)]
    return "_".join([f"{index:03d}", task_name, *parts])


def _check_choice(value, valid, flag: str, path: str) -> None:
    if value not in valid:
        raise UserError(f"{path}: {flag} {value!r} is not valid; valid: {choices_text(valid)}")


def config_degrees(config: ExperimentConfig, tasks=None) -> list[int]:
    return sorted({e.degree for t in config.tasks if tasks is None or t.name in tasks
                   for e in t.manifolds if e.degree is not None})


def _selected_tasks(config: ExperimentConfig, tasks) -> list[TaskConfig]:
    if not tasks:
        return list(config.tasks)
    for name in tasks:
        if name not in config.task_names():
            raise UserError(f"{config.path}: --task {name!r} is not in this config; "
                            f"valid: {choices_text(config.task_names())}")
    return [t for t in config.tasks if t.name in set(tasks)]


def _entry_points(where: str, task_cfg: TaskConfig, entry: ManifoldEntry, *, tokenizer, template, cache_dir):
    """(params, manifold) for each point of one (thinned) entry."""
    manifold = {"id": entry.id, **({"degree": entry.degree} if entry.degree is not None else {})}
    if entry.calibrate is None:
        return [(combo, manifold) for combo in _combos(entry.grid)]
    if not tokenizer:
        raise UserError(f"{where}: task {task_cfg.name!r} uses mode: calibrate, which needs --tokenizer "
                        f"(a HuggingFace tokenizer id or a local tokenizer directory)")
    try:
        from resolver.config.calibrate import resolve_calibration
    except ImportError:
        raise UserError(f"{where}: task {task_cfg.name!r} uses mode: calibrate, but calibration "
                        f"(resolver/config/calibrate.py) is not available in this installation")
    resolved = resolve_calibration(task_cfg, entry, tokenizer, template, cache_dir)
    return [(dict(params), {**manifold, "target_tokens": int(target)}) for target, params in resolved]


def expand_steps(config: ExperimentConfig, *, density: str = "normal", degree: int | None = None,
                 tasks=None, seed: int = 42, tokenizer=None, template=None,
                 cache_dir="cache") -> list[Step]:
    """The steps of a run, indexed in config order (tasks, entries, grid order)."""
    from resolver.tasks import get_task

    _check_choice(density, DENSITIES, "--density", config.path)
    selected = _selected_tasks(config, tasks)
    if degree is not None and (isinstance(degree, bool) or not isinstance(degree, int) or degree < 0):
        raise UserError(f"{config.path}: --degree must be a whole number >= 0 (the degree given to "
                        f"entries without one), got {degree!r}")
    steps: list[Step] = []
    for task_cfg in selected:
        task = get_task(task_cfg.generator)
        seen: set[str] = set()
        for entry in task_cfg.manifolds:
            if degree is not None and entry.degree is None:
                entry = replace(entry, degree=degree)
            thinned = _thin_entry(entry, density)
            for params, manifold in _entry_points(config.path, task_cfg, thinned, tokenizer=tokenizer,
                                                  template=template, cache_dir=cache_dir):
                params = canonical_params(task, params)
                identity = identity_text(params)
                if identity in seen:
                    continue
                seen.add(identity)
                index = len(steps)
                steps.append(Step(index, step_name(index, task_cfg.name, params), task_cfg.name,
                                  task_cfg.generator, params, manifold, step_seed(params, seed),
                                  task.validate(params)))
    return steps


def expected_points(config: ExperimentConfig, *, density: str = "normal") -> dict:
    """Points per (base_task, degree or None) at a density, over all degrees.

    Calibrated entries count one point per (target, grid point) without resolving
    the calibration (which needs a tokenizer)."""
    _check_choice(density, DENSITIES, "--density", config.path)
    counts: dict = {}
    for task_cfg in config.tasks:
        seen: set[str] = set()
        for entry in task_cfg.manifolds:
            thinned = _thin_entry(entry, density)
            key = (task_cfg.name, entry.degree)
            if thinned.calibrate is not None:
                n = len(thinned.calibrate["target_tokens"]) * len(_combos(thinned.grid))
            else:
                fresh = {json.dumps(c, sort_keys=True) for c in _combos(thinned.grid)} - seen
                seen |= fresh
                n = len(fresh)
            counts[key] = counts.get(key, 0) + n
    return counts
