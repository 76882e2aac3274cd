# resolver.ingest's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import raw_records as raw_records
from . import record_checks as record_checks
from .input_files import expand_interview as expand_interview
from .pipeline import (
    evaluate_dataset as evaluate_dataset,
)
from .pipeline import (
    evaluate_interview as evaluate_interview,
)
from .pipeline import (
    keep_pandas_out as keep_pandas_out,
)
from .raw_records import (
    load_points as load_points,
)
from .raw_records import (
    outcome_name as outcome_name,
)
from .raw_records import (
    point_records as point_records,
)
from .raw_records import (
    sample_index as sample_index,
)
from .record_checks import record_problem as record_problem
from .report import (
    Report as Report,
)
from .report import (
    problem_lines as problem_lines,
)
from .report import (
    stale_grader_warnings as stale_grader_warnings,
)
from .report import (
    summary_lines as summary_lines,
)
