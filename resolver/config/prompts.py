"""Templates and samplers: from a generated problem to a chat-completions request.

Template file (JSON): ``{"messages": [{"role": "system"|"user"|"assistant",
"content": "..."}, ...]}``. Contents may use the placeholders
``{task_description}``, ``{answer_format}``, ``{input}`` and ``{examples}``
(``{{``/``}}`` for literal braces). The last message is a user turn whose content
ends with ``{input}``: the problem text is always the very end of the prompt (the
simulator and cache rely on that).

Multishot templates put worked examples before the question in one of two ways:

* a message ``{"role": "examples"}``: replaced by ``shots`` user/assistant pairs;
  each user turn is the template's last message rendered with the example's
  input, each assistant turn is ``example_answer`` (default
  ``"Final Answer: {target}"``) rendered with the example's target;
* the ``{examples}`` placeholder: the same examples as plain text.

Examples come from the task's own generator with an rng seeded from the task name,
at the step's parameters with the task's `example_overrides()` applied (same
answer format as the question, usually a smaller size), so every prompt of a step
shows the same examples on every machine.

Sampler file (JSON object): request parameters. OpenAI-standard ones go at the top
level of the request; engine extras (``top_k``, ``min_p``, ``repetition_penalty``,
``chat_template_kwargs``, ...) are what SDK clients send as ``extra_body``; any
other engine field can be given inside an explicit ``"extra_body": {...}``.
Unknown top-level keys are refused so that a typo is not silently sent.

One key is the runner's, never sent: ``"stop_loops"`` (``true``, ``false`` or an object of
resolver.grading.LoopRule thresholds) streams the request and closes it when the answer
is caught in a verbatim loop (docs/runner.md, *Loops stopped early*).
"""
from __future__ import annotations

import hashlib
import json
import random
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator

from resolver.core import UserError, choices_text, file_not_found, read_json_file
from resolver.core.typed import FileModel, at, first_problem, validate_file
from resolver.grading import LoopRule

if TYPE_CHECKING:
    from resolver.tasks import Task, TestCase

PLACEHOLDERS = ("task_description", "answer_format", "input", "examples")
EXAMPLES_ROLE = "examples"
DEFAULT_SHOTS = 3
DEFAULT_EXAMPLE_ANSWER = "Final Answer: {target}"

@dataclass(frozen=True)
class Template:
    name: str
    path: str
    messages: tuple
    shots: int = DEFAULT_SHOTS
    example_answer: str = DEFAULT_EXAMPLE_ANSWER
    uses_examples: bool = False     # worked examples needed (computed by load_template)


@dataclass(frozen=True)
class Sampler:
    name: str
    path: str
    params: dict = field(default_factory=dict)     # request fields (without "stop_loops")
    stop_loops: dict | None = None                 # the normalised LoopRule (all fields), or None: off


# ---------------------------------------------------------------- the files, as models
class Message(FileModel):
    """One template message; a ``{"role": "examples"}`` message stands for the worked examples."""

    role: Literal["system", "user", "assistant", "examples"]
    content: str | None = None

    @model_validator(mode="after")
    def _content(self) -> "Message":
        if self.role == EXAMPLES_ROLE:
            return self
        if self.content is None:
            raise at("content", "must be a string")
        _check_placeholders(self.content, "content", PLACEHOLDERS)
        return self


class TemplateFile(FileModel):
    """A template file (templates/*.json); docs/schemas/template.json is generated from it."""

    messages: list[Message] = Field(min_length=1, description="chat messages; the last is a user turn ending with {input}")
    shots: int = Field(DEFAULT_SHOTS, ge=1, le=16, description="worked examples in multishot templates")
    example_answer: str = Field(DEFAULT_EXAMPLE_ANSWER, description="an example's answer turn; {target} is its answer")
    description: str = ""

    @model_validator(mode="after")
    def _shape(self) -> "TemplateFile":
        last = self.messages[-1]
        if last.role != "user" or not (last.content or "").endswith("{input}"):
            raise at("messages", "the last message must be a user turn whose content ends with {input}")
        _check_placeholders(self.example_answer, "example_answer", ("target",))
        return self


