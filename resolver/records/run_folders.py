"""Run folders and the NDJSON runner records (docs/runner.md): naming, writing, reading.

Writing appends one JSON object per line and flushes after every record or batch
of records, so a crash loses nothing already written; a file whose last line was cut off by a
crash gets a fresh line before the next record instead of a glued one. Reading
yields line numbers and reports malformed lines instead of raising.
"""
from __future__ import annotations

import json
import re
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import Iterable, Iterator, Protocol

from resolver.records.longlines import RECORD_LIMIT, LongLine, bounded_lines, long_line_problem

# The record's fields and version are defined once, in resolver/records/schema.py.

_UNSAFE = re.compile(r'[/\\:*?"<>|\s]+')


def safe_name(text: str) -> str:
    """A string usable as one path component: separators and blanks become '_'."""
    return _UNSAFE.sub("_", str(text)).strip(".") or "_"


def run_folder_name(config_name: str, model: str, template: str, sampler: str,
                    when: datetime) -> str:
    """`<YYYY-MM-DD_HH-MM-SS>_<config>_<model>_<template>_<sampler>`, filesystem-safe."""
    parts = [when.strftime("%Y-%m-%d_%H-%M-%S"), config_name, model, template, sampler]
    return "_".join(safe_name(p) for p in parts)


class _NamedStep(Protocol):
    """What a step file's name is made of (a `resolver.config` Step, which sits a layer above)."""

    @property
    def name(self) -> str: ...

    @property
    def base_task(self) -> str | None: ...


def new_run_folder(output: str | PathLike[str], config_name: str, model: str, template: str, sampler: str,
                   when: datetime | None = None) -> Path:
    """Create a fresh run folder under `output`; a second run in the same second gets '-2', '-3'..."""
    base = run_folder_name(config_name, model, template, sampler, when or datetime.now())
    root = Path(output)
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        folder = root / (base if n == 1 else f"{base}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"too many run folders named {base!r} in {root}")


def step_file_name(step_name: str, base_task: str | None = None) -> str:
    """A step's NDJSON file name: the task name first, so the README's glob
    `results/2025-*/arithmetic*.ndjson` picks one task's files.

    Step `000_arithmetic_length-4` of task `arithmetic` -> `arithmetic_000_length-4.ndjson`;
    a step name not of the `NNN_<task>` form is prefixed with the task name instead.
    """
    if not base_task:
        return f"{safe_name(step_name)}.ndjson"
    number, _, rest = step_name.partition("_")
    if number.isdigit() and (rest == base_task or rest.startswith(base_task + "_")):
        name = f"{base_task}_{number}{rest[len(base_task):]}"
    else:
        name = f"{base_task}_{step_name}"
    return f"{safe_name(name)}.ndjson"


def step_file(folder: str | PathLike[str], step: str | _NamedStep) -> Path:
    """The NDJSON file of a step (a manifold.Step, or a bare step name)."""
    if isinstance(step, str):
        return Path(folder) / step_file_name(step)
    return Path(folder) / step_file_name(step.name, step.base_task)


class RecordWriter:
    """Append records to one NDJSON file, flushing after each record or batch."""

    def __init__(self, path: str | PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        needs_newline = self.path.exists() and self.path.stat().st_size > 0 and not _ends_with_newline(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")
        if needs_newline:  # the previous writer died mid-line
            self._fh.write("\n")
        self.written = 0

    def write(self, record: dict) -> None:
        self.write_many((record,))

    def write_many(self, records: Iterable[dict]) -> None:
        """Append records and flush once (the runner writes a batch of committed answers at a time)."""
        lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in records]
        self._fh.write("".join(lines))
        self._fh.flush()
        self.written += len(lines)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> "RecordWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"


def iter_records(path: str | PathLike[str]) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, record, None) for good lines; (line number, None, problem) for bad ones.

    Blank lines are skipped. A problem reads "<path>:<line>: <what is wrong>". A line
    over the record limit (docs/evaluate.md, *Lines over 16 MB*) is a problem, as it is
    for evaluate.py, and is streamed past, never held whole.
    """
    with open(path, "rb") as fh:
        for line_no, raw in enumerate(bounded_lines(fh, RECORD_LIMIT), 1):
            if isinstance(raw, LongLine):
                if not raw.blank:
                    problem = long_line_problem(raw.length, raw.newline, raw.closed)
                    yield line_no, None, f"{path}:{line_no}: {problem}"
                continue
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                cut = "" if line.endswith("\n") else " (truncated last line?)"
                yield line_no, None, f"{path}:{line_no}: malformed JSON{cut}: {exc.msg}"
                continue
            except (RecursionError, ValueError) as exc:     # nested too deeply, a 5,000-digit number
                yield line_no, None, f"{path}:{line_no}: unreadable JSON ({str(exc)[:60] or 'nested too deeply'})"
                continue
            if not isinstance(record, dict):
                yield line_no, None, f"{path}:{line_no}: not a JSON object"
                continue
            yield line_no, record, None


def sample_index_of(key: object) -> int | None:
    """The sample index at the end of a record `key` (`<step name>-<index>`), None if malformed."""
    if not isinstance(key, str) or "-" not in key:
        return None
    tail = key.rsplit("-", 1)[1]
    return int(tail) if tail.isascii() and tail.isdigit() else None
