"""The run folder's metadata.json, filled from the run's options and experiment (docs/runner.md).

`recorded_run` wraps the part of a mode that writes the folder: the file is written
when it starts (ended: null) and again when it stops, normally or not, with the end
time. A run that stops before writing any record leaves no folder, as before.
"""
from __future__ import annotations

import contextlib
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Literal

from resolver.grading import GRADER_VERSION
from resolver.records import (
    METADATA_NAME,
    RECORD_VERSION,
    PrecisionLevel,
    RunMetadata,
    RunVersions,
    write_run_metadata,
)
from resolver.tasks import get_task

if TYPE_CHECKING:
    from resolver.run.experiment import Experiment, RunOptions

__all__ = ["recorded_run", "redacted_command", "run_metadata"]

_SECRET_FLAGS = ("--apikey",)


def redacted_command(command: list[str]) -> list[str]:
    """The command line with the value of --apikey (either form) replaced by ***."""
    out, hide_next = [], False
    for word in command:
        if hide_next:
            out.append("***")
            hide_next = False
        elif word in _SECRET_FLAGS:
            out.append(word)
            hide_next = True
        elif word.startswith(tuple(f"{flag}=" for flag in _SECRET_FLAGS)):
            out.append(word.split("=", 1)[0] + "=***")
        else:
            out.append(word)
    return out


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_metadata(opts: RunOptions, experiment: Experiment, mode: Literal["api", "read-batch", "offline"]) -> RunMetadata:
    """The metadata of a run starting now (`opts`: RunOptions, `experiment`: its Experiment)."""
    level = experiment.precision
    tasks = {step.base_task: get_task(step.generator).version for step in experiment.steps}
    return RunMetadata(
        mode=mode, config=experiment.config.name, config_path=str(opts.config),
        template=experiment.template.name, sampler=experiment.sampler.name, model=experiment.model,
        seed=experiment.seed,
        precision=PrecisionLevel(name=experiment.precision_name, count=level.count, maxrounds=level.maxrounds,
                                 target_margin=level.target_margin),
        density=opts.density, degree=opts.degree, tasks=list(opts.tasks),
        offline_rounds=opts.offline if mode == "offline" else None,
        versions=RunVersions(record=RECORD_VERSION, grader=GRADER_VERSION, tasks=dict(sorted(tasks.items()))),
        started=_now(), command=redacted_command(list(opts.command)))


@contextlib.contextmanager
def recorded_run(folder: Path, metadata: RunMetadata) -> Iterator[None]:
    """metadata.json in `folder` for the duration of the block, with its end time afterwards.

    When the block fails and the folder holds nothing but metadata.json, the folder goes
    (a failed start leaves no run folder behind)."""
    write_run_metadata(folder, metadata)
    try:
        yield
    except BaseException:
        if folder.is_dir() and [p.name for p in folder.iterdir()] == [METADATA_NAME]:
            shutil.rmtree(folder)
            raise
        _finish(folder, metadata)
        raise
    _finish(folder, metadata)


def _finish(folder: Path, metadata: RunMetadata) -> None:
    if folder.is_dir():
        write_run_metadata(folder, metadata.model_copy(update={"ended": _now()}))
