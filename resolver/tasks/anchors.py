"""List anchors: the markers in front of the statements of a problem.

The anchor enum is the original's nine values (docs/tasks.md): 0 NONE, 1 NUMERIC,
2 ASCII, 3 ROMAN, 4 ALPHA, 5 SKIP_2, 6 REVERSE, 7 HEX, 8 ELEMENTS. An anchor marks
each statement of a list ("1. Alice and Bob swap books."); it never changes what
the statements say. Markers are chosen to interfere with reading: numbers that look
like quantities or step counts, letters that look like option labels, counts that
skip or run backwards.

Every task with an `anchor` parameter (objects, shuffle) formats its lists here, so
one enum means one thing everywhere. This module registers no task.
"""
from __future__ import annotations

import random

from resolver.tasks.vocab import load_lines

ANCHORS = {0: "NONE", 1: "NUMERIC", 2: "ASCII", 3: "ROMAN", 4: "ALPHA", 5: "SKIP_2",
           6: "REVERSE", 7: "HEX", 8: "ELEMENTS"}
ANCHOR_DOC = ", ".join(f"{k} {v}" for k, v in ANCHORS.items())
_ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def roman(n: int) -> str:
    """1 -> "I", 14 -> "XIV" (n >= 1)."""
    out = ""
    for value, glyph in _ROMAN:
        while n >= value:
            out += glyph
            n -= value
    return out


def letters(i: int, upper: bool) -> str:
    """0 -> "a", 25 -> "z", 26 -> "aa" (spreadsheet-style columns past z)."""
    out = ""
    i += 1
    while i:
        i, rest = divmod(i - 1, 26)
        out = chr(ord("A" if upper else "a") + rest) + out
    return out


def markers(anchor: int, n: int, rng: random.Random) -> list[str]:
    """The n list markers of an anchor, empty strings for NONE.

    Only HEX draws from `rng` (its first value), so other anchors leave the
    random stream untouched."""
    if anchor == 0:
        return [""] * n
    if anchor == 1:
        return [f"{i}." for i in range(1, n + 1)]
    if anchor == 2:
        return [f"{letters(i, upper=False)})" for i in range(n)]
    if anchor == 3:
        return [f"{roman(i)}." for i in range(1, n + 1)]
    if anchor == 4:
        return [f"{letters(i, upper=True)}." for i in range(n)]
    if anchor == 5:
        return [f"{2 * i}." for i in range(1, n + 1)]
    if anchor == 6:
        return [f"{i}." for i in range(n, 0, -1)]
    if anchor == 7:
        first = rng.randint(10, 200)
        return [f"0x{first + i:02X}." for i in range(n)]
    names = load_lines("elements.txt")
    return [f"{names[i % len(names)]}{'' if i < len(names) else i // len(names) + 1}:" for i in range(n)]


def anchored(anchor: int, lines: list[str], rng: random.Random) -> list[str]:
    """`lines` with the anchor's marker in front of each (unchanged for NONE)."""
    return [f"{m} {line}" if m else line for m, line in zip(markers(anchor, len(lines), rng), lines)]
