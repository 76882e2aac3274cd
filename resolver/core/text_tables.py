"""Plain-text tables: GitHub markdown and fixed-width terminal tables.

Rendering helpers every layer may use (analysis, cohort reports, the coverage study,
data.py): they depend on nothing but the standard library.
"""
from __future__ import annotations

from typing import Iterable, Sequence


def markdown_escape(value: object) -> str:
    """A table cell: pipes escaped, newlines flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: Iterable[Sequence], headers: Sequence[str], align: Sequence[str] | None = None) -> str:
    """A GitHub markdown table. align items: 'l', 'r' or 'c' per column."""
    align = list(align or ["l"] * len(headers))
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(markdown_escape(h) for h in headers) + " |",
             "|" + "|".join(marks.get(a, "---") for a in align) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(markdown_escape(c) for c in row) + " |")
    return "\n".join(lines)


def plain_table(rows: Sequence[Sequence], headers: Sequence[str]) -> str:
    """A fixed-width text table for terminals (evals --format table)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
