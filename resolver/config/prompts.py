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
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from resolver.core import UserError, choices_text, did_you_mean, file_not_found, read_json_file

PLACEHOLDERS = ("task_description", "answer_format", "input", "examples")
ROLES = ("system", "user", "assistant")
EXAMPLES_ROLE = "examples"
DEFAULT_SHOTS = 3
DEFAULT_EXAMPLE_ANSWER = "Final Answer: {target}"
_TEMPLATE_KEYS = {"messages", "shots", "example_answer", "description"}

# Request fields of the OpenAI chat-completions API that a sampler may set.
STANDARD_PARAMS = {
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "presence_penalty",
    "frequency_penalty", "seed", "stop", "n", "logprobs", "top_logprobs",
    "logit_bias", "reasoning_effort", "response_format",
}
# Engine extensions (vLLM, SGLang, llama.cpp server) known to be sampling knobs.
EXTRA_PARAMS = {
    "top_k", "min_p", "repetition_penalty", "chat_template_kwargs", "min_tokens",
    "skip_special_tokens", "spaces_between_special_tokens", "include_stop_str_in_output",
    "ignore_eos", "typical_p", "top_a", "length_penalty", "stop_token_ids",
}
# The ranges OpenAI-compatible servers (vLLM, SGLang, llama.cpp) accept; "(" = open end.
_NUMERIC_RANGES = {
    "temperature": ("[", 0.0, 2.0, "]"), "top_p": ("(", 0.0, 1.0, "]"), "min_p": ("[", 0.0, 1.0, "]"),
    "presence_penalty": ("[", -2.0, 2.0, "]"), "frequency_penalty": ("[", -2.0, 2.0, "]"),
    "repetition_penalty": ("(", 0.0, 10.0, "]"),
}
_POSITIVE_INTS = {"max_tokens", "max_completion_tokens", "n", "min_tokens"}


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
    params: dict = field(default_factory=dict)


# ---------------------------------------------------------------- loading
def _read_json_object(path, what: str) -> dict:
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{what} {str(path)!r} is a directory; expected a JSON file")
    if not p.is_file():
        raise file_not_found(what, path, (".json",))
    data = read_json_file(path, what)
    if not isinstance(data, dict):
        raise UserError(f"{path}: a {what} must be a JSON object")
    return data


