"""The API-mode loop of runner.py: adaptive rounds per step, cache, records, progress.

How a run goes
--------------
* Steps run in shuffled order (config order with --no-shuffle). Each step runs
  in rounds of `count` samples; after each round the half-width of the step's
  calibrated skill interval (mode C_I of docs/statistics.md: guess-corrected,
  over untruncated samples; resolver.stats.intervals_light) decides: stop at
  `target_margin` or after `maxrounds` rounds.
* `--parallel P` completions per step and `--threads T` steps (the seeds' words):
  at most P requests of one step and P x T over the run are in flight. Because a
  round is often smaller than P, steps are opened while fewer than P x T samples
  are queued (at least T steps); docs/runner.md *Concurrency*.
* Every request is looked up in the cache first; answers are stored in the
  cache and committed in batches every few milliseconds. A record is written to
  the run folder only after its answer is committed, so whatever a crash leaves
  in the folder is also in the cache, and rerunning the same command replays it
  without sending anything twice.
* Requests that fail for good (4xx other than 408/409/429, or out of retries,
  including replies of a shape we cannot read) are reported, left out of the run
  folder and of the cache, and make the run exit with status 1; rerunning the
  command retries just those.
* A prompt the server says does not fit the model's context (vLLM's "This model's
  maximum context length is ...", llama.cpp's exceed_context_size_error, ...) is a
  result, not a failure: the sample is written with ``"prompt_too_long": true``,
  ``answer: null``, ``usage: {"completion_tokens": 0}``, ``is_truncated: true``,
  ``timings.finish_reason: "length"`` and ``timings.termination_reason:
  "prompt_too_long"``, counted in the summary, not retried and not cached (a
  bigger context on the next run may answer it).
* A rejected API key or exhausted quota stops the run at once (nothing can succeed).
* Ctrl-C (or SIGTERM) stops sending, writes everything answered, and the command says how
  to resume.

With `client=None` the same loop runs from the cache alone (read-batch mode):
a sample missing from the cache marks its step as still needing that round, and
a sample run-batch refused as too long (the cache's too_long table) is written as
a prompt-too-long sample, exactly as API mode writes it.
"""
from __future__ import annotations

import asyncio
import hashlib
import random
import signal
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, Iterable

from resolver.client import (
    TRANSPORT_ONLY_FIELDS,
    ChatClient,
    Completion,
    PromptTooLong,
    RequestFailed,
    ResponseCache,
    cached_completion,
    canonical_request,
    fast_event_loop,
    parse_endpoint,
    ssl_context_for,
)
from resolver.config import Step
from resolver.core import UserError
from resolver.grading import LoopRule
from resolver.records import RecordWriter, new_run_folder, step_file
from resolver.run.experiment import (
    Experiment,
    RunOptions,
    blank_record,
    build_experiment,
    graded_record,
    loop_record,
    messages_for,
    request_for,
)
from resolver.run.folder_metadata import recorded_run, run_metadata
from resolver.run.report import Reporter
from resolver.run.rounds import AdaptiveRounds, RoundRule, Tally
from resolver.run.summary import RunSummary

if TYPE_CHECKING:
    import ssl

    from resolver.run.against import PairedStop
    from resolver.tasks import TestCase


FLUSH_INTERVAL_S = 0.025     # cache commit + record write cadence


ABORT_AFTER_FAILURES = 10    # this many failures before any success: the setup is wrong


# ================================================================ the loop
def prompt_too_long_record(blank: dict, generator: str | None = None, stop_loops: bool = False) -> dict:
    """The record of a sample whose prompt the server refused as longer than its context.

    It is a finished, truncated sample (nothing could be generated): ``answer`` null,
    ``usage`` ``{"completion_tokens": 0}``, ``is_truncated`` true,
    ``timings.finish_reason`` "length" (so re-grading agrees), and two markers
    that say why: ``timings.termination_reason`` "prompt_too_long" and the top-level
    ``"prompt_too_long": true``.
    """
    # usage says "nothing was generated" (prompt size unknown): a record with neither usage nor
    # answer is an offline placeholder to evaluate.py, and this sample is a real outcome.
    record = graded_record(blank, None, None, {"completion_tokens": 0}, "length", generator=generator,
                           termination_reason="prompt_too_long", stop_loops=stop_loops)
    record["prompt_too_long"] = True
    return record


