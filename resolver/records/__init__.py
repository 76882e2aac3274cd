"""The runner's NDJSON records: the record schema, run folders (naming, writing,
reading) and completion text sizes (docs/architecture.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.records.longlines import (
        CUT_LIMIT,
        RECORD_LIMIT,
        LongLine,
        bounded_lines,
        cut_into_pieces,
        long_line_problem,
        piece_groups,
        raw_line_problem,
    )
    from resolver.records.run_folders import RecordWriter, iter_records, new_run_folder, run_folder_name, safe_name, sample_index_of, step_file
    from resolver.records.schema import (
        OPTIONAL_FIELDS,
        RECORD_FIELDS,
        RECORD_SCHEMA,
        RECORD_VERSION,
        Field,
        Record,
        markdown_table,
        new_record,
        record_problems,
    )
    from resolver.records.text_size import GZIP_FRAMING, GZIP_LEVEL, TEXT_SIZE_METHOD, gzip_size

__all__ = [
    "bounded_lines",
    "cut_into_pieces",
    "CUT_LIMIT",
    "Field",
    "GZIP_FRAMING",
    "GZIP_LEVEL",
    "gzip_size",
    "iter_records",
    "long_line_problem",
    "LongLine",
    "longlines",
    "markdown_table",
    "new_record",
    "new_run_folder",
    "OPTIONAL_FIELDS",
    "piece_groups",
    "raw_line_problem",
    "RECORD_FIELDS",
    "RECORD_LIMIT",
    "record_problems",
    "RECORD_SCHEMA",
    "RECORD_VERSION",
    "Record",
    "RecordWriter",
    "run_folder_name",
    "safe_name",
    "sample_index_of",
    "schema",
    "step_file",
    "text_size",
    "TEXT_SIZE_METHOD",
]

_HOMES = {
    "CUT_LIMIT": "longlines",
    "Field": "schema",
    "GZIP_FRAMING": "text_size",
    "GZIP_LEVEL": "text_size",
    "LongLine": "longlines",
    "OPTIONAL_FIELDS": "schema",
    "RECORD_FIELDS": "schema",
    "RECORD_LIMIT": "longlines",
    "RECORD_SCHEMA": "schema",
    "RECORD_VERSION": "schema",
    "Record": "schema",
    "RecordWriter": "run_folders",
    "TEXT_SIZE_METHOD": "text_size",
    "bounded_lines": "longlines",
    "cut_into_pieces": "longlines",
    "gzip_size": "text_size",
    "iter_records": "run_folders",
    "long_line_problem": "longlines",
    "markdown_table": "schema",
    "new_record": "schema",
    "new_run_folder": "run_folders",
    "piece_groups": "longlines",
    "raw_line_problem": "longlines",
    "record_problems": "schema",
    "run_folder_name": "run_folders",
    "safe_name": "run_folders",
    "sample_index_of": "run_folders",
    "step_file": "run_folders",
}
_MODULES = {'longlines', 'schema', 'text_size'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