def _range(name: str, left: str, low: float, high: float, right: str) -> Any:
    bounds: dict[str, Any] = {"gt" if left == "(" else "ge": low, "lt" if right == ")" else "le": high}
    return Field(None, allow_inf_nan=False, **bounds,
                 description=f"{name}: a number in {left}{low:g}, {high:g}{right} (the range servers accept)")


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


_PositiveInt = Annotated[int | None, Field(ge=1)]


class SamplerFile(FileModel):
    """A sampler file (samplers/*.json): request fields, each with the range servers accept.

    OpenAI-standard fields go at the top of the request; engine extras are an SDK's
    extra_body; other engine fields belong inside "extra_body" (its known sampling
    fields are range-checked too). docs/schemas/sampler.json is generated from it.
    """

    unknown_key_word: ClassVar[str] = "sampler key"
    unknown_key_hint: ClassVar[str] = ' (other engine fields go inside "extra_body")'

    # OpenAI chat-completions fields
    temperature: float | None = _range("temperature", "[", 0.0, 2.0, "]")
    top_p: float | None = _range("top_p", "(", 0.0, 1.0, "]")
    max_tokens: _PositiveInt = None
    max_completion_tokens: _PositiveInt = None
    presence_penalty: float | None = _range("presence_penalty", "[", -2.0, 2.0, "]")
    frequency_penalty: float | None = _range("frequency_penalty", "[", -2.0, 2.0, "]")
    seed: int | None = None
    stop: Annotated[list[str] | None, BeforeValidator(_listed, json_schema_input_type=str | list[str] | None)] = None
    n: _PositiveInt = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    logit_bias: dict[str, float] | None = None
    reasoning_effort: str | None = None
    response_format: dict[str, Any] | None = None
    # engine extensions (vLLM, SGLang, llama.cpp server)
    top_k: int | None = Field(None, ge=-1, description="-1 or 0 = off")
    min_p: float | None = _range("min_p", "[", 0.0, 1.0, "]")
    repetition_penalty: float | None = _range("repetition_penalty", "(", 0.0, 10.0, "]")
    chat_template_kwargs: dict[str, Any] | None = None
    min_tokens: _PositiveInt = None
    skip_special_tokens: bool | None = None
    spaces_between_special_tokens: bool | None = None
    include_stop_str_in_output: bool | None = None
    ignore_eos: bool | None = None
    typical_p: float | None = None
    top_a: float | None = None
    length_penalty: float | None = None
    stop_token_ids: list[int] | None = None
    extra_body: dict[str, Any] | None = Field(None, description="any other engine field, sent as it is")
    # the runner's own key (never sent)
    stop_loops: bool | dict[str, Any] | None = Field(None, description=(
        "the runner's, never sent: true (or an object of loop-rule thresholds: min_copies, min_span_chars, "
        "max_period_chars, check_every_chars) streams the request and closes it when the answer loops "
        "verbatim (docs/runner.md)"))

    @field_validator("stop_loops")
    @classmethod
    def _loop_rule(cls, value: bool | dict[str, Any] | None) -> bool | dict[str, Any] | None:
        if isinstance(value, dict):
            loop_rule(value)
        return value

    @model_validator(mode="after")
    def _loops_need_a_limit(self) -> "SamplerFile":
        # A stopped answer counts at the token limit in every token statistic (docs/runner.md).
        extra = self.extra_body or {}
        limit = self.max_tokens or self.max_completion_tokens or extra.get("max_tokens") or extra.get(
            "max_completion_tokens")
        if self.stop_loops and not limit:
            raise at("stop_loops", "needs max_tokens or max_completion_tokens in the sampler "
                                   "(a stopped answer counts at that limit)")
        return self

    @field_validator("extra_body")
    @classmethod
    def _engine_fields_in_range(cls, body: dict[str, Any] | None) -> dict[str, Any] | None:
        # Sampling fields sent through extra_body get the same range checks as at the top.
        checked = {k: v for k, v in (body or {}).items() if k in _RANGE_CHECKED}
        try:
            cls.model_validate(checked)
        except ValidationError as exc:
            path, _ = first_problem(exc)
            raise at(path[:1], f"{cls.field_messages[path[0]]}, got {checked[path[0]]!r}")
        return body


