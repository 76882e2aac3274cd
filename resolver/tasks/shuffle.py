"""shuffle: items held one-to-one by people, pairwise swaps; who holds what at the end?

`length` people each hold one item of a theme (dance partners, books, football
positions, gifts, balls). `max_depth` swaps follow, about half of them involving
the person asked about, mixed with `confounding_count` sentences that mention two
people but change nothing. `anchor` puts list markers in front of the statements
(resolver.tasks.anchors: numbers that look like step counts, letters that look like
option labels, roman numerals, numbers counting by two or backwards, hexadecimal,
chemical elements); the items themselves stay the theme's own ("the red ball").
People's names and item names never overlap (vocab/README.md).

Whether the asked person ends with the item they started with is decided first, with
probability 1 / length (what a uniformly random final item gives), and the swaps are
drawn until they agree: with few swaps the asked person, touched by most of them,
would otherwise hold their own item a fixed share of the time (1/3 at 6 people and
one swap) and "answer their starting item" would beat 1 / length.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.anchors import ANCHOR_DOC, ANCHORS, anchored
from resolver.tasks.vocab import format_options, load_json, load_lines, number_words, option_labels

MAX_PEOPLE = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleParams:
    length: int = param(5, low=2, high=MAX_PEOPLE, doc="people (and items)")
    max_depth: int = param(5, low=0, high=100, doc="swaps")
    confounding_count: int = param(0, low=0, high=50, doc="sentences that change nothing")
    anchor: int = param(0, choices=tuple(ANCHORS), doc="list markers in front of the statements: " + ANCHOR_DOC)


@register
class Shuffle(Task[ShuffleParams]):
    name = "shuffle"
    version = 3  # the asked person ends with their own item 1 time in `length` (was 1/3 at 6 people, 1 swap)
    answer_kind = "choice"
    description = ("Several people each start with one item and then swap items in pairs. "
                   "Follow every swap and say what the named person has at the end.")
    answer_format = "Final Answer: (A) - (Z)"
    Params = ShuffleParams

    def generate(self, p: ShuffleParams, rng: random.Random) -> TestCase:
        vocab = load_json("shuffle.json")
        theme_name = rng.choice(sorted(vocab["themes"]))
        theme = vocab["themes"][theme_name]
        n = p.length
        people = rng.sample(load_lines("names.txt"), n)
        items = rng.sample(theme["items"], n)
        holding = dict(zip(people, items))
        asked = rng.choice(people)
        opening = [theme["holds"].format(person=who, item=holding[who]) + "." for who in people]
        swaps = _swaps(people, asked, p.max_depth, rng)
        touched = 0
        for a, b in swaps:
            holding[a], holding[b] = holding[b], holding[a]
            touched += asked in (a, b)
        events = [rng.choice(theme["swap"]).format(a=a, b=b) for a, b in swaps]
        for _ in range(p.confounding_count):
            a, b = rng.sample(people, 2)
            events.insert(rng.randint(0, len(events)), rng.choice(vocab["confounders"]).format(a=a, b=b))
        options = list(items)
        rng.shuffle(options)
        labels = option_labels(n)
        statements = anchored(p.anchor, opening + events, rng)
        intro = theme["intro"].format(n=number_words(n))
        story = intro[0].upper() + intro[1:] + "\n" + "\n".join(statements[:n])
        if events:
            story += "\n\nThen, in this order:\n" + "\n".join(statements[n:])
        text = f"{story}\n\n{theme['question'].format(person=asked)}\n\nOptions:\n{format_options(options)}"
        return TestCase(
            input=text, target=labels[options.index(holding[asked])], response_enum=labels,
            guess_chance=1 / n,
            genresult={"theme": theme_name, "anchor": ANCHORS[p.anchor], "person": asked,
                       "swaps_with_person": touched, "confounders": p.confounding_count},
        )


def _swaps(people: list[str], asked: str, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """`count` swaps, about half of them involving `asked`, drawn until `asked` keeps
    their own item exactly when a draw with probability 1 / len(people) says so
    (at most 1000 tries; two people or no swaps leave no choice)."""
    keeps = rng.random() < 1 / len(people)
    for _ in range(1000):
        swaps = []
        for _ in range(count):
            a = asked if rng.random() < 0.5 else rng.choice(people)
            b = rng.choice([p for p in people if p != a])
            swaps.append((a, b))
        if (_keeps_own(swaps, asked) == keeps) or count == 0 or len(people) == 2:
            return swaps
    return swaps


def _keeps_own(swaps: list[tuple[str, str]], asked: str) -> bool:
    """Whether `asked` holds their starting item after the swaps."""
    item = asked                                  # follow the asked person's starting item
    for a, b in swaps:
        item = b if item == a else a if item == b else item
    return item == asked
