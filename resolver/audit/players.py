"""Question-blind players: rules that answer a generated problem without solving it.

A player sees what a model sees (the problem text, the answer format, the option
list) but never works the problem out: it answers with a constant, picks an option
by its shape or by how much it agrees with the other options, or copies a number
from the text. Each player is a function `(case, context) -> answer text | None`;
the answer text is graded by the task's real grader (resolver.grading.answers.grade), so a
player is right exactly when a model writing the same answer would be.

Players that need the whole point (constant answers, the most frequent target)
are built by resolver.audit.shortcuts from the point's samples.
"""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from resolver.tasks import TestCase

_OPTION = re.compile(r"^\(([A-Z])\)\s+(.*\S)\s*$", re.MULTILINE)
_INTEGER = re.compile(r"(?<![\w.])-?\d+(?![\w.]\d)")
_CAR = re.compile(r"\bcar (\d+)\b", re.IGNORECASE)
_MONTHS = {m: i + 1 for i, m in enumerate(
    "January February March April May June July August September October November December".split())}
_TOKEN = re.compile(r"\w+")


def options(text: str) -> list[tuple[str, str]]:
    """[(label "(A)", option text)] of the options block at the end of a problem."""
    head, sep, tail = text.rpartition("Options:")
    block = tail if sep else text
    return [(f"({m.group(1)})", m.group(2)) for m in _OPTION.finditer(block)]


# ------------------------------------------------------------ option players
def _pick(case: TestCase, key: Callable[[list[tuple[str, str]]], int | None]) -> str | None:
    opts = options(case.input)
    if not opts:
        return None
    index = key(opts)
    return None if index is None else opts[index][0]


def first_option(case: TestCase, ctx: dict) -> str | None:
    return _pick(case, lambda o: 0)


def last_option(case: TestCase, ctx: dict) -> str | None:
    return _pick(case, lambda o: len(o) - 1)


def longest_option(case: TestCase, ctx: dict) -> str | None:
    return _pick(case, lambda o: max(range(len(o)), key=lambda i: len(o[i][1])))


def shortest_option(case: TestCase, ctx: dict) -> str | None:
    return _pick(case, lambda o: min(range(len(o)), key=lambda i: len(o[i][1])))


def _components(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def component_vote(case: TestCase, ctx: dict) -> str | None:
    """The option whose components (words / numbers, by position) most often equal
    the same component of the other options: the "consensus" of the distractors."""
    def best(opts: list[tuple[str, str]]) -> int | None:
        parts = [_components(t) for _, t in opts]
        scores = [sum(a == b for j, other in enumerate(parts) if j != i for a, b in zip(mine, other))
                  for i, mine in enumerate(parts)]
        return max(range(len(opts)), key=lambda i: scores[i])
    return _pick(case, best)


def token_vote(case: TestCase, ctx: dict) -> str | None:
    """The option sharing the most words (anywhere) with the other options."""
    def best(opts: list[tuple[str, str]]) -> int | None:
        sets = [set(_components(t)) for _, t in opts]
        scores = [sum(len(s & o) for j, o in enumerate(sets) if j != i) for i, s in enumerate(sets)]
        return max(range(len(opts)), key=lambda i: scores[i])
    return _pick(case, best)


def parse_date(text: str) -> dt.date | None:
    """A date written in any of the dates task's four formats, or None."""
    text = text.strip().rstrip(".")
    try:
        m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})", text)
        if m:
            year = int(m.group(3))
            year += (2000 if year < 40 else 1900) if len(m.group(3)) == 2 else 0
            return dt.date(year, int(m.group(1)), int(m.group(2)))
        m = re.fullmatch(r"([A-Z][a-z]+) (\d{1,2}), (\d{4})", text)
        if m and m.group(1) in _MONTHS:
            return dt.date(int(m.group(3)), _MONTHS[m.group(1)], int(m.group(2)))
        m = re.fullmatch(r"the (\d+)(?:st|nd|rd|th) day of (\d{4})", text)
        if m:
            return dt.date(int(m.group(2)), 1, 1) + dt.timedelta(days=int(m.group(1)) - 1)
    except ValueError:
        return None
    return None


