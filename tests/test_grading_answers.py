"""Answer grading: think blocks, the Final Answer marker, per-kind canonicalisation."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from resolver.grading import answers as answers
from resolver.grading.answers import canonical_target, extract_by_kind, final_answer_text, grade, strip_reasoning
from resolver.tasks.base import Task


class _Kind(Task):
    """A bare task of a given answer kind, to exercise the default grading hooks."""

    def __init__(self, kind):
        self.name = f"kind-{kind}"
        self.answer_kind = kind

    def generate(self, params, rng):  # grading only: these tests never generate
        raise AssertionError("not a generator")


# ---- think blocks -----------------------------------------------------------
def test_think_block_removed():
    assert strip_reasoning("<think>Final Answer: 1</think>Final Answer: 2") == "Final Answer: 2"


def test_unclosed_think_means_no_answer():
    assert strip_reasoning("<think>reasoning... Final Answer: 3") is None
    assert grade(_Kind("integer"), {"target": "3", "response_enum": None},
                 "<think>reasoning... Final Answer: 3", "stop")["is_valid"] is False


def test_lone_close_tag_drops_everything_before():
    assert strip_reasoning("hidden Final Answer: 9\n</think>\nFinal Answer: 4") == "\nFinal Answer: 4"


def test_think_reopened_after_close_is_unfinished():
    assert strip_reasoning("<think>a</think> b <think> c") is None


def test_uppercase_think_tags():
    assert strip_reasoning("<THINK>x</THINK>ok") == "ok"


# ---- marker -------------------------------------------------------------------
def test_last_final_answer_wins():
    text = "Final Answer: 1\nwait, no.\nFinal Answer: 2"
    assert final_answer_text(text) == "2"


@pytest.mark.parametrize("text", [
    "**Final Answer:** (C)", "**Final Answer**: (C)", "final answer: (C)",
    "Final Answer : (C)", "FINAL ANSWER:(C)", "_Final Answer:_ (C)",
])
def test_marker_variants(text):
    assert final_answer_text(text) == "(C)"


def test_no_marker_is_none():
    assert final_answer_text("The answer is 4.") is None
    g = grade(_Kind("integer"), {"target": "4", "response_enum": None}, "The answer is 4.", "stop")
    assert (g["normalized_answer"], g["extracted_answer"], g["is_valid"]) == (None, None, False)


# ---- kinds --------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    ("(C)", "(C)"), ("(c) Hacksaw Ridge", "(C)"), ("**(B)**", "(B)"), ("B", "(B)"),
    ("B.", "(B)"), ("( D )", "(D)"), ("Option A", "(A)"), ("nothing", None),
])
def test_choice(text, expected):
    assert extract_by_kind("choice", text, ["(A)", "(B)", "(C)", "(D)"]) == expected


@pytest.mark.parametrize("text,expected", [
    ("42", "42"), ("-17.", "-17"), ("**1,234**", "1234"), ("$\\boxed{12}$", "12"),
    ("\u22125", "-5"), ("12.0", "12"), ("12.5", None), ("`7`", "7"), ("x", None),
    ("The result is 8", "8"),
])
def test_integer(text, expected):
    assert extract_by_kind("integer", text, None) == expected


@pytest.mark.parametrize("text,expected", [("3.50", "3.5"), ("1e3", "1000"), ("-0.25.", "-0.25"), ("$4", "4")])
def test_number(text, expected):
    assert extract_by_kind("number", text, None) == expected


@pytest.mark.parametrize("text,expected", [
    ("TRUE", "TRUE"), ("true.", "TRUE"), ("**False**", "FALSE"), ("False, because", "FALSE"),
    # "TRUE or FALSE" echoes the answer format: a hedge, not TRUE (docs/decisions.md; grader v2)
    ("maybe", None), ("The expression is TRUE", "TRUE"), ("TRUE or FALSE", None),
    ("it is not true and not false", None),
])
def test_literal(text, expected):
    assert extract_by_kind("literal", text, ["TRUE", "FALSE"]) == expected


def test_list_lines_and_commas():
    assert extract_by_kind("list", "- apple\n- Banana\n- cherry", None) == "apple\nBanana\ncherry"
    assert extract_by_kind("list", "1. apple\n2. pear", None) == "apple\npear"
    assert extract_by_kind("list", "3, 5, 8", None) == "3\n5\n8"


def test_text_collapses_whitespace_and_trailing_punctuation():
    assert extract_by_kind("text", "  `hello   world`. ", None) == "hello world"


def test_canonical_target_matches_extraction():
    assert canonical_target("choice", "(b)") == "(B)"
    assert canonical_target("integer", "-3") == "-3"
    assert canonical_target("list", "a\nb") == "a\nb"


# ---- grade ----------------------------------------------------------------------
def test_grade_correct_and_wrong_choice():
    case = {"target": "(B)", "response_enum": ["(A)", "(B)", "(C)"]}
    task = _Kind("choice")
    assert grade(task, case, "Reasoning.\nFinal Answer: (B)", "stop")["is_correct"] is True
    wrong = grade(task, case, "Final Answer: (A)", "stop")
    assert wrong["is_valid"] is True and wrong["is_correct"] is False
    outside = grade(task, case, "Final Answer: (F)", "stop")
    assert outside["extracted_answer"] == "(F)" and outside["is_valid"] is False


def test_truncated_is_never_valid_or_correct():
    g = grade(_Kind("integer"), {"target": "5", "response_enum": None}, "Final Answer: 5", "length")
    assert g == {"normalized_answer": "5", "extracted_answer": "5", "is_valid": False,
                 "is_correct": False, "is_truncated": True, "invalid_reason": "truncated"}


def test_missing_answer():
    g = grade(_Kind("integer"), {"target": "5", "response_enum": None}, None, None)
    assert g["is_valid"] is False and g["normalized_answer"] is None and not g["is_truncated"]


def test_markdown_and_trailing_punctuation_around_answer():
    g = grade(_Kind("integer"), {"target": "-12", "response_enum": None},
              "so...\n\n**Final Answer:** **-12**.\n", "stop")
    assert g["is_correct"] is True and g["normalized_answer"] == "**-12**."


# ---- properties -------------------------------------------------------------------
_noise = st.text(alphabet=st.characters(blacklist_characters="<>:", blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(prefix=_noise, value=st.integers(-10**12, 10**12), thinking=_noise)
def test_property_integer_after_marker_is_found(prefix, value, thinking):
    text = f"<think>{thinking} Final Answer: 0</think>{prefix}\nFinal Answer: {value}"
    assert extract_by_kind("integer", final_answer_text(strip_reasoning(text)), None) == str(value)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_property_never_crashes(text):
    for kind in ("choice", "integer", "number", "literal", "list", "text"):
        out = extract_by_kind(kind, final_answer_text(strip_reasoning(text)), ["YES", "NO"])
        assert out is None or isinstance(out, str)


@settings(max_examples=100, deadline=None)
@given(letter=st.sampled_from("ABCDEFGH"), decoration=st.sampled_from(["{}", "**{}**", "({})", "`({})`", "{}."]))
def test_property_choice_decorations(letter, decoration):
    text = "Final Answer: " + decoration.format(letter if "(" in decoration else f"({letter})")
    assert extract_by_kind("choice", final_answer_text(text), None) == f"({letter})"
