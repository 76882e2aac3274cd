"""The experiment config file (configs/*.yaml, docs/configs.md) as pydantic models.

The models hold the file's structure, types and bounds; the rules that need the
generator (grid parameters and their values, calibrated parameters, view dimensions,
cross-parameter checks of every grid point) run in `TaskConfig`'s after-validator and
name the key they are about. docs/schemas/experiment-config.json is generated from
`ExperimentConfig` (resolver.config.json_schemas).
"""
from __future__ import annotations

import itertools
import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from resolver.core import UserError, choices_text
from resolver.core.typed import FileModel, at
from resolver.tasks import get_task

if TYPE_CHECKING:
    from resolver.tasks import Task

__all__ = ["Calibration", "ExperimentConfig", "ManifoldEntry", "Precision", "TaskConfig", "View",
           "MANIFOLD_KEYS", "MAX_CONFIG_POINTS", "MAX_GRID_POINTS", "MODES", "VIEW_PREFIXES"]

MODES = ("grid", "calibrate")
VIEW_PREFIXES = ("params", "manifold")
MANIFOLD_KEYS = ("id", "degree", "target_tokens")
MAX_GRID_POINTS = 100_000       # points of one manifold entry's grid (docs/security.md)
MAX_CONFIG_POINTS = 1_000_000   # points of all grids of a config together
# Task names become parts of step and file names.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"

NonEmpty = Annotated[str, Field(min_length=1)]


def _listed(value: Any) -> Any:
    """A scalar where a list belongs is a one-item list (`length: 3` is `length: [3]`)."""
    return value if isinstance(value, list) or value is None else [value]


class Precision(FileModel):
    """One precision level: samples per round, rounds at most, the interval half-width aimed at."""

    count: int = Field(ge=1, description="samples per round")
    maxrounds: int = Field(1, ge=1, description="rounds at most")
    target_margin: float = Field(0.05, gt=0, lt=1, allow_inf_nan=False,
                                 description="stop when the 95% interval half-width is below this")


class View(FileModel):
    """A query recipe for analysis: dimensions to group by, filters, facets."""

    view: NonEmpty
    group_by: Annotated[list[NonEmpty], BeforeValidator(_listed, json_schema_input_type=str | list[str]), Field(min_length=1)]
    filters: dict[str, Any] = Field(default_factory=dict)
    facet_by: Annotated[list[NonEmpty] | None, BeforeValidator(_listed, json_schema_input_type=str | list[str] | None)] = None
    description: str = ""

    @field_validator("filters", mode="before")
    @classmethod
    def _no_filters(cls, value: Any) -> Any:
        return {} if value is None else value


class Calibration(FileModel):
    """`mode: calibrate`: the parameter searched so that prompts reach each token target."""

    param: NonEmpty
    target_tokens: Annotated[list[Annotated[int, Field(ge=1)]], BeforeValidator(_listed, json_schema_input_type=int | list[int]),
                             Field(min_length=1)]


class ManifoldEntry(FileModel):
    """One named entry of a task: a grid of generator parameters (param -> values)."""

    id: NonEmpty
    grid: dict[str, Annotated[list, BeforeValidator(_listed, json_schema_input_type=Any), Field(min_length=1)]] = Field(
        default_factory=dict, description="generator parameter -> value or list of values")
    degree: int | None = Field(None, ge=0, description="the degree every point of this entry records")
    calibrate: Calibration | None = None
    description: str = ""

    @field_validator("grid", mode="before")
    @classmethod
    def _no_grid(cls, value: Any) -> Any:
        return {} if value is None else value

    def points(self) -> int:
        return math.prod(len(v) for v in self.grid.values())


