"""Colours and styling shared by the web apps.

Scores and accuracies use one red -> yellow -> green scale everywhere (the same direction as
analyze.py's PNGs) so a colour means the same thing in every app.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from plotly.colors import get_colorscale, sample_colorscale

if TYPE_CHECKING:
    from collections.abc import Iterable

ASSETS_DIR = Path(__file__).resolve().parent / "assets"

SCORE_SCALE = "RdYlGn"          # plotly's ColorBrewer diverging scale: 0 red, 0.5 yellow, 1 green
# The same scale as explicit stops, for figures built as plain dicts (plotly.js does not know the name).
SCORE_COLORSCALE = [list(stop) for stop in get_colorscale(SCORE_SCALE)]
MISSING_COLOUR = "#e6e6e6"
TRUNCATION_COLOUR = "#6b6b6b"
EVAL_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")


# Sampled once: plotly's sampler validates the scale on every call, far too slow per table cell.
_SCORE_STEPS = 200
_SCORE_LUT = sample_colorscale(SCORE_SCALE, [i / _SCORE_STEPS for i in range(_SCORE_STEPS + 1)], colortype="rgb")


def score_colour(value: float | None) -> str:
    """Background colour for a score in [0, 1] (clipped, 0.005 steps); grey for missing / NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING_COLOUR
    clipped = min(max(float(value), 0.0), 1.0)
    return _SCORE_LUT[int(round(clipped * _SCORE_STEPS))]


# Differences B - A (the leaderboard's difference view): ColorBrewer RdBu, red = A better, blue = B
# better, white at 0, as analyze.py compare's PNG heat map draws them.
DIFF_SCALE = "RdBu"
DIFF_MIN_LIMIT = 0.05           # the scale spans at least +-0.05, so noise-sized differences stay pale
_DIFF_LUT = sample_colorscale(DIFF_SCALE, [i / _SCORE_STEPS for i in range(_SCORE_STEPS + 1)], colortype="rgb")


def diff_limit(diffs: Iterable[float | None]) -> float:
    """The symmetric colour range +-limit of a difference map: the largest |B - A|, at least DIFF_MIN_LIMIT."""
    sizes = [abs(float(d)) for d in diffs if d is not None and not math.isnan(float(d))]
    return max([DIFF_MIN_LIMIT, *sizes])


def diff_colour(value: float | None, limit: float) -> str:
    """Background colour for a difference in [-limit, +limit] (clipped); grey for missing / NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING_COLOUR
    share = (min(max(float(value) / limit, -1.0), 1.0) + 1.0) / 2.0
    return _DIFF_LUT[int(round(share * _SCORE_STEPS))]


def text_colour_on(background: str) -> str:
    """Black or white text, whichever reads better on the given rgb()/hex background."""
    r, g, b = _rgb(background)
    luminance = 0.299 * r + 0.587 * g + 0.114 * b
    return "#111111" if luminance > 140 else "#ffffff"


def _rgb(colour: str) -> tuple[float, float, float]:
    colour = colour.strip()
    parts: list[float]
    if colour.startswith("#"):
        parts = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    else:
        inside = colour[colour.index("(") + 1:colour.index(")")]
        parts = [float(x) for x in inside.split(",")[:3]]
    r, g, b = parts
    return r, g, b


def eval_colour(index: int) -> str:
    """A distinct line colour for the index-th eval shown side by side."""
    return EVAL_PALETTE[index % len(EVAL_PALETTE)]


def with_alpha(colour: str, alpha: float) -> str:
    r, g, b = _rgb(colour)
    return f"rgba({int(r)},{int(g)},{int(b)},{alpha})"
