"""letters: count how often target letters occur across a list of words.

Target letters are drawn from three English frequency tiers (`letters_common`,
`letters_uncommon`, `letters_rare` letters of each). Case is ignored, and some words
are capitalised or written in capitals to check that. Repeated words must be
counted every time (`prob_repeat`), and a second person's list of
`confounder_words` words sits right next to the one to count and must be ignored.
Difficulty grows with the number of words (larger counts, more to scan), the
number of target letters, repeats and the confounding list.

Word lengths span the original's 1..20 letters (`min_word_length`,
`max_word_length`; words outside words.txt's 3..12 come from words_extra.txt).
Counts over a few words cluster on small values, so `guess_chance` is the best
constant answer's rate at the point's parameters (v2), estimated from 1000 draws of
the answer alone on a private random stream (resolver.tasks.guess).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.guess import mode_rate
from resolver.tasks.vocab import load_json, load_lines, pick

TIERS = ("common", "uncommon", "rare")
_SHORTEST, _LONGEST = 1, 20  # the original's word-length range


@dataclass(frozen=True, slots=True, kw_only=True)
class LettersParams:
    letters_common: int = param(1, low=0, high=5, doc="target letters from e t a o i n s r h")
    letters_uncommon: int = param(0, low=0, high=5, doc="target letters from l d c u m w f g y p b")
    letters_rare: int = param(0, low=0, high=4, doc="target letters from v k j x q z")
    min_word_length: int = param(3, low=_SHORTEST, high=_LONGEST, doc="shortest word")
    max_word_length: int = param(8, low=_SHORTEST, high=_LONGEST, doc="longest word")
    target_words: int = param(8, low=1, high=200, doc="words in the list to count")
    confounder_words: int = param(0, low=0, high=200, doc="words in a second list that must be ignored")
    prob_repeat: float = param(0.0, low=0.0, high=0.9, doc="chance a word repeats an earlier one")

    def letters_per_tier(self) -> dict[str, int]:
        """How many target letters each frequency tier gives, in TIERS order."""
        return {"common": self.letters_common, "uncommon": self.letters_uncommon, "rare": self.letters_rare}


@lru_cache(maxsize=None)
def _words_between(low: int, high: int) -> tuple[str, ...]:
    words = load_lines("words.txt") + load_lines("words_extra.txt")
    return tuple(w for w in words if low <= len(w) <= high and w.isalpha())


@lru_cache(maxsize=None)
def _letter_masks(low: int, high: int) -> tuple[int, ...]:
    """Per word of _words_between(low, high), a bitmask of the letters it contains (bit 0 = "a")."""
    return tuple(sum(1 << (ord(c) - 97) for c in set(w)) for w in _words_between(low, high))


@lru_cache(maxsize=None)
def _words_with_any(low: int, high: int, letters: frozenset) -> tuple[str, ...]:
    """The words of _words_between(low, high) holding any of `letters`, in the pool's order
    (kept: the guess chance draws a thousand word lists per point from the same few sets)."""
    wanted = sum(1 << (ord(c) - 97) for c in letters)
    return tuple(w for w, mask in zip(_words_between(low, high), _letter_masks(low, high)) if mask & wanted)


def _occurrences(words: list[str], letters: list[str]) -> int:
    """How often the letters occur in the words, ignoring case (one pass per letter)."""
    text = "".join(words).lower()
    return sum(text.count(c) for c in letters)


def _style(word: str, rng: random.Random) -> str:
    """Mixed case (a quarter of the words) so that counting must ignore case."""
    roll = rng.random()
    if roll < 0.15:
        return word.capitalize()
    if roll < 0.25:
        return word.upper()
    return word


def _quote_letters(letters: list[str]) -> str:
    quoted = [f'"{c}"' for c in letters]
    if len(quoted) == 1:
        return f"the letter {quoted[0]}"
    return "the letters " + ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


@register
class Letters(Task[LettersParams]):
    name = "letters"
    answer_kind = "integer"
    description = ("Count how many times the given letters occur, in total, in the words of "
                   "the named list. Ignore upper and lower case and count repeated words every time.")
    answer_format = "Final Answer: <integer>"
    version = 2  # v2: word lengths 1..20, honest guess_chance
    Params = LettersParams

    def check_consistency(self, p: LettersParams) -> None:
        if p.min_word_length > p.max_word_length:
            raise UserError("task 'letters': min_word_length must be <= max_word_length, got "
                            f"{p.min_word_length} > {p.max_word_length}")
        if not _words_between(p.min_word_length, p.max_word_length):
            raise UserError("task 'letters': no vocabulary word has "
                            f"{p.min_word_length}..{p.max_word_length} letters; widen the range")
        if not any(p.letters_per_tier().values()):
            raise UserError("task 'letters': at least one of letters_common, letters_uncommon, "
                            "letters_rare must be >= 1")

    def _counted(self, p: LettersParams, rng: random.Random) -> tuple[list[str], tuple[str, ...], list[str]]:
        """The target letters and the list to count (the first draws of every case)."""
        tiers = load_json("letters.json")
        per_tier = p.letters_per_tier()
        letters = [c for tier in TIERS for c in rng.sample(tiers[tier], per_tier[tier])]
        low, high = p.min_word_length, p.max_word_length
        pool = _words_between(low, high)
        with_letter = _words_with_any(low, high, frozenset(letters))
        return letters, pool, self._word_list(pool, with_letter, p.target_words, p.prob_repeat, rng)

    def _answer(self, p: LettersParams, rng: random.Random) -> int:
        letters, _, counted = self._counted(p, rng)
        return _occurrences(counted, letters)

    def generate(self, p: LettersParams, rng: random.Random) -> TestCase:
        letters, pool, counted = self._counted(p, rng)
        ignored = [_style(pick(pool, rng), rng) for _ in range(p.confounder_words)]
        owner, other = rng.sample(load_lines("names.txt"), 2)
        per_letter = {c: sum(w.lower().count(c) for w in counted) for c in letters}
        blocks = [f"{owner}'s words: " + ", ".join(counted)]
        if ignored:
            blocks.append(f"{other}'s words: " + ", ".join(ignored))
            rng.shuffle(blocks)
        verb = "does" if len(letters) == 1 else "do"
        question = f"How many times {verb} {_quote_letters(letters)} appear in total in {owner}'s words?"
        return TestCase(
            input="\n\n".join(blocks + [question]),
            target=str(sum(per_letter.values())),
            guess_chance=mode_rate("letters", p, self._answer),
            genresult={"letters": letters, "per_letter": per_letter, "words": len(counted),
                       "repeats": len(counted) - len({w.lower() for w in counted}),
                       "confounder_words": len(ignored)},
        )

    @staticmethod
    def _word_list(pool: tuple[str, ...], with_letter: tuple[str, ...], count: int, prob_repeat: float,
                   rng: random.Random) -> list[str]:
        """Half the fresh words contain a target letter (`with_letter` holds those of the
        pool), so counts are rarely all zero."""
        words: list[str] = []
        for _ in range(count):
            if words and rng.random() < prob_repeat:
                words.append(_style(pick(words, rng).lower(), rng))
                continue
            source = with_letter if with_letter and rng.random() < 0.5 else pool
            words.append(_style(pick(source, rng), rng))
        return words
