"""The runner's NDJSON record, written down once: every field, its JSON types, required or not.

runner.py writes it (resolver/run/experiment.py's blank and graded records), evaluate.py
reads it (resolver/ingest/records.py), probe.py and cohort.py read it back; the field
table in docs/architecture.md is rendered from here. tests/test_records_schema.py fails
when any of them drifts from this definition.
"""
from __future__ import annotations

from dataclasses import dataclass

RECORD_VERSION = 1


@dataclass(frozen=True)
class Field:
    """One record field: JSON types it may hold (a "null" entry means it may be null)."""

    name: str
    types: tuple[str, ...]
    required: bool
    meaning: str


_S, _I, _N, _B, _O, _A, _NULL = "string", "integer", "number", "boolean", "object", "array", "null"

# In the order the runner writes them; optional fields last.
RECORD_SCHEMA: tuple[Field, ...] = (
    Field("task", (_S,), True, "step name (`<index>_<task>_<manifold point>`)"),
    Field("version", (_I,), True, "record format version (RECORD_VERSION)"),
    Field("base_task", (_S,), True, "the config's task name"),
    Field("key", (_S,), True, "`<step name>-<sample index>`"),
    Field("input", (_S,), True, "the generated problem text"),
    Field("target", (_S,), True, "the expected answer"),
    Field("response_enum", (_A, _NULL), True, "allowed answers of a closed-choice task"),
    Field("genresult", (_O,), True, "generator details of the problem"),
    Field("messages", (_A,), True, "the chat messages sent"),
    Field("answer", (_S, _NULL), True, "the reply text; null until answered"),
    Field("usage", (_O, _NULL), True, "the server's token counts; null until answered"),
    Field("timings", (_O,), True, "`{termination_reason, finish_reason}`"),
    Field("step", (_I,), True, "step index in the experiment"),
    Field("params", (_O,), True, "generator parameters, with `count`"),
    Field("model", (_S,), True, "model name sent to the server"),
    Field("template", (_S,), True, "template name"),
    Field("sampler", (_S,), True, "sampler name"),
    Field("guess_chance", (_N,), True, "chance of a correct blind guess"),
    Field("normalized_answer", (_S, _NULL), True, "the answer in canonical form"),
    Field("extracted_answer", (_S, _NULL), True, "the answer text as located"),
    Field("is_valid", (_B,), True, "an answer of the task's kind was found"),
    Field("is_correct", (_B,), True, "it equals the target"),
    Field("is_truncated", (_B,), True, "the reply hit the token limit"),
    Field("manifold", (_O,), True, "the manifold point of the step"),
    Field("task_version", (_I,), True, "the generator's version"),
    Field("grader_version", (_I, _NULL), True, "the grader's version; null until graded"),
    Field("text_size", (_O, _NULL), True, "`{bytes, gzip, method}` of reasoning + answer"),
    Field("invalid_reason", (_S, _NULL), True,
          "why the answer is invalid (docs/grading.md); null when valid; absent before grader 3"),
    Field("reasoning", (_S,), False, "reasoning text, only when the server returned some"),
)

RECORD_FIELDS = tuple(f.name for f in RECORD_SCHEMA if f.required)
OPTIONAL_FIELDS = tuple(f.name for f in RECORD_SCHEMA if not f.required)
_BY_NAME = {f.name: f for f in RECORD_SCHEMA}


def field(name: str) -> Field:
    """The schema entry of one field (KeyError for a name the record does not have)."""
    return _BY_NAME[name]


def json_type(value) -> str:
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
    problems = [f"missing field {name!r}" for name in RECORD_FIELDS if name not in record]
    problems += [f"unknown field {name!r}" for name in record if name not in _BY_NAME]
    for name, value in record.items():
        spec = _BY_NAME.get(name)
        kind = json_type(value)
        if spec and kind not in spec.types and not (kind == _I and _N in spec.types):
            problems.append(f"{name!r} is {kind}, expected {' or '.join(spec.types)}")
    return problems


def markdown_table() -> str:
    """The field table of docs/architecture.md."""
    rows = ["| field | JSON type | required | meaning |", "|---|---|---|---|"]
    for f in RECORD_SCHEMA:
        rows.append(f"| `{f.name}` | {' / '.join(f.types)} | {'yes' if f.required else 'no'} | {f.meaning} |")
    return "\n".join(rows)
