"""PointsDB's tables and identities: column types, the schema version, outcome codes,
canonical JSON and point ids (docs/pointsdb.md).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa

from resolver.core import UserError

if TYPE_CHECKING:   # the schema module never opens a database itself
    import duckdb

# 2: points carry task_version / grader_version / guess_sum_all, evals grader_version.
# 3: points carry invalid_reasons (invalid samples counted by reason).
# 4: points carry loops_stopped / tokens_saved (the sampler's stop_loops, docs/runner.md).
SCHEMA_VERSION = 4


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
    # samples stopped in a loop (stop_loops; counted at max_tokens in the token columns) and
    # the tokens that saved: sum of max_tokens - tokens streamed (docs/pointsdb.md)
    "loops_stopped": "INTEGER", "tokens_saved": "BIGINT",
}


EVAL_COLUMNS = {
    "eval_id": "VARCHAR", "model": "VARCHAR", "template": "VARCHAR", "sampler": "VARCHAR",
    "label": "VARCHAR", "groups": "VARCHAR[]", "facets": "JSON", "tags": "VARCHAR[]",
    "hf_id": "VARCHAR", "cohort": "VARCHAR",
    # bookkeeping for idempotency and reports (not part of the eval's identity)
    "fingerprint": "VARCHAR", "files": "INTEGER", "samples": "BIGINT", "points": "INTEGER",
    # the oldest grader version among the eval's samples (resolver.grading.answers.GRADER_VERSION when all are current)
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
    "tokens_correct", "tokens_incorrect", "tokens_invalid", "tokens_truncated", "loops_stopped", "tokens_saved",
)


# Point ids: the eval's 24-bit id in the high bits, a 20-bit slot from a hash of the
# point's (base_task, params) in the low bits (see docs/pointsdb.md, "Point ids").
ID_SLOT_BITS = 20


_CANONICAL_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: object) -> str:
    """The one text form of a JSON value used for identity (sorted keys, compact)."""
    return _CANONICAL_ENCODER.encode(value)


def point_ids(eval_id: str, identities: Iterable[tuple[str, str]]) -> list:
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


def _create_sql(table: str, columns: dict) -> str:
    body = ", ".join(f'"{name}" {kind}' for name, kind in columns.items())
    return f"CREATE TABLE IF NOT EXISTS {table} ({body})"


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the PointsDB tables in an open read-write connection (idempotent)."""
    con.execute(_create_sql("points", POINT_COLUMNS))
    con.execute(_create_sql("evals", EVAL_COLUMNS))
    con.execute(_create_sql("expected", EXPECTED_COLUMNS))
    con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR, value VARCHAR)")


_JSON_COLUMNS = ("params", "manifold", "facets")
