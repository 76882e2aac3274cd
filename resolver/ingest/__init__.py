"""evaluate.py's ingest: runner NDJSON -> PointsDB (docs/evaluate.md).

The parts, in the order data flows through them:

* ``discovery``   - which files a run reads and how they are cut into scan batches;
* ``records``     - what a record must look like to become a sample (the checks, in SQL);
* ``scan``        - one DuckDB query per batch of files, in worker processes;
* ``longlines``   - lines over 16 MB, streamed; files cut into pieces for the scan's fallback;
* ``points``      - an eval's samples -> its PointsDB rows (de-duplication, sums, arrays);
* ``bookkeeping`` - fingerprints and the incremental plan (build / relabel / drop / skip);
* ``regrade``     - ``--offline --inplace``: re-graded records written back to their files;
* ``pipeline``    - the two entry points, ``evaluate_dataset`` and ``evaluate_interview``;
* ``report``      - what a run did, as data and console text.
"""
from resolver.ingest.discovery import expand_interview
from resolver.ingest.pipeline import evaluate_dataset, evaluate_interview
from resolver.ingest.records import gzip_size
from resolver.ingest.report import Report, problem_lines, stale_grader_warnings, summary_lines
from resolver.pointsdb import outcome_of

__all__ = ["Report", "evaluate_dataset", "evaluate_interview", "expand_interview", "gzip_size", "outcome_of",
           "problem_lines", "stale_grader_warnings", "summary_lines"]
