"""PointsDB, the DuckDB file between evaluate.py and every reader: schema, writer,
reader and the filter language (docs/pointsdb.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.pointsdb.filters import parse_filters, validate_dimension
    from resolver.pointsdb.reader import open_pointsdb
    from resolver.pointsdb.schema import (
        COUNTER_COLUMNS,
        OUTCOME_CORRECT,
        OUTCOME_INCORRECT,
        OUTCOME_INVALID,
        OUTCOME_NAMES,
        OUTCOME_TRUNCATED,
        SCHEMA_VERSION,
        canonical_json,
        outcome_of,
        point_ids,
    )
    from resolver.pointsdb.writer import PointsWriter, points_batch

__all__ = [
    "canonical_json",
    "COUNTER_COLUMNS",
    "open_pointsdb",
    "OUTCOME_CORRECT",
    "OUTCOME_INCORRECT",
    "OUTCOME_INVALID",
    "OUTCOME_NAMES",
    "outcome_of",
    "OUTCOME_TRUNCATED",
    "parse_filters",
    "point_ids",
    "points_batch",
    "PointsWriter",
    "schema",
    "SCHEMA_VERSION",
    "validate_dimension",
    "writer",
]

_HOMES = {
    "COUNTER_COLUMNS": "schema",
    "OUTCOME_CORRECT": "schema",
    "OUTCOME_INCORRECT": "schema",
    "OUTCOME_INVALID": "schema",
    "OUTCOME_NAMES": "schema",
    "OUTCOME_TRUNCATED": "schema",
    "PointsWriter": "writer",
    "SCHEMA_VERSION": "schema",
    "canonical_json": "schema",
    "open_pointsdb": "reader",
    "outcome_of": "schema",
    "parse_filters": "filters",
    "point_ids": "schema",
    "points_batch": "writer",
    "validate_dimension": "filters",
}
_MODULES = {'schema', 'writer'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