def date_centroid(case: TestCase, ctx: dict) -> str | None:
    """The option date nearest the median of all option dates."""
    def best(opts: list[tuple[str, str]]) -> int | None:
        parsed = [parse_date(t) for _, t in opts]
        days = [d for d in parsed if d is not None]
        if len(days) < len(parsed):
            return None
        ords = sorted(d.toordinal() for d in days)
        middle = ords[len(ords) // 2]
        return min(range(len(opts)), key=lambda i: abs(days[i].toordinal() - middle))
    return _pick(case, best)


_DATE_IN_TEXT = re.compile(
    r"\b\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})\b|\b[A-Z][a-z]+ \d{1,2}, \d{4}\b|\bthe \d+(?:st|nd|rd|th) day of \d{4}\b")


def date_nearest_mentioned(case: TestCase, ctx: dict) -> str | None:
    """The option date nearest the first date the story mentions ("today")."""
    mentioned = [d for d in (parse_date(m.group(0)) for m in _DATE_IN_TEXT.finditer(_body(case.input))) if d]
    if not mentioned:
        return None

    def best(opts: list[tuple[str, str]]) -> int | None:
        parsed = [parse_date(t) for _, t in opts]
        days = [d for d in parsed if d is not None]
        if len(days) < len(parsed):
            return None
        return min(range(len(opts)), key=lambda i: abs((days[i] - mentioned[0]).days))
    return _pick(case, best)


def date_component_vote(case: TestCase, ctx: dict) -> str | None:
    """The option whose year, month and day agree with the most other options."""
    def best(opts: list[tuple[str, str]]) -> int | None:
        days = [parse_date(t) for _, t in opts]
        if any(d is None for d in days):
            return None
        counts = [Counter(getattr(d, part) for d in days) for part in ("year", "month", "day")]
        scores = [sum(c[getattr(d, part)] for c, part in zip(counts, ("year", "month", "day"))) for d in days]
        return max(range(len(opts)), key=lambda i: scores[i])
    return _pick(case, best)


# ------------------------------------------------------------ text players
def _body(text: str) -> str:
    """The problem without its options block (numbers in option labels are not data)."""
    head, sep, _ = text.rpartition("Options:")
    return head if sep else text


def last_number(case: TestCase, ctx: dict) -> str | None:
    found = _INTEGER.findall(_body(case.input))
    return found[-1] if found else None


def first_number(case: TestCase, ctx: dict) -> str | None:
    found = _INTEGER.findall(_body(case.input))
    return found[0] if found else None


def largest_number(case: TestCase, ctx: dict) -> str | None:
    found = _INTEGER.findall(_body(case.input))
    return max(found, key=int) if found else None


def sum_of_numbers(case: TestCase, ctx: dict) -> str | None:
    """All the numbers in the text added up (every quantity, asked about or not)."""
    found = _INTEGER.findall(_body(case.input))
    return str(sum(int(n) for n in found)) if found else None


def number_count(case: TestCase, ctx: dict) -> str | None:
    """How many numbers the text contains."""
    return str(len(_INTEGER.findall(_body(case.input))))


def echo_input(case: TestCase, ctx: dict) -> str | None:
    """The problem text after its first line, as given (a list left unsorted)."""
    rest = case.input.split("\n", 1)
    return rest[1] if len(rest) == 2 and rest[1].strip() else None


def last_car(case: TestCase, ctx: dict) -> str | None:
    """The last "car N" written anywhere in the text."""
    found = _CAR.findall(case.input)
    return found[-1] if found else None


def last_car_of_person(case: TestCase, ctx: dict) -> str | None:
    """The last "car N" in a line that names the person the question asks about
    (the question's last capitalised name), else that person's starting car."""
    asked = re.findall(r"\b([A-Z][a-z]+)\b", case.input.strip().splitlines()[-1])
    names = [n for n in asked if n not in ("Which", "What", "Car")]
    if not names:
        return None
    person = names[-1]
    answer = None
    for sentence in re.split(r"(?<=[.!?])\s+|\n", case.input):
        if re.search(rf"\b{person}\b", sentence) and not sentence.startswith("Which"):
            found = _CAR.findall(sentence)
            if found:
                answer = found[-1]
    return answer


_CLOSER = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _bracket_tokens(case: TestCase, ctx: dict) -> list[str] | None:
    """The bracket symbols of a brackets problem's sequence line (None for other tasks)."""
    if "bracket_types" not in (ctx.get("params") or {}):
        return None
    lines = [line.split() for line in _body(case.input).splitlines()]
    runs = [t for t in lines if t and all(x in "()[]{}<>" for x in t)]
    return runs[-1] if runs else None


def bracket_tail(case: TestCase, ctx: dict) -> str | None:
    """Close only the openers after the last closing bracket, innermost first (no matching).

    (Mirroring the last d = openers - closers openers needs the count, part of the skill;
    tests/test_tasks_fairness.py holds that rule to what counting alone earns.)"""
    tokens = _bracket_tokens(case, ctx)
    if not tokens:
        return None
    last_close = max((i for i, t in enumerate(tokens) if t not in _CLOSER), default=-1)
    tail = tokens[last_close + 1:]
    return " ".join(_CLOSER[t] for t in reversed(tail)) if tail else None


def echo_format(case: TestCase, ctx: dict) -> str | None:
    """The answer-format line itself ("Final Answer: TRUE or FALSE")."""
    return ctx["answer_format"]


PLAYERS: dict[str, Callable] = {
    "first_option": first_option,
    "last_option": last_option,
    "longest_option": longest_option,
    "shortest_option": shortest_option,
    "component_vote": component_vote,
    "token_vote": token_vote,
    "date_centroid": date_centroid,
    "date_component_vote": date_component_vote,
    "date_nearest_mentioned": date_nearest_mentioned,
    "first_number": first_number,
    "last_number": last_number,
    "largest_number": largest_number,
    "sum_of_numbers": sum_of_numbers,
    "number_count": number_count,
    "echo_input": echo_input,
    "last_car": last_car,
    "last_car_of_person": last_car_of_person,
    "bracket_tail": bracket_tail,
    "echo_format": echo_format,
}
