"""The API-mode loop of runner.py: adaptive rounds per step, each sample from the cache or the
server, its record written; and `run_api`, the mode's entry point.

The loop's parts, each a module of its own:

* what is sent next: `scheduler` (step order, when a step opens, the P x T pool);
* how one request is sent: `sending` (body and cache key, shared calls, the cache);
* what a failure means: `failures` (counted, shown once, the two guards that stop a run);
* what gets written, and when: `outbox` (the record, after its answer is committed);
* what the bar shows: `progress` (the bar, its postfix, one line per step);
* whether a step gets another round: `RunLoop.another_round` (the rule of `rounds`).

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
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, Iterable

from resolver.client import (
    ChatClient,
    Completion,
    PromptTooLong,
    ResponseCache,
    cached_completion,
    fast_event_loop,
    parse_endpoint,
    ssl_context_for,
)
from resolver.config import Step
from resolver.grading import LoopRule
from resolver.records import new_run_folder
from resolver.run.experiment import Experiment, RunOptions, blank_record, build_experiment
from resolver.run.failures import FailurePolicy
from resolver.run.folder_metadata import recorded_run, run_metadata
from resolver.run.outbox import Outbox, answer_record
from resolver.run.progress import Progress
from resolver.run.report import Reporter
from resolver.run.rounds import AdaptiveRounds, RoundRule, Tally
from resolver.run.scheduler import Scheduler, ordered_steps
from resolver.run.sending import Sample, Sender, prepare_sample
from resolver.run.summary import RunSummary

if TYPE_CHECKING:
    import ssl

    from resolver.run.against import PairedStop

__all__ = ["RunLoop", "run_api"]


# ================================================================ the loop
@dataclass
class _StepState:
    step: Step
    slots: asyncio.Semaphore         # --parallel: the step's requests in flight (Scheduler.step_slots)
    tally: Tally = field(default_factory=Tally)
    rounds: int = 0
    missing: int = 0                 # samples not in the cache (cache-only mode)


class RunLoop:
    """Runs steps against a server (or the cache alone) and writes one run folder.

    It runs each step's rounds and each sample's path (cache, else the server; then the record);
    its parts decide the rest: `scheduler` what is sent next, `failures` what a failure means,
    `outbox` what is written and when, `progress` what the bar shows."""

    def __init__(self, experiment: Experiment, opts: RunOptions, cache: ResponseCache, client: ChatClient | None,
                 folder: Path, *, progress: bool = True, reporter: Reporter | None = None,
                 rule: RoundRule | None = None):
        self.exp = experiment
        self.rule = rule or AdaptiveRounds(experiment.precision)   # rounds.py: more rounds or stop
        self.cache = cache
        self.client = client
        self.folder = folder
        reporter = reporter or Reporter()
        self.summary = RunSummary(folder=folder, steps_total=len(experiment.steps))
        self.written_keys: set[str] = set()  # keys of the samples this run folder holds (read-batch counts the rest)
        loop_spec = experiment.sampler.stop_loops     # docs/runner.md, *Loops stopped early*
        loop_rule = None if loop_spec is None else LoopRule(**loop_spec)
        self._stop_loops = loop_rule is not None
        self.scheduler = Scheduler(opts)
        self.failures = FailurePolicy(self.summary, reporter, self.scheduler.in_flight)
        self.outbox = Outbox(folder, cache, self.summary)
        self.progress = Progress(reporter, experiment.model, self._bar_counts, shown=progress, notes=not opts.quiet)
        self.sender = None if client is None else Sender(client, cache, self.scheduler, self.failures,
                                                         self.summary, loop_rule)
        self._started = time.monotonic()
        self._cpu_started = time.process_time()

    # ---- top level -----------------------------------------------------------
    async def run(self, steps: Iterable[Step]) -> RunSummary:
        steps = list(steps)
        self.progress.plan(len(steps) * self.exp.precision.count)
        flusher = asyncio.create_task(self.outbox.flush_forever())
        tasks: set[asyncio.Task] = set()
        # the server's own count of generated tokens, to report what loop stops saved (vLLM)
        counted_from = await self.client.server_generated_tokens() if self.client and self._stop_loops else None
        try:
            await self.scheduler.run_steps(steps, self._start_step, tasks)
            self.failures.release()
        except asyncio.CancelledError:
            self.summary.interrupted = True
            self.failures.release()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)
            self.outbox.flush()
            self.outbox.close()
            self.progress.close()
            self.summary.wall = time.monotonic() - self._started
            self.summary.cpu = time.process_time() - self._cpu_started
            if self.client:
                self.summary.retries = self.client.stats.retries
                self.summary.retry_reasons = dict(self.client.stats.retry_reasons)
                self.summary.resent = self.client.stats.resent
                if counted_from is not None:
                    counted_to = await self.client.server_generated_tokens()
                    if counted_to is not None:
                        self.summary.server_generated = counted_to - counted_from
        return self.summary

    def _start_step(self, step: Step) -> Coroutine[Any, Any, None]:
        return self._run_step(_StepState(step, self.scheduler.step_slots(), self.rule.tally(step)))

    async def _run_step(self, state: _StepState) -> None:
        count = self.exp.precision.count
        while True:
            start = state.rounds * count
            batch = [prepare_sample(self.exp, state.step, i, case)
                     for i, case in self.exp.cases(state.step, start, start + count)]
            self.scheduler.samples_queued(len(batch))
            if state.rounds:                     # first rounds are in the initial plan
                self.progress.plan_more(len(batch))
            stored = self.cache.get_many(s.key for s in batch)     # one query per round
            # Cache-only (read-batch): requests vLLM refused as too long are finished samples.
            too_long = {} if self.client else self.cache.too_long_many(s.key for s in batch)
            await asyncio.gather(*(self._sample(state, s, stored.get(s.key), start + count, too_long.get(s.key))
                                   for s in batch))
            state.rounds += 1
            if state.missing:
                self.summary.incomplete.append((state.step.name, state.rounds, state.missing))
                break
            if not await self.another_round(state):
                break
        self.outbox.close_step(state.step)       # its file closes after its records
        self.exp.forget(state.step)              # free its cases (regenerated if needed)
        self.summary.steps_done += 0 if state.missing else 1
        self.progress.step_done(state.step.name, state.rounds, state.tally)

    async def another_round(self, state: _StepState) -> bool:
        """After each complete round of a step: does it get another? The one place a round is
        decided: the loop's round rule (resolver.run.rounds: the adaptive rule of an ordinary run,
        or runner.py --against's PairedStop; docs/runner.md, *Steps and rounds*)."""
        return await self.rule.more(state.step, state.tally, state.rounds)

    async def _sample(self, state: _StepState, sample: Sample, stored: dict | None, count: int,
                      too_long: str | None = None) -> None:
        try:
            completion: Completion | PromptTooLong | None = (
                cached_completion(stored) if stored is not None else None)    # malformed: ask again
            if completion is None and too_long is not None:
                completion = PromptTooLong(too_long)
            cached = completion is not None
            if completion is None:
                if self.sender is None:          # cache only: the step still needs this round
                    state.missing += 1
                    return
                sample.replace = stored is not None
                completion = await self.sender.ask(sample, state.slots)
                if completion is None:
                    return
            blank = blank_record(self.exp, state.step, sample.index, sample.case, sample.messages, count)
            record = answer_record(blank, completion, state.step.generator, self.exp.sampler, self._stop_loops)
            state.tally.add(record)
            self.written_keys.add(sample.key)
            self.outbox.add(state.step, record, cached)
            self.progress.record_made(record, cached)
            if not cached:
                self.summary.answered_tokens += int((record.get("usage") or {}).get("completion_tokens") or 0)
        finally:
            self.scheduler.sample_finished()     # room in the pool: perhaps another step opens
            self.progress.sample_done()

    def _bar_counts(self) -> tuple[int, int]:
        """(retries, failed) for the bar's postfix."""
        return (self.client.stats.retries if self.client else 0), self.summary.failed


# ================================================================ entry points
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
