"""The record schema (resolver/records/schema.py) against everything that writes or reads records.

Each test fails when one side drifts: a field the runner writes that the schema lacks (or
the other way round), a field evaluate.py or probe.py reads that the schema does not
define, a docs table that no longer matches.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from resolver.ingest import record_checks as ingest_records
from resolver.records import schema
from resolver.run.experiment import blank_record, graded_record, messages_for
from tests.support.runner import first_case

REPO = Path(__file__).resolve().parent.parent
# Written out by hand from docs/architecture.md's prose ("fields in this order"), so the
# schema itself is checked against an independent statement of the format.
DOCUMENTED_ORDER = ["task", "version", "base_task", "key", "input", "target", "response_enum", "genresult",
                    "messages", "answer", "usage", "timings", "step", "params", "model", "template", "sampler",
                    "guess_chance", "normalized_answer", "extracted_answer", "is_valid", "is_correct",
                    "is_truncated", "manifold", "task_version", "grader_version", "text_size", "invalid_reason"]


@pytest.fixture(scope="module")
def one_case():
    return first_case()


def test_schema_matches_the_documented_field_order():
    assert list(schema.RECORD_FIELDS) == DOCUMENTED_ORDER
    assert set(schema.OPTIONAL_FIELDS) == {"reasoning"}
    assert schema.field("invalid_reason").types == ("string", "null")


def test_blank_record_has_exactly_the_schema_fields_in_order(one_case):
    experiment, step, index, case = one_case
    blank = blank_record(experiment, step, index, case, messages_for(experiment, step, case), 4)
    assert list(blank) == list(schema.RECORD_FIELDS)
    assert blank["version"] == schema.RECORD_VERSION
    assert schema.record_problems(blank) == []


def test_graded_record_conforms_with_and_without_reasoning(one_case):
    experiment, step, index, case = one_case
    blank = blank_record(experiment, step, index, case, messages_for(experiment, step, case), 4)
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    with_reasoning = graded_record(blank, f"Final Answer: {case.target}", "thinking", usage, "stop")
    assert list(with_reasoning) == list(schema.RECORD_FIELDS) + ["reasoning"]
    assert schema.record_problems(with_reasoning) == []
    plain = graded_record(blank, "no answer here", None, usage, "length")
    assert schema.record_problems(plain) == []


def test_record_problems_names_each_kind_of_drift():
    good = {name: None for name in schema.RECORD_FIELDS}
    problems = schema.record_problems({**good, "extra": 1})
    assert "unknown field 'extra'" in problems
    missing = dict(good)
    del missing["key"]
    assert "missing field 'key'" in schema.record_problems(missing)
    assert "'is_valid' is integer, expected boolean" in schema.record_problems({**good, "is_valid": 1})
    assert any("guess_chance" in p for p in schema.record_problems(good))        # null is not a number
    assert not any("guess_chance" in p for p in schema.record_problems({**good, "guess_chance": 0}))


def test_evaluate_reads_only_schema_fields():
    names = {f.name for f in schema.RECORD_SCHEMA}
    assert set(ingest_records.FIELDS) <= names
    for name in ingest_records.TEXT_FIELDS:
        assert "string" in schema.field(name).types


def _fields_read(path: Path) -> set[str]:
    """Literal keys read from a variable named record / rec in one module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        target, key = None, None
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args):
            target, key = node.func.value, node.args[0]
        if (isinstance(target, ast.Name) and target.id in {"record", "rec"} and isinstance(key, ast.Constant)
                and isinstance(key.value, str)):
            found.add(key.value)
    return found


@pytest.mark.parametrize("module", ["resolver/ingest/raw_records.py", "resolver/catalog/cohort_context.py",
                                    "resolver/grading/answers.py"])
def test_record_readers_read_only_schema_fields(module):
    read = _fields_read(REPO / module)
    assert read, f"{module}: no record field reads found (did the reader move?)"
    assert read <= {f.name for f in schema.RECORD_SCHEMA}, read - {f.name for f in schema.RECORD_SCHEMA}


def test_docs_field_table_is_the_schema():
    text = (REPO / "docs/architecture.md").read_text(encoding="utf-8")
    assert schema.markdown_table() in text
