"""Task registry: every module in this package that defines a `@register`ed Task.

Adding a task means adding one module here (and its vocabulary file under
`vocab/`); discovery imports every module of the package, so no list to edit.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any, TypeVar

from resolver.core import UserError, choices_text
from resolver.tasks.base import Param, Task, TestCase, draw_below, param, params_of, permutation
from resolver.tasks.guess import skipped as skipped_guess_rates

_REGISTRY: dict[str, Task[Any]] = {}
_BROKEN: dict[str, str] = {}  # module name -> why it failed to import
_DISCOVERED = False
_NOT_TASKS = {"base", "vocab"}
T = TypeVar("T", bound=Task[Any])


def register(cls: type[T]) -> type[T]:
    """Class decorator: instantiate the task and file it under its name."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name")
    if cls.name in _REGISTRY and type(_REGISTRY[cls.name]) is not cls:
        raise TypeError(f"two tasks are named {cls.name!r}")
    _REGISTRY[cls.name] = cls()
    return cls


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _NOT_TASKS and not info.name.startswith("_"):
            # One broken task module must not take every other task down with it;
            # its error is shown when that task is asked for.
            try:
                importlib.import_module(f"{__name__}.{info.name}")
            except Exception as exc:
                _BROKEN[info.name] = f"{type(exc).__name__}: {exc}"
    _DISCOVERED = True


def _load_own_module(name: str) -> None:
    """Import the module named like the task (each task lives in one): a run of three tasks
    need not import all of them (docs/performance.md). Any trouble is left to _discover."""
    if name.isidentifier() and name not in _NOT_TASKS and not name.startswith("_"):
        try:
            importlib.import_module(f"{__name__}.{name}")
        except Exception:
            pass


def get_task(name: str) -> Task[Any]:
    """The registered task called `name`, or a UserError listing the valid names."""
    task = _REGISTRY.get(name)
    if task is not None:
        return task
    if not _DISCOVERED:
        _load_own_module(name)
        if name in _REGISTRY:
            return _REGISTRY[name]
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        if name in _BROKEN:
            raise UserError(f"generator {name!r} failed to load (resolver/tasks/{name}.py: "
                            f"{_BROKEN[name]})") from None
        raise UserError(f"unknown generator {name!r}; valid generators: {choices_text(_REGISTRY)}") from None


def task_of_record(record: dict, generator: str | None = None) -> Task[Any]:
    """The task that grades a stored runner record: `generator` when given, else the record's
    `base_task` (the config task name, which equals the generator name unless a config renames it)."""
    name = generator or record.get("base_task")
    if not name:
        raise UserError("record has no base_task; cannot tell which generator grades it")
    return get_task(name)


def task_names() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


__all__ = ["Param", "param", "params_of", "Task", "TestCase", "permutation", "draw_below", "register", "get_task",
           "task_of_record", "task_names", "skipped_guess_rates"]
