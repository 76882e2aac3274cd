"""PointsDB: the DuckDB file between evaluate.py and every reader (see docs/pointsdb.md).

One row per point (identity: model, template, sampler, base_task, params), raw
counters, token sums, per-sample arrays, plus the ``evals``, ``expected`` and
``meta`` tables. Three parts live here:

* the schema and a *writer* that builds a new database next to the live one (a copy
  of it, or a fresh file), loads points in Arrow batches and atomically renames the
  result over the live path, so readers holding the old file keep a consistent
  snapshot and are never blocked;
* the filter and dimension syntax of seed 000 (``parse_filters``,
  ``validate_dimension``), always compiled to SQL with bound parameters;
* the read-only query API (``open_pointsdb`` -> ``PointsDB``) every reader uses.

Statistics are not computed here: ``aggregate`` returns summed counters and callers
add intervals with ``resolver.stats``.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from resolver.errors import UserError, choices_text

if TYPE_CHECKING:   # pandas is imported lazily: evaluate.py's writer never needs it
    import pandas as pd

# 2: points carry task_version / grader_version / guess_sum_all, evals grader_version.
# 3: points carry invalid_reasons (invalid samples counted by reason).
SCHEMA_VERSION = 3
# DuckDB's own memory cap while writing, so evaluate.py stays well under 1 GB whatever
# the dataset size (DuckDB spills to disk beyond it).
WRITER_MEMORY_LIMIT = "400MB"
# A large checkpoint threshold: the writer commits once per eval and checkpoints once
# at the end, instead of rewriting the file after every few evals.
WRITER_CONFIG = {"memory_limit": WRITER_MEMORY_LIMIT, "checkpoint_threshold": "4GB"}

# Column name -> DuckDB type, in table order. JSON columns hold canonical text
# (sorted keys, compact separators) so identical values compare equal as strings.
POINT_COLUMNS = {
    "id": "BIGINT", "eval_id": "VARCHAR", "model": "VARCHAR", "template": "VARCHAR",
    "sampler": "VARCHAR", "base_task": "VARCHAR", "task": "VARCHAR",
    "params": "JSON", "manifold": "JSON", "facets": "JSON", "groups": "VARCHAR[]",
    "correct": "INTEGER", "incorrect": "INTEGER", "invalid": "INTEGER", "truncated": "INTEGER",
    "guess_sum": "DOUBLE", "guess_sum_all": "DOUBLE", "prompt_tokens": "BIGINT", "completion_tokens_sum": "BIGINT",
    "tokens_correct": "BIGINT", "tokens_incorrect": "BIGINT", "tokens_invalid": "BIGINT",
    "tokens_truncated": "BIGINT", "completion_tokens": "INTEGER[]", "outcome": "UTINYINT[]",
    "answer_bytes": "INTEGER[]", "compressed_bytes": "INTEGER[]", "sample_index": "INTEGER[]",
    "sources": "VARCHAR[]", "task_version": "INTEGER", "grader_version": "INTEGER",
    "invalid_reasons": "JSON",     # {"no_marker": 3, "hedge": 1}: invalid samples by reason (docs/grading.md)
}
EVAL_COLUMNS = {
    "eval_id": "VARCHAR", "model": "VARCHAR", "template": "VARCHAR", "sampler": "VARCHAR",
    "label": "VARCHAR", "groups": "VARCHAR[]", "facets": "JSON", "tags": "VARCHAR[]",
    "hf_id": "VARCHAR", "cohort": "VARCHAR",
    # bookkeeping for idempotency and reports (not part of the eval's identity)
    "fingerprint": "VARCHAR", "files": "INTEGER", "samples": "BIGINT", "points": "INTEGER",
    # the oldest grader version among the eval's samples (resolver.answers.GRADER_VERSION when all are current)
    # and the task generator versions of its points ({"arithmetic": [1], ...})
    "grader_version": "INTEGER", "task_versions": "JSON",
}
EXPECTED_COLUMNS = {"base_task": "VARCHAR", "degree": "INTEGER", "points": "INTEGER"}

# Arrow types matching POINT_COLUMNS, used to build insert batches.
_ARROW_POINT_TYPES = {
    "BIGINT": pa.int64(), "VARCHAR": pa.string(), "JSON": pa.string(), "VARCHAR[]": pa.list_(pa.string()),
    "INTEGER": pa.int32(), "DOUBLE": pa.float64(), "INTEGER[]": pa.list_(pa.int32()),
    "UTINYINT[]": pa.list_(pa.uint8()),
}

OUTCOME_CORRECT, OUTCOME_INCORRECT, OUTCOME_INVALID, OUTCOME_TRUNCATED = 0, 1, 2, 3
OUTCOME_NAMES = ("correct", "incorrect", "invalid", "truncated")


def outcome_of(record: dict) -> int:
    """A runner record's outcome code; truncation wins over the rest, then correct, then valid."""
    if record.get("is_truncated"):
        return OUTCOME_TRUNCATED
    if record.get("is_correct"):
        return OUTCOME_CORRECT
    if not record.get("is_valid"):
        return OUTCOME_INVALID
    return OUTCOME_INCORRECT
