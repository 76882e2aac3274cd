"""shuffle: items held one-to-one by people, pairwise swaps; who holds what at the end?

`length` people each hold one item of a theme (dance partners, books, football
positions, gifts, balls). `max_depth` swaps follow, about half of them involving
the person asked about, mixed with `confounding_count` sentences that mention two
people but change nothing. `anchor` names the items with labels that interfere with
reading the options: numbers, letters (which look like option letters), roman
numerals, numbers counting by two or backwards, hexadecimal, chemical elements.
"""
from __future__ import annotations

import random

from resolver.tasks import Param, Task, TestCase, register
from resolver.tasks.vocab import format_options, load_json, load_lines, number_words, option_labels

ANCHORS = {0: "NONE", 1: "NUMERIC", 2: "ASCII", 3: "ROMAN", 4: "ALPHA", 5: "SKIP_2",
           6: "REVERSE", 7: "HEX", 8: "ELEMENTS"}
_ROMAN = ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
MAX_PEOPLE = 16


def roman(n: int) -> str:
    out = ""
    for value, glyph in _ROMAN:
        while n >= value:
            out += glyph
            n -= value
    return out


def anchor_labels(anchor: int, n: int, rng: random.Random) -> list[str]:
    """Labels for n items, in the order they are first handed out."""
    if anchor == 1:
        return [str(i) for i in range(1, n + 1)]
    if anchor == 2:
        return [chr(ord("a") + i) for i in range(n)]
    if anchor == 3:
        return [roman(i) for i in range(1, n + 1)]
    if anchor == 4:
        return [chr(ord("A") + i) for i in range(n)]
    if anchor == 5:
        return [str(2 * i) for i in range(1, n + 1)]
    if anchor == 6:
        return [str(i) for i in range(n, 0, -1)]
    if anchor == 7:
        first = rng.randint(10, 200)
        return [f"0x{first + i:02X}" for i in range(n)]
    return list(load_json("shuffle.json")["elements"][:n])


@register
class Shuffle(Task):
    name = "shuffle"
    answer_kind = "choice"
    description = ("Several people each start with one item and then swap items in pairs. "
                   "Follow every swap and say what the named person has at the end.")
    answer_format = "Final Answer: (A) - (Z)"
    params = (
        Param("length", int, 5, low=2, high=MAX_PEOPLE, doc="people (and items)"),
        Param("max_depth", int, 5, low=0, high=100, doc="swaps"),
        Param("confounding_count", int, 0, low=0, high=50, doc="sentences that change nothing"),
        Param("anchor", int, 0, choices=tuple(ANCHORS),
              doc="item labels: " + ", ".join(f"{k} {v}" for k, v in ANCHORS.items())),
    )

    def generate(self, params: dict, rng: random.Random) -> TestCase:
        vocab = load_json("shuffle.json")
        theme_name = rng.choice(sorted(vocab["themes"]))
        theme = vocab["themes"][theme_name]
        n = params["length"]
        people = rng.sample(load_lines("names.txt"), n)
        if params["anchor"] == 0:
            items = rng.sample(theme["items"], n)
        else:
            items = [f"{theme['noun']} {label}" for label in anchor_labels(params["anchor"], n, rng)]
        holding = dict(zip(people, items))
        asked = rng.choice(people)
        opening = [theme["holds"].format(person=p, item=holding[p]) + "." for p in people]
        events, touched = [], 0
        for _ in range(params["max_depth"]):
            a = asked if rng.random() < 0.5 else rng.choice(people)
            b = rng.choice([p for p in people if p != a])
            holding[a], holding[b] = holding[b], holding[a]
            touched += asked in (a, b)
            events.append(rng.choice(theme["swap"]).format(a=a, b=b))
        for _ in range(params["confounding_count"]):
            a, b = rng.sample(people, 2)
            events.insert(rng.randint(0, len(events)), rng.choice(vocab["confounders"]).format(a=a, b=b))
        options = list(items)
        rng.shuffle(options)
        labels = option_labels(n)
        intro = theme["intro"].format(n=number_words(n))
        story = intro[0].upper() + intro[1:] + " " + " ".join(opening)
        if events:
            story += "\n\nThen, in this order:\n" + "\n".join(events)
        text = f"{story}\n\n{theme['question'].format(person=asked)}\n\nOptions:\n{format_options(options)}"
        return TestCase(
            input=text, target=labels[options.index(holding[asked])], response_enum=labels,
            guess_chance=1 / n,
            genresult={"theme": theme_name, "anchor": ANCHORS[params["anchor"]], "person": asked,
                       "swaps_with_person": touched, "confounders": params["confounding_count"]},
        )
