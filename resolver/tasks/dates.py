"""dates: a short narrative fixes "today"; which date is some offset away from it?

`tier` sets how many date steps the question chains (0: a single day, 1: days or
weeks across month ends, 2: months / years or two chained offsets, 3: an event
placed relative to today and a question relative to the event). `format` sets how
every date is written, including the options, so the ordinal format forces a
day-of-year conversion. Wrong options are the typical slips: off by one day or one
week, the wrong direction, the wrong month or year, day and month swapped.
"""
from __future__ import annotations

import datetime as dt
import random

from resolver.tasks import Param, Task, TestCase, register
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


def _offset(rng: random.Random, calendar_units: bool) -> tuple[str, str, int]:
    """A random signed offset: (unit, phrase, amount). Months and years only when asked."""
    sign = rng.choice((-1, 1))
    unit = rng.choice(["day", "week"] + (["month", "year"] if calendar_units else []))
    n = {"day": rng.randint(2, 45), "week": rng.randint(1, 8),
         "month": rng.randint(1, 14), "year": rng.randint(1, 6)}[unit]
    return unit, _span(n, unit), sign * n


def _apply(day: dt.date, unit: str, amount: int) -> dt.date:
    if unit == "day":
        return day + dt.timedelta(days=amount)
    if unit == "week":
        return day + dt.timedelta(weeks=amount)
    if unit == "month":
        return add_months(day, amount)
    return add_months(day, 12 * amount)


def _relative(phrase: str, amount: int, anchor: str) -> str:
    return f"{phrase} {'after' if amount > 0 else 'before'} {anchor}"


def _tier0(today, rng):
    word, delta = rng.choice((("yesterday", -1), ("tomorrow", 1)))
    verb = "was it" if delta < 0 else "will it be"
    return "", f"What date {verb} {word}?", today + dt.timedelta(days=delta), 1


def _tier1(today, rng):
    unit, phrase, amount = _offset(rng, calendar_units=False)
    when = f"{phrase} ago" if amount < 0 else f"{phrase} from today"
    verb = "was it" if amount < 0 else "will it be"
    return "", f"What date {verb} {when}?", _apply(today, unit, amount), 1


def _tier2(today, rng):
    unit, phrase, amount = _offset(rng, calendar_units=True)
    word, delta = rng.choice((("tomorrow", 1), ("yesterday", -1)))
    answer = _apply(today + dt.timedelta(days=delta), unit, amount)
    return "", f"What is the date {_relative(phrase, amount, word)}?", answer, 2


def _tier3(today, rng):
    """An event placed relative to today, then a question relative to the event."""
    unit1, phrase1, amount1 = _offset(rng, calendar_units=True)
    unit2, phrase2, amount2 = _offset(rng, calendar_units=True)
    event = _apply(today, unit1, amount1)
    if unit2 in ("month", "year") and event.day > 28:
        # "a month after January 30" has no single answer: ask in days instead
        days = (abs(amount2) + 2) * (1 if amount2 > 0 else -1)
        unit2, phrase2, amount2 = "day", _span(abs(days), "day"), days
    happened = "happened" if amount1 < 0 else "is planned for"
    story = f" The town fair {happened} {_relative(phrase1, amount1, 'today')}."
    question = f"What is the date {_relative(phrase2, amount2, 'the town fair')}?"
    return story, question, _apply(event, unit2, amount2), 3


TIERS = (_tier0, _tier1, _tier2, _tier3)  # question builders by `tier`


def _distractors(today: dt.date, answer: dt.date, rng: random.Random) -> list[dt.date]:
    """Plausible wrong dates, most telling first, deduplicated, never the answer."""
    diff = (answer - today).days
    pool = [answer + dt.timedelta(days=1), answer - dt.timedelta(days=1),
            today - dt.timedelta(days=diff), answer + dt.timedelta(days=7),
            answer - dt.timedelta(days=7)]
    for months in (1, -1, 12, -12):
        pool.append(add_months(answer.replace(day=min(answer.day, 28)), months))
    if answer.day <= 12 and answer.day != answer.month:
        pool.append(answer.replace(month=answer.day, day=min(answer.month, 28)))
    rng.shuffle(pool)
    pool += [answer + dt.timedelta(days=rng.choice((-1, 1)) * rng.randint(2, 40)) for _ in range(20)]
    seen, out = {answer}, []
    for day in pool:
        if day not in seen and 1990 <= day.year <= 2039:
            seen.add(day)
            out.append(day)
    return out


@register
class Dates(Task):
    name = "dates"
    answer_kind = "choice"
    description = "Read the short story, work out the requested date and choose the matching option."
    answer_format = "Final Answer: (A) - (Z)"
    params = (
        Param("tier", int, 1, low=0, high=len(TIERS) - 1, doc="question complexity: 0 one day, 1 days/weeks, "
              "2 months/years or chained offsets, 3 event-relative"),
        Param("format", int, 1, choices=tuple(FORMATS),
              doc="date format: " + ", ".join(f"{k} {v}" for k, v in FORMATS.items())),
        Param("choice_count", int, 4, low=2, high=8, doc="answer options"),
    )

    def generate(self, params: dict, rng: random.Random) -> TestCase:
        tier, fmt = params["tier"], params["format"]
        # Day 2..27 keeps "tomorrow + N months" on a day every month has; years keep
        # every offset inside 1990..2039, where two-digit years are unambiguous.
        today = dt.date(rng.randint(2003, 2026), rng.randint(1, 12), rng.randint(2, 27))
        story, question, answer, steps = TIERS[tier](today, rng)
        wrong = _distractors(today, answer, rng)[: params["choice_count"] - 1]
        options = wrong + [answer]
        rng.shuffle(options)
        labels = option_labels(len(options))
        event = rng.choice(load_json("dates.json")["events"]).format(name=rng.choice(load_lines("names.txt")))
        note = FORMAT_NOTES[fmt]
        text = (f"{note + ' ' if note else ''}{event}, {format_date(today, fmt)}.{story}\n\n"
                f"{question}\n\nOptions:\n{format_options([format_date(d, fmt) for d in options])}")
        return TestCase(
            input=text, target=labels[options.index(answer)], response_enum=labels,
            guess_chance=1 / len(labels),
            genresult={"format": FORMATS[fmt], "tier": tier, "steps": steps,
                       "today": today.isoformat(), "answer_date": answer.isoformat(),
                       "offset_days": (answer - today).days},
        )
