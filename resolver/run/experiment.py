"""One run of the runner: its options, its experiment, its test cases and records.

`RunOptions` holds every runner flag (README.md plus the older ones of docs/runner.md);
`build_experiment` loads the config, template and sampler and expands the steps;
`Experiment.cases` draws a step's test cases from the experiment's `CaseStreams`
(count-invariant: sample i is always the i-th case drawn from the step's rng); `blank_record` / `graded_record` build the
docs/runner.md record. Offline, API and batch modes and the simulator all go through
these, so every mode writes the same prompts and the same records.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from resolver.client import DEFAULT_LOAD_TIMEOUT, DEFAULT_TIMEOUT, api_key_from_env
from resolver.config import (
    DEFAULT_SEED,
    Density,
    ExperimentConfig,
    Precision,
    Sampler,
    Step,
    Template,
    build_request,
    expand_steps,
    load_config,
    load_sampler,
    load_template,
    render_messages,
)
from resolver.core import UserError
from resolver.core.typed import first_problem
from resolver.grading import GRADER_VERSION, SERVER_LOOP_FINISH_REASONS, grade
from resolver.records import RECORD_VERSION, new_record
from resolver.records.text_size import text_size
from resolver.tasks import get_task

# runner.py's --mode values: the one definition (the parser's choices are read from it).
RunMode = Literal["api", "write-batch", "read-batch"]
RUN_MODES: tuple[str, ...] = get_args(RunMode)

if TYPE_CHECKING:
    from resolver.tasks import Task, TestCase


# Flags whose bound needs its reason in the error line.
_FLAG_MESSAGES = {"degree": "--degree must be a whole number >= 0 (the degree given to entries without one)"}


class RunOptions(BaseModel):
    """Every runner flag, typed and bounded (pydantic); `checked()` checks how they combine.

    A bad value is a UserError naming the flag (``--parallel: must be >= 1, got 0``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    config: str
    template: str
    sampler: str
    model: str
    mode: RunMode = "api"
    apibase: str | None = None
    apikey: str | None = None
    ca_bundle: str | None = Field(None, description="PEM file of extra CA certificates for an https apibase")
    batch: str | None = None
    precision: str | None = None
    seed: int = DEFAULT_SEED
    density: Density = "normal"
    degree: int | None = Field(None, ge=0)
    parallel: int = Field(16, ge=1)
    threads: int = Field(1, ge=1)
    rounds: int | None = Field(None, ge=1, description="write-batch: rounds per unfinished step in one file")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, allow_inf_nan=False)
    load_timeout: float = Field(DEFAULT_LOAD_TIMEOUT, gt=0, allow_inf_nan=False,
                                description="seconds a server may answer 503 'Loading model'")
    cache: str = "cache/"
    tasks: list[str] = Field(default_factory=list)
    output: str = "results/"
    shuffle: bool = True
    quiet: bool = False
    tokenizer: str | None = None
    offline: int | None = Field(None, ge=1, description="ROUNDS: generate without a model")
    against: str | None = Field(None, description="A's run folder: pair with it and stop each cell on its decision")
    margin: float = Field(0.05, gt=0, lt=1, allow_inf_nan=False,
                          description="with --against: a cell whose difference lies inside ±margin is equivalent")
    mode_given: bool = False       # --mode appeared on the command line
    command: list[str] = Field(default_factory=list,
                               description="the command line as typed, kept in the run folder's metadata.json")

    def __init__(self, **values: Any):
        try:
            super().__init__(**values)
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "extra_forbidden":
                raise               # a flag without a field: a bug, not bad input
            path, message = first_problem(exc)
            if path and path[0] in _FLAG_MESSAGES:
                raise UserError(f"{_FLAG_MESSAGES[path[0]]}, got {exc.errors()[0]['input']!r}")
            flag = "--" + str(path[0]).replace("_", "-") if path else "runner options"
            raise UserError(f"{flag}: {message}")

    @classmethod
    def from_namespace(cls, args: object) -> "RunOptions":
        """Options from argparse's namespace (every flag is a field: a new flag needs one);
        typed `object`, read through vars(), since argparse stays in resolver/cli/."""
        values = dict(vars(args))
        mode = values.pop("mode", None)
        opts = cls(**values, mode=mode or "api", mode_given=mode is not None)
        return opts.checked()

    def checked(self) -> "RunOptions":
        """Cross-flag rules; raises UserError with one line naming the flag, else returns the
        options. (Not named `validate`: that is pydantic's deprecated classmethod.)"""
        if self.rounds is not None and (self.mode != "write-batch" or self.offline is not None):
            raise UserError(f"--rounds is only used with --mode write-batch (the rounds per step one batch file "
                            f"holds; default: every round up to maxrounds), got it with "
                            f"{'--offline' if self.offline is not None else '--mode ' + self.mode}")
        if self.offline is not None:
            if self.mode_given and self.mode != "api":
                raise UserError(f"--offline generates prompts without a model; it cannot be combined "
                                f"with --mode {self.mode}")
        elif self.mode == "api" and not self.apibase:
            raise UserError("--apibase is required in api mode (e.g. --apibase http://localhost:3333); "
                            "--offline ROUNDS and --mode write-batch need no server")
        if self.against is not None and (self.mode != "api" or self.offline is not None):
            raise UserError(f"--against works in api mode only (each round's decision needs the answers at once), "
                            f"got it with {'--offline' if self.offline is not None else '--mode ' + self.mode}")
        if self.against is not None and not Path(self.against).is_dir():
            raise UserError(f"--against {self.against}: no such run folder; give A's run folder (results/<run>/)")
        if self.against is None and self.margin != type(self).model_fields["margin"].default:
            raise UserError("--margin goes with --against (the equivalence margin of a paired run)")
        if self.mode == "read-batch" and self.offline is None and not self.batch:
            raise UserError("--mode read-batch needs --batch FILE (the vLLM run-batch output)")
        if self.batch and self.mode != "read-batch":
            raise UserError("--batch is only used with --mode read-batch")
        if self.apikey is None:
            self.apikey = api_key_from_env(self.apibase)
        return self

    @property
    def in_flight(self) -> int:
        """Requests in flight over the whole run: --parallel per step times --threads steps."""
        return self.parallel * self.threads

    @property
    def cache_dir(self) -> Path:
        """Directory for caches beside the response cache (e.g. calibration)."""
        p = Path(self.cache)
        return p if (p.is_dir() or str(self.cache).endswith(("/", os.sep)) or not p.suffix) else p.parent


