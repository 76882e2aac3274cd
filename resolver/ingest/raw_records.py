"""Reading the raw runner records behind PointsDB points.

A point row names its NDJSON ``sources`` (relative to the PointsDB's directory, or
absolute). The records of the point are those lines with the point's identity:
model, template, sampler, base_task, params (without ``count``) and task version,
that evaluate.py accepts (``records.record_problem``: a record it refused, such as
``"is_correct": "false"``, is not one of the point's samples). Each sample index is
returned once, as evaluate.py counts it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

import pandas as pd

from resolver.core import UserError
from resolver.ingest.record_checks import record_problem
from resolver.pointsdb import OUTCOME_NAMES, outcome_of
from resolver.records import iter_records, sample_index_of

if TYPE_CHECKING:
    from resolver.pointsdb import PointsDB

POINT_COLUMNS = ["id", "eval_id", "model", "template", "sampler", "base_task", "task", "task_version",
                 "params", "manifold", "sources", "correct", "incorrect", "invalid", "truncated"]


def load_points(db: PointsDB, point_ids: Iterable[int]) -> pd.DataFrame:
    """The PointsDB rows of the given ids, in the order given; unknown ids are a UserError."""
    ids = [int(p) for p in point_ids]
    placeholders = ", ".join("?" for _ in ids)
    frame = db.query(f"SELECT {', '.join(POINT_COLUMNS)} FROM points WHERE id IN ({placeholders})", ids)
    found = set(frame["id"].tolist())
    missing = [p for p in ids if p not in found]
    if missing:
        raise UserError(f"point id {missing[0]} is not in {db.path}; list point ids with: "
                        "python analyze.py points <dataset> --filters ...")
    # as Series: pandas-stubs takes a list of scalars for a column, and these cells are dicts
    frame["params"] = pd.Series([json.loads(p) if isinstance(p, str) else (p or {}) for p in frame["params"]], index=frame.index)
    frame["manifold"] = pd.Series([json.loads(m) if isinstance(m, str) else (m or {}) for m in frame["manifold"]],
                                  index=frame.index)
    order = {p: i for i, p in enumerate(ids)}
    return frame.sort_values("id", key=lambda s: s.map(order)).reset_index(drop=True)


def source_paths(point: pd.Series | Mapping[str, Any], db_dir: str | os.PathLike[str]) -> list[Path]:
    """Absolute paths of a point's NDJSON sources (relative ones are under the DB's directory)."""
    base = Path(db_dir)
    # a list from Python, an array from a DuckDB frame (whose truth value is ambiguous past one element)
    sources = [] if point["sources"] is None else list(point["sources"])
    return [Path(s) if os.path.isabs(s) else base / s for s in sources]


def _matches(record: dict, point: pd.Series | Mapping[str, Any]) -> bool:
    if not isinstance(record, dict):
        return False
    if (record.get("model"), record.get("template"), record.get("sampler"), record.get("base_task")) != \
            (point["model"], point["template"], point["sampler"], point["base_task"]):
        return False
    params = record.get("params")
    if not isinstance(params, dict) or (record.get("task_version") or 1) != point["task_version"]:
        return False
    return {k: v for k, v in params.items() if k != "count"} == point["params"]


def sample_index(record: dict) -> int:
    index = sample_index_of(record.get("key"))
    return -1 if index is None else index


def outcome_name(record: dict) -> str:
    """correct / incorrect / invalid / truncated, by the rule evaluate.py counts with."""
    return OUTCOME_NAMES[outcome_of(record)]


def point_records(point: pd.Series | Mapping[str, Any], db_dir: str | os.PathLike[str]) -> Iterator[dict]:
    """The answered records of one point, each sample index once, in sample order."""
    seen: dict[int, dict] = {}
    for path in source_paths(point, db_dir):
        if not path.is_file():
            raise UserError(f"NDJSON source {path} of point {point['id']} is missing; "
                            "restore the run folder (data.py pull) or re-run evaluate.py")
        for _, record, _problem in iter_records(path):   # torn lines: evaluate.py already reported them
            if record is None or not _matches(record, point) or record_problem(record):
                continue
            if record.get("answer") is None and record.get("usage") is None:
                continue  # offline record: never sent
            seen.setdefault(sample_index(record), record)
    for index in sorted(seen):
        yield seen[index]


def full_text(record: dict) -> str:
    """The whole generated text: reasoning (when the server split it off) then the answer."""
    reasoning = record.get("reasoning")
    answer = record.get("answer")
    parts = [p for p in (reasoning, answer) if isinstance(p, str) and p]
    return "\n".join(parts)
