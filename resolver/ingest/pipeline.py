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
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
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


STOP_SIGNAL = signal.SIGUSR1     # parent -> worker: the pool is stopping, end the current item now
STOP_GRACE_SECONDS = 5.0        # then the pool is torn down without waiting on its pipes (docs/evaluate.md)
DEAD_WORKER_GRACE_SECONDS = 2.0  # a dead worker the pool has not noticed by then tore its result message
RESTOP_SECONDS = 0.05           # a stop that landed in a finaliser is sent again this much later
_stopping = False               # in a worker: its pool was told to stop
_in_item = False                # in a worker: running an item (not reading or writing a pipe)


class PoolStopped(BaseException):
    """Raised inside a worker's item when its pool stops (a BaseException, so no ``except Exception`` keeps it)."""


def _on_stop(signum: int, frame: object) -> None:
    global _stopping
    _stopping = True
    if _in_item:            # never while multiprocessing reads a job or writes a result: the pipe stays whole
        raise PoolStopped()


def _stop_reached_a_finaliser(unraisable: sys.UnraisableHookArgs) -> None:
    """A stop raised inside a finaliser or a C callback (a ``__del__`` the item's garbage
    collection runs, say) cannot leave the item: Python would print it as an ignored exception
    with its traceback. It is not printed; a timer sends the stop again a moment later (a
    signal raised here would run its handler here, inside the hook), so the handler raises at
    the item's next ordinary line (docs/evaluate.md, *How the pool stops*)."""
    if isinstance(unraisable.exc_value, PoolStopped):
        if _in_item:
            signal.setitimer(signal.ITIMER_REAL, RESTOP_SECONDS)
        return
    sys.__unraisablehook__(unraisable)


def _start_worker() -> None:
    """Workers leave Ctrl-C to the main process, which stops them and removes its temp files;
    they end with the main process however it dies (kill -9, the OOM killer): a forked worker
    holds both ends of its job pipe and would otherwise wait forever (docs/evaluate.md).

    A worker is forked with SIGINT and STOP_SIGNAL blocked (``Workers.map``): a Ctrl-C that lands
    between the fork and this function stays pending, and ignoring the signal discards it, so no
    worker prints a KeyboardInterrupt traceback from multiprocessing's start-up code; an early
    stop stays pending until its handler is in place."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(STOP_SIGNAL, _on_stop)
    signal.signal(signal.SIGALRM, _on_stop)      # the stop sent again (_stop_reached_a_finaliser)
    sys.unraisablehook = _stop_reached_a_finaliser
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, STOP_SIGNAL})
    die_with_parent()


def _run_item(function: Callable[[_T], _R], item: _T) -> _R:
    """One item in a worker; a stopping pool's worker skips it or leaves it at once (see ``_on_stop``)."""
    global _in_item
    _in_item = True
    try:
        if _stopping:
            raise PoolStopped()
        return function(item)
    finally:
        _in_item = False


class Workers:
    """Up to ``parallel`` forked worker processes, at most one per core (none when one would do).

    All workers are forked when the first job is submitted, so submit before this
    process opens a DuckDB connection (forking a process whose DuckDB threads hold
    locks could deadlock the children). A worker that dies (killed, out of memory)
    breaks the pool: the main process gets an error instead of waiting forever; a
    main process that dies takes its workers with it.

    Leaving the ``with`` block on an error or Ctrl-C stops the pool within seconds: queued items
    are cancelled and the workers leave their current item by an exception and exit, so no worker
    dies while it writes to a pipe the pool reads (a torn message there would block the pool's
    reader thread forever). Only a worker that has not ended after STOP_GRACE_SECONDS is killed,
    and then the pool's result pipe is closed so its reader cannot wait on a torn message.
    """

    def __init__(self, parallel: int, jobs: int):
        self.size = max(1, min(parallel, jobs, os.cpu_count() or 1))
        self.executor = None
        if self.size > 1:
            self.executor = ProcessPoolExecutor(self.size, mp_context=multiprocessing.get_context("fork"),
                                                initializer=_start_worker)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self.executor is None:
            return
        if exc_type is None:
            self.executor.shutdown(wait=True, cancel_futures=True)
        else:
            _stop(self.executor)

    def map(self, function: Callable[[_T], _R], items: Iterable[_T]) -> list[Callable[..., _R]]:
        """Start ``function`` on every item now; returns a list of result getters (in order)."""
        if self.executor is None:
            return [lambda item=item: function(item) for item in items]
        # The first submit forks every worker; they inherit this mask (see _start_worker).
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, STOP_SIGNAL})
        try:
            futures = [self.executor.submit(_run_item, function, item) for item in items]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        executor = self.executor
        return [lambda f=f: _result(f, executor) for f in futures]


def _stop(executor: ProcessPoolExecutor) -> None:
    """Stop a busy pool without killing a worker that may be writing a result (see ``Workers``).

    A second Ctrl-C meanwhile is ignored: it would leave the pool half stopped."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
    try:
        processes = _processes(executor)
        manager: threading.Thread | None = getattr(executor, "_executor_manager_thread", None)
        results = getattr(executor, "_result_queue", None)
        executor_queues = (getattr(executor, "_call_queue", None), results)
        for process in processes:
            _signal(process, STOP_SIGNAL)
        executor.shutdown(wait=False, cancel_futures=True)
        if manager is not None:
            manager.join(STOP_GRACE_SECONDS)
            if manager.is_alive():
                _tear_down(processes, executor_queues)
                manager.join(STOP_GRACE_SECONDS)
        if results is not None:
            results.close()
    finally:
        if previous is not None:        # None: not ours to restore (set outside Python)
            signal.signal(signal.SIGINT, previous)


def _processes(executor: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The pool's worker processes (the executor keeps them in a private dict, None once shut down)."""
    return list((getattr(executor, "_processes", None) or {}).values())