def _fields(text: str, path: str = "", where: str = "") -> list[str]:
    """Placeholder names used in `text`; UserError on malformed braces."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise UserError(f"{path}: {where}: bad placeholder syntax ({exc}); use {{{{ }}}} for braces")
    return [name for _, name, _, _ in parsed if name is not None]


def _check_placeholders(text: str, path: str, where: str, allowed) -> None:
    for name in _fields(text, path, where):
        if name not in allowed:
            raise UserError(
                f"{path}: {where}: unknown placeholder {{{name}}}; valid: {choices_text(allowed)}"
            )


def _check_message(msg, i: int, path: str) -> dict:
    where = f"messages[{i}]"
    if not isinstance(msg, dict):
        raise UserError(f"{path}: {where} must be an object with role and content")
    role = msg.get("role")
    if role == EXAMPLES_ROLE:
        return {"role": EXAMPLES_ROLE}
    if role not in ROLES:
        raise UserError(f"{path}: {where}.role {role!r} is not valid; valid: "
                        f"{choices_text(ROLES + (EXAMPLES_ROLE,))}")
    content = msg.get("content")
    if not isinstance(content, str):
        raise UserError(f"{path}: {where}.content must be a string")
    _check_placeholders(content, path, where, PLACEHOLDERS)
    return {"role": role, "content": content}


def load_template(path) -> Template:
    """Read and validate a template file (UserError names the file and the key)."""
    data = _read_json_object(path, "template")
    unknown = set(data) - _TEMPLATE_KEYS
    if unknown:
        first = sorted(unknown)[0]
        raise UserError(f"{path}: unknown key {first!r}{did_you_mean(first, _TEMPLATE_KEYS)}; "
                        f"valid: {choices_text(_TEMPLATE_KEYS)}")
    raw = data.get("messages")
    if not isinstance(raw, list) or not raw:
        raise UserError(f"{path}: 'messages' must be a non-empty list of {{role, content}} objects")
    messages = tuple(_check_message(m, i, str(path)) for i, m in enumerate(raw))
    last = messages[-1]
    if last["role"] != "user" or not last["content"].endswith("{input}"):
        raise UserError(f"{path}: the last message must be a user turn whose content ends with {{input}}")
    shots = data.get("shots", DEFAULT_SHOTS)
    if isinstance(shots, bool) or not isinstance(shots, int) or not 1 <= shots <= 16:
        raise UserError(f"{path}: 'shots' must be an integer from 1 to 16, got {shots!r}")
    answer = data.get("example_answer", DEFAULT_EXAMPLE_ANSWER)
    if not isinstance(answer, str):
        raise UserError(f"{path}: 'example_answer' must be a string")
    _check_placeholders(answer, str(path), "example_answer", ("target",))
    uses_examples = any(m["role"] == EXAMPLES_ROLE or "examples" in _fields(m["content"])
                        for m in messages)
    return Template(Path(path).stem, str(path), messages, shots, answer, uses_examples)


def _check_sampler_value(key: str, value, path: str) -> None:
    if key in _NUMERIC_RANGES:
        left, low, high, right = _NUMERIC_RANGES[key]
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not (number and (low < value if left == "(" else low <= value)
                and (value < high if right == ")" else value <= high)):
            raise UserError(f"{path}: {key!r} must be a number in {left}{low:g}, {high:g}{right} "
                            f"(the range servers accept), got {value!r}")
    if key in _POSITIVE_INTS and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise UserError(f"{path}: {key!r} must be a positive integer, got {value!r}")
    if key == "top_k" and (isinstance(value, bool) or not isinstance(value, int) or value < -1):
        raise UserError(f"{path}: 'top_k' must be an integer >= -1 (-1 or 0 = off), got {value!r}")
    if key in ("chat_template_kwargs", "extra_body") and not isinstance(value, dict):
        raise UserError(f"{path}: {key!r} must be a JSON object")
    if key == "extra_body":
        for inner, inner_value in value.items():       # engine fields are range-checked too
            if inner in _NUMERIC_RANGES or inner in _POSITIVE_INTS or inner == "top_k":
                _check_sampler_value(inner, inner_value, path)


def load_sampler(path) -> Sampler:
    """Read and validate a sampler file; unknown keys are refused (typo guard)."""
    data = _read_json_object(path, "sampler")
    valid = STANDARD_PARAMS | EXTRA_PARAMS | {"extra_body"}
    for key, value in data.items():
        if key not in valid:
            raise UserError(f"{path}: unknown sampler key {key!r}{did_you_mean(key, valid)}; "
                            f"valid: {choices_text(valid)} "
                            f"(other engine fields go inside \"extra_body\")")
        _check_sampler_value(key, value, str(path))
    return Sampler(Path(path).stem, str(path), data)


def split_sampler(sampler: Sampler) -> tuple[dict, dict]:
    """(standard request fields, engine extras) — the extras are an SDK's extra_body."""
    standard, extra = {}, {}
    for key, value in sampler.params.items():
        if key == "extra_body":
            extra.update(value)
        elif key in STANDARD_PARAMS:
            standard[key] = value
        else:
            extra[key] = value
    return standard, extra


def build_request(model: str, messages: list[dict], sampler: Sampler) -> dict:
    """The /v1/chat/completions body: extras merged at the top level, as on the wire."""
    standard, extra = split_sampler(sampler)
    return {"model": model, "messages": messages, **standard, **extra}


# ---------------------------------------------------------------- rendering
def _example_seed(task_name: str) -> int:
    return int(hashlib.sha256(f"examples:{task_name}".encode()).hexdigest()[-8:], 16)


def example_params(task, params: dict) -> dict:
    """Parameters of the worked examples: the step's own (same format, same kind of
    problem) with the task's `example_overrides()` applied (usually smaller sizes).
    If the overrides clash with the step's other values, the step's params are used."""
    from resolver.core import UserError as _Invalid

    try:
        return task.validate({**params, **task.example_overrides()})
    except _Invalid:
        return task.validate(params)


@lru_cache(maxsize=1024)
def _examples_cached(task, frozen_params: str, shots: int) -> tuple:
    rng = random.Random(_example_seed(task.name))
    return tuple(task.generate_cases(json.loads(frozen_params), rng, shots))


def _examples(task, params: dict, shots: int) -> tuple:
    """`shots` worked examples: fixed seed per task name, cached per parameter set."""
    chosen = example_params(task, params)
    return _examples_cached(task, json.dumps(chosen, sort_keys=True), shots)


def _fill(text: str, values: dict) -> str:
    return text.format(**values)


def _examples_text(template: Template, examples) -> str:
    blocks = []
    for n, case in enumerate(examples, 1):
        answer = _fill(template.example_answer, {"target": case.target})
        blocks.append(f"Example {n}:\n{case.input}\n{answer}")
    return "\n\n".join(blocks)


def render_messages(template: Template, task, params: dict, case) -> list[dict]:
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