@dataclass
class _Sample:
    """One sample's request, prepared before its round is looked up in the cache."""

    index: int
    case: TestCase
    messages: list
    body: dict
    key: str
    payload: bytes | None
    replace: bool = False            # the cache holds a malformed value for this key: overwrite it


@dataclass
class _StepState:
    step: Step
    tally: Tally = field(default_factory=Tally)
    rounds: int = 0
    writer: RecordWriter | None = None
    missing: int = 0                 # samples not in the cache (cache-only mode)
    slots: asyncio.Semaphore = field(default_factory=asyncio.Semaphore)   # --parallel: the step's requests in flight


class RunLoop:
    """Runs steps against a server (or the cache alone) and writes one run folder."""

    def __init__(self, experiment: Experiment, opts: RunOptions, cache: ResponseCache, client: ChatClient | None,
                 folder: Path, *, progress: bool = True, reporter: Reporter | None = None,
                 rule: RoundRule | None = None):
        self.exp = experiment
        self.rule = rule or AdaptiveRounds(experiment.precision)   # rounds.py: more rounds or stop
        self.reporter = reporter or Reporter()
        self.opts = opts
        self.cache = cache
        self.client = client
        self.folder = folder
        self.summary = RunSummary(folder=folder, steps_total=len(experiment.steps))
        self._total = opts.in_flight       # P x T: requests in flight over all steps
        self._sem = asyncio.Semaphore(self._total)
        self._outbox: list[tuple[_StepState, dict | None, bool]] = []
        self._inflight: dict[str, asyncio.Future] = {}
        self._states: list[_StepState] = []
        self._answered: set[str] = set()   # keys answered by the server in this run
        self.written_keys: set[str] = set()  # keys of the samples this run folder holds (read-batch counts the rest)
        self._failure_streak = 0             # failures since the last answer
        self._held_lines: list[str] | None = []   # failure lines held until the server answers once
        self._malformed_failures = 0         # failed requests whose replies were not chat completions
        # the line that stopped the run: requests in flight that fail after it raise the same line,
        # so the run ends with one message whichever of them is reported
        self._stop_line: str | None = None
        self._live_tokens = 0            # for the progress bar (records count at write time)
        self._live_cached = 0
        self._queued = 0             # samples started and not finished
        self._planned = 0            # samples the bar expects (rounds after the first add theirs)
        self._wake = asyncio.Event()
        self._bar = self.reporter.bar(total=0, unit="sample", desc=f"{experiment.model}",
                                      disable=not progress, smoothing=0.1)
        self._started = time.monotonic()
        self._cpu_started = time.process_time()
        self._last_postfix = 0.0

    @cached_property
    def _loop_rule(self) -> LoopRule | None:
        """The sampler's "stop_loops" rule, or None (docs/runner.md, *Loops stopped early*)."""
        rule = self.exp.sampler.stop_loops
        return None if rule is None else LoopRule(**rule)

    # ---- top level -----------------------------------------------------------
    async def run(self, steps: Iterable[Step]) -> RunSummary:
        steps = list(steps)
        self._planned = len(steps) * self.exp.precision.count
        self._bar.total = self._planned
        flusher = asyncio.create_task(self._flush_forever())
        tasks: set[asyncio.Task] = set()
        try:
            await self._launch_steps(steps, tasks)
            self._release_held_lines()
        except asyncio.CancelledError:
            self.summary.interrupted = True
            self._release_held_lines()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)
            self._flush()
            self._close_writers()
            self._bar.close()
            self.summary.wall = time.monotonic() - self._started
            self.summary.cpu = time.process_time() - self._cpu_started
            if self.client:
                self.summary.retries = self.client.stats.retries
                self.summary.retry_reasons = dict(self.client.stats.retry_reasons)
        return self.summary

    async def _launch_steps(self, pending: list, tasks: set) -> None:
        """Open steps while the request pool has room; wait for all of them."""
        pending.reverse()                        # pop() from the end keeps the order
        min_steps = max(1, self.opts.threads)
        while pending or tasks:
            while pending and (len(tasks) < min_steps or self._queued < self._total):
                step = pending.pop()
                state = _StepState(step, self.rule.tally(step), slots=asyncio.Semaphore(self.opts.parallel))
                self._states.append(state)
                tasks.add(asyncio.create_task(self._run_step(state)))
                await asyncio.sleep(0)           # let it queue its first round
            self._wake.clear()
            wake = asyncio.create_task(self._wake.wait())
            done, _ = await asyncio.wait(tasks | {wake}, return_when=asyncio.FIRST_COMPLETED)
            wake.cancel()
            for task in done - {wake}:
                tasks.discard(task)
                task.result()                    # re-raise UserError (e.g. abort)

    async def _run_step(self, state: _StepState) -> None:
        count = self.exp.precision.count
        while True:
            start = state.rounds * count
            batch = [self._prepare(state.step, i, case) for i, case in self.exp.cases(state.step, start, start + count)]
            self._queued += len(batch)
            if state.rounds:                     # first rounds are in the initial total
                self._planned += len(batch)
                self._bar.total = self._planned
                self._bar.refresh()
            stored = self.cache.get_many(s.key for s in batch)     # one query per round
            # Cache-only (read-batch): requests vLLM refused as too long are finished samples.
            too_long = {} if self.client else self.cache.too_long_many(s.key for s in batch)
            await asyncio.gather(*(self._sample(state, s, stored.get(s.key), start + count, too_long.get(s.key))
                                   for s in batch))
            state.rounds += 1
            if state.missing:
                self.summary.incomplete.append((state.step.name, state.rounds, state.missing))
                break
            if not await self.rule.more(state.step, state.tally, state.rounds):
                break
        self._outbox.append((state, None, False))   # close the file after its records
        self.exp.forget(state.step)                  # free its cases (regenerated if needed)
        self.summary.steps_done += 0 if state.missing else 1
        if not self.opts.quiet:
            low, high, below = state.tally.skill_interval()
            interval = "below chance" if below else f"95% interval {low:.2f}-{high:.2f}"
            self.reporter.note(f"{state.step.name}: {state.rounds} round(s), "
                               f"{state.tally.untruncated + state.tally.truncated} samples, "
                               f"excess accuracy {state.tally.excess():.2f} ({interval})")

    def _prepare(self, step: Step, index: int, case: TestCase) -> _Sample:
        messages = messages_for(self.exp, step, case)
        body = request_for(self.exp, messages)
        stop_loops = self.exp.sampler.stop_loops
        canonical = canonical_request(body, stop_loops)
        # The canonical bytes are the request itself unless transport fields were dropped
        # (a stop_loops request streams, and its key carries the rule the request does not).
        payload = None if body.keys() & set(TRANSPORT_ONLY_FIELDS) else canonical
        return _Sample(index, case, messages, body, hashlib.sha256(canonical).hexdigest(), payload)

    async def _sample(self, state: _StepState, sample: _Sample, stored: dict | None, count: int,
                      too_long: str | None = None) -> None:
        try:
            completion: Completion | PromptTooLong | None = (
                cached_completion(stored) if stored is not None else None)    # malformed: ask again
            if completion is None and too_long is not None:
                completion = PromptTooLong(too_long)
            cached = completion is not None
            if completion is None and self.client is None:
                state.missing += 1
                return
            if completion is None:
                sample.replace = stored is not None
                completion = await self._ask(sample, state.slots)
                if completion is None:
                    return
            blank = blank_record(self.exp, state.step, sample.index, sample.case, sample.messages, count)
            stop_loops = self._loop_rule is not None
            if isinstance(completion, PromptTooLong):
                record = prompt_too_long_record(blank, state.step.generator, stop_loops)
            else:
                record = graded_record(blank, completion.content, completion.reasoning,
                                       completion.usage, completion.finish_reason, generator=state.step.generator,
                                       stop_loops=stop_loops, loop=loop_record(completion.loop, self.exp.sampler))
            state.tally.add(record)
            self.written_keys.add(sample.key)
            self._outbox.append((state, record, cached))
            self._live_tokens += int((record.get("usage") or {}).get("completion_tokens") or 0)
            self._live_cached += cached
        finally:
            self._queued -= 1
            if self._queued < self._total:
                self._wake.set()                 # room in the pool: open another step
            self._bar.update(1)
            self._postfix()

    async def _ask(self, sample: _Sample, slots: asyncio.Semaphore) -> Completion | PromptTooLong | None:
        """Send a request (sharing one HTTP call between identical requests in flight), holding
        one of its step's `slots` and one of the run's."""
        key = sample.key
        shared = self._inflight.get(key)
        if shared is not None:
            return await asyncio.shield(shared)
        if key in self._answered:                # a twin of this sample was answered earlier in the run
            stored = self.cache.get(key)
            if stored is not None and cached_completion(stored) is not None:
                return cached_completion(stored)
        client = self.client
        assert client is not None, "only a run with a server asks (_sample counts the sample missing without one)"
        future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            async with slots, self._sem:     # the step's slot first: a waiting step holds no run slot
                completion = await client.complete(sample.body, sample.payload, self._loop_rule)
            self.cache.put(key, completion.to_json(), replace=sample.replace)
            self._answered.add(key)
            self._failure_streak = 0
            self.summary.answered += 1
            if self._held_lines is not None:
                self._release_held_lines()
            future.set_result(completion)
            return completion
        except RequestFailed as exc:
            if exc.kind == "prompt_too_long":
                self._failure_streak = 0         # the server answered: it works
                self._release_held_lines()
                too_long = PromptTooLong(str(exc))
                future.set_result(too_long)
                return too_long
            future.set_result(None)
            if exc.kind == "fatal":
                raise UserError(f"stopping: {exc}; no request can succeed like this "
                                f"(check {client.key_hint} and the account's quota)") from None
            self._note_failure(str(exc), exc.sent)
            return None
        except BaseException:
            if not future.done():
                future.cancel()
            raise
        finally:
            del self._inflight[key]

    def _note_failure(self, message: str, sent: str | None = None) -> None:
        if self._stop_line is not None:
            raise UserError(self._stop_line)
        self.summary.failed += 1
        self._failure_streak += 1
        self._malformed_failures += sent is not None
        first = message not in self.summary.failures
        self.summary.failures[message] += 1
        if self.summary.failed >= ABORT_AFTER_FAILURES and self.summary.answered == 0:
            self._stop_line = self._first_failures_line(message, sent)
            raise UserError(self._stop_line)
        if first:
            self._report(f"request failed: {message}")
        if self._failure_streak >= max(ABORT_AFTER_FAILURES, 2 * self._total):
            self._stop_line = (f"stopping: the last {self._failure_streak} requests all failed (last: {message}); "
                               "everything answered so far is saved: run the same command again to resume")
            raise UserError(self._stop_line)

    def _first_failures_line(self, message: str, sent: str | None) -> str:
        """The one line that stops a run whose first requests all failed."""
        failed = self.summary.failed
        if self._malformed_failures == failed and sent is not None:
            return (f"stopping: the first {failed} requests all came back as replies that are not chat "
                    f"completions (last: {message}; the server sent: {sent}); check that --apibase is an "
                    "OpenAI-compatible endpoint")
        return (f"stopping: the first {failed} requests all failed (last: {message}); "
                "check --model, --apibase and the sampler")

    def _report(self, line: str) -> None:
        """A failure line on stderr; before the server's first answer it is held, so that a run
        stopped by its first failures says so in one line (that line names the last failure)."""
        if self._held_lines is None:
            self.reporter.note(line)
        else:
            self._held_lines.append(line)

    def _release_held_lines(self) -> None:
        held, self._held_lines = self._held_lines or [], None
        for line in held:
            self.reporter.note(line)

    # ---- writing ---------------------------------------------------------------
    async def _flush_forever(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_S)
            self._flush()

    def _flush(self) -> None:
        """Commit the cache, then write the records whose answers are now durable."""
        self.cache.flush()
        outbox, self._outbox = self._outbox, []
        batches: dict[int, tuple[_StepState, list[dict]]] = {}     # one write and flush per file
        closing = []                     # a step's close marker follows all its records
        for state, record, cached in outbox:
            if record is None:
                closing.append(state)
                continue
            batches.setdefault(id(state), (state, []))[1].append(record)
            self.summary.count(record, cached)
        for state, records in batches.values():
            if state.writer is None:
                state.writer = RecordWriter(step_file(self.folder, state.step))
            state.writer.write_many(records)
        for state in closing:
            if state.writer:
                state.writer.close()

    def _close_writers(self) -> None:
        for state in self._states:       # steps cut short by Ctrl-C have no close marker
            if state.writer:
                state.writer.close()

    def _postfix(self) -> None:
        now = time.monotonic()
        if now - self._last_postfix < 0.5 or self._bar.disable:
            return
        self._last_postfix = now
        elapsed = max(now - self._started, 1e-9)
        stats = self.client.stats if self.client else None
        self._bar.set_postfix_str(
            f"tok/s={self._live_tokens / elapsed:.0f} cached={self._live_cached} "
            f"retries={stats.retries if stats else 0} failed={self.summary.failed}", refresh=False)


