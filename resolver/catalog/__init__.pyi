# resolver.catalog's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import cohort_report as cohort_report, cohorts as cohorts, json_schemas as json_schemas, manifest as manifest
from .cohort_context import make_context_variant as make_context_variant
from .cohort_verify import verify_cohort as verify_cohort
from .datasets import (
    Dataset as Dataset,
    EvalSpec as EvalSpec,
    distinct_labels as distinct_labels,
    eval_file_paths as eval_file_paths,
    eval_id as eval_id,
    is_duckdb_file as is_duckdb_file,
    load_dataset as load_dataset,
)
