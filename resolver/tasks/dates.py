"""dates: a short narrative fixes "today"; which date (or weekday) is some offset away?

`tier` sets how many date steps the question chains (0: a few days either side of
today, 1: days or weeks across month ends, 2: days, weeks, months or years from
tomorrow / yesterday, 3: an event placed relative to today and a question relative
to the event). `format` sets how every date is written, including the options, so
the ordinal format forces a day-of-year conversion. A share `prob_weekday` of the
questions asks for the day of the week instead of the date (the story names today's
weekday).

Wrong options are the answers to slightly different questions, i.e. the usual slips:
a day or two off (also what a wrong month length or a missed leap day gives), the
offset taken the wrong way, days read as weeks or months as years, counted from
yesterday instead of tomorrow. The options are built as a *family* of such
neighbouring questions first, and only then is the question to ask drawn uniformly
from the family. So, given the story and the options (everything but the question
sentence), every option is equally likely to be the answer: no rule that skips the
question (the option agreeing most with the others, the middle date, the date
nearest "today", the first or last option) beats 1 / options.
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Callable, Hashable

from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.vocab import format_options, load_json, load_lines, number_words, option_labels, ordinal

FORMATS = {0: "MM_DD_YYYY", 1: "NATURAL_LANGUAGE", 2: "ORDINAL_DAY_OF_YEAR", 3: "OFFSET_MM_DD_YY"}
FORMAT_NOTES = {
    0: "Dates are written MM/DD/YYYY.",
    1: "",
    2: "Dates are written as the day of the year (January 1 is the 1st day).",
    3: "Dates are written MM/DD/YY (all years are between 1990 and 2039).",
}
MONTHS = ("January February March April May June July August September October "
          "November December").split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_RANGES = {"day": (2, 45), "week": (1, 8), "month": (1, 14), "year": (1, 6)}
_OTHER_UNIT = {"day": "week", "week": "day", "month": "year", "year": "month"}
_NEAR = {-1: "yesterday", 1: "tomorrow", -2: "the day before yesterday", 2: "the day after tomorrow"}


def format_date(day: dt.date, fmt: int) -> str:
    if fmt == 0:
        return day.strftime("%m/%d/%Y")
    if fmt == 1:
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    if fmt == 2:
        return f"the {ordinal(day.timetuple().tm_yday)} day of {day.year}"
    return day.strftime("%m/%d/%y")


def add_months(day: dt.date, months: int) -> dt.date:
    """Same day-of-month `months` later; callers keep day <= 28 so it always exists."""
    index = day.year * 12 + day.month - 1 + months
    return day.replace(year=index // 12, month=index % 12 + 1)


def _span(n: int, unit: str) -> str:
    return f"{number_words(n)} {unit}" + ("" if n == 1 else "s")


def _apply(day: dt.date, unit: str, amount: int) -> dt.date | None:
    """`day` moved by `amount` units; None for months/years from a day past the 28th
    ("a month after January 30" has no single answer)."""
    if unit == "day":
        return day + dt.timedelta(days=amount)
    if unit == "week":
        return day + dt.timedelta(weeks=amount)
    if day.day > 28:
        return None
    return add_months(day, amount * (12 if unit == "year" else 1))


def _relative(phrase: str, amount: int, anchor: str) -> str:
    return f"{phrase} {'after' if amount > 0 else 'before'} {anchor}"


@dataclass(frozen=True)
class Question:
    """One question of a tier: `start` is the day offset of what it counts from
    (tier 2: -1 yesterday, +1 tomorrow; tier 0: the whole offset), `unit` / `amount`
    the signed offset from there (tier 3: from the event)."""

    start: int
    unit: str
    amount: int

    def realise(self, tier: int, today: dt.date, event: dt.date | None) -> tuple[str, str, dt.date] | None:
        """(when, tense, answer date), or None when this question has no single answer."""
        if tier == 0:
            if self.start in _NEAR:
                when = _NEAR[self.start]
            else:
                when = f"{_span(abs(self.start), 'day')} {'ago' if self.start < 0 else 'from today'}"
            return when, "past" if self.start < 0 else "future", today + dt.timedelta(days=self.start)
        if tier == 1:
            when = f"{_span(abs(self.amount), self.unit)} {'ago' if self.amount < 0 else 'from today'}"
            answer = _apply(today, self.unit, self.amount)
            return None if answer is None else (when, "past" if self.amount < 0 else "future", answer)
        if tier == 2:
            base, word = today + dt.timedelta(days=self.start), "tomorrow" if self.start > 0 else "yesterday"
            answer = _apply(base, self.unit, self.amount)
            when = _relative(_span(abs(self.amount), self.unit), self.amount, word)
            return None if answer is None else (when, "relative", answer)
        assert event is not None, "tier 3 questions count from the event"
        answer = _apply(event, self.unit, self.amount)
        when = _relative(_span(abs(self.amount), self.unit), self.amount, "the town fair")
        return None if answer is None else (when, "relative", answer)

    def neighbours(self, tier: int) -> list["Question"]:
        """The questions one slip away: off by one or two, the other direction, the
        other unit, counted from the other side of today."""
        if tier == 0:
            return [Question(d, "day", 0) for d in (-4, -3, -2, -1, 1, 2, 3, 4) if d != self.start]
        out = []
        for amount in (self.amount - 1, self.amount + 1, self.amount - 2, self.amount + 2, -self.amount):
            if amount:
                out.append(Question(self.start, self.unit, amount))
        if tier in (1, 2, 3):
            out.append(Question(self.start, _OTHER_UNIT[self.unit], self.amount))
        if tier == 2:
            out += [Question(-self.start, self.unit, self.amount), Question(-self.start, self.unit, -self.amount)]
        return out


def _draw(tier: int, rng: random.Random) -> Question:
    """A question of the tier (tier 3: the part after the event)."""
    if tier == 0:
        return Question(rng.choice((-1, 1)), "day", 0)
    units = ["day", "week"] + (["month", "year"] if tier >= 2 else [])
    unit = rng.choice(units)
    amount = rng.randint(*_RANGES[unit]) * rng.choice((-1, 1))
    return Question(rng.choice((-1, 1)) if tier == 2 else 0, unit, amount)


def _event(today: dt.date, rng: random.Random) -> tuple[str, dt.date]:
    """Tier 3's story sentence and the event's date."""
    while True:
        unit = rng.choice(("day", "week", "month", "year"))
        amount = rng.randint(*_RANGES[unit]) * rng.choice((-1, 1))
        day = _apply(today, unit, amount)
        if day is not None:
            happened = "happened" if amount < 0 else "is planned for"
            return f" The town fair {happened} {_relative(_span(abs(amount), unit), amount, 'today')}.", day


def question_family(tier: int, today: dt.date, event: dt.date | None, count: int, key: Callable[[dt.date], Hashable],
                    rng: random.Random) -> list:
    """`count` questions with different answers (compared by `key(date)`): a drawn
    question and its neighbours, topped up with fresh draws. Which one is asked is
    decided afterwards, uniformly."""
    base = _draw(tier, rng)
    first = base.realise(tier, today, event)
    while first is None:
        base = _draw(tier, rng)
        first = base.realise(tier, today, event)
    family = [(base, first)]
    seen = {key(first[2])}
    candidates = base.neighbours(tier)
    rng.shuffle(candidates)
    for _ in range(10_000):
        if len(family) == count:
            break
        question = candidates.pop() if candidates else _draw(tier, rng)
        realised = question.realise(tier, today, event)
        if realised is not None and key(realised[2]) not in seen and 1990 <= realised[2].year <= 2039:
            seen.add(key(realised[2]))
            family.append((question, realised))
    else:
        raise AssertionError(f"tier {tier} has no {count} questions with different answers")  # pragma: no cover
    rng.shuffle(family)
    return family


def _question_text(kind: str, when: str, tense: str) -> str:
    head = "What date" if kind == "date" else "What day of the week"
    if tense == "past":
        return f"{head} was it {when}?"
    if tense == "future":
        return f"{head} will it be {when}?"
    return f"{head} is {when}?" if kind == "weekday" else f"What is the date {when}?"


@dataclass(frozen=True, slots=True, kw_only=True)
class DatesParams:
    tier: int = param(1, low=0, high=3, doc="question complexity: 0 a few days from today, 1 days/weeks, "
                      "2 days to years from tomorrow/yesterday, 3 event-relative")
    format: int = param(1, choices=tuple(FORMATS),
                        doc="date format: " + ", ".join(f"{k} {v}" for k, v in FORMATS.items()))
    choice_count: int = param(4, low=2, high=8,
                              doc="answer options (a weekday question offers at most 7, at tier 0 at most 6)")
    prob_weekday: float = param(0.25, low=0.0, high=1.0,
                                doc="chance that a question asks for the day of the week instead of the date")


@register
class Dates(Task[DatesParams]):
    name = "dates"
    version = 2  # options are a family of neighbouring questions, one asked at random; weekday questions
    answer_kind = "choice"
    description = ("Read the short story, work out the requested date or day of the week and "
                   "choose the matching option.")
    answer_format = "Final Answer: (A) - (Z)"
    Params = DatesParams

    def generate(self, p: DatesParams, rng: random.Random) -> TestCase:
        tier, fmt = p.tier, p.format
        # Years keep every offset inside 1990..2039, where two-digit years are unambiguous.
        today = dt.date(rng.randint(2003, 2026), rng.randint(1, 12), 1) + dt.timedelta(days=rng.randint(0, 30))
        story, event = _event(today, rng) if tier == 3 else ("", None)
        kind = "weekday" if rng.random() < p.prob_weekday else "date"
        if kind == "date":
            family = question_family(tier, today, event, p.choice_count, lambda d: d, rng)
            texts = [format_date(r[2], fmt) for _, r in family]
        else:
            # tier 0 reaches six weekdays (one to four days either way, never today's)
            count = min(p.choice_count, 6 if tier == 0 else 7)
            family = question_family(tier, today, event, count, dt.date.weekday, rng)
            texts = [WEEKDAYS[r[2].weekday()] for _, r in family]
        right = rng.randrange(len(family))
        asked, (when, tense, answer) = family[right]
        labels = option_labels(len(texts))
        person = rng.choice(load_json("dates.json")["events"]).format(name=rng.choice(load_lines("names.txt")))
        note = FORMAT_NOTES[fmt]
        text = (f"{note + ' ' if note else ''}{person}, {WEEKDAYS[today.weekday()]}, {format_date(today, fmt)}."
                f"{story}\n\n{_question_text(kind, when, tense)}\n\nOptions:\n{format_options(texts)}")
        return TestCase(
            input=text, target=labels[right], response_enum=labels,
            guess_chance=1 / len(labels),
            genresult={"format": FORMATS[fmt], "tier": tier, "steps": {0: 1, 1: 1, 2: 2, 3: 3}[tier],
                       "question": kind, "today": today.isoformat(), "answer_date": answer.isoformat(),
                       "offset_days": (answer - today).days, "asked": [asked.start, asked.unit, asked.amount]},
        )