def combos(grid: dict) -> list[dict]:
    """Every point of a grid, in grid order."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


class TaskConfig(FileModel):
    """One task of the config: its generator, mode, manifold entries and views."""

    name: str = Field(min_length=1, description="the task's name in step and file names")
    label: str = ""
    generator: str = Field("", description="registered generator (default: the task's name)")
    mode: Literal["grid", "calibrate"] = "grid"
    manifolds: list[ManifoldEntry] = Field(min_length=1)
    views: list[View] = Field(default_factory=list)
    description: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label_text(cls, label: Any) -> Any:
        # A label is display text: `label: 2024` is the text "2024", as it always was.
        return str(label) if isinstance(label, (int, float)) and not isinstance(label, bool) else label

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str) -> str:
        if not re.fullmatch(SAFE_NAME, name):
            raise ValueError(f"{name!r} is not valid; use letters, digits, '_', '-' and '.'")
        return name

    @model_validator(mode="after")
    def _check_against_generator(self, info: ValidationInfo) -> "TaskConfig":
        generator = self.generator or self.name
        try:
            task = get_task(generator)
        except UserError as exc:
            raise at("generator", str(exc))
        check_points = (info.context or {}).get("check_points", True)
        entries = [_checked_entry(e, ("manifolds", i), task, self.mode, check_points)
                   for i, e in enumerate(self.manifolds)]
        ids = [e.id for e in entries]
        duplicate = next((i for i in ids if ids.count(i) > 1), None)
        if duplicate:
            raise at("manifolds", f"id {duplicate!r} is used twice; ids must be unique within a task")
        for i, view in enumerate(self.views):
            _check_view(view, ("views", i), task)
        # Completed in place, once, while validating (frozen afterwards; returning a copy is
        # ignored when the model is built with TaskConfig(...)).
        self.__dict__.update(generator=generator, label=self.label or self.name, manifolds=entries)
        return self


def _checked_grid(grid: dict, where: tuple, task: Task) -> dict:
    known = {p.name: p for p in task.params}
    out = {}
    for pname, values in grid.items():
        if pname == "count":
            raise at((*where, pname), "count is not a grid parameter; samples per point come from 'precision'")
        if pname not in known:
            raise at((*where, pname), f"unknown parameter for generator {task.name!r}; valid: {choices_text(known)}")
        try:
            out[pname] = [known[pname].check(v, task.name) for v in values]
        except UserError as exc:
            raise at((*where, pname), str(exc))
    return out


def _checked_entry(entry: ManifoldEntry, where: tuple, task: Task, mode: str, check_points: bool) -> ManifoldEntry:
    grid = _checked_grid(entry.grid, (*where, "grid"), task)
    if mode == "calibrate":
        if entry.calibrate is None:
            raise at((*where, "calibrate"), "is required when the task has 'mode: calibrate'")
        param = entry.calibrate.param
        if param not in task.param_names():
            raise at((*where, "calibrate", "param"),
                     f"unknown parameter for generator {task.name!r}; valid: {choices_text(task.param_names())}")
        if param in grid:
            raise at((*where, "calibrate", "param"), f"{param!r} is calibrated, so it cannot also be in the grid")
    elif entry.calibrate is not None:
        raise at((*where, "calibrate"), "only allowed when the task has 'mode: calibrate'")
    checked = entry.model_copy(update={"grid": grid})
    points = checked.points()
    if points > MAX_GRID_POINTS:       # estimated before anything is expanded
        raise at((*where, "grid"), f"has {points:,} points; the limit is {MAX_GRID_POINTS:,} per manifold entry "
                                   f"(docs/security.md); split it or use fewer values")
    if entry.calibrate is None and check_points:
        for combo in combos(grid):  # cross-parameter rules (e.g. min <= max) per point
            try:
                task.validate(combo)
            except UserError as exc:
                raise at((*where, "grid"), f"point {combo}: {exc}")
    return checked


def _check_dimension(dim: str, where: tuple, task: Task) -> None:
    prefix, _, key = dim.partition(".")
    if prefix not in VIEW_PREFIXES or not key:
        raise at(where, f"{dim!r} is not a task dimension; use params.<name> or manifold.<{'|'.join(MANIFOLD_KEYS)}>")
    if prefix == "params" and key not in task.param_names():
        raise at(where, f"{dim!r}: generator {task.name!r} has no parameter {key!r}; "
                        f"valid: {choices_text(task.param_names())}")
    if prefix == "manifold" and key not in MANIFOLD_KEYS:
        raise at(where, f"{dim!r}: valid manifold keys: {choices_text(MANIFOLD_KEYS)}")


def _check_view(view: View, where: tuple, task: Task) -> None:
    for i, dim in enumerate(view.group_by):
        _check_dimension(dim, (*where, "group_by", i), task)
    for key in view.filters:
        _check_dimension(key, (*where, "filters", key), task)
    for i, dim in enumerate(view.facet_by or ()):
        _check_dimension(dim, (*where, "facet_by", i), task)


class ExperimentConfig(FileModel):
    """A whole config file: its name, precision levels and tasks."""

    name: str = Field("", description="the experiment's name (default: the file's stem)")
    description: str = ""
    precision: dict[str, Precision] = Field(
        default_factory=lambda: {"default": Precision(count=32)}, min_length=1,
        description="level name -> {count, maxrounds, target_margin}; the first is the default")
    tasks: list[TaskConfig] = Field(min_length=1)
    _path: str = PrivateAttr("")

    @field_validator("name")
    @classmethod
    def _named(cls, name: str) -> str:
        if name is not None and not name.strip():
            raise ValueError(f"must be a non-empty string, got {name!r}")
        return name

    @field_validator("precision", mode="before")
    @classmethod
    def _level_names(cls, levels: Any) -> Any:
        # YAML reads `1:` as an integer key; a level's name is text (`--precision 1`).
        return {str(k): v for k, v in levels.items()} if isinstance(levels, dict) else levels

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and "name" not in data and info.context and info.context.get("stem"):
            data = {**data, "name": info.context["stem"]}
        return data

    @model_validator(mode="after")
    def _limits(self) -> "ExperimentConfig":
        total = sum(e.points() for t in self.tasks for e in t.manifolds)
        if total > MAX_CONFIG_POINTS:
            raise at("tasks", f"the grids hold {total:,} points in all; the limit is {MAX_CONFIG_POINTS:,} "
                              f"(docs/security.md)")
        names = [t.name for t in self.tasks]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise at("tasks", f"task name {duplicate!r} is used twice; task names must be unique")
        return self

    @property
    def path(self) -> str:
        """The file the config was read from (error messages name it)."""
        return self._path

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
