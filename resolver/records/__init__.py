"""The runner's NDJSON records: the record schema, run folders (naming, writing,
reading) and completion text sizes (docs/architecture.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.records.run_folders import RecordWriter, iter_records, new_run_folder, run_folder_name, safe_name, sample_index_of, step_file
    from resolver.records.schema import OPTIONAL_FIELDS, RECORD_FIELDS, RECORD_SCHEMA, RECORD_VERSION, Field, markdown_table, record_problems
    from resolver.records.text_size import GZIP_FRAMING, GZIP_LEVEL, TEXT_SIZE_METHOD, gzip_size

__all__ = [
    "Field",
    "GZIP_FRAMING",
    "GZIP_LEVEL",
    "gzip_size",
    "iter_records",
    "markdown_table",
    "new_run_folder",
    "OPTIONAL_FIELDS",
    "RECORD_FIELDS",
    "record_problems",
    "RECORD_SCHEMA",
    "RECORD_VERSION",
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
    "Field": "schema",
    "GZIP_FRAMING": "text_size",
    "GZIP_LEVEL": "text_size",
    "OPTIONAL_FIELDS": "schema",
    "RECORD_FIELDS": "schema",
    "RECORD_SCHEMA": "schema",
    "RECORD_VERSION": "schema",
    "RecordWriter": "run_folders",
    "TEXT_SIZE_METHOD": "text_size",
    "gzip_size": "text_size",
    "iter_records": "run_folders",
    "markdown_table": "schema",
    "new_run_folder": "run_folders",
    "record_problems": "schema",
    "run_folder_name": "run_folders",
    "safe_name": "run_folders",
    "sample_index_of": "run_folders",
    "step_file": "run_folders",
}
_MODULES = {'schema', 'text_size'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
