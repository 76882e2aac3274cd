"""Loaders for the vocabulary files in this folder, plus the small wording helpers
several generators share (option labels, numbers in words, ordinals).

Every file here is authored by the project; README.md says where each list came from.
Files are read once per process and cached: generation must stay fast.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, TypeVar

if TYPE_CHECKING:
    import random

__all__ = ["VOCAB_DIR", "format_options", "load_json", "load_lines", "number_words", "option_label", "option_labels",
           "ordinal", "pick", "uniform_int"]

VOCAB_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def load_json(name: str) -> dict:
    """A JSON vocabulary file by name (e.g. "cars.json")."""
    with open(VOCAB_DIR / name, encoding="utf-8") as handle:
        return json.load(handle)


@lru_cache(maxsize=None)
def load_lines(name: str) -> tuple[str, ...]:
    """A text vocabulary: one entry per line; blank lines and '#' comments skipped."""
    with open(VOCAB_DIR / name, encoding="utf-8") as handle:
        rows = (line.rstrip("\n") for line in handle)
        return tuple(r for r in rows if r.strip() and not r.startswith("#"))


def option_label(index: int) -> str:
    """Multiple-choice label for option `index` (0 -> "(A)")."""
    return f"({chr(ord('A') + index)})"


def option_labels(count: int) -> list[str]:
    return [option_label(i) for i in range(count)]


def format_options(texts: list[str]) -> str:
    """One "(A) text" line per option."""
    return "\n".join(f"{option_label(i)} {t}" for i, t in enumerate(texts))


_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n: int) -> str:
    """English words for 0 <= n < 1000 ("forty-two", "one hundred and five")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens - 2] + (f"-{_ONES[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    head = f"{_ONES[hundreds]} hundred"
    return head + (f" and {number_words(rest)}" if rest else "")


def ordinal(n: int) -> str:
    """1 -> "1st", 22 -> "22nd", 113 -> "113th"."""
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


_T = TypeVar("_T")


def pick(items: Sequence[_T], rng: random.Random) -> _T:
    """rng.choice without its rejection sampling: one rng.random() call. Generation
    draws millions of cells and words per benchmark run, and this is ~3x faster."""
    return items[int(rng.random() * len(items))]


def uniform_int(low: int, high: int, rng: random.Random) -> int:
    """An integer in [low, high] from one rng.random() call (see pick)."""
    return low + int(rng.random() * (high - low + 1))