def loop_rule(value: Any) -> dict | None:
    """The normalised rule of a sampler's "stop_loops" value: every LoopRule field (defaults
    filled in), or None when it is off; a validation error naming a bad threshold."""
    if value is None or value is False:
        return None
    if value is True:
        return LoopRule().model_dump()
    try:
        return LoopRule.model_validate(value).model_dump()
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        valid = ", ".join(LoopRule.model_fields)
        if error["type"] == "extra_forbidden":
            raise at([name], f"unknown threshold {name!r}; valid: {valid}")
        raise at([name], f"{error['msg']}, got {error['input']!r} (thresholds: {valid})")


STANDARD_PARAMS = {"temperature", "top_p", "max_tokens", "max_completion_tokens", "presence_penalty",
                   "frequency_penalty", "seed", "stop", "n", "logprobs", "top_logprobs", "logit_bias",
                   "reasoning_effort", "response_format"}
RUNNER_PARAMS = {"stop_loops"}     # read by the runner, never sent
_RANGE_CHECKED = {"temperature", "top_p", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty",
                  "max_tokens", "max_completion_tokens", "n", "min_tokens", "top_k"}
SamplerFile.field_messages = {
    **{name: f"{name!r} must be {str(SamplerFile.model_fields[name].description).split(': ', 1)[1]}"
       for name in ("temperature", "top_p", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty")},
    **{name: f"{name!r} must be a positive integer" for name in ("max_tokens", "max_completion_tokens", "n",
                                                                   "min_tokens")},
    "top_k": "'top_k' must be an integer >= -1 (-1 or 0 = off)",
    "stop": "'stop' must be a string or a list of strings",
    "chat_template_kwargs": "'chat_template_kwargs' must be a JSON object",
    "extra_body": "'extra_body' must be a JSON object",
    "stop_loops": "'stop_loops' must be true, false or an object of loop-rule thresholds",
}


# ---------------------------------------------------------------- loading
def _read_json_object(path: str | Path, what: str) -> dict:
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{what} {str(path)!r} is a directory; expected a JSON file")
    if not p.is_file():
        raise file_not_found(what, path, (".json",))
    data = read_json_file(path, what)
    if not isinstance(data, dict):
        raise UserError(f"{path}: a {what} must be a JSON object")
    return data


def _fields(text: str, where: str = "") -> list[str]:
    """Placeholder names used in `text`; a validation error on malformed braces."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise at(where, f"bad placeholder syntax ({exc}); use {{{{ }}}} for braces")
    return [name for _, name, _, _ in parsed if name is not None]


def _check_placeholders(text: str, where: str, allowed: tuple[str, ...]) -> None:
    for name in _fields(text, where):
        if name not in allowed:
            raise at(where, f"unknown placeholder {{{name}}}; valid: {choices_text(allowed)}")


def load_template(path: str | Path) -> Template:
    """Read and validate a template file (UserError names the file and the key)."""
    data = validate_file(TemplateFile, _read_json_object(path, "template"), str(path))
    messages = tuple({"role": m.role} if m.role == EXAMPLES_ROLE else {"role": m.role, "content": m.content}
                     for m in data.messages)
    # every message but the examples one has content (Message._content)
    uses_examples = any(m["role"] == EXAMPLES_ROLE or "examples" in _fields(m["content"] or "") for m in messages)
    return Template(Path(path).stem, str(path), messages, data.shots, data.example_answer, uses_examples)


def load_sampler(path: str | Path) -> Sampler:
    """Read and validate a sampler file; unknown keys are refused (typo guard).

    The request carries the file's fields exactly as written (the model only checks them),
    except "stop_loops", which becomes `Sampler.stop_loops` (the normalised rule)."""
    data = _read_json_object(path, "sampler")
    validate_file(SamplerFile, data, str(path))
    params = {k: v for k, v in data.items() if k not in RUNNER_PARAMS}
    return Sampler(Path(path).stem, str(path), params, loop_rule(data.get("stop_loops")))


def split_sampler(sampler: Sampler) -> tuple[dict, dict]:
    """(standard request fields, engine extras) — the extras are an SDK's extra_body."""
    standard, extra = {}, {}
    for key, value in sampler.params.items():
        if key in RUNNER_PARAMS:
            continue
        if key == "extra_body":
            extra.update(value)
        elif key in STANDARD_PARAMS:
            standard[key] = value
        else:
            extra[key] = value
    return standard, extra


def build_request(model: str, messages: list[dict], sampler: Sampler) -> dict:
    """The /v1/chat/completions body: extras merged at the top level, as on the wire.

    A sampler with stop_loops streams (the runner watches the stream for loops)."""
    standard, extra = split_sampler(sampler)
    body = {"model": model, "messages": messages, **standard, **extra}
    if sampler.stop_loops is not None:
        body["stream"] = True
    return body


# ---------------------------------------------------------------- rendering
def _example_seed(task_name: str) -> int:
    return int(hashlib.sha256(f"examples:{task_name}".encode()).hexdigest()[-8:], 16)


def example_params(task: Task, params: dict) -> dict:
    """Parameters of the worked examples: the step's own (same format, same kind of
    problem) with the task's `example_overrides()` applied (usually smaller sizes).
    If the overrides clash with the step's other values, the step's params are used."""
    try:
        return task.validate({**params, **task.example_overrides()})
    except UserError:
        return task.validate(params)


@lru_cache(maxsize=1024)
def _examples_cached(task: Task, frozen_params: str, shots: int) -> tuple:
    rng = random.Random(_example_seed(task.name))
    return tuple(task.generate_cases(json.loads(frozen_params), rng, shots))


def _examples(task: Task, params: dict, shots: int) -> tuple:
    """`shots` worked examples: fixed seed per task name, cached per parameter set."""
    chosen = example_params(task, params)
    return _examples_cached(task, json.dumps(chosen, sort_keys=True), shots)


def _fill(text: str, values: dict) -> str:
    return text.format(**values)


def _examples_text(template: Template, examples: tuple[TestCase, ...]) -> str:
    blocks = []
    for n, case in enumerate(examples, 1):
        answer = _fill(template.example_answer, {"target": case.target})
        blocks.append(f"Example {n}:\n{case.input}\n{answer}")
    return "\n\n".join(blocks)


def render_messages(template: Template, task: Task, params: dict, case: TestCase) -> list[dict]:
    """Chat messages for one test case (params: the step's validated generator params)."""
    examples = _examples(task, params, template.shots) if template.uses_examples else ()
    values = {
        "task_description": task.description_for(params),
        "answer_format": task.answer_format_for(params),
        "examples": _examples_text(template, examples),
    }
    question = template.messages[-1]["content"]
    out = []
    for msg in template.messages:
        if msg["role"] == EXAMPLES_ROLE:
            for ex in examples:
                out.append({"role": "user", "content": _fill(question, {**values, "input": ex.input})})
                out.append({"role": "assistant",
                            "content": _fill(template.example_answer, {"target": ex.target})})
        else:
            out.append({"role": msg["role"], "content": _fill(msg["content"], {**values, "input": case.input})})
    return out
