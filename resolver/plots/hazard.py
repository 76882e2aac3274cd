"""Hazard and cumulative-incidence figures (analyze.py hazard)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import ColorType, LineStyleType

DPI = 100
CORRECT = "#2ca02c"
INCORRECT = "#d62728"
STILL = "grey"
#: hazards from fewer answers than this still generating are noise: not drawn
MIN_AT_RISK = 5
CAUSE_STYLES: dict[str, LineStyleType] = {"correct": "-", "incorrect": "--", "still generating": ":"}


def _masked_hazard(table: pd.DataFrame, column: str) -> np.ndarray:
    values = table[column].to_numpy(dtype=float).copy()
    values[table["at_risk"].to_numpy() < MIN_AT_RISK] = np.nan
    return values


def _draw_series(left: Axes, right: Axes, table: pd.DataFrame, colours: dict, styles: dict, label: str | None) -> None:
    """One series: hazards (left) and cumulative incidence + survival (right)."""
    mid = ((table["start"] + table["end"]) / 2).to_numpy()
    for cause, column in (("correct", "hazard_correct"), ("incorrect", "hazard_incorrect")):
        left.plot(mid, _masked_hazard(table, column), styles[cause], color=colours[cause], marker="o",
                  markersize=3, label=label or f"ends {cause}")
    edges = np.concatenate([[0], table["end"].to_numpy()])
    for cause, column, start in (("correct", "cif_correct", 0.0), ("incorrect", "cif_incorrect", 0.0),
                                 ("still generating", "survival", 1.0)):
        if cause == "still generating" and not table["censored"].sum():
            continue
        name = f"{cause} ({int(table['censored'].sum())} truncated = censored)" \
            if cause == "still generating" and label is None else (label or cause)
        right.step(edges, np.concatenate([[start], table[column]]), styles[cause], where="post",
                   color=colours[cause], label=name)


def hazard_figure(series: dict, title: str, bucket_size: int, width: int = 1200, height: int = 500,
                  names: dict | None = None) -> Figure:
    """Left: hazard per token bucket; right: cumulative incidence of each cause.

    One series: green correct, red incorrect, grey still generating. Several series
    (a --group-by): one colour per series, line style per cause, legends below.
    """
    names = names or {}
    series = {k: v for k, v in series.items() if not v.empty}
    several = len(series) > 1
    fig, (left, right) = plt.subplots(1, 2, figsize=(width / DPI, (height + (30 + 18 * len(series) if several else 0)) / DPI), dpi=DPI)
    palette = plt.get_cmap("tab10")
    for i, (name, table) in enumerate(series.items()):
        colours: dict[str, ColorType]
        if several:
            colour = palette(i % 10)
            colours = {cause: colour for cause in CAUSE_STYLES}
            _draw_series(left, right, table, colours, CAUSE_STYLES, str(names.get(name, name)))
        else:
            colours = {"correct": CORRECT, "incorrect": INCORRECT, "still generating": STILL}
            _draw_series(left, right, table, colours, {c: "-" for c in CAUSE_STYLES}, None)
    left.set_title(f"Hazard per {bucket_size}-token bucket")
    left.set_xlabel("completion tokens")
    left.set_ylabel("P(answer ends in bucket | still generating)")
    left.set_ylim(bottom=0)
    right.set_title("Cumulative incidence (competing risks)")
    right.set_xlabel("completion tokens")
    right.set_ylabel("share of samples (ended by then / still generating)")
    right.set_ylim(0, 1.02)
    for ax in (left, right):
        ax.grid(alpha=0.3)
    if several:
        causes = [Line2D([], [], color="black", linestyle=s, label=c) for c, s in CAUSE_STYLES.items()]
        groups = [Line2D([], [], color=palette(i % 10), label=str(names.get(n, n))) for i, n in enumerate(series)]
        fig.legend(handles=causes, loc="lower left", bbox_to_anchor=(0.02, 0.0), fontsize=8, frameon=False,
                   title="cause (line style)", title_fontsize=8)
        fig.legend(handles=groups, loc="lower left", bbox_to_anchor=(0.3, 0.0), ncol=2, fontsize=8, frameon=False,
                   title="series (colour)", title_fontsize=8)
        fig.suptitle(title, fontsize=12)
        fig.tight_layout(rect=(0, 0.2, 1, 1))
    else:
        left.legend(fontsize=8)
        right.legend(fontsize=8)
        fig.suptitle(title, fontsize=12)
        fig.tight_layout()
    return fig
