"""FFT grids: one panel per (1-D view entry, eval), one spectrum per group_by value.

A view entry is a view, or one facet of a view with ``facet_by``. With several evals
the columns are the evals (a row compares them on one view entry); with one eval the
panels fill a near-square grid (resolver.plots.layout). Legends sit right of their
panel, never over the curves; the title sits above every panel.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import Normalize

from resolver.plots.layout import grid_shape, wrap
from resolver.plots.ticks import tick_text
from resolver.probe import FREQUENCIES

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from resolver.analysis import TaskView

DPI = 100
TITLE_PX = 70           # the figure title's band above the grid
TITLE_CHARS = 52        # panel titles wrap at this many characters (fits the axes at 9 pt)


def _short(dimension: str) -> str:
    return dimension.removeprefix("params.")


def view_entries(table: pd.DataFrame, views: list[TaskView]) -> list[tuple[TaskView, str, pd.DataFrame]]:
    """[(view, facet name, rows of the table)] in view order, facets sorted; '' = no facet."""
    entries = []
    for view in views:
        part = table[(table["base_task"] == view.base_task) & (table["view"] == view.view)] if len(table) else table
        facets = sorted(part["facet"].unique().tolist()) if len(part) and "facet" in part else [""]
        for facet in facets or [""]:
            entries.append((view, facet, part[part["facet"] == facet] if facet and len(part) else part))
    return entries


def fft_figure(table: pd.DataFrame, views: list[TaskView], evals: list[str], labels: dict, title: str,
               tokenizer_names: dict, cell_w: int = 640, cell_h: int = 360) -> Figure:
    """Each panel: mean magnitude spectrum per value of the view's dimension, coloured by that value."""
    entries = view_entries(table, views)
    panels = [(entry, eval_id) for entry in entries for eval_id in evals]
    rows, cols = grid_shape(len(panels), len(evals))
    fig, axes = plt.subplots(rows, cols, squeeze=False, dpi=DPI, layout="constrained",
                             figsize=(cols * cell_w / DPI, (rows * cell_h + TITLE_PX) / DPI))
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, ((view, facet, part), eval_id) in zip(axes.flat, panels):
        _draw_panel(ax, view, facet, part, eval_id, labels, tokenizer_names)
    fig.suptitle(title, fontsize=13, fontweight="bold")
    return fig


def _draw_panel(ax: Axes, view: TaskView, facet: str, part: pd.DataFrame, eval_id: str, labels: dict,
                tokenizer_names: dict) -> None:
    values = sorted(part["value"].unique().tolist(), key=lambda v: (isinstance(v, str), v)) if len(part) else []
    numeric = bool(values) and all(isinstance(v, (int, float, np.integer, np.floating)) for v in values)
    cmap = plt.get_cmap("viridis")
    norm = Normalize(min(values), max(values) if max(values) > min(values) else min(values) + 1) if numeric else None
    cell = part[part["eval_id"] == eval_id] if len(part) else part
    row: Any        # pandas-stubs type itertuples' fields as scalars; `spectrum` holds an array
    for i, row in enumerate(cell.itertuples(index=False)):
        colour = cmap(norm(row.value)) if norm is not None else cmap(i / max(len(values) - 1, 1))
        # bin 0 is the mean, removed before the transform: leave it out of a log plot
        ax.plot(FREQUENCIES[1:], row.spectrum[1:], color=colour, linewidth=1.2,
                label=f"{tick_text(row.value)} ({row.samples})")
    heading = view.ident + (f" [{facet}]" if facet else "")
    ax.set_title(wrap(f"{heading} — {labels.get(eval_id, eval_id)} · tokenizer "
                      f"{tokenizer_names.get(eval_id, '?')}", TITLE_CHARS), fontsize=9)
    ax.set_xlabel("frequency (cycles per token)", fontsize=8)
    ax.set_ylabel("mean |FFT| of token ids", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    if len(cell):
        # outside the axes, right of the curves; constrained layout makes room for it
        ax.legend(fontsize=7, title=f"{_short(view.dims[0])} (prompts)", title_fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                  ncols=2 if len(cell) > 14 else 1)
    else:
        ax.text(0.5, 0.5, "no points", transform=ax.transAxes, ha="center", va="center")