# ================================================================ entry points
def ordered_steps(experiment: Experiment, opts: RunOptions) -> list:
    """Config order, or shuffled by --seed (the default: spreads easy and hard work)."""
    steps = list(experiment.steps)
    if opts.shuffle:
        random.Random(opts.seed).shuffle(steps)
    return steps


async def _run_with_client(opts: RunOptions, experiment: Experiment, cache: ResponseCache, ssl_context: ssl.SSLContext | None,
                           reporter: Reporter) -> RunSummary:
    assert opts.apibase is not None, "RunOptions.checked() requires --apibase in api mode"
    async with ChatClient(opts.apibase, opts.apikey, parallel=opts.in_flight, timeout=opts.timeout,
                          load_timeout=opts.load_timeout,
                          ssl_context=ssl_context) as client:
        models = await client.list_models()
        if models is None or opts.apikey:
            # GET /models cannot tell whether the key works (llama.cpp serves it to anyone) or
            # whether the model exists (no /models): one minimal chat request can.
            await client.probe_chat(experiment.model)
        if models and experiment.model not in models:
            reporter.warn(f"warning: {client.base} lists models {', '.join(models[:8])}; "
                          f"--model {experiment.model!r} is not among them")
        folder = new_run_folder(opts.output, experiment.config.name, experiment.model,
                                experiment.template.name, experiment.sampler.name)
        steps: list[Step] = ordered_steps(experiment, opts)
        paired: PairedStop | None = None
        if opts.against:                 # runner.py --against: stop each cell on its decision (against.py)
            from resolver.run.against import against_rule  # numpy and scipy: only for this option

            steps, paired = against_rule(experiment, opts, steps, reporter)
        loop = RunLoop(experiment, opts, cache, client, folder, progress=not opts.quiet, reporter=reporter, rule=paired)
        with recorded_run(folder, run_metadata(opts, experiment, "api")):   # removes a folder left empty
            summary = await _interruptible(loop.run(steps), reporter)
            if paired is not None:
                paired.write(folder, reporter)
            return summary


