"""Compression scatter grids (analyze.py compression)."""
from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from resolver.analysis import LOOP_RATIO, PANELS

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

DPI = 100


def compression_figure(samples: pd.DataFrame, facet_by: str | None, group_by: str | None, title: str,
                       width: int = 1400, row_height: int = 380) -> Figure:
    """Rows = facet values, columns = correct / incorrect / truncated; colour = group value.

    x = completion tokens, y = gzip size of the answer in bytes (both log scale). The
    dotted line is gzip size = LOOP_RATIO x the typical bytes of that many tokens:
    points below it at the right are repetition loops.
    """
    facets = sorted(samples[facet_by].dropna().unique().tolist(), key=_sort_key) if facet_by else [None]
    groups = sorted(samples[group_by].dropna().unique().tolist(), key=_sort_key) if group_by else [None]
    colours = plt.get_cmap("viridis" if len(groups) > 10 else "tab10")
    fig, axes = plt.subplots(len(facets), len(PANELS), squeeze=False, sharex=True, sharey=True,
                             figsize=(width / DPI, max(2, len(facets)) * row_height / DPI), dpi=DPI)
    bytes_per_token = _bytes_per_token(samples)
    xmax = max(float(samples["tokens"].max()), 10.0)
    for r, facet in enumerate(facets):
        rows = samples if facet is None else samples[samples[facet_by] == facet]
        for c, panel in enumerate(PANELS):
            ax = axes[r][c]
            cell = rows[rows["panel"] == panel]
            for k, group in enumerate(groups):
                part = cell if group is None else cell[cell[group_by] == group]
                part = part[(part["tokens"] > 0) & (part["compressed_bytes"] > 0)]
                if part.empty:
                    continue
                colour = colours(k / max(len(groups) - 1, 1)) if len(groups) > 10 else colours(k % 10)
                ax.scatter(part["tokens"], part["compressed_bytes"], s=10, alpha=0.6, color=colour,
                           label=str(group) if group is not None else "samples")
            xs = np.geomspace(10, xmax, 50)
            ax.plot(xs, xs * bytes_per_token * LOOP_RATIO, ":", color="black", linewidth=1,
                    label=f"{LOOP_RATIO:.0%} of typical size")
            ax.set_xscale("log")
            ax.set_yscale("log")
            loops = int(cell["loop_like"].sum())
            if r == 0:
                ax.set_title(panel, fontsize=11, fontweight="bold")
            ax.text(0.02, 0.97, f"n={len(cell)}, loop-like={loops}", transform=ax.transAxes, va="top", fontsize=8,
                    bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none"})
            ax.grid(alpha=0.3, which="both")
            if r == len(facets) - 1:
                ax.set_xlabel("completion tokens")
            if c == 0:
                row_name = "" if facet is None else textwrap.fill(f"{facet_by}={facet}", 34) + "\n"
                ax.set_ylabel(f"{row_name}gzip size (bytes)", fontsize=9)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for row in axes:
        for ax in row:
            h, lab = ax.get_legend_handles_labels()
            for handle, label in zip(h, lab):
                if label not in labels:
                    handles.append(handle)
                    labels.append(label)
    fig.legend(handles, labels, loc="upper right", fontsize=8, title=group_by or None, markerscale=2)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0, 0, 0.88, 0.96))
    return fig


def _bytes_per_token(samples: pd.DataFrame) -> float:
    tokens = samples["tokens"].sum()
    return float(samples["answer_bytes"].sum() / tokens) if tokens else 4.0


def _sort_key(value: object) -> tuple[int, object, str]:
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))
