"""PNG heat-bar chart of ReasonScore results (analyze.py scores --format png).

Rows are evals grouped into tier sections, sorted within each tier by that tier's
score/token, best first (docs/analyze.md: "Rows: Models (sorted by score/token) grouped into
Tiers"), whatever `--sort` chose for the tables; columns are the groups
(tasks by default). Each cell holds a bar whose length is the excess-accuracy center,
coloured red -> green by the same value, a tick at the upper 95% bound, and a grey
crosshatched block at the right end whose width is the truncation ratio.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.patches import Patch, Rectangle

from resolver.analysis import (
    BELOW_CHANCE_MARK,
    NO_SKILL_MARK,
    eval_labels,
    format_fraction,
    format_score,
    group_order,
    score_table_columns,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure

DPI = 100
ROW_INCHES = 0.34
CMAP = "RdYlGn"
HATCH_COLOR = "0.45"
BELOW_CHANCE_COLOR = "#8b0000"


def _layout(results: list[dict[str, Any]], columns_by_tier: dict[str, list]) -> list[tuple]:
    """Rows to draw: ('tier', name) headers and ('eval', entry, tier) rows, by score/token within a tier."""
    rows: list[tuple] = []
    for tier in columns_by_tier:
        rows.append(("tier", tier))
        entries = [e for e in results if tier in e["tiers"]]
        entries.sort(key=lambda e: (-_finite(e["tiers"][tier]["score_per_token"]),
                                    -_finite(e["tiers"][tier]["reasonscore"]), str(e["eval_id"])))
        rows.extend(("eval", entry, tier) for entry in entries)
    return rows


def _finite(value: float | None) -> float:
    """A sort key for a number that may be missing (None/NaN sorts last)."""
    return -math.inf if value is None or math.isnan(value) else float(value)


def _draw_cell(ax: Axes, x: int, y: int, task: dict[str, Any] | None, cmap: Colormap, norm: Normalize) -> None:
    ax.add_patch(Rectangle((x + 0.04, y + 0.12), 0.92, 0.76, facecolor="0.95", edgecolor="0.8", linewidth=0.5))
    if not task:
        ax.text(x + 0.5, y + 0.5, "—", ha="center", va="center", fontsize=8, color="0.4")
        return
    center, upper, trunc = task["center"], task["center"] + task["margin"], task["truncated_ratio"]
    below = bool(task.get("below_chance"))
    if not below:     # a below-chance cell has no accuracy to draw: it says so instead
        ax.add_patch(Rectangle((x + 0.04, y + 0.12), 0.92 * max(center, 0.0), 0.76, facecolor=cmap(norm(center)),
                               edgecolor="none"))
        ax.plot([x + 0.04 + 0.92 * min(upper, 1.0)] * 2, [y + 0.15, y + 0.85], color="black", linewidth=1.0)
    if trunc > 0:
        ax.add_patch(Rectangle((x + 0.96 - 0.92 * min(trunc, 1.0), y + 0.12), 0.92 * min(trunc, 1.0), 0.76,
                               facecolor="none", edgecolor=HATCH_COLOR, hatch="xxxx", linewidth=0.0))
    label = (BELOW_CHANCE_MARK if below else format_fraction(center)) + ("*" if task["is_incomplete"] else "")
    color = BELOW_CHANCE_COLOR if below else "black"
    ax.text(x + 0.5, y + 0.5, label, ha="center", va="center", fontsize=7.5, color=color,
            fontweight="bold" if below else "normal",
            bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": color if below else "none", "pad": 0.6})


def scores_figure(results: list, width: int = 1400, title: str = "ReasonScore") -> Figure:
    """A matplotlib Figure of the heat-bar chart; width in pixels.

    Layout in inches: title, column header, one ROW_INCHES row per eval and tier
    header, legend strip; the label column is as wide as the longest label needs.
    """
    names = eval_labels(results)   # evals that share a label stay apart, as in every view
    results = [{**entry, "label": names[entry["eval_id"]]} for entry in results]
    columns_by_tier = score_table_columns(results)
    columns = sorted(dict.fromkeys(g for groups in columns_by_tier.values() for g in groups), key=group_order)
    rows = _layout(results, columns_by_tier)
    width_in = width / DPI
    label_in = min(0.35 * width_in, 0.3 + 0.075 * max([len(_row_label(r)) for r in rows if r[0] == "eval"] + [20]))
    cell_in = (width_in - label_in - 0.2) / max(len(columns), 1)
    rotate = any(len(str(c)) * 0.075 > cell_in for c in columns)
    header_in = 1.1 if rotate else 0.45
    title_in, legend_in = 0.55, 1.0
    height = title_in + header_in + ROW_INCHES * len(rows) + legend_in
    fig = plt.figure(figsize=(width_in, height), dpi=DPI)
    ax = fig.add_axes((0.1 / width_in, legend_in / height, 1 - 0.2 / width_in, (height - title_in - legend_in) / height))
    label_units = label_in / cell_in
    header_units = header_in / ROW_INCHES
    ax.set_xlim(-label_units, max(len(columns), 1))
    ax.set_ylim(len(rows), -header_units)
    ax.axis("off")
    cmap, norm = colormaps[CMAP], Normalize(0.0, 1.0)
    for i, name in enumerate(columns):
        ax.text(i + 0.5, -0.15, str(name), ha="left" if rotate else "center", va="bottom", fontsize=8,
                rotation=35 if rotate else 0, rotation_mode="anchor", fontweight="bold")
    ax.text(-label_units + 0.05, -0.15, "Model (ReasonScore)", ha="left", va="bottom", fontsize=8, fontweight="bold")
    for y, row in enumerate(rows):
        if row[0] == "tier":
            ax.add_patch(Rectangle((-label_units, y + 0.05), label_units + len(columns), 0.9, facecolor="0.85",
                                   edgecolor="none"))
            ax.text(-label_units + 0.05, y + 0.5, f"Tier: {row[1]}", ha="left", va="center", fontsize=9,
                    fontweight="bold")
            continue
        _, entry, tier = row
        ax.text(-label_units + 0.05, y + 0.5, _row_label(row), ha="left", va="center", fontsize=8)
        for x, group in enumerate(columns):
            if group in columns_by_tier[tier]:   # columns of other tiers stay empty
                _draw_cell(ax, x, y, entry["tiers"][tier]["tasks"].get(group), cmap, norm)
    fig.suptitle(title, fontsize=12, fontweight="bold", y=1 - 0.12 / height, va="top")
    _legend(fig, cmap, norm, legend_in)
    return fig


def _row_label(row: tuple) -> str:
    _, entry, tier = row
    data = entry["tiers"][tier]
    score = f" ({format_score(data['reasonscore'], data['any_incomplete'])})"
    # shorten the label, never the score: it is the number the row is about
    # models without evidence of skill above guessing carry the mark the markdown table uses
    mark = "" if entry.get("skill_evidence", True) else f" {NO_SKILL_MARK}"
    return _shorten(entry["label"], 48 - len(score) - len(mark)) + mark + score


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _legend(fig: Figure, cmap: Colormap, norm: Normalize, legend_in: float) -> None:
    height = fig.get_figheight()
    cax = fig.add_axes((0.2, 0.5 / height, 0.4, 0.16 / height))
    bar = fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), cax=cax, orientation="horizontal")
    bar.set_label("ReasonScore input: excess accuracy (bar and colour; black tick = its Wilson upper end)", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    handles = [Patch(facecolor="white", edgecolor=HATCH_COLOR, hatch="xxxx", label="truncation ratio"),
               Patch(facecolor="0.95", edgecolor="0.8", label="* incomplete cell, — no data"),
               Patch(facecolor="white", edgecolor=BELOW_CHANCE_COLOR, label=f"{BELOW_CHANCE_MARK}: below guessing level")]
    fig.legend(handles=handles, loc="center right", fontsize=8, frameon=False,
               bbox_to_anchor=(0.98, 0.5 * legend_in / height))
