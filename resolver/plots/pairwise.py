"""PNG win-probability heat map (analyze.py pairwise --format png)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DPI = 100


def pairwise_figure(result: dict, labels: list, width: int = 1200, group=None):
    """Heat map of P(row beats column), rows/columns in the result's order, with
    expected wins and Bradley-Terry strength in the row labels."""
    k = len(labels)
    matrix = np.array([[np.nan if p is None else p for p in row] for row in result["win_probability"]], dtype=float)
    side = width / DPI
    fig, ax = plt.subplots(figsize=(side, min(side, 2.5 + 0.45 * k)), dpi=DPI)
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdBu", vmin=0.0, vmax=1.0, aspect="auto")
    row_labels = [f"{i + 1}. {lab}  (E[wins] {w:.1f}, BT log-strength {s:+.1f})"
                  for i, (lab, w, s) in enumerate(zip(labels, result["expected_wins"], result["bt_log_strength"]))]
    ax.set_yticks(range(k))
    ax.set_yticklabels(row_labels, fontsize=8)
    ax.set_xticks(range(k))
    ax.set_xticklabels([f"{i + 1}. {lab}" for i, lab in enumerate(labels)], fontsize=8, rotation=35, ha="right")
    if k <= 25:
        for i in range(k):
            for j in range(k):
                if not np.isnan(matrix[i, j]):
                    value = matrix[i, j]
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if abs(value - 0.5) > 0.35 else "black")
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("model (row)")
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("P(row beats column), mean over contests", fontsize=8)
    ax.set_title(f"Pairwise win probability by {group or 'all data'} (mode {result['mode']}, "
                 f"sorted by {result['sort']})", fontsize=11, fontweight="bold")
    fig.tight_layout()
    return fig
