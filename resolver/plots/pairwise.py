"""PNG win-probability heat map (analyze.py pairwise --format png).

Long model labels are wrapped and the figure's height grows with their line count;
columns carry only the rank number (the row of the same number names the model), so
no label is rotated or cut off whatever the labels' length (docs/analyze.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from resolver.plots.layout import wrap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 100
LABEL_CHARS = 42        # row labels wrap at this many characters
LINE_PX = 13            # one line of an 8 pt row label
HEADER_PX = 90          # title (up to two lines) above the map
FOOTER_PX = 70          # column numbers and the axis label below it


def row_label(rank: int, label: str, expected_wins: float, strength: float) -> str:
    """'1. <label, wrapped>' and a second line with the row's expected wins and BT strength."""
    return f"{wrap(f'{rank}. {label}', LABEL_CHARS)}\nE[wins] {expected_wins:.1f} · BT log-strength {strength:+.1f}"


def figure_height(row_labels: list) -> float:
    """Pixels: each row tall enough for its label's lines (at least 34 px), plus header and footer."""
    rows = sum(max(34, LINE_PX * (label.count("\n") + 1) + 8) for label in row_labels)
    return HEADER_PX + rows + FOOTER_PX


def pairwise_figure(result: dict, labels: list, width: int = 1200, group: str | None = None) -> Figure:
    """Heat map of P(row beats column), rows/columns in the result's order, with
    expected wins and Bradley-Terry strength under each row label."""
    k = len(labels)
    matrix = np.array([[np.nan if p is None else p for p in row] for row in result["win_probability"]], dtype=float)
    row_labels = [row_label(i + 1, lab, w, s)
                  for i, (lab, w, s) in enumerate(zip(labels, result["expected_wins"], result["bt_log_strength"]))]
    fig, ax = plt.subplots(figsize=(width / DPI, figure_height(row_labels) / DPI), dpi=DPI, layout="constrained")
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdBu", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_yticks(range(k))
    ax.set_yticklabels(row_labels, fontsize=8)
    ax.set_xticks(range(k))
    ax.set_xticklabels([str(i + 1) for i in range(k)], fontsize=8)
    if k <= 25:
        for i in range(k):
            for j in range(k):
                if not np.isnan(matrix[i, j]):
                    value = matrix[i, j]
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if abs(value - 0.5) > 0.35 else "black")
    ax.set_xlabel("opponent (column number = the row of that rank)", fontsize=9)
    ax.set_ylabel("model (row)", fontsize=9)
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("P(row beats column)", fontsize=8)
    bar.ax.tick_params(labelsize=8)
    title = (f"Pairwise win probability by {group or 'all data'} "
             f"(mode {result['mode']}, sorted by {result['sort']}; mean over contests)")
    fig.suptitle(wrap(title, max(40, int(width / 9))), fontsize=11, fontweight="bold")
    return fig
