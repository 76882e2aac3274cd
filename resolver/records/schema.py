"""The runner's NDJSON record, written down once as a pydantic model (`Record`): every field,
its JSON types, required or not.

runner.py writes it (resolver/run/experiment.py's blank and graded records), evaluate.py
reads it (resolver/ingest/record_checks.py), probe.py and cohort.py read it back; the field
table in docs/architecture.md is rendered from here. tests/test_records_schema.py fails
when any of them drifts from this definition.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field as PydField, ValidationError

RECORD_VERSION = 1


@dataclass(frozen=True)
class Field:
    """One record field: JSON types it may hold (a "null" entry means it may be null)."""

    name: str
    types: tuple[str, ...]
    required: bool
    meaning: str


_S, _I, _N, _B, _O, _A, _NULL = "string", "integer", "number", "boolean", "object", "array", "null"
_JSON = {str: _S, int: _I, float: _N, bool: _B, dict: _O, list: _A, type(None): _NULL}


def _required(meaning: str) -> Any:
    return PydField(description=meaning)


class Record(BaseModel):
    """One NDJSON record, fields in the order the runner writes them; optional fields last.

    Strict JSON types: a boolean is not an integer, an integer is a number."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)   # built when first used

    task: str = _required("step name (`<index>_<task>_<manifold point>`)")
    version: int = _required("record format version (RECORD_VERSION)")
    base_task: str = _required("the config's task name")
    key: str = _required("`<step name>-<sample index>`")
    input: str = _required("the generated problem text")
    target: str = _required("the expected answer")
    response_enum: list[Any] | None = _required("allowed answers of a closed-choice task")
    genresult: dict[str, Any] = _required("generator details of the problem")
    messages: list[dict[str, Any]] = _required("the chat messages sent")
    answer: str | None = _required("the reply text; null until answered")
    usage: dict[str, Any] | None = _required("the server's token counts; null until answered")
    timings: dict[str, Any] = _required(
        "`{termination_reason, finish_reason}`; with stop_loops also `stop_loops`, and `loop` when stopped")
    step: int = _required("step index in the experiment")
    params: dict[str, Any] = _required("generator parameters, with `count`")
    model: str = _required("model name sent to the server")
    template: str = _required("template name")
    sampler: str = _required("sampler name")
    guess_chance: float = _required("chance of a correct blind guess")
    normalized_answer: str | None = _required("the answer in canonical form")
    extracted_answer: str | None = _required("the answer text as located")
    is_valid: bool = _required("an answer of the task's kind was found")
    is_correct: bool = _required("it equals the target")
    is_truncated: bool = _required("the reply hit the token limit")
    manifold: dict[str, Any] = _required("the manifold point of the step")
    task_version: int = _required("the generator's version")
    grader_version: int | None = _required("the grader's version; null until graded")
    text_size: dict[str, Any] | None = _required("`{bytes, gzip, method}` of reasoning + answer")
    invalid_reason: str | None = _required(
        "why the answer is invalid (docs/grading.md); null when valid; absent before grader 3")
    # Absent, never null: the None default stands for "no key" (a null value is refused).
    reasoning: str = PydField(None, description="reasoning text, only when the server returned some")  # type: ignore[assignment]


def _json_types(annotation: Any) -> tuple[str, ...]:
    kinds = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return tuple(_JSON[get_origin(k) or k] for k in kinds)


# The field table, derived from the model: what docs/architecture.md shows and readers check against.
RECORD_SCHEMA: tuple[Field, ...] = tuple(
    Field(name, _json_types(info.annotation), info.is_required(), info.description or "")
    for name, info in Record.model_fields.items())

RECORD_FIELDS = tuple(f.name for f in RECORD_SCHEMA if f.required)
OPTIONAL_FIELDS = tuple(f.name for f in RECORD_SCHEMA if not f.required)
_BY_NAME = {f.name: f for f in RECORD_SCHEMA}
_ORDER = list(RECORD_FIELDS)


def new_record(**values: Any) -> dict:
    """A record dict from the fields given in the schema's order (KeyError otherwise).

    On the runner's per-record path, so it checks names and order only (about a
    microsecond; the keyword dict is already the record): the types are checked by
    `record_problems` (tests, checks), off that path (docs/decisions.md)."""
    if list(values) != _ORDER:
        unknown = sorted(set(values) - set(RECORD_FIELDS))
        missing = [n for n in RECORD_FIELDS if n not in values]
        raise KeyError(f"not record fields: {unknown}" if unknown else
                       f"missing record fields: {missing}" if missing else "record fields out of the schema's order")
    return values


def field(name: str) -> Field:
    """The schema entry of one field (KeyError for a name the record does not have)."""
    return _BY_NAME[name]


def json_type(value: object) -> str:
    """The JSON type name of a decoded value (booleans are not integers, integers are numbers)."""
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return _B
    if isinstance(value, int):
        return _I
    if isinstance(value, float):
        return _N
    if isinstance(value, str):
        return _S
    return _A if isinstance(value, list) else _O if isinstance(value, dict) else type(value).__name__


def record_problems(record: dict) -> list[str]:
    """What is wrong with one decoded record against the schema (empty when it conforms)."""
    try:
        Record.model_validate(record)
        return []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    problems, seen = [], set()
    for error in errors:
        name = str(error["loc"][0]) if error["loc"] else ""     # a Record's loc starts with a field name
        if name in seen:
            continue                 # a union field reports one error per member type
        seen.add(name)
        if error["type"] == "missing":
            problems.append(f"missing field {name!r}")
        elif error["type"] == "extra_forbidden":
            problems.append(f"unknown field {name!r}")
        else:
            value = record.get(name)
            problems.append(f"{name!r} is {json_type(value)}, expected {' or '.join(_BY_NAME[name].types)}"
                            if json_type(value) not in _BY_NAME[name].types else
                            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}")
    return problems


def markdown_table() -> str:
    """The field table of docs/architecture.md."""
    rows = ["| field | JSON type | required | meaning |", "|---|---|---|---|"]
    for f in RECORD_SCHEMA:
        rows.append(f"| `{f.name}` | {' / '.join(f.types)} | {'yes' if f.required else 'no'} | {f.meaning} |")
    return "\n".join(rows)