COUNTER_COLUMNS = ("correct", "incorrect", "invalid", "truncated")
SUM_COLUMNS = COUNTER_COLUMNS + (
    "guess_sum", "guess_sum_all", "prompt_tokens", "completion_tokens_sum",
    "tokens_correct", "tokens_incorrect", "tokens_invalid", "tokens_truncated",
)

# Dimensions: plain identity columns and dotted paths into the three JSON columns.
PLAIN_DIMENSIONS = ("eval_id", "model", "template", "sampler", "base_task", "task")
JSON_PREFIXES = ("params", "manifold", "facets")
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")

# Point ids: the eval's 24-bit id in the high bits, a 20-bit slot from a hash of the
# point's (base_task, params) in the low bits (see docs/pointsdb.md, "Point ids").
ID_SLOT_BITS = 20


_CANONICAL_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value) -> str:
    """The one text form of a JSON value used for identity (sorted keys, compact)."""
    return _CANONICAL_ENCODER.encode(value)


# =============================================================== filters and dimensions

def validate_dimension(name) -> str:
    """Check a group/facet/split dimension and return it unchanged.

    Valid: eval_id, model, template, sampler, base_task, task, or params.<key>,
    manifold.<key>, facets.<key>. ('none' is handled by callers.)
    """
    if not isinstance(name, str):
        raise UserError(f"dimension must be a string, got {name!r}")
    if name in PLAIN_DIMENSIONS:
        return name
    prefix, dot, key = name.partition(".")
    if dot and prefix in JSON_PREFIXES and _KEY_RE.match(key):
        return name
    raise UserError(
        f"unknown dimension '{_shown(name)}'; valid: {', '.join(PLAIN_DIMENSIONS)}, "
        f"params.<key>, manifold.<key>, facets.<key>")


def dimension_sql(name: str) -> tuple:
    """(SQL expression, bound parameters) for a validated dimension."""
    name = validate_dimension(name)
    if name in PLAIN_DIMENSIONS:
        return f'"{name}"', []
    prefix, _, key = name.partition(".")
    return f"json_extract_string({prefix}, ?)", [f'$."{key}"']


FILTER_KEYS = ("eval_id", "base_task", "groups", "model", "template", "sampler", "task")


def _shown(text: str) -> str:
    """A user-supplied name made safe for a one-line message (newlines escaped)."""
    return json.dumps(str(text), ensure_ascii=False)[1:-1]


