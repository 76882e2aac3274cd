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

The file's structure, types and rules are the pydantic models of
resolver.config.config_file; every problem is a UserError naming the file, the key
path and the valid choices (resolver.core.typed).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence, get_args

from resolver.config.config_file import MAX_CONFIG_POINTS, MAX_GRID_POINTS, ExperimentConfig, ManifoldEntry, Precision, TaskConfig, combos
from resolver.config.point_identity import DEFAULT_SEED, canonical_params, identity_text, step_seed
from resolver.core import UserError, choices_text, file_not_found, read_yaml_file
from resolver.core.typed import validate_file
from resolver.tasks import get_task

if TYPE_CHECKING:
    from resolver.config.prompts import Template

__all__ = ["DENSITIES", "Density", "ExperimentConfig", "ManifoldEntry", "MAX_CONFIG_POINTS", "MAX_GRID_POINTS", "Precision",
           "Step", "TaskConfig", "config_degrees", "expand_steps", "expected_points", "load_config", "step_name",
           "step_seed", "thin"]

# The grid densities (--density): the one definition; runner.py, r12sim, the dataset file and
# the run folder's metadata.json take theirs from here (metadata.json's, one layer down, is
# tied by tests/test_one_definition.py).
Density = Literal["normal", "lowdef", "corner"]
DENSITIES: tuple[str, ...] = get_args(Density)


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


# ---------------------------------------------------------------- loading
def load_config(path: str | Path, check_points: bool = True) -> ExperimentConfig:
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
    if data is None:
        raise UserError(f"{path}: the file is empty; expected a mapping with name, precision and tasks")
    config = validate_file(ExperimentConfig, data, str(path), {"stem": p.stem, "check_points": check_points})
    config._path = str(path)
    return config


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
        calibrate = calibrate.model_copy(update={"target_tokens": thin(calibrate.target_tokens, density)})
    return entry.model_copy(update={"grid": grid, "calibrate": calibrate})





def _value_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("/", "_").replace(" ", "")


def step_name(index: int, task_name: str, params: dict) -> str:
    """`NNN_<task>_<p1>-<v1>_...` with parameters sorted by name."""
    parts = [f"{k}-{_value_text(params[k])}" for k in sorted(params)]
    return "_".join([f"{index:03d}", task_name, *parts])


def _check_choice(value: str, valid: tuple[str, ...], flag: str, path: str) -> None:
    if value not in valid:
        raise UserError(f"{path}: {flag} {value!r} is not valid; valid: {choices_text(valid)}")


def config_degrees(config: ExperimentConfig, tasks: Sequence[str] | None = None) -> list[int]:
    return sorted({e.degree for t in config.tasks if tasks is None or t.name in tasks
                   for e in t.manifolds if e.degree is not None})


def _selected_tasks(config: ExperimentConfig, tasks: Sequence[str] | None) -> list[TaskConfig]:
    if not tasks:
        return list(config.tasks)
    for name in tasks:
        if name not in config.task_names():
            raise UserError(f"{config.path}: --task {name!r} is not in this config; "
                            f"valid: {choices_text(config.task_names())}")
    return [t for t in config.tasks if t.name in set(tasks)]


def _entry_points(where: str, task_cfg: TaskConfig, entry: ManifoldEntry, *, tokenizer: str | None,
                  template: Template | None, cache_dir: str | Path,
                  progress: Callable[..., Any] | None = None) -> list[tuple[dict, dict]]:
    """(params, manifold) for each point of one (thinned) entry."""
    manifold = {"id": entry.id, **({"degree": entry.degree} if entry.degree is not None else {})}
    if entry.calibrate is None:
        return [(combo, manifold) for combo in combos(entry.grid)]
    if not tokenizer:
        raise UserError(f"{where}: task {task_cfg.name!r} uses mode: calibrate, which needs --tokenizer "
                        f"(a HuggingFace tokenizer id or a local tokenizer directory)")
    # loaded only here: calibration brings in the tokenizer libraries (pyproject's PLC0415 list)
    from resolver.config.calibrate import resolve_calibration
    resolved = resolve_calibration(task_cfg, entry, tokenizer, template, cache_dir, progress)
    return [(dict(params), {**manifold, "target_tokens": int(target)}) for target, params in resolved]


def expand_steps(config: ExperimentConfig, *, density: str = "normal", degree: int | None = None,
                 tasks: Sequence[str] | None = None, seed: int = DEFAULT_SEED, tokenizer: str | None = None,
                 template: Template | None = None, cache_dir: str | Path = "cache",
                 progress: Callable[..., Any] | None = None) -> list[Step]:
    """The steps of a run, indexed in config order (tasks, entries, grid order); `progress`:
    a tqdm-like factory for calibration's bar (none: no bar)."""
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
                entry = entry.model_copy(update={"degree": degree})
            thinned = _thin_entry(entry, density)
            for params, manifold in _entry_points(config.path, task_cfg, thinned, tokenizer=tokenizer,
                                                  template=template, cache_dir=cache_dir, progress=progress):
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
                n = len(thinned.calibrate.target_tokens) * len(combos(thinned.grid))
            else:
                fresh = {json.dumps(c, sort_keys=True) for c in combos(thinned.grid)} - seen
                seen |= fresh
                n = len(fresh)
            counts[key] = counts.get(key, 0) + n
    return counts
