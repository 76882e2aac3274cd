"""Shared figure layout rules: how many columns a grid of panels gets, and wrapping of
long labels so they fit the space they are drawn in (docs/probe.md, docs/analyze.md)."""
from __future__ import annotations

import math
import textwrap

MAX_COLUMNS = 4


def grid_shape(panels: int, evals: int = 1, max_columns: int = MAX_COLUMNS) -> tuple:
    """(rows, columns) for `panels` panels that come in runs of `evals` (one per eval).

    Several evals (up to max_columns) keep whole runs side by side: the columns are the
    evals, repeated when there is room (2 evals, many view entries: two entries a row,
    four columns), so a row compares the evals on the same view entry. One eval (or
    more than max_columns) fills a near-square grid of at most max_columns columns, row
    by row, instead of one tall column.
    """
    panels = max(1, panels)
    if 2 <= evals <= max_columns:
        entries = math.ceil(panels / evals)
        per_row = max(1, min(max_columns // evals, round(math.sqrt(entries / 2))))
        columns = evals * per_row
    else:
        columns = min(max_columns, math.ceil(math.sqrt(panels)))
    return math.ceil(panels / columns), columns


def wrap(text: str, width: int) -> str:
    """`text` broken into lines of at most `width` characters (words kept whole when possible)."""
    return "\n".join(textwrap.fill(line, width, break_long_words=True, break_on_hyphens=False) or line
                     for line in str(text).split("\n"))