def _scalar_text(value) -> str:
    """How a filter value compares with json_extract_string: strings raw, others as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _value_list(key: str, value) -> list:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise UserError(f"filter '{_shown(key)}' has an empty list; give at least one value")
    for v in values:
        if isinstance(v, (dict, list)) or v is None:
            raise UserError(f"filter '{_shown(key)}' values must be strings or numbers, got {json.dumps(v)[:80]}")
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
            raise UserError(f"filter '{_shown(key)}' value has {len(str(abs(v)))} digits; numbers must fit "
                            f"in 64 bits")
        if isinstance(v, float) and v != v or isinstance(v, float) and abs(v) == float("inf"):
            raise UserError(f"filter '{_shown(key)}' value {v} is not a finite number")
        if isinstance(v, str) and len(v) > 10_000:
            raise UserError(f"filter '{_shown(key)}' value is {len(v)} characters long; at most 10000")
    return values


def _groups_items(value) -> list:
    """groups: a list whose string items are single tags and list items AND-ed tags."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise UserError('filter \'groups\' must be a list, e.g. [["arch:moe", "size:large"], "family:qwen3"]')
    items = []
    for item in value:
        tags = [item] if isinstance(item, str) else item
        if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
            raise UserError(f"filter 'groups' items must be a tag or a list of tags, got {json.dumps(item)}")
        items.append(tags)
    return items


@dataclass
class Filters:
    """Validated filters; ``sql()`` gives a WHERE clause with bound parameters."""

    items: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.items)

    def sql(self) -> tuple:
        """(clause, params); clause is 'TRUE' when there is nothing to filter."""
        clauses, params = [], []
        for key, value in self.items.items():
            if key == "groups":
                ors = []
                for tags in value:
                    ors.append("list_has_all(groups, ?::VARCHAR[])")
                    params.append(tags)
                clauses.append("(" + " OR ".join(ors) + ")")
            elif key in FILTER_KEYS:
                clauses.append(f'"{key}" IN (' + ", ".join("?" * len(value)) + ")")
                params.extend(str(v) for v in value)
            else:
                expr, expr_params = dimension_sql(key)
                clauses.append(f"{expr} IN (" + ", ".join("?" * len(value)) + ")")
                params.extend(expr_params)
                params.extend(_scalar_text(v) for v in value)
        return (" AND ".join(clauses) or "TRUE"), params


def parse_filters(text_or_dict) -> Filters:
    """Parse seed 000 filter JSON (text or dict) into Filters; UserError when invalid."""
    if isinstance(text_or_dict, Filters):
        return text_or_dict
    if text_or_dict is None:
        return Filters()
    data = text_or_dict
    if isinstance(text_or_dict, str):
        try:
            data = json.loads(text_or_dict) if text_or_dict.strip() else {}
        except json.JSONDecodeError as exc:
            raise UserError(f"--filters is not valid JSON ({exc.msg} at column {exc.colno}); "
                            'use single quotes outside, double inside: \'{"base_task": "arithmetic"}\'') from None
        except RecursionError:
            raise UserError("--filters is nested too deeply to be read; a filter is a flat object such as "
                            '\'{"base_task": "arithmetic"}\'') from None
        except ValueError as exc:          # e.g. an integer with thousands of digits
            raise UserError(f"--filters holds a value that cannot be read ({str(exc)[:80]}); numbers must fit "
                            "in 64 bits") from None
    if not isinstance(data, dict):
        raise UserError('--filters must be a JSON object, e.g. \'{"eval_id": ["a1b2c3"]}\'')
    items = {}
    for key, value in data.items():
        if key == "groups":
            items[key] = _groups_items(value)
        elif key in FILTER_KEYS:
            items[key] = _value_list(key, value)
        else:
            prefix, dot, sub = key.partition(".")
            if not (dot and prefix in JSON_PREFIXES and _KEY_RE.match(sub)):
                raise UserError(f"unknown filter key '{_shown(key)}'; valid: {', '.join(FILTER_KEYS)}, "
                                "params.<key>, manifold.<key>, facets.<key>")
            items[key] = _value_list(key, value)
    return Filters(items)


# ====================================================================== point ids

