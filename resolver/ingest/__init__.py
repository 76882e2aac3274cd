"""evaluate.py's ingest: runner NDJSON -> PointsDB (docs/evaluate.md).

The parts, in the order data flows through them:

* ``input_files``   - which files a run reads and how they are cut into scan batches;
* ``record_checks`` - what a record must look like to become a sample (the checks, in SQL);
* ``scan``          - one DuckDB query per batch of files, in worker processes;
* ``points``        - an eval's samples -> its PointsDB rows (de-duplication, sums, arrays);
* ``bookkeeping``   - fingerprints and the incremental plan (build / relabel / drop / skip);
* ``regrade``       - ``--offline --inplace``: re-graded records written back to their files;
* ``pipeline``      - the two entry points, ``evaluate_dataset`` and ``evaluate_interview``;
* ``report``        - what a run did, as data and console text;
* ``raw_records``   - the records behind a PointsDB point, read by the same rule (probe.py, explorer).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
