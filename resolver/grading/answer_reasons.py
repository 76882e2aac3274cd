"""Why an answer is invalid: one word from a fixed vocabulary (docs/grading.md, *Invalid reasons*).

`resolver.grading.answers.grade` decides the verdict; only when the answer is not valid does it
ask `invalid_reason` which step of the pipeline found nothing. The reason never changes
a verdict, so the diagnosis may be coarse where the pipeline is not: it tells a model
that failed the format (no marker, the placeholder copied) from one that never finished
reasoning or would not commit to one answer.
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

from resolver.grading.answer_kinds import extract_one as read_one
from resolver.grading.answer_text import Hedge, answer_lines, clean_line, unbox_spread

# In the order the pipeline meets them; a record's `invalid_reason` is one of these.
INVALID_REASONS = (
    "truncated",             # finish_reason "length": the completion was cut off
    "empty",                 # no visible text and no reasoning at all
    "unfinished_reasoning",  # a <think> block never closed, or reasoning and no answer after it
    "no_marker",             # text, but no final-answer marker and no \boxed{}
    "placeholder",           # the answer format's placeholder copied ("<integer>")
    "hedge",                 # several different candidate answers
    "not_an_option",         # a closed task's answer that is none of its options
    "unreadable",            # a marker, but nothing after it reads as the answer kind
)
# Counted, never graded: invalid answers whose record predates reasons (no text to re-grade).
UNKNOWN = "unknown"
ALL_REASONS = INVALID_REASONS + (UNKNOWN,)

_CLOSED_KINDS = {"choice", "literal"}
_LIST_KINDS = {"list", "numbers"}
_NUMBER_KINDS = {"integer", "number"}
_HEDGE_WORDS = r"\s*(?:,?\s*\b(?:or|either|maybe|possibly|perhaps|probably)\b|/|\|)\s*"
_LETTER_THEN_TEXT = re.compile(r"^\W*\(?([A-Za-z])\)?[\s.:)\-\u2014\u2013]+(\S.*)$")
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
# "<numbers>", "<your answer>": a template placeholder, even when not this task's own.
_ANGLE_PLACEHOLDER = re.compile(r"<[A-Za-z][\w \-]*>")


def invalid_reason(kind: str, answer: str | None, visible: str | None, normalized: str | None, *,
                   echoed: bool, extracted: str | None, response_enum: Sequence[str] | None,
                   options: Mapping[str, str] | None, truncated: bool, reasoning: str | None = None) -> str:
    """The reason an answer that `grade` found invalid is invalid.

    `visible` is the answer with reasoning removed (None: a <think> never closed),
    `normalized` the text after the final-answer marker (None: no marker), `echoed`
    whether that text is the format placeholder, `extracted` what the kind read (None:
    nothing; not None here means it is not among `response_enum`).
    """
    if truncated:
        return "truncated"
    if visible is None and answer is not None:
        return "unfinished_reasoning"
    if not (visible or "").strip():
        reasoned = bool(reasoning and reasoning.strip()) or bool(answer and _THINK_CLOSE.search(answer))
        return "unfinished_reasoning" if reasoned else "empty"
    if normalized is None:
        return "no_marker"
    lines = answer_lines(normalized)
    if echoed or (lines and _ANGLE_PLACEHOLDER.fullmatch(clean_line(lines[0]))):
        return "placeholder"
    if extracted is not None:
        return "not_an_option"
    if not lines:
        return "unreadable"
    if names_several(kind, normalized, response_enum, options):
        return "hedge"
    if kind == "choice" or (kind == "literal" and response_enum):
        return "not_an_option"
    return "unreadable"


def names_several(kind: str, text: str, response_enum: Sequence[str] | None, options: Mapping[str, str] | None) -> bool:
    """Does the answer text offer two or more different answers of its kind?"""
    if kind in _LIST_KINDS:
        spread = unbox_spread(text)
        if isinstance(spread, Hedge):
            return True
        lines = answer_lines(spread)
    else:
        lines = answer_lines(text)[:1]
        if lines and isinstance(clean_line(lines[0]), Hedge):
            return True
        if read_one(kind, text, response_enum, options) is not None:
            return True       # read, then refused: a later line boxes another answer
    for line in lines:
        if len(_candidates(kind, clean_line(line), response_enum, options)) > 1:
            return True
    return False


def _candidates(kind: str, line: str, response_enum: Sequence[str] | None, options: Mapping[str, str] | None) -> set:
    """The different answers the parts of one line read as, split at hedging words."""
    if kind in _NUMBER_KINDS and re.search(r"\bbetween\b", line, re.IGNORECASE):
        return {"a range", "is several"}
    splitter = _HEDGE_WORDS if kind not in _NUMBER_KINDS else _HEDGE_WORDS + r"|\s*,\s*"
    parts = [p for p in re.split(splitter, line, flags=re.IGNORECASE) if p and p.strip()]
    if kind == "choice":
        letter_text = _LETTER_THEN_TEXT.match(line)
        if letter_text:           # "(C) August 7, 2014": the letter and the text name two options
            parts += [f"({letter_text.group(1)})", letter_text.group(2)]
    found = set()
    for part in parts:
        value = read_one(kind, part, response_enum, options)
        if value is not None:
            found.add(value)
    return found