def point_ids(eval_id: str, identities) -> list:
    """Stable ids for the points of one eval.

    ``identities`` are (base_task, canonical params JSON) pairs. The id is the eval's
    6 hex digits (24 bits) shifted left by ID_SLOT_BITS plus a slot taken from a hash
    of the identity; a slot already used moves to the next free one, visiting the
    identities in sorted order, so the result is deterministic and an eval's ids do
    not depend on any other eval. Ids fit in a signed 64-bit BIGINT (< 2**44).
    """
    identities = list(identities)
    slots = 1 << ID_SLOT_BITS
    if len(identities) > slots:
        raise UserError(f"eval {eval_id} has {len(identities)} points; at most {slots} are supported")
    base = int(eval_id, 16) << ID_SLOT_BITS
    used, ids = set(), {}
    for identity in sorted(set(identities)):
        digest = hashlib.sha256(canonical_json(list(identity)).encode("utf-8")).digest()
        slot = int.from_bytes(digest[:8], "big") % slots
        while slot in used:
            slot = (slot + 1) % slots
        used.add(slot)
        ids[identity] = base + slot
    return [ids[i] for i in identities]


# ========================================================================= schema

def _create_sql(table: str, columns: dict) -> str:
    body = ", ".join(f'"{name}" {kind}' for name, kind in columns.items())
    return f"CREATE TABLE IF NOT EXISTS {table} ({body})"


def create_schema(con) -> None:
    """Create the PointsDB tables in an open read-write connection (idempotent)."""
    con.execute(_create_sql("points", POINT_COLUMNS))
    con.execute(_create_sql("evals", EVAL_COLUMNS))
    con.execute(_create_sql("expected", EXPECTED_COLUMNS))
    con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR, value VARCHAR)")


# Columns a batch may leave out: NULL there means "not recorded" (invalid_reasons: every
# invalid sample of the point counts as "unknown").
OPTIONAL_POINT_COLUMNS = ("invalid_reasons",)


def points_batch(columns: dict) -> pa.Table:
    """An Arrow table with exactly the points schema from column lists (missing ones -> error)."""
    missing = [c for c in POINT_COLUMNS if c not in columns and c not in OPTIONAL_POINT_COLUMNS]
    if missing:
        raise ValueError(f"points batch lacks columns: {missing}")
    rows = len(columns["id"])
    columns = {**{c: [None] * rows for c in OPTIONAL_POINT_COLUMNS}, **columns}
    arrays = [_arrow_column(columns[name], _ARROW_POINT_TYPES[kind]) for name, kind in POINT_COLUMNS.items()]
    return pa.Table.from_arrays(arrays, names=list(POINT_COLUMNS))


def _arrow_column(values, kind):
    """Python lists, numpy arrays or ready Arrow arrays -> an Arrow array of the column type."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values if values.type == kind else values.cast(kind)
    return pa.array(values, type=kind)


# ========================================================================= writer

class PointsWriter:
    """Builds the next version of a PointsDB beside the live file, then swaps it in.

    ``PointsWriter(path, keep_existing=True)`` copies the live DB (when present) to
    ``<path>.tmp-<pid>`` and opens the copy read-write; ``keep_existing=False`` starts
    empty. ``commit()`` checkpoints, closes and renames the copy over ``path``
    (atomic on one filesystem); ``abort()`` deletes it. A lock file ``<path>.lock``
    keeps two writers from racing; readers never take it.
    """

    def __init__(self, path, keep_existing: bool = True):
        self.path = Path(path)
        self.tmp_path = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        self._lock = _acquire_writer_lock(self.path)
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

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
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

    def set_eval_metadata(self, eval_id: str, groups, facets_json: str) -> None:
        """Refresh the per-point copies of an eval's groups and facets (label-only edits)."""
        self.con.execute("UPDATE points SET groups = ?, facets = ? WHERE eval_id = ?",
                         [list(groups), facets_json, eval_id])

    def set_expected(self, rows) -> None:
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


def _acquire_writer_lock(path: Path):
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


