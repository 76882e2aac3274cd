"""Why an answer is invalid: the reason of every invalid path, its record field, its counts.

The answers are written by hand, each with the reason a reader gives for refusing it
(docs/grading.md, *Invalid reasons*); the cases are the labelled corpus's real generator
cases. The breakdown (resolver.analysis.invalid_reasons) is checked on hand-made point
rows, and end to end on a PointsDB built by the real evaluate.py from hand-written
records, before and after `evaluate.py --offline` re-grades records that predate reasons.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_script

from resolver.analysis.invalid_reasons import count_reasons, describe, families
from resolver.grading.answer_reasons import INVALID_REASONS
from resolver.grading.answers import grade, grade_record
from resolver.ingest.record_checks import _VERDICTS
from resolver.tasks import get_task, task_of_record

CASES = json.loads((Path(__file__).resolve().parent / "grading_corpus" / "cases.json").read_text(encoding="utf-8"))

# (case, content, reasoning, finish_reason, the reason a reader gives)
ANSWERS = [
    ("arithmetic-neg", "Final Answer: -7", None, "length", "truncated"),
    ("arithmetic-neg", None, None, "stop", "empty"),
    ("arithmetic-neg", "  \n\n ", None, "stop", "empty"),
    ("arithmetic-neg", None, "First -4 + -1 = -5, then", "stop", "unfinished_reasoning"),
    ("arithmetic-neg", "<think>\n-4 + -1 = -5, and then minus 2", None, "stop", "unfinished_reasoning"),
    ("arithmetic-neg", "<think>-4 + -1 - 2 = -7</think>\n\n", None, "stop", "unfinished_reasoning"),
    ("arithmetic-neg", "The answer is -7.", None, "stop", "no_marker"),
    ("sort", "father\nflag\nframe\nquizzical\nsand\nspaghetti", None, "stop", "no_marker"),
    ("arithmetic-neg", "Final Answer: <integer>", None, "stop", "placeholder"),
    ("arithmetic-neg", "Final Answer: <your answer>", None, "stop", "placeholder"),
    ("sort", "Final Answer: followed by the sorted words, one per line", None, "stop", "placeholder"),
    ("dates-natural", "**Final Answer:** (A) - (Z)", None, "stop", "placeholder"),
    ("arithmetic-neg", "Final Answer: -7 or -5", None, "stop", "hedge"),
    ("arithmetic-neg", "Final Answer: \\boxed{-7} \\boxed{-5}", None, "stop", "hedge"),
    ("arithmetic-neg", "Final Answer: -7\n\nChecking once more: \\boxed{-5}", None, "stop", "hedge"),
    ("arithmetic-neg", "Final Answer: between -8 and -6", None, "stop", "hedge"),
    ("arithmetic-neg", "Final Answer: seven or eight", None, "stop", "hedge"),
    ("sequence", "Final Answer: $\\boxed{9\n17\n0\n8\n16}$ or $\\boxed{9\n17\n25\n8\n16}$", None, "stop", "hedge"),
    ("sequence", "Final Answer:\n9\n17\n0\n8\n16 or 24", None, "stop", "hedge"),
    ("dates-natural", "Final Answer: (C) or (D)", None, "stop", "hedge"),
    ("dates-natural", "Final Answer: (C) August 7, 2014", None, "stop", "hedge"),
    ("boolean-f0", "Final Answer: TRUE, possibly FALSE", None, "stop", "hedge"),
    ("dates-natural", "Final Answer: (F)", None, "stop", "not_an_option"),
    ("dates-natural", "Final Answer: August 14, 2015", None, "stop", "not_an_option"),
    ("boolean-f0", "Final Answer: unknown", None, "stop", "not_an_option"),
    ("arithmetic-neg", "Final Answer: I cannot compute this.", None, "stop", "unreadable"),
    ("arithmetic-neg", "Final Answer:", None, "stop", "unreadable"),
    ("brackets-mixed", "Final Answer: none needed", None, "stop", "unreadable"),
    ("sequence", "Final Answer: I could not determine the next numbers.", None, "stop", "unreadable"),
]


def _grade(case: str, content, reasoning, finish):
    fields = CASES[case]
    return grade(get_task(fields["task"]), fields, content, finish, reasoning)


@pytest.mark.parametrize("case, content, reasoning, finish, reason", ANSWERS)
def test_each_invalid_path_names_its_reason(case, content, reasoning, finish, reason):
    graded = _grade(case, content, reasoning, finish)
    assert graded["is_valid"] is False
    assert graded["invalid_reason"] == reason


def test_the_hand_written_answers_cover_every_reason():
    assert {row[-1] for row in ANSWERS} == set(INVALID_REASONS)


@pytest.mark.parametrize("content, correct", [("Final Answer: -7", True), ("Final Answer: -5", False)])
def test_valid_answers_have_no_reason(content, correct):
    graded = _grade("arithmetic-neg", content, None, "stop")
    assert graded["is_valid"] and graded["is_correct"] is correct and graded["invalid_reason"] is None


def test_a_reason_never_changes_a_verdict_and_grade_record_reads_the_reasoning_field():
    record = {**CASES["arithmetic-neg"], "base_task": "arithmetic", "answer": None,
              "reasoning": "First -4 + -1 = -5, then", "timings": {"finish_reason": "stop"}}
    task = task_of_record(record)
    assert grade_record(record, task)["invalid_reason"] == "unfinished_reasoning"
    assert grade_record({**record, "reasoning": None}, task)["invalid_reason"] == "empty"


def test_ingest_reads_a_recorded_reason_and_never_refuses_one():
    verdict = _VERDICTS["invalid_reason"][0]
    assert verdict(None) == (None, None)
    assert verdict('"hedge"') == (None, "hedge")
    assert verdict('"made_up"') == (None, "unknown")
    assert verdict("7") == (None, "unknown")
    assert verdict('{"a": 1}') == (None, "unknown")


def test_count_reasons_sums_points_and_calls_the_rest_unknown():
    points = pd.DataFrame({
        "eval_id": ["a", "a", "a", "b"],
        "invalid": [5, 2, 3, 4],
        # a point of an older PointsDB has no counts: all its invalid answers are unknown
        "invalid_reasons": ['{"hedge":1,"no_marker":4}', '{"no_marker":1}', None, '{"unknown":1,"placeholder":3}'],
    })
    found = count_reasons(points, ["eval_id"])
    # by hand: a = no marker 4 + 1, hedge 1, unknown 1 (point 2) + 3 (point 3); b = placeholder 3, unknown 1
    assert found == {("a",): {"no_marker": 5, "hedge": 1, "unknown": 4},
                     ("b",): {"placeholder": 3, "unknown": 1}}
    assert list(found[("a",)]) == ["no_marker", "hedge", "unknown"]        # vocabulary order
    assert families(found[("a",)]) == {"format": 5, "commitment": 1, "unknown": 4}
    assert describe(found[("a",)]) == "format 5 (no marker 5) · commitment 1 (hedge 1) · unknown 4 (unknown 4)"
    assert describe({}) == ""
    no_column = count_reasons(points.drop(columns=["invalid_reasons"]), ["eval_id"])
    assert no_column == {("a",): {"unknown": 10}, ("b",): {"unknown": 4}}


# ---- through the real evaluate.py --------------------------------------------------------
def _record(index: int, answer, *, valid: bool, correct: bool = False, reason=None, finish="stop"):
    """A runner record of arithmetic-neg (target -7); `reason` None leaves the field out (an old record)."""
    record = {"task": "arith", "version": 1, "base_task": "arithmetic", "key": f"arith-{index}",
              "input": CASES["arithmetic-neg"]["input"], "target": "-7", "response_enum": None,
              "answer": answer, "usage": {"prompt_tokens": 10, "completion_tokens": 20},
              "timings": {"finish_reason": finish}, "step": 0, "params": {"length": 4, "count": 8},
              "model": "m", "template": "t", "sampler": "s", "guess_chance": 0.0,
              "is_valid": valid, "is_correct": correct, "is_truncated": finish == "length",
              "manifold": {"id": "x", "degree": 0}, "grader_version": 2}
    if reason is not None:
        record["invalid_reason"] = reason
        record["grader_version"] = 3
    return record


def _points(db: Path) -> list:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT invalid, truncated, invalid_reasons FROM points").fetchall()
    finally:
        con.close()


def test_evaluate_counts_reasons_per_point_and_offline_fills_old_records(tmp_path):
    records = [
        _record(0, "Final Answer: -7", valid=True, correct=True),
        _record(1, "Final Answer: -5", valid=True),
        _record(2, "I think it is -7.", valid=False, reason="no_marker"),
        _record(3, "Final Answer: <integer>", valid=False, reason="placeholder"),
        _record(4, "Final Answer: -7 or -5", valid=False),                    # old record: no reason
        _record(5, "Final Answer: I cannot compute this.", valid=False),     # old record: no reason
        _record(6, "Final Answer: -7 and more", valid=False, finish="length"),   # truncated, not invalid
    ]
    path = tmp_path / "run.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run_script("evaluate.py", "--interview", path, "--db", tmp_path / "a.db", "--quiet", check=True)
    [(invalid, truncated, reasons)] = _points(tmp_path / "a.db")
    assert (invalid, truncated) == (4, 1)
    assert json.loads(reasons) == {"no_marker": 1, "placeholder": 1, "unknown": 2}
    run_script("evaluate.py", "--interview", path, "--offline", "--db", tmp_path / "b.db", "--quiet", check=True)
    [(invalid, truncated, reasons)] = _points(tmp_path / "b.db")
    assert (invalid, truncated) == (4, 1)
    assert json.loads(reasons) == {"no_marker": 1, "placeholder": 1, "hedge": 1, "unreadable": 1}
