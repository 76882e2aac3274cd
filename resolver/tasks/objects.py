"""objects: count the possessions that belong to the asked-about categories.

Someone lists what they own; items come from eleven disjoint semantic domains
(vocab/objects.json). The question asks for the total number of items in
`target_groups` domains. Difficulty grows with the number of target items and
their quantities (a longer sum), distractor items from other domains, items
listed with a zero quantity, adjectives in front of nouns, quantities written in
words, and list anchors (the original's nine-value enum of resolver.tasks.anchors:
"1.", "XIV.", "0x1F." markers that look like quantities). Anchor 0 (NONE) writes the
list as one prose sentence.

Items that everyday speech puts in two domains (a canoe: vehicle or sports
equipment; a kiwi: fruit or bird) are not in the vocabulary. The answer is a sum
of `target_items` uniform 1..`max_count` quantities, so small sums cluster:
`guess_chance` is that sum's most likely value's probability (the best constant
answer), computed exactly.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.anchors import ANCHOR_DOC, ANCHORS, anchored
from resolver.tasks.guess import mode_of_uniform_sum
from resolver.tasks.vocab import load_json, number_words

_SMALLEST_DOMAIN = min(len(items) for items in load_json("objects.json")["domains"].values())


def _article(word: str) -> str:
    """"an" before a vowel sound; "u" read as "you" (ukulele, uniform) takes "a"."""
    if word.startswith(("uk", "uni", "use", "eu")):
        return "a"
    return "an" if word[0] in "aeiou" else "a"


def _phrase(item: str, quantity: int, adjective: str | None, in_words: bool) -> str:
    """"two old violins", "an apple", "no pears", "3 wooden chairs"."""
    singular, plural = item.split("|")
    noun = singular if quantity == 1 else plural
    if adjective:
        noun = f"{adjective} {noun}"
    if quantity == 0:
        return f"no {noun}"
    if quantity == 1:
        return f"{_article(noun)} {noun}" if in_words else f"1 {noun}"
    return f"{number_words(quantity) if in_words else quantity} {noun}"


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + f", and {parts[-1]}"


def _render(phrases: list[str], anchor: int, rng: random.Random) -> str:
    if anchor == 0:
        return f"I have {_join(phrases)}."
    return "Here is everything I own:\n" + "\n".join(anchored(anchor, phrases, rng))


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectsParams:
    target_items: int = param(4, low=1, high=36, doc="distinct listed items in the target categories")
    max_count: int = param(4, low=1, high=20, doc="largest quantity of one item")
    distractor_count: int = param(2, low=0, high=40, doc="items from other categories")
    target_groups: int = param(1, low=1, high=3, doc="categories asked about")
    zero_items: int = param(0, low=0, high=8, doc="target-category items listed with quantity zero")
    prob_adjective: float = param(0.3, low=0.0, high=1.0, doc="chance of an adjective before an item")
    prob_words: float = param(0.5, low=0.0, high=1.0, doc="chance a quantity is written in words")
    anchor: int = param(0, choices=tuple(ANCHORS),
                        doc=f"list anchor format: {ANCHOR_DOC} (0 writes one prose sentence)")


@register
class Objects(Task[ObjectsParams]):
    name = "objects"
    answer_kind = "integer"
    description = ("Someone lists the things they own. Count how many items of the asked-about "
                   "categories they have in total, taking every quantity into account.")
    answer_format = "Final Answer: <integer>"
    version = 2  # v2: ambiguous items dropped, nine-value anchors, honest guess_chance
    Params = ObjectsParams

    def check_consistency(self, p: ObjectsParams) -> None:
        capacity = _SMALLEST_DOMAIN * p.target_groups
        if p.target_items < p.target_groups:
            raise UserError("task 'objects': target_items must be >= target_groups, got "
                            f"{p.target_items} < {p.target_groups}")
        if p.target_items + p.zero_items > capacity:
            raise UserError(f"task 'objects': target_items + zero_items must be <= {capacity} "
                            f"for target_groups={p.target_groups}")

    def generate(self, p: ObjectsParams, rng: random.Random) -> TestCase:
        vocab = load_json("objects.json")
        domains = vocab["domains"]
        targets = rng.sample(sorted(domains), p.target_groups)
        others = [d for d in sorted(domains) if d not in targets]
        picked = self._target_items(domains, targets, p.target_items + p.zero_items, rng)
        counted, zeros = picked[: p.target_items], picked[p.target_items:]
        distractors = rng.sample([(d, item) for d in others for item in domains[d]], p.distractor_count)
        entries = [(d, item, rng.randint(1, p.max_count)) for d, item in counted]
        entries += [(d, item, 0) for d, item in zeros]
        entries += [(d, item, rng.randint(1, p.max_count)) for d, item in distractors]
        rng.shuffle(entries)
        phrases = [_phrase(item, q, rng.choice(vocab["adjectives"]) if rng.random() < p.prob_adjective
                           else None, rng.random() < p.prob_words) for _, item, q in entries]
        if len(targets) == 1:
            question = f"How many {vocab['question_labels'][targets[0]]} do I have?"
        else:  # domain names read naturally after "count as": "fruits or furniture"
            names = " or ".join(targets) if len(targets) == 2 else _join(targets).replace(", and ", ", or ")
            question = f"How many things do I have in total that count as {names}?"
        total = sum(q for d, _, q in entries if d in targets)
        return TestCase(
            input=f"{_render(phrases, p.anchor, rng)}\n\n{question}",
            target=str(total),
            guess_chance=mode_of_uniform_sum(p.target_items, p.max_count),
            genresult={"target_groups": targets, "anchor": ANCHORS[p.anchor],
                       "items": len(entries), "target_items": len(counted),
                       "zero_items": len(zeros), "distractors": len(entries) - len(counted) - len(zeros)},
        )

    @staticmethod
    def _target_items(domains: dict[str, list[str]], targets: list[str], count: int,
                      rng: random.Random) -> list[tuple[str, str]]:
        """Distinct items from the target domains, every target domain represented."""
        pool = [(d, item) for d in targets for item in domains[d]]
        first = [(d, rng.choice(domains[d])) for d in targets]
        rest = rng.sample([x for x in pool if x not in first], count - len(first))
        return first + rest
