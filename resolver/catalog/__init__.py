"""What data exists: dataset configs (data/*.json), cohorts and their evals.json,
eval ids, what data/manifest.json says is published (manifest), the JSON Schemas of
the user files (json_schemas), and cohort.py's verify / context / report (docs/cohort.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.catalog.cohort_context import make_context_variant
    from resolver.catalog.cohort_verify import verify_cohort
    from resolver.catalog.datasets import EvalSpec, distinct_labels, eval_file_paths, eval_id, is_duckdb_file, load_dataset

__all__ = [
    "cohort_report",
    "cohorts",
    "distinct_labels",
    "eval_file_paths",
    "eval_id",
    "EvalSpec",
    "is_duckdb_file",
    "json_schemas",
    "load_dataset",
    "make_context_variant",
    "manifest",
    "verify_cohort",
]

_HOMES = {
    "EvalSpec": "datasets",
    "distinct_labels": "datasets",
    "eval_file_paths": "datasets",
    "eval_id": "datasets",
    "is_duckdb_file": "datasets",
    "load_dataset": "datasets",
    "make_context_variant": "cohort_context",
    "verify_cohort": "cohort_verify",
}
_MODULES = {'cohort_report', 'cohorts', 'json_schemas', 'manifest'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