class CaseStreams:
    """One open-ended case stream per step identity (generator, seed, params), each with the
    cases drawn from it so far; thread-safe (the API runner's steps run side by side).

    Cases are drawn lazily from a stream seeded with `step.seed`, so the first n cases never
    depend on how many are asked for later (and the same step in another process yields the
    same cases). Each experiment holds its own (`Experiment.streams`); nothing is kept
    between experiments.
    """

    def __init__(self) -> None:
        self._streams: dict[str, tuple[Iterator, list]] = {}
        self._lock = threading.Lock()

    def cases(self, step: Step, start: int, stop: int) -> list:
        """[(sample_index, TestCase)] for samples start..stop-1 of a step."""
        if start < 0 or stop < start:
            raise ValueError(f"bad sample range {start}..{stop}")
        key = _stream_key(step)
        with self._lock:
            if key not in self._streams:
                # iter_cases is the generator's own sequence (tasks may override it);
                # a huge count makes it an open-ended stream consumed as needed.
                self._streams[key] = (_task(step).iter_cases(step.gen_params, random.Random(step.seed), 10**12), [])
            stream, drawn = self._streams[key]
            if stop > len(drawn):
                drawn.extend(itertools.islice(stream, stop - len(drawn)))
            return [(i, drawn[i]) for i in range(start, min(stop, len(drawn)))]

    def forget(self, step: Step) -> None:
        """Drop a finished step's cases (memory); asking again regenerates them identically."""
        with self._lock:
            self._streams.pop(_stream_key(step), None)

    def clear(self) -> None:
        """Forget every step's cases (memory); they are regenerated identically on demand."""
        with self._lock:
            self._streams.clear()


@dataclass
class Experiment:
    """Everything a run needs, loaded and validated, and the cases drawn for its steps."""

    config: ExperimentConfig
    steps: list
    template: Template
    sampler: Sampler
    model: str
    precision: Precision
    seed: int
    precision_name: str = ""
    streams: CaseStreams = field(default_factory=CaseStreams, repr=False, compare=False)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    def cases(self, step: Step, start: int, stop: int) -> list:
        """[(sample_index, TestCase)] for samples start..stop-1 of a step (CaseStreams.cases)."""
        return self.streams.cases(step, start, stop)

    def forget(self, step: Step) -> None:
        """Drop a finished step's cases; asking again regenerates them identically."""
        self.streams.forget(step)


def build_experiment(opts: RunOptions, progress: Callable[..., Any] | None = None) -> Experiment:
    """Load config, template, sampler and expand the steps (UserError on bad input);
    `progress` (a Reporter's `bar`) shows calibration's bar."""
    config = load_config(opts.config)
    template = load_template(opts.template)
    sampler = load_sampler(opts.sampler)
    if sampler.stop_loops is not None and opts.mode != "api" and opts.offline is None:
        raise UserError(f"{opts.sampler}: \"stop_loops\" works in api mode only: vllm run-batch cannot stream, "
                        f"so no loop could be stopped (--mode {opts.mode}); use a sampler without it")
    precision_name, precision = config.precision_level(opts.precision)
    steps = expand_steps(config, density=opts.density, degree=opts.degree, tasks=opts.tasks or None,
                         seed=opts.seed, tokenizer=opts.tokenizer, template=template,
                         cache_dir=str(opts.cache_dir), progress=progress)
    return Experiment(config, steps, template, sampler, opts.model, precision, opts.seed, precision_name)


