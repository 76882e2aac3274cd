"""Reading a PointsDB: `open_pointsdb` -> `PointsDB`, the read-only query API every reader uses.

One row per point (identity: model, template, sampler, base_task, params), raw
counters, token sums, per-sample arrays, plus the ``evals``, ``expected`` and
``meta`` tables (schema.py); writer.py builds the file, filters.py compiles the
filter and dimension syntax to SQL with bound parameters (docs/pointsdb.md).

Statistics are not computed here: ``aggregate`` returns summed counters and callers
add intervals with ``resolver.stats``.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from resolver.core import UserError, choices_text
from resolver.pointsdb.filters import FiltersLike, dimension_sql, is_identifier_dimension, parse_filters, validate_dimension
from resolver.pointsdb.schema import _JSON_COLUMNS, COUNTER_COLUMNS, POINT_COLUMNS, SUM_COLUMNS

if TYPE_CHECKING:   # pandas is imported lazily: evaluate.py's writer never needs it
    import pandas as pd


# Columns a batch may leave out: NULL there means "not recorded" (invalid_reasons: every
# invalid sample of the point counts as "unknown"; loops_stopped / tokens_saved: none).
OPTIONAL_POINT_COLUMNS = ("invalid_reasons", "loops_stopped", "tokens_saved")


class PointsDB:
    """A PointsDB opened by a reader (read-only by default). Use as a context manager."""

    def __init__(self, path: str | PathLike[str], con: duckdb.DuckDBPyConnection):
        self.path = Path(path)
        self.con = con

    def __enter__(self) -> PointsDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def source_path(self, source: str) -> Path:
        """The file a ``sources`` entry names (entries are relative to the DB's directory)."""
        return (self.path.parent / source).resolve()

    def query(self, sql: str, params: Sequence[object] | None = None) -> pd.DataFrame:
        """Run a SQL query with bound parameters and return a DataFrame."""
        return self.con.execute(sql, params or []).df()

    def has_points(self) -> bool:
        """True when the points table has a row (without pandas: a web app's failing start stays quick)."""
        return self.con.execute("SELECT 1 FROM points LIMIT 1").fetchone() is not None

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

    def points(self, filters: FiltersLike = None, columns: Sequence[str] | None = None,
               decode_json: bool = True) -> pd.DataFrame:
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

    def aggregate(self, filters: FiltersLike = None, by: Sequence[str] | None = ("eval_id", "base_task")) -> pd.DataFrame:
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
                                       "tokens_correct", "tokens_incorrect", "tokens_invalid", "tokens_truncated",
                                       "loops_stopped", "tokens_saved"):
            frame[name] = frame[name].fillna(0).astype("int64")
        frame["points"] = frame["points"].astype("int64")
        frame["guess_sum"] = frame["guess_sum"].fillna(0.0).astype(float)
        frame["guess_sum_all"] = frame["guess_sum_all"].astype(float)   # NaN when the DB predates it
        if not by:
            return frame
        for name in by:
            frame[name] = dimension_values_typed(name, frame[name])
        return frame.sort_values(by, kind="stable", na_position="last").reset_index(drop=True)

    def dimension_values(self, name: str, filters: FiltersLike = None) -> list:
        """Distinct values of a dimension among matching points, sorted (numerically when numeric)."""
        expr, params = dimension_sql(name)
        where, where_params = parse_filters(filters).sql()
        rows = self.con.execute(f"SELECT DISTINCT {expr} FROM points WHERE {where}", params + where_params).fetchall()
        import pandas as pd

        values = dimension_values_typed(name, pd.Series([r[0] for r in rows if r[0] is not None], dtype=object))
        return sorted(values.tolist())


def _select_list(columns: Sequence[str] | None, present: set | None = None) -> tuple:
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


def open_pointsdb(path: str | PathLike[str], read_only: bool = True,
                  dataset: str | PathLike[str] | None = None) -> PointsDB:
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
