"""Writing a PointsDB: a new database built next to the live one, loaded in Arrow batches and
renamed over it atomically, so readers keep a consistent snapshot (docs/pointsdb.md).
"""
from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterable, Sequence
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import IO

import duckdb
import pyarrow as pa

from resolver.core import UserError
from resolver.pointsdb.reader import OPTIONAL_POINT_COLUMNS
from resolver.pointsdb.schema import _ARROW_POINT_TYPES, EVAL_COLUMNS, POINT_COLUMNS, SCHEMA_VERSION, create_schema

# DuckDB's own memory cap while writing, so evaluate.py stays well under 1 GB whatever
# the dataset size (DuckDB spills to disk beyond it).
WRITER_MEMORY_LIMIT = "400MB"


# A large checkpoint threshold: the writer commits once per eval and checkpoints once
# at the end, instead of rewriting the file after every few evals.
WRITER_CONFIG: dict[str, str | bool | int | float | list[str]] = {"memory_limit": WRITER_MEMORY_LIMIT, "checkpoint_threshold": "4GB"}


def points_batch(columns: dict) -> pa.Table:
    """An Arrow table with exactly the points schema from column lists (missing ones -> error)."""
    missing = [c for c in POINT_COLUMNS if c not in columns and c not in OPTIONAL_POINT_COLUMNS]
    if missing:
        raise ValueError(f"points batch lacks columns: {missing}")
    rows = len(columns["id"])
    columns = {**{c: [None] * rows for c in OPTIONAL_POINT_COLUMNS}, **columns}
    arrays = [_arrow_column(columns[name], _ARROW_POINT_TYPES[kind]) for name, kind in POINT_COLUMNS.items()]
    return pa.Table.from_arrays(arrays, names=list(POINT_COLUMNS))


def _arrow_column(values: object, kind: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """Python lists, numpy arrays or ready Arrow arrays -> an Arrow array of the column type."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values if values.type == kind else values.cast(kind)
    return pa.array(values, type=kind)


class PointsWriter:
    """Builds the next version of a PointsDB beside the live file, then swaps it in.

    ``PointsWriter(path, keep_existing=True)`` copies the live DB (when present) to
    ``<path>.tmp-<pid>`` and opens the copy read-write; ``keep_existing=False`` starts
    empty. ``commit()`` checkpoints, closes and renames the copy over ``path``
    (atomic on one filesystem); ``abort()`` deletes it. A lock file ``<path>.lock``
    keeps two writers from racing; readers never take it.
    """

    def __init__(self, path: str | PathLike[str], keep_existing: bool = True):
        self.path = Path(path)
        self.tmp_path = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        self._lock: IO[str] | None = _acquire_writer_lock(self.path)
        try:
            # Holding the lock, any temporary copy left here is from a killed writer.
            prefix = f"{self.path.name}.tmp-"
            for name in os.listdir(self.path.parent):
                if name.startswith(prefix):
                    os.unlink(self.path.parent / name)
            if keep_existing and self.path.exists():
                shutil.copyfile(self.path, self.tmp_path)
            self.con = duckdb.connect(str(self.tmp_path), config=WRITER_CONFIG)
            create_schema(self.con)
            # Explicit transactions, committed once per eval (put_eval): bulk loads skip the
            # per-statement commit, and DuckDB's memory stays bounded by one eval.
            self.con.execute("BEGIN TRANSACTION")
        except OSError as exc:
            self._discard()
            raise UserError(f"cannot write the PointsDB next to {self.path}: {exc.strerror or exc}")
        except BaseException:       # Ctrl-C while copying or opening: leave nothing behind
            self._discard()
            raise

    def __enter__(self) -> PointsWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def drop_eval(self, eval_id: str) -> None:
        self.con.execute("DELETE FROM points WHERE eval_id = ?", [eval_id])
        self.con.execute("DELETE FROM evals WHERE eval_id = ?", [eval_id])

    def write_points(self, batch: pa.Table) -> None:
        """Append one Arrow batch of points (bulk, never row by row)."""
        self.con.register("points_batch_view", batch)
        try:
            self.con.execute("INSERT INTO points BY NAME SELECT * FROM points_batch_view")
        finally:
            self.con.unregister("points_batch_view")

    def put_eval(self, row: dict) -> None:
        """Insert or replace one evals row (keys of EVAL_COLUMNS; missing ones NULL)."""
        self.con.execute("DELETE FROM evals WHERE eval_id = ?", [row["eval_id"]])
        names = list(EVAL_COLUMNS)
        values = [row.get(n) for n in names]
        self.con.execute(f"INSERT INTO evals ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values)
        self._next_transaction()

    def _next_transaction(self) -> None:
        """Commit what one eval added (bounding DuckDB's memory) and open the next transaction."""
        self.con.execute("COMMIT")
        self.con.execute("BEGIN TRANSACTION")

    def set_eval_metadata(self, eval_id: str, groups: Iterable[str], facets_json: str) -> None:
        """Refresh the per-point copies of an eval's groups and facets (label-only edits)."""
        self.con.execute("UPDATE points SET groups = ?, facets = ? WHERE eval_id = ?",
                         [list(groups), facets_json, eval_id])

    def set_expected(self, rows: Sequence[Sequence[object]] | None) -> None:
        """Replace the expected-points table: rows of (base_task, degree or None, points)."""
        self.con.execute("DELETE FROM expected")
        if rows:
            self.con.executemany("INSERT INTO expected VALUES (?, ?, ?)", [list(r) for r in rows])

    def set_meta(self, values: dict) -> None:
        self.con.execute("DELETE FROM meta")
        items = dict(values, schema_version=str(SCHEMA_VERSION))
        self.con.executemany("INSERT INTO meta VALUES (?, ?)", sorted((k, str(v)) for k, v in items.items()))

    def commit(self) -> None:
        """Make the new database the live one (readers opened before keep their snapshot)."""
        try:
            self.con.execute("COMMIT")
            self.con.execute("CHECKPOINT")
            self.con.close()
            os.replace(self.tmp_path, self.path)
        finally:
            _remove_db_files(self.tmp_path)
            self._release()

    def abort(self) -> None:
        self._discard()

    def _discard(self) -> None:
        """Close and delete the copy under construction, then release the lock."""
        try:
            if getattr(self, "con", None) is not None:
                self.con.close()
        finally:
            _remove_db_files(self.tmp_path)
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def _remove_db_files(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        if p.exists():
            p.unlink()


def _acquire_writer_lock(path: Path) -> IO[str]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_name(path.name + ".lock"), "w")
    except OSError as exc:
        raise UserError(f"cannot write the PointsDB {path}: {exc.strerror or exc}")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise UserError(f"another evaluate.py is writing {path}; wait for it to finish and run again")
    return handle