def _task(step: Step) -> Task:
    return get_task(step.generator)


def _stream_key(step: Step) -> str:
    return json.dumps([step.generator, step.seed, step.gen_params], sort_keys=True, default=str)


def messages_for(experiment: Experiment, step: Step, case: TestCase) -> list[dict]:
    """The chat messages of one case under the experiment's template."""
    return render_messages(experiment.template, _task(step), step.gen_params, case)


def loop_record(found: dict | None, sampler: Sampler, finish_reason: str | None = None) -> dict | None:
    """A stopped answer's ``timings.loop``: the loop found (FoundLoop.to_json()) and the
    request's max_tokens, at which token statistics count the sample (docs/runner.md).

    An answer the server itself stopped in a loop (finish_reason "repetition": vLLM's
    repetition_detection, in API and batch mode alike) is counted the same way; its loop
    says only ``{"by": "server", "max_tokens": ...}``.
    """
    if found is not None:
        return {**found, "max_tokens": max_tokens_of(sampler)}
    if finish_reason in SERVER_LOOP_FINISH_REASONS:
        return {"by": "server", "max_tokens": max_tokens_of(sampler)}
    return None


def max_tokens_of(sampler: Sampler) -> int | None:
    """The completion-token limit a sampler sends (max_tokens or max_completion_tokens), or None."""
    params = {**(sampler.params.get("extra_body") or {}), **sampler.params}
    limit = params.get("max_tokens", params.get("max_completion_tokens"))
    return limit if isinstance(limit, int) else None


def request_for(experiment: Experiment, messages: list[dict]) -> dict:
    """The /v1/chat/completions body for these messages (model + sampler merged)."""
    return build_request(experiment.model, messages, experiment.sampler)


def blank_record(experiment: Experiment, step: Step, sample_index: int, case: TestCase, messages: list[dict],
                 count: int) -> dict:
    """The docs/runner.md record of a sample before any answer: answer fields null / false.

    ``task_version`` is the generator's ``Task.version``; ``grader_version`` and
    ``text_size`` are null until the record is graded (``graded_record`` sets
    resolver.grading.answers.GRADER_VERSION and the text's sizes); ``invalid_reason`` stays
    null unless the graded answer is not valid (docs/grading.md, *Invalid reasons*).
    """
    return new_record(
        task=step.name,
        version=RECORD_VERSION,
        base_task=step.base_task,
        key=f"{step.name}-{sample_index}",
        input=case.input,
        target=case.target,
        response_enum=case.response_enum,
        genresult=case.genresult,
        messages=messages,
        answer=None,
        usage=None,
        timings={"termination_reason": None, "finish_reason": None},
        step=step.index,
        params={**step.params, "count": count},
        model=experiment.model,
        template=experiment.template.name,
        sampler=experiment.sampler.name,
        guess_chance=case.guess_chance,
        normalized_answer=None,
        extracted_answer=None,
        is_valid=False,
        is_correct=False,
        is_truncated=False,
        manifold=step.manifold,
        task_version=_task(step).version,
        grader_version=None,
        text_size=None,
        invalid_reason=None,
    )


def graded_record(blank: dict, answer: str | None, reasoning: str | None, usage: dict | None,
                  finish_reason: str | None, *, generator: str | None = None,
                  termination_reason: str | None = None, stop_loops: bool = False,
                  loop: dict | None = None) -> dict:
    """The blank record filled with a completion and graded by resolver.grading.answers.grade.

    `generator` is the step's (``Step.generator``); without it the record's base_task is
    taken as the generator's name. `reasoning` is added last, only when non-empty.
    A run with the sampler's stop_loops marks every record ``timings.stop_loops: true``;
    an answer it stopped in a loop (`loop`: the FoundLoop's counts and the request's
    ``max_tokens``) gets ``timings.termination_reason: "loop"`` and ``timings.loop``, and
    is graded as the truncated answer its finish_reason "length" says it is (docs/runner.md);
    so is an answer the server stopped in a loop (finish_reason "repetition", `loop_record`).
    """
    name = generator or blank["base_task"]
    record = dict(blank)
    record["answer"] = answer
    record["usage"] = usage
    timings: dict[str, Any] = {"termination_reason": "loop" if loop is not None else termination_reason,
               "finish_reason": finish_reason}
    if stop_loops:
        timings["stop_loops"] = True
    if loop is not None:
        timings["loop"] = loop
    record["timings"] = timings
    record.update(grade(get_task(name), blank, answer, finish_reason, reasoning))
    record["grader_version"] = GRADER_VERSION
    record["text_size"] = text_size(reasoning, answer)
    record.pop("reasoning", None)
    if reasoning:
        record["reasoning"] = reasoning
    return record