def _ended(process: multiprocessing.process.BaseProcess) -> bool:
    """Whether a worker has ended, read from its sentinel: unlike ``exitcode`` this never reaps it
    (the pool's own thread does), so a worker found running still owns its pid."""
    try:
        return bool(multiprocessing.connection.wait([process.sentinel], 0))
    except (OSError, ValueError):
        return True


def _signal(process: multiprocessing.process.BaseProcess, sig: int) -> None:
    if process.pid is not None and not _ended(process):
        try:
            os.kill(process.pid, sig)
        except ProcessLookupError:
            pass


def _tear_down(processes: list[multiprocessing.process.BaseProcess], queues: tuple[Any, Any]) -> None:
    """The last resort for a pool whose reader thread is stuck: kill every worker, then close this
    process's copies of the job pipe's read end and the result pipe's write end. A message a dead
    worker tore then ends in end-of-file (the pool breaks) instead of a wait for bytes that never
    come, and a job still being written to the job pipe fails instead of waiting for a reader."""
    for process in processes:
        _signal(process, signal.SIGKILL)
    for process in processes:
        process.join(STOP_GRACE_SECONDS)
    calls, results = queues
    if calls is not None:
        calls._reader.close()
    if results is not None:
        results._writer.close()


def _result(future: Future[_R], executor: ProcessPoolExecutor) -> _R:
    """A job's result; a worker that died breaks the pool, which is an error, never a wait."""
    processes = _processes(executor)
    dead_since = None
    while True:
        try:
            return future.result(timeout=0.5)
        except TimeoutError:
            pass
        except BrokenProcessPool:
            raise UserError("a worker process died (killed, or out of memory?); nothing was written - run again, "
                            "perhaps with a smaller --parallel")
        # The pool notices a dead worker at once, unless the worker died in the middle of writing
        # its result: then the pool's reader waits for the rest of that message forever.
        if any(_ended(p) for p in processes):
            dead_since = dead_since or time.monotonic()
            if time.monotonic() - dead_since > DEAD_WORKER_GRACE_SECONDS:
                _tear_down(processes, (getattr(executor, "_call_queue", None), getattr(executor, "_result_queue", None)))


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


@dataclass(frozen=True)
class JobPlan:
    """The scan batches of some file lists: each job, the list it reads from (its owner) and
    its bytes (the bar's steps), and every list's file sizes."""

    jobs: list[ScanJob]
    owners: list[int]
    sizes: list[list[int]]
    job_bytes: list[int]


def plan_jobs(file_lists: list[list[str]], expects: Sequence[tuple[str, str, str] | None], parallel: int, regrade: bool,
              sizes: list[list[int]] | None = None) -> JobPlan:
    """ScanJobs for every list of files (an eval's, in merge order) and the list index of each.

    ``sizes``: each list's file sizes when already known (else they are ``stat``ed here).
    """
    if sizes is None:
        sizes = [[file_size(f) for f in files] for files in file_lists]
    plan = JobPlan([], [], sizes, [])
    for number, first, end in plan_batches(sizes, min(parallel, os.cpu_count() or 1)):
        plan.jobs.append(ScanJob(tuple(str(f) for f in file_lists[number][first:end]), expects[number], regrade, first))
        plan.owners.append(number)
        plan.job_bytes.append(sum(sizes[number][first:end]))
    return plan


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
    scans = plan_jobs(file_lists, expects, parallel, offline, [item.sizes for item in plan.build])
    base = plan.db_path.parent
    with Workers(parallel, len(scans.jobs)) as pool:
        getters = pool.map(scan_batch_safe, scans.jobs)      # forks the workers before any DuckDB opens
        # computed while the workers scan (it generates the config's points)
        expected = expected_rows(plan.meta, report.warnings.append) if plan.meta else None
        with pointsdb.PointsWriter(plan.db_path, keep_existing=plan.reuse) as writer, \
                _progress(sum(map(sum, scans.sizes)), quiet, progress) as bar:
            for eid in plan.drop:
                writer.drop_eval(eid)
            for relabel in plan.relabel:
                writer.put_eval(relabel.row)
                writer.set_eval_metadata(relabel.spec.eval_id, relabel.groups, relabel.facets_json)
            for owner, results in _gather(getters, scans.job_bytes, scans.owners, len(plan.build), bar):
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
    scans = plan_jobs([files], [None], parallel, offline and not inplace)
    source_base = report.db_path.resolve().parent if report.db_path else None
    try:
        with Workers(parallel, max(len(scans.jobs), len(files) if inplace else 0)) as pool:
            if inplace:
                for get in pool.map(regrade_file_inplace, files):
                    add_regraded(report.regraded, get())
            getters = pool.map(scan_batch_safe, scans.jobs)
            with _progress(sum(scans.sizes[0]), quiet, progress) as bar:
                results = next(_gather(getters, scans.job_bytes, scans.owners, 1, bar))[1]
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
