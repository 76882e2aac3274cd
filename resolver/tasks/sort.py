"""sort: alphabetise a list of words, ignoring case.

Difficulty grows with `length` (more comparisons, and more words that share a
long prefix, since the vocabulary has deliberate prefix clusters), with
`prob_mutation` (random letters switched to upper case, which must not change the
order) and `prob_duplication` (repeated words, which must all be kept). Grading
compares the lists case-insensitively: the order is what is tested, and two
spellings of one word ("Apple", "apple") may come in either order.

v2: a duplicate repeats one of the distinct words listed so far, chosen uniformly
and at most MAX_COPIES times in all (a copy of a random earlier *position*
snowballed: one word up to 19 times in 100); `input_sep` writes the input one word
per line, space- or comma-separated; `vocabulary` picks the word source (common
words, or first names). An input that is already in order is shuffled, so copying
the input is never the answer (unless every word is the same).
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

from resolver.core import UserError
from resolver.grading import canonical_target
from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.vocab import load_lines, pick

MAX_COPIES = 3  # the most times one word (ignoring case) occurs in a list
SEPARATORS = {"\n": "\n", " ": " ", ", ": ", "}
VOCABULARIES = {"words": "words.txt", "names": "names.txt"}


def _mutate(word: str, prob: float, rng: random.Random) -> str:
    """Upper-case a random subset of letters; at least one when the word is chosen."""
    if rng.random() >= prob:
        return word
    letters = list(word)
    for _ in range(1 + int(rng.random() * max(1, len(letters) // 2))):
        i = int(rng.random() * len(letters))  # a repeated position just capitalises fewer letters
        letters[i] = letters[i].upper()
    return "".join(letters)


@dataclass(frozen=True, slots=True, kw_only=True)
class SortParams:
    length: int = param(8, low=2, high=200, doc="words to sort")
    prob_mutation: float = param(0.0, low=0.0, high=1.0, doc="chance a word gets random capitals")
    prob_duplication: float = param(0.0, low=0.0, high=0.9,
                                    doc=f"chance a word repeats an earlier one (each word at most {MAX_COPIES} times)")
    input_sep: str = param("\n", choices=tuple(SEPARATORS),
                           doc="how the input words are separated: a newline, a space or a comma and a space")
    vocabulary: str = param("words", choices=tuple(VOCABULARIES),
                            doc="word source: words (common nouns, with shared-prefix clusters) or names (first names)")


@register
class Sort(Task[SortParams]):
    name = "sort"
    answer_kind = "list"
    description = ("Sort the words alphabetically, ignoring upper and lower case. Keep every word, "
                   "including repeats, and write each word as it is given.")
    answer_format = "Final Answer: followed by the sorted words, one per line"
    Params = SortParams
    version = 3  # 3: honest guess_chance (a blind reordering's chance)

    def check_consistency(self, p: SortParams) -> None:
        room = MAX_COPIES * len(load_lines(VOCABULARIES[p.vocabulary]))
        if p.length > room:
            raise UserError(f"task 'sort': length {p.length} is more than vocabulary "
                            f"{p.vocabulary!r} can fill ({room} words at most)")

    def generate(self, p: SortParams, rng: random.Random) -> TestCase:
        vocab = load_lines(VOCABULARIES[p.vocabulary])
        words: list[str] = []
        copies: dict[str, int] = {}   # a word as listed in the vocabulary -> times used
        for _ in range(p.length):
            base = None
            if words and rng.random() < p.prob_duplication:
                open_words = sorted(w for w, n in copies.items() if n < MAX_COPIES)
                base = pick(open_words, rng) if open_words else None
            while base is None or copies.get(base, 0) >= MAX_COPIES:
                base = pick(vocab, rng)
            copies[base] = copies.get(base, 0) + 1
            words.append(_mutate(base, p.prob_mutation, rng))
        ordered = sorted(words, key=str.lower)
        # An input already in order would be answered by copying it (1 in 24 at length 4,
        # more with repeats): shuffle it until it is not, whenever two words differ.
        while len({w.lower() for w in words}) > 1 and [w.lower() for w in words] == [w.lower() for w in ordered]:
            rng.shuffle(words)
        return TestCase(
            guess_chance=_blind_order_chance(words),
            input="Words:\n" + SEPARATORS[p.input_sep].join(words),
            target="\n".join(ordered),
            genresult={"length": len(words), "mutated": sum(w != w.lower() for w in words),
                       "duplicates": len(words) - len({w.lower() for w in words}),
                       "already_sorted_pairs": sum(a.lower() <= b.lower() for a, b in zip(words, words[1:]))},
        )

    def matches(self, extracted: str, target: str) -> bool:
        """Same words in the same order, compared without regard to case."""
        return extracted.lower() == canonical_target(self.answer_kind, target).lower()


def _blind_order_chance(words: list[str]) -> float:
    """Chance that a reordering drawn blindly is the sorted one: 1 over the distinct
    orderings of these words (case-folded), less the input's own (never the answer).
    Negligible from about 8 words; at length 4 it is 1/23 (1/11 with one repeat)."""
    counts = Counter(w.lower() for w in words)
    orderings = math.factorial(len(words))
    for n in counts.values():
        orderings //= math.factorial(n)
    return 1.0 if orderings <= 1 else 1.0 / (orderings - 1)
