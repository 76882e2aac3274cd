"""evaluate.py's ingest: runner NDJSON -> PointsDB (docs/evaluate.md).

The parts, in the order data flows through them:

* ``discovery``   - which files a run reads and how they are cut into scan batches;
* ``records``     - what a record must look like to become a sample (the checks, in SQL);
* ``scan``        - one DuckDB query per batch of files, in worker processes;
* ``points``      - an eval's samples -> its PointsDB rows (de-duplication, sums, arrays);
* ``bookkeeping`` - fingerprints and the incremental plan (build / relabel / drop / skip);
* ``regrade``     - ``--offline --inplace``: re-graded records written back to their files;
* ``pipeline``    - the two entry points, ``evaluate_dataset`` and ``evaluate_interview``;
* ``report``      - what a run did, as data and console text.
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.ingest.discovery import expand_interview
    from resolver.ingest.pipeline import evaluate_dataset, evaluate_interview, keep_pandas_out
    from resolver.ingest.records import record_problem
    from resolver.ingest.report import Report, problem_lines, stale_grader_warnings, summary_lines

__all__ = [
    "evaluate_dataset",
    "evaluate_interview",
    "expand_interview",
    "keep_pandas_out",
    "problem_lines",
    "record_problem",
    "records",
    "Report",
    "stale_grader_warnings",
    "summary_lines",
]

_HOMES = {
    "Report": "report",
    "evaluate_dataset": "pipeline",
    "evaluate_interview": "pipeline",
    "expand_interview": "discovery",
    "keep_pandas_out": "pipeline",
    "problem_lines": "report",
    "record_problem": "records",
    "stale_grader_warnings": "report",
    "summary_lines": "report",
}
_MODULES = {'records'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
