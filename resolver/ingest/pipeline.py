"""The evaluate.py pipeline: runner NDJSON -> samples -> points -> PointsDB.

Per run: the files of every eval to (re)build are cut into batches (input_files.py);
worker processes scan each batch with one DuckDB query (scan.py, with the checks
of record_checks.py); the main process merges an eval's batches in sorted file order,
turns its samples into points with one DuckDB query (points.py) and writes the
eval as one Arrow batch. Dataset mode is incremental (bookkeeping.py): an
unchanged eval is skipped, a changed or new one rebuilt, a removed one dropped;
when nothing changed the database file is not touched at all.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import pyarrow as pa

from resolver import pointsdb
from resolver.catalog import EvalSpec, eval_id, load_dataset
from resolver.config import expected_points, load_config
from resolver.core import UserError, die_with_parent
from resolver.core.progress import NullBar
from resolver.grading import GRADER_VERSION
from resolver.ingest import bookkeeping
from resolver.ingest.input_files import expand_interview, file_size, plan_batches
from resolver.ingest.points import EvalStats, eval_points, source_names
from resolver.ingest.regrade import add_regraded, regrade_file_inplace, remove_regrade_temps
from resolver.ingest.report import Report
from resolver.ingest.scan import SAMPLE_SCHEMA, ScanJob, scan_batch_safe

if TYPE_CHECKING:
    from concurrent.futures import Future
    from types import ModuleType
    from typing import TypeVar

    from resolver.core.progress import Bar
    from resolver.ingest.scan import ScanResult

    _T = TypeVar("_T")
    _R = TypeVar("_R")


class _NoPandas:
    """An import hook that makes ``import pandas`` fail (see ``keep_pandas_out``)."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("evaluate.py does not use pandas")
        return None


def keep_pandas_out() -> None:
    """Stop pyarrow from importing pandas in this process (evaluate.py's CLI only).

    pyarrow imports pandas, when installed, the first time it builds an array from
    Python or numpy data (to check whether the input is a pandas object): ~0.8 s of
    CPU in the main process and again in every worker, for nothing. With this hook
    the import fails and pyarrow carries on without pandas. Not for library use: a
    process that wants pandas later must not call it.
    """
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