# ==================================================================== reading

_JSON_COLUMNS = ("params", "manifold", "facets")


class PointsDB:
    """A PointsDB opened by a reader (read-only by default). Use as a context manager."""

    def __init__(self, path, con):
        self.path = Path(path)
        self.con = con

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.con.close()

    def source_path(self, source: str) -> Path:
        """The file a ``sources`` entry names (entries are relative to the DB's directory)."""
        return (self.path.parent / source).resolve()

    def query(self, sql: str, params=None) -> pd.DataFrame:
        """Run a SQL query with bound parameters and return a DataFrame."""
        return self.con.execute(sql, params or []).df()

    def point_columns(self) -> set:
        """Names of the columns the points table of this file really has."""
        if getattr(self, "_point_columns", None) is None:
            rows = self.con.execute("SELECT column_name FROM information_schema.columns "
                                    "WHERE table_name = 'points'").fetchall()
            self._point_columns = {r[0] for r in rows}
        return self._point_columns

    def evals(self) -> pd.DataFrame:
        """All evals, ordered by eval_id; facets decoded to dicts."""
        frame = self.query("SELECT * FROM evals ORDER BY eval_id")
        frame["facets"] = [json.loads(f) if f else {} for f in frame["facets"]]
        return frame

    def expected(self) -> pd.DataFrame:
        """Expected points per (base_task, degree) from the config; empty when unknown."""
        return self.query("SELECT * FROM expected ORDER BY base_task, degree NULLS FIRST")

    def meta(self) -> dict:
        return dict(self.con.execute("SELECT key, value FROM meta").fetchall())

    def points(self, filters=None, columns=None, decode_json: bool = True) -> pd.DataFrame:
        """Matching points ordered by id. ``columns``: table columns and/or dimensions.

        JSON columns (params, manifold, facets) come back as dicts unless
        ``decode_json`` is False; dotted dimensions come back as text values named
        as given, converted to numbers when every value is numeric.
        """
        select, params = _select_list(columns, self.point_columns())
        where, where_params = parse_filters(filters).sql()
        frame = self.query(f"SELECT {select} FROM points WHERE {where} ORDER BY id", params + where_params)
        if decode_json:
            for name in _JSON_COLUMNS:
                if name in frame.columns:
                    frame[name] = [json.loads(v) if v is not None else {} for v in frame[name]]
        for name in frame.columns:
            if "." in name:
                frame[name] = dimension_values_typed(name, frame[name])
        return frame

    def aggregate(self, filters=None, by=("eval_id", "base_task")) -> pd.DataFrame:
        """Sum the counters of matching points per group of ``by`` dimensions.

        One row per group: the ``by`` columns (named as given), ``points`` and the
        summed counters / token sums (SUM_COLUMNS). Sorted by the ``by`` columns,
        numeric dimension values numerically. Statistics are added by callers.
        """
        by = [validate_dimension(b) for b in (by or ())]
        dims, params = [], []
        for name in by:
            expr, expr_params = dimension_sql(name)
            dims.append(f'{expr} AS "{name}"')
            params.extend(expr_params)
        present = self.point_columns()
        # a DB written before a column existed (e.g. guess_sum_all) sums to NULL: stats fall back
        sums = ", ".join(f'sum("{c}") AS "{c}"' if c in present else f'CAST(NULL AS DOUBLE) AS "{c}"'
                         for c in SUM_COLUMNS)
        where, where_params = parse_filters(filters).sql()
        group = f" GROUP BY {', '.join(str(i + 1) for i in range(len(by)))}" if by else ""
        select = ", ".join(dims + ["count(*) AS points", sums])
        frame = self.query(f"SELECT {select} FROM points WHERE {where}{group}", params + where_params)
        for name in COUNTER_COLUMNS + ("prompt_tokens", "completion_tokens_sum",
                                       "tokens_correct", "tokens_incorrect", "tokens_invalid", "tokens_truncated"):
            frame[name] = frame[name].fillna(0).astype("int64")
        frame["points"] = frame["points"].astype("int64")
        frame["guess_sum"] = frame["guess_sum"].fillna(0.0).astype(float)
        frame["guess_sum_all"] = frame["guess_sum_all"].astype(float)   # NaN when the DB predates it
        if not by:
            return frame
        for name in by:
            frame[name] = dimension_values_typed(name, frame[name])
        return frame.sort_values(by, kind="stable", na_position="last").reset_index(drop=True)

    def dimension_values(self, name: str, filters=None) -> list:
        """Distinct values of a dimension among matching points, sorted (numerically when numeric)."""
        expr, params = dimension_sql(name)
        where, where_params = parse_filters(filters).sql()
        rows = self.con.execute(f"SELECT DISTINCT {expr} FROM points WHERE {where}", params + where_params).fetchall()
        import pandas as pd

        values = dimension_values_typed(name, pd.Series([r[0] for r in rows if r[0] is not None], dtype=object))
        return sorted(values.tolist())


