# resolver.ingest's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import raw_records as raw_records, record_checks as record_checks
from .input_files import expand_interview as expand_interview
from .pipeline import (
    evaluate_dataset as evaluate_dataset,
    evaluate_interview as evaluate_interview,
    keep_pandas_out as keep_pandas_out,
)
from .raw_records import (
    load_points as load_points,
    outcome_name as outcome_name,
    point_records as point_records,
    sample_index as sample_index,
)
from .record_checks import record_problem as record_problem
from .report import (
    Report as Report,
    problem_lines as problem_lines,
    stale_grader_warnings as stale_grader_warnings,
    summary_lines as summary_lines,
)