async def _interruptible(coro: Coroutine[Any, Any, RunSummary], reporter: Reporter) -> RunSummary:
    """Run `coro`; the first Ctrl-C / SIGTERM cancels it cleanly, a second one is immediate."""
    task = asyncio.ensure_future(coro)
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        reporter.warn("\nstopping: finishing writes (Ctrl-C again to quit at once)")
        for sig in installed:
            loop.remove_signal_handler(sig)
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread (tests calling in-process): no handler
    try:
        return await task
    finally:
        for sig in installed:
            try:
                loop.remove_signal_handler(sig)
            except (ValueError, RuntimeError):
                pass


def run_api(opts: RunOptions, reporter: Reporter | None = None) -> RunSummary:
    """runner.py --mode api: run the experiment, return its summary (the command says what it means)."""
    endpoint = parse_endpoint(opts.apibase)         # bad URL: one-line error before any work
    ssl_context = ssl_context_for(opts.ca_bundle, https=endpoint.base.startswith("https:"))
    reporter = reporter or Reporter()
    experiment = build_experiment(opts, reporter.bar)
    fast_event_loop()
    with ResponseCache(opts.cache, background_checkpoints=True) as cache:
        return asyncio.run(_run_with_client(opts, experiment, cache, ssl_context, reporter))
