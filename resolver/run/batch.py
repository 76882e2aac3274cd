"""vLLM `run-batch` files: write the requests, read the answers back.

Input line (one per request), as vLLM's BatchRequestInput expects:
    {"custom_id": <cache key>, "method": "POST", "url": "/v1/chat/completions", "body": {...}}

Output line (vLLM's BatchRequestOutput):
    {"id": "vllm-...", "custom_id": ..., "response": {"status_code": 200,
     "request_id": ..., "body": <chat.completion>}, "error": null}
Older vLLM versions wrote the chat.completion itself as `response` (no status or
body wrapper); both are read. A failed request is written as
    {"id": ..., "custom_id": ..., "response": {"status_code": 400, "request_id": ...,
     "body": null}, "error": <ErrorResponse or message>}
(older versions: `"response": null` and the status as the error's `code`).
A failed line whose status and error resolver.client.http_policy.classify_error calls
"prompt_too_long" (vLLM's "This model's maximum context length is ...") is a
finished prompt-too-long sample, as in API mode, kept in the cache's too_long
table. Any other failed line, or one with no usable completion, is reported and
left out, so the next write-batch asks again.

`custom_id` is the request's cache key (resolver.client.cache.request_key), which is what
lets read-batch fill the cache and the normal pipeline run from it.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from resolver.client import (
    TRANSPORT_ONLY_FIELDS,
    Completion,
    PromptTooLong,
    ResponseCache,
    cached_completion,
    classify_error,
    completion_from_payload,
    error_text,
    request_key,
)
from resolver.core import UserError
from resolver.records import new_run_folder, run_folder_name
from resolver.run.api_runner import RunLoop
from resolver.run.experiment import blank_record, build_experiment, graded_record, loop_record, messages_for, request_for
from resolver.run.folder_metadata import recorded_run, run_metadata
from resolver.run.outbox import prompt_too_long_record
from resolver.run.rounds import Tally, needs_another_round
from resolver.run.scheduler import ordered_steps

if TYPE_CHECKING:
    from resolver.config import Step
    from resolver.run.experiment import Experiment, RunOptions
    from resolver.run.report import Reporter
    from resolver.run.summary import RunSummary

CHAT_URL = "/v1/chat/completions"


def batch_line(custom_id: str, body: dict) -> dict:
    """One run-batch input object; streaming fields are dropped (batch never streams)."""
    clean = {k: v for k, v in body.items() if k not in TRANSPORT_ONLY_FIELDS}
    return {"custom_id": custom_id, "method": "POST", "url": CHAT_URL, "body": clean}


def write_batch_file(path: str | Path, requests: Iterable[tuple[str, dict]]) -> int:
    """Write (custom_id, body) pairs as run-batch input NDJSON; returns the line count.

    Duplicate custom_ids are written once: vLLM requires them unique, and equal
    ids mean equal requests (the id is the hash of the request).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as out:
        for custom_id, body in requests:
            if custom_id in seen:
                continue
            seen.add(custom_id)
            out.write(json.dumps(batch_line(custom_id, body), ensure_ascii=False) + "\n")
    tmp.replace(path)  # a crash never leaves a half-written batch under the real name
    return len(seen)


@dataclass
class BatchOutput:
    """What a run-batch output file held."""

    answers: dict[str, Completion] = field(default_factory=dict)
    too_long: dict[str, str] = field(default_factory=dict)  # custom_id -> vLLM's context-length message
    problems: list[str] = field(default_factory=list)   # "line N: what was wrong"
    lines: int = 0                                      # non-blank lines read