def _select_list(columns, present=None) -> tuple:
    if columns is None:
        return "*", []
    parts, params = [], []
    for name in columns:
        if name in POINT_COLUMNS:
            missing = present is not None and name not in present
            parts.append(f'NULL AS "{name}"' if missing else f'"{name}"')   # older DB: column absent
            continue
        try:
            expr, expr_params = dimension_sql(name)
        except UserError:
            raise UserError(f"unknown column '{name}'; valid: {choices_text(POINT_COLUMNS)} or a dotted dimension")
        parts.append(f'{expr} AS "{name}"')
        params.extend(expr_params)
    if not parts:
        raise UserError("no columns requested")
    return ", ".join(parts), params


def is_identifier_dimension(name: str) -> bool:
    """True for dimensions whose values are names, never quantities.

    eval_id, model, template, sampler, base_task, task, every facets.<key> and
    manifold.id are identifiers: an eval_id such as ``400548`` or ``012345`` or a
    facet value such as ``1e5`` stays the text it is (converting it would lose the
    join to the evals table and leading zeros). Only params.<key> and the other
    manifold.<key> (degree, target_tokens) are quantities.
    """
    if name in PLAIN_DIMENSIONS or name in EVAL_COLUMNS:
        return True
    prefix, _, key = name.partition(".")
    return prefix == "facets" or (prefix == "manifold" and key == "id")


def dimension_values_typed(name: str, series: pd.Series) -> pd.Series:
    """A dimension column as readers get it: identifiers as text, quantities as numbers when all are."""
    if is_identifier_dimension(name):
        return series
    return numeric_if_possible(series)


def numeric_if_possible(series: pd.Series) -> pd.Series:
    """Convert a text column to numbers when every non-null value is numeric (ints kept int)."""
    import pandas as pd

    if series.dtype != object and not pd.api.types.is_string_dtype(series):
        return series
    present = series.dropna()
    if present.empty:
        return series
    numbers = pd.to_numeric(present, errors="coerce")
    if numbers.isna().any():
        return series
    converted = pd.to_numeric(series, errors="coerce")
    if (converted.dropna() % 1 == 0).all() and not series.isna().any():
        return converted.astype("int64")
    return converted


def open_pointsdb(path, read_only: bool = True, dataset=None) -> PointsDB:
    """Open a PointsDB. Missing file -> UserError naming the evaluate.py command."""
    path = Path(path)
    hint = f"python evaluate.py --dataset {dataset}" if dataset else "python evaluate.py --dataset <dataset.json>"
    if not path.exists():
        raise UserError(f"PointsDB {path} does not exist; build it with: {hint}")
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise UserError(f"cannot open PointsDB {path}: {str(exc).splitlines()[0]}")
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if not {"points", "evals"} <= tables:
        con.close()
        raise UserError(f"{path} is not a PointsDB (no points/evals tables); rebuild it with: {hint}")
    return PointsDB(path, con)
