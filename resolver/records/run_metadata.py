"""A run folder's metadata.json: what produced the folder's NDJSON (docs/runner.md, "metadata.json").

runner.py writes it when it creates the folder (api mode, read-batch, --offline) and
rewrites it with the end time when the run stops; both writes are atomic, so a reader
sees a whole file or none. Folders written before it existed have none: every reader
treats a missing file as "not recorded" (`read_run_metadata` returns None).
docs/schemas/run-metadata.json is generated from `RunMetadata`.
"""
from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Literal

from pydantic import Field

from resolver.core import UserError, write_text_atomic
from resolver.core.typed import FileModel, validate_file

__all__ = ["METADATA_NAME", "METADATA_VERSION", "PrecisionLevel", "RunMetadata", "RunVersions",
           "read_run_metadata", "write_run_metadata"]

METADATA_NAME = "metadata.json"
METADATA_VERSION = 1


class PrecisionLevel(FileModel):
    """The precision level the run used, by name and values (docs/configs.md, precision)."""

    name: str
    count: int = Field(ge=1)
    maxrounds: int = Field(ge=1)
    target_margin: float


class RunVersions(FileModel):
    """The versions that decide what the records mean."""

    record: int = Field(description="NDJSON record format (resolver.records.RECORD_VERSION)")
    grader: int = Field(description="grader that graded the answers (resolver.grading.GRADER_VERSION)")
    tasks: dict[str, int] = Field(description="base task -> generator version (Task.version)")


class RunMetadata(FileModel):
    """One run folder's metadata.json."""

    metadata_version: int = METADATA_VERSION
    mode: Literal["api", "read-batch", "offline"]
    config: str = Field(description="the experiment config's name")
    config_path: str = Field(description="the --config argument")
    template: str
    sampler: str
    model: str
    seed: int
    precision: PrecisionLevel
    density: Literal["normal", "lowdef", "corner"]
    degree: int | None = None
    tasks: list[str] = Field(default_factory=list, description="the --tasks selection (empty: every task)")
    offline_rounds: int | None = None
    versions: RunVersions
    started: str = Field(description="UTC start, ISO 8601")
    ended: str | None = Field(None, description="UTC end, ISO 8601 (null while the run is going or if it died)")
    command: list[str] = Field(description="the command line, --apikey's value replaced by ***")


def write_run_metadata(folder: str | PathLike[str], metadata: RunMetadata) -> Path:
    """Write (or replace) `folder`/metadata.json atomically; returns its path."""
    path = Path(folder) / METADATA_NAME
    write_text_atomic(path, metadata.model_dump_json(indent=2) + "\n")
    return path


def read_run_metadata(folder: str | PathLike[str]) -> RunMetadata | None:
    """The folder's metadata, or None when it has none (a folder from before metadata.json).

    A metadata.json that is not valid JSON or not this shape is a UserError naming it."""
    path = Path(folder) / METADATA_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object (the run folder's metadata)")
    return validate_file(RunMetadata, data, str(path))