def read_batch_output(path: str | Path) -> BatchOutput:
    """Parse a run-batch output file (either response shape); never raises on bad lines."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--batch {str(path)!r} does not exist; give the output file of `vllm run-batch -o`")
    result = BatchOutput()
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            result.lines += 1
            custom_id, answer, problem = parse_output_line(line)
            if problem:
                label = f" ({custom_id})" if custom_id else ""
                result.problems.append(f"line {line_no}{label}: {problem}")
                continue
            assert custom_id is not None and answer is not None, "a line without a problem has both"
            if custom_id in result.answers or custom_id in result.too_long:
                result.problems.append(f"line {line_no} ({custom_id}): duplicate custom_id, first answer kept")
            elif isinstance(answer, PromptTooLong):
                result.too_long[custom_id] = answer.message
            else:
                result.answers[custom_id] = answer
    return result


def _failure_status(response: Any, error: Any) -> int | None:
    """The HTTP status of a failed line: response.status_code (current vLLM), else the
    error's own `code` (older vLLM wrote `"response": null`); None when neither says."""
    status = response.get("status_code") if isinstance(response, dict) else None
    if isinstance(status, int) and not isinstance(status, bool) and status != 200:
        return status
    inner = error.get("error") if isinstance(error, dict) and isinstance(error.get("error"), dict) else error
    code = inner.get("code") if isinstance(inner, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _failure(custom_id: str, status: Any, error: Any) -> tuple[str, PromptTooLong | None, str | None]:
    """A failed line: a prompt-too-long sample when http_policy says so, else a problem."""
    inner = error.get("error") if isinstance(error, dict) and "error" in error else error
    message = error_text(inner)
    raw = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    if isinstance(status, int) and classify_error(status, raw) == "prompt_too_long":
        return custom_id, PromptTooLong(message), None
    return custom_id, None, (f"status {status}: {message}" if status is not None else f"error: {message}")


def parse_output_line(line: str) -> tuple[str | None, Completion | PromptTooLong | None, str | None]:
    """(custom_id, completion or PromptTooLong, None) for a usable line, else (custom_id?, None, problem)."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None, None, "not valid JSON (or nested too deeply)"
    if not isinstance(obj, dict):
        return None, None, "not a JSON object"
    custom_id = obj.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return None, None, "no custom_id"
    response = obj.get("response")
    if obj.get("error"):
        return _failure(custom_id, _failure_status(response, obj["error"]), obj["error"])
    if not isinstance(response, dict):
        return custom_id, None, "no response"
    if "body" in response or "status_code" in response:
        status = response.get("status_code", 200)
        if status != 200:
            return _failure(custom_id, status, response.get("body") or "no body")
        payload = response.get("body")
    else:
        payload = response  # the older shape: the completion itself
    try:
        return custom_id, completion_from_payload(payload), None
    except ValueError as exc:
        return custom_id, None, str(exc)


# ================================================================ the two batch modes
@dataclass
class BatchPlan:
    """What write-batch found: the requests of the rounds each unfinished step may still need."""

    requests: list = field(default_factory=list)    # (custom_id, body)
    rounds: dict = field(default_factory=dict)      # step name -> (first, last) round written (1-based)
    complete: int = 0                               # steps needing nothing more

    @property
    def step_rounds(self) -> int:
        """Rounds written, summed over the steps."""
        return sum(last - first + 1 for first, last in self.rounds.values())


def _round_requests(experiment: Experiment, step: Step, start: int, stop: int) -> list:
    """(index, case, messages, body, cache key) of samples start..stop-1 of a step."""
    keyed = []
    for index, case in experiment.cases(step, start, stop):
        messages = messages_for(experiment, step, case)
        body = request_for(experiment, messages)
        keyed.append((index, case, messages, body, request_key(body)))
    return keyed


def _round_records(experiment: Experiment, step: Step, start: int, stop: int,
                   cache: ResponseCache) -> tuple[list[dict], list[tuple[str, dict]]]:
    """Graded records of the cached samples of one round, and the missing (key, body) pairs.

    A request run-batch refused as too long (the cache's too_long table) is a
    finished prompt-too-long sample, as in the read-batch run folder."""
    records, missing = [], []
    keyed = _round_requests(experiment, step, start, stop)
    cached = cache.get_many(k[-1] for k in keyed)
    too_long = cache.too_long_many(k[-1] for k in keyed)
    for index, case, messages, body, key in keyed:
        answer = cached_completion(cached[key]) if key in cached else None
        if answer is None and key not in too_long:   # not answered yet, or a malformed cached value: ask again
            missing.append((key, body))
            continue
        blank = blank_record(experiment, step, index, case, messages, stop)
        if answer is None:
            records.append(prompt_too_long_record(blank, step.generator))
        else:
            records.append(graded_record(blank, answer.content, answer.reasoning, answer.usage,
                                         answer.finish_reason, generator=step.generator,
                                         loop=loop_record(None, experiment.sampler, answer.finish_reason)))
    return records, missing


def _unanswered(experiment: Experiment, step: Step, start: int, stop: int, cache: ResponseCache) -> list:
    """The (key, body) pairs of samples start..stop-1 that the cache cannot answer (no grading)."""
    keyed = _round_requests(experiment, step, start, stop)
    cached = cache.get_many(k[-1] for k in keyed)
    too_long = cache.too_long_many(k[-1] for k in keyed)
    return [(key, body) for *_, body, key in keyed
            if key not in too_long and (key not in cached or cached_completion(cached[key]) is None)]


def plan_batch(experiment: Experiment, cache: ResponseCache, rounds: int | None = None) -> BatchPlan:
    """Walk every step's rounds through the cache, as the API loop would; from the first
    round that is not fully answered, collect the unanswered requests of that round and
    the later ones up to maxrounds (at most `rounds` rounds per step when given).

    Writing every round a step may need lets one run-batch (one model load) finish the
    run; read-batch then takes only what the adaptive rule takes (docs/runner.md)."""
    plan = BatchPlan()
    count, maxrounds = experiment.precision.count, experiment.precision.maxrounds
    for step in experiment.steps:
        tally, done = Tally(), 0
        while True:
            records, missing = _round_records(experiment, step, done * count, (done + 1) * count, cache)
            if missing:
                last = maxrounds if rounds is None else min(maxrounds, done + rounds)
                plan.requests += missing
                plan.requests += _unanswered(experiment, step, (done + 1) * count, last * count, cache)
                plan.rounds[step.name] = (done + 1, last)
                break
            for record in records:
                tally.add(record)
            done += 1
            if not needs_another_round(tally, done, experiment.precision):
                plan.complete += 1
                break
        experiment.forget(step)
    return plan


def batch_file_path(opts: RunOptions, experiment: Experiment) -> Path:
    """results/<timestamp>_<config>_<model>_<template>_<sampler>-offline.ndjson (README.md)."""
    when = datetime.now()
    while True:
        # two write-batch calls within one second must not overwrite each other's file:
        # take the next free second (names keep the seed's format and sort by time)
        name = run_folder_name(experiment.config.name, experiment.model, experiment.template.name,
                               experiment.sampler.name, when)
        path = Path(opts.output) / f"{name}-offline.ndjson"
        if not path.exists():
            return path
        when += timedelta(seconds=1)


@dataclass(frozen=True)
class WrittenBatch:
    """What write-batch did: the plan, and the file it wrote (None when every step is answered)."""

    plan: BatchPlan
    steps: int                      # steps of the experiment
    cache_path: Path
    model: str
    path: Path | None = None
    lines: int = 0


def run_write_batch(opts: RunOptions, reporter: Reporter | None = None) -> WrittenBatch:
    """runner.py --mode write-batch: write the rounds every unfinished step may still need
    (`opts.rounds` of them at most; `reporter`: shows calibration's bar)."""
    experiment = build_experiment(opts, reporter.bar if reporter is not None else None)
    with ResponseCache(opts.cache) as cache:
        plan = plan_batch(experiment, cache, opts.rounds)
    done = WrittenBatch(plan, len(experiment.steps), cache.path, experiment.model)
    if not plan.requests:
        return done
    path = batch_file_path(opts, experiment)
    return replace(done, path=path, lines=write_batch_file(path, plan.requests))


@dataclass
class ReadBatch:
    """read-batch's input: the experiment, vLLM's output file read, and the custom_ids in it
    that are not requests of this experiment (`unknown`, ignored)."""

    experiment: Experiment
    output: BatchOutput
    known: set
    unknown: list
    imported: int = 0
    too_long: int = 0
    left_out: int = 0       # the batch's answers beyond where adaptive stopping ended their step


def read_batch(opts: RunOptions, reporter: Reporter | None = None) -> ReadBatch:
    """runner.py --mode read-batch, first part: build the experiment and read --batch."""
    assert opts.batch is not None, "RunOptions.checked() requires --batch in read-batch mode"
    experiment = build_experiment(opts, reporter.bar if reporter is not None else None)
    output = read_batch_output(opts.batch)
    known = experiment_keys(experiment)
    unknown = [cid for cid in [*output.answers, *output.too_long] if cid not in known]
    return ReadBatch(experiment, output, known, unknown)


def import_batch(batch: ReadBatch, cache: ResponseCache) -> None:
    """Put the experiment's answers (and its prompts too long for the model) into the cache."""
    for custom_id, answer in batch.output.answers.items():
        if custom_id in batch.known:
            cache.put(custom_id, answer.to_json())
            batch.imported += 1
    for custom_id, message in batch.output.too_long.items():
        if custom_id in batch.known:
            cache.put_too_long(custom_id, message)
            batch.too_long += 1
    cache.flush()


def replay_batch(batch: ReadBatch, opts: RunOptions, cache: ResponseCache, reporter: Reporter | None = None) -> RunSummary:
    """Write a run folder from the cache alone; returns the RunSummary (its `incomplete`
    steps still need rounds) and sets `batch.left_out`: the batch's answers the adaptive
    rule did not take stay in the cache only, so the folder equals an API run's."""
    experiment = batch.experiment
    folder = new_run_folder(opts.output, experiment.config.name, experiment.model,
                            experiment.template.name, experiment.sampler.name)
    loop = RunLoop(experiment, opts, cache, None, folder, progress=not opts.quiet, reporter=reporter)
    with recorded_run(folder, run_metadata(opts, experiment, "read-batch")):
        summary = asyncio.run(loop.run(ordered_steps(experiment, opts)))
    answered = {cid for cid in [*batch.output.answers, *batch.output.too_long] if cid in batch.known}
    batch.left_out = len(answered - loop.written_keys)
    return summary


def experiment_keys(experiment: Experiment) -> set[str]:
    """Cache keys of every request the experiment can make (all rounds of all steps at its precision)."""
    depth = experiment.precision.count * experiment.precision.maxrounds
    keys = set()
    for step in experiment.steps:
        for _, case in experiment.cases(step, 0, depth):
            keys.add(request_key(request_for(experiment, messages_for(experiment, step, case))))
        experiment.forget(step)           # keep memory flat on big configs
    return keys