def _start_worker() -> None:
    """Workers leave Ctrl-C to the main process, which stops them and removes its temp files;
    they end with the main process however it dies (kill -9, the OOM killer): a forked worker
    holds both ends of its job pipe and would otherwise wait forever (docs/evaluate.md).

    A worker is forked with SIGINT blocked (``Workers.map``): a Ctrl-C that lands between the
    fork and this function stays pending, and ignoring the signal discards it, so no worker
    prints a KeyboardInterrupt traceback from multiprocessing's start-up code."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    die_with_parent()


class Workers:
    """Up to ``parallel`` forked worker processes, at most one per core (none when one would do).

    All workers are forked when the first job is submitted, so submit before this
    process opens a DuckDB connection (forking a process whose DuckDB threads hold
    locks could deadlock the children). A worker that dies (killed, out of memory)
    breaks the pool: the main process gets an error instead of waiting forever; a
    main process that dies takes its workers with it.
    """

    def __init__(self, parallel: int, jobs: int):
        self.size = max(1, min(parallel, jobs, os.cpu_count() or 1))
        self.executor = None
        if self.size > 1:
            self.executor = ProcessPoolExecutor(self.size, mp_context=multiprocessing.get_context("fork"),
                                                initializer=_start_worker)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.executor is not None:
            for process in list(getattr(self.executor, "_processes", {}).values()):
                if process.is_alive():
                    process.terminate()
            self.executor.shutdown(wait=True, cancel_futures=True)

    def map(self, function: Callable[[_T], _R], items: Iterable[_T]) -> list[Callable[..., _R]]:
        """Start ``function`` on every item now; returns a list of result getters (in order)."""
        if self.executor is None:
            return [lambda item=item: function(item) for item in items]
        # The first submit forks every worker; they inherit this mask (see _start_worker).
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            futures = [self.executor.submit(function, item) for item in items]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return [lambda f=f: _result(f) for f in futures]


def _result(future: Future[_R]) -> _R:
    try:
        return future.result()
    except BrokenProcessPool:
        raise UserError("a worker process died (killed, or out of memory?); nothing was written - run again, "
                        "perhaps with a smaller --parallel")


def _checked(result: ScanResult | UserError) -> ScanResult:
    if isinstance(result, UserError):
        raise result
    return result


def _progress(total_bytes: int, quiet: bool, progress: Callable[..., Any] | None) -> Bar:
    """A progress bar over the bytes scanned: `progress` is a tqdm-like factory the command hands in."""
    if progress is None:
        return NullBar()
    return progress(total=total_bytes, unit="B", unit_scale=True, unit_divisor=1024, desc="evaluate",
                    disable=quiet or None)


def plan_jobs(file_lists: list[list[str]], expects: Sequence[tuple[str, str, str] | None], parallel: int, regrade: bool,
              sizes: list[list[int]] | None = None) -> tuple[list[ScanJob], list[int], list[list[int]], list[int]]:
    """ScanJobs for every list of files (an eval's, in merge order) and the list index of each.

    ``sizes``: each list's file sizes when already known (else they are ``stat``ed here).
    """
    if sizes is None:
        sizes = [[file_size(f) for f in files] for files in file_lists]
    jobs, owners, job_bytes = [], [], []
    for number, first, end in plan_batches(sizes, min(parallel, os.cpu_count() or 1)):
        jobs.append(ScanJob(tuple(str(f) for f in file_lists[number][first:end]), expects[number], regrade, first))
        owners.append(number)
        job_bytes.append(sum(sizes[number][first:end]))
    return jobs, owners, sizes, job_bytes


def _gather(getters: list[Callable[..., ScanResult | UserError]], job_bytes: list[int], owners: list[int], count: int,
            bar: Bar) -> Iterator[tuple[int, list[ScanResult]]]:
    """Yield (list index, [ScanResult]) as soon as all batches of a file list are done, in order."""
    pending: dict[int, list] = {}
    remaining = [owners.count(n) for n in range(count)]
    for get, size, owner in zip(getters, job_bytes, owners):
        pending.setdefault(owner, []).append(_checked(get()))
        bar.update(size)
        remaining[owner] -= 1
        if remaining[owner] == 0:
            yield owner, pending.pop(owner)


def _samples(results: list[ScanResult]) -> pa.Table:
    tables = [r.samples for r in results if r.samples.num_rows]
    return pa.concat_tables(tables) if tables else SAMPLE_SCHEMA.empty_table()


# ============================================================ dataset mode

def evaluate_dataset(dataset_path: str | os.PathLike[str], parallel: int = 16, quiet: bool = False, offline: bool = False,
                     progress: Callable[..., Any] | None = None) -> Report:
    """Bring a dataset's PointsDB up to date (idempotent; see the module docstring).

    ``offline``: re-grade every stored answer with the current grader while building
    (the NDJSON files are not changed); evals built that way are rebuilt when the
    grader version changes, and by a later run without --offline.
    """
    dataset = load_dataset(dataset_path)
    plan = bookkeeping.plan_dataset(dataset, GRADER_VERSION if offline else None)
    report = Report(db_path=plan.db_path)
    for item in plan.no_files:
        what = "kept its existing points" if item.kept else "skipped"
        report.warnings.append(f"eval {item.spec.eval_id} ({item.spec.label}): glob {item.spec.glob!r} "
                               f"matched no NDJSON files; {what}")
    report.unchanged = len(plan.unchanged) + sum(1 for item in plan.no_files if item.kept)
    if plan.touches_db():
        _run_plan(plan, parallel, offline, quiet, progress, report)
    return report


def _run_plan(plan: bookkeeping.Plan, parallel: int, offline: bool, quiet: bool, progress: Callable[..., Any] | None,
              report: Report) -> None:
    """Write what the plan says: drops, relabels, the scanned evals, the dataset's meta."""
    file_lists = [item.files for item in plan.build]
    expects = [(item.spec.model, item.spec.template, item.spec.sampler) for item in plan.build]
    jobs, owners, sizes, job_bytes = plan_jobs(file_lists, expects, parallel, offline,
                                               [item.sizes for item in plan.build])
    base = plan.db_path.parent
    with Workers(parallel, len(jobs)) as pool:
        getters = pool.map(scan_batch_safe, jobs)            # forks the workers before any DuckDB opens
        # computed while the workers scan (it generates the config's points)
        expected = expected_rows(plan.meta, report.warnings.append) if plan.meta else None
        with pointsdb.PointsWriter(plan.db_path, keep_existing=plan.reuse) as writer, \
                _progress(sum(map(sum, sizes)), quiet, progress) as bar:
            for eid in plan.drop:
                writer.drop_eval(eid)
            for relabel in plan.relabel:
                writer.put_eval(relabel.row)
                writer.set_eval_metadata(relabel.spec.eval_id, relabel.groups, relabel.facets_json)
            for owner, results in _gather(getters, job_bytes, owners, len(plan.build), bar):
                build = plan.build[owner]
                stats = EvalStats(build.spec.eval_id, build.spec.label, files=len(build.files))
                for result in results:
                    stats.add_scan(result, build.files)
                batch = eval_points(build.spec, _samples(results), source_names(build.files, base), stats)
                writer.drop_eval(build.spec.eval_id)
                writer.write_points(batch)
                writer.put_eval(build.row | stats.counts_row())
                report.evals.append(stats)
                add_regraded(report.regraded, stats.regraded)
            if plan.meta:
                writer.set_expected(expected)
                writer.set_meta(plan.meta.meta)
    report.dropped, report.relabelled, report.written = len(plan.drop), len(plan.relabel), True


def expected_rows(meta: bookkeeping.MetaUpdate, warn: Callable[[str], None]) -> list:
    """(base_task, degree, points) from the dataset's config, or [] (with a warning) when unavailable."""
    config = meta.config_path
    if config is None:
        return []
    if not config.is_file():
        warn(f"config {config} named by {meta.dataset_path} not found; completeness (N/M) will be unknown")
        return []
    counts = expected_points(load_config(config, check_points=False), density=meta.density)
    return sorted(((task, degree, int(n)) for (task, degree), n in counts.items()),
                  key=lambda r: (r[0], -1 if r[1] is None else r[1]))


# ============================================================ interview mode

def evaluate_interview(spec_text: str, db_path: str | os.PathLike[str] | None = None, parallel: int = 16,
                       quiet: bool = False, offline: bool = False, inplace: bool = False,
                       progress: Callable[..., Any] | None = None) -> Report:
    """Evaluate loose NDJSON files; evals come from the records' model/template/sampler.

    With ``db_path`` the result is written as a complete PointsDB (rebuilt each time,
    deterministic), otherwise only the report is returned. ``inplace`` (with
    ``offline``) first writes the re-graded records back into their files.
    """
    report = Report(db_path=Path(db_path) if db_path else None)
    files = expand_interview(spec_text, report.warnings.append)
    jobs, _, sizes, job_bytes = plan_jobs([files], [None], parallel, offline and not inplace)
    source_base = report.db_path.resolve().parent if report.db_path else None
    try:
        with Workers(parallel, max(len(jobs), len(files) if inplace else 0)) as pool:
            if inplace:
                for get in pool.map(regrade_file_inplace, files):
                    add_regraded(report.regraded, get())
            getters = pool.map(scan_batch_safe, jobs)
            with _progress(sum(sizes[0]), quiet, progress) as bar:
                results = next(_gather(getters, job_bytes, [0] * len(jobs), 1, bar))[1]
    except BaseException:
        if inplace:                 # workers stopped mid-file leave their half-written copies
            remove_regrade_temps(files)
        raise
    _interview_evals(report, files, results, source_base, spec_text)
    return report


def _interview_evals(report: Report, files: list[str], results: list[ScanResult], source_base: Path | None,
                     spec_text: str) -> None:
    """Split the scanned files by eval triple and write (or only count) each eval."""
    samples = _samples(results)
    per_file: dict[int, set[tuple]] = {}        # file_no -> set of triples
    for f, m, t, s in set(zip(*(samples.column(c).to_pylist() for c in ("file_no", "model", "template",
                                                                           "sampler")))):
        per_file.setdefault(f, set()).add((m, t, s))
    owner_of = {f: min(triples, key=str) for f, triples in per_file.items()}
    triples = sorted({t for ts in per_file.values() for t in ts}, key=str)
    stats = {t: EvalStats(_interview_spec(t).eval_id, t[0]) for t in triples}
    orphans = EvalStats("", "")
    offset = 0
    for result in results:
        for local, (records, unanswered) in enumerate(zip(result.records, result.unanswered)):
            target = stats[owner_of[offset + local]] if offset + local in owner_of else orphans
            target.records += records
            target.unanswered += unanswered
        for f, line, msg in result.problems:
            target = stats[owner_of[f]] if f in owner_of else orphans
            target.problems.append(f"{files[f]}:{line}: {msg}")
            target.mismatched += msg.startswith("record is ")
        offset += len(result.records)
        add_regraded(report.regraded, result.regraded)
    specs = [_interview_spec(t) for t in triples]
    builds = bookkeeping.plan_interview(
        [(spec, [files[f] for f in sorted(f for f, ts in per_file.items() if t in ts)]) for spec, t in zip(specs, triples)],
        source_base) if report.db_path else []
    writer = pointsdb.PointsWriter(report.db_path, keep_existing=False) if report.db_path else None
    try:
        names = source_names(files, source_base)
        for number, (spec, triple) in enumerate(zip(specs, triples)):
            eval_stats = stats[triple]
            batch = eval_points(spec, samples, names, eval_stats, triple_filter=True)
            if writer is not None:
                writer.write_points(batch)
                writer.put_eval(builds[number].row | eval_stats.counts_row())
            report.evals.append(eval_stats)
        if writer is not None:
            writer.set_meta({"interview": spec_text})
            writer.commit()
            report.written = True
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    report.warnings.extend(orphans.problems)


def _interview_spec(triple: tuple[str, str, str]) -> EvalSpec:
    model, template, sampler = triple
    return EvalSpec(eval_id=eval_id(model, template, sampler), model=model, template=template, sampler=sampler,
                    label=model, groups=(), facets={}, tags=(), hf_id=None, cohort="", glob="")
