"""PNG of cluster results (analyze.py cluster --format png): one panel per facet with
each series' 95% interval (best at the top), the shared range of every cluster as
a shaded band, and a membership grid on the right (a series may be in several)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import colormaps

from resolver.analysis import memberships

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure

DPI = 100
ROW_INCHES = 0.28
PANEL_EXTRA_INCHES = 0.9


def cluster_figure(sections: list, name: Callable[[Any], str], title: str, width: int = 1200,
                   facet: str | None = None) -> Figure:
    """A Figure with one row of panels per facet section."""
    heights = [max(len(s["series"]), 1) * ROW_INCHES + PANEL_EXTRA_INCHES for s in sections]
    fig_height = sum(heights) + 0.8
    fig, axes = plt.subplots(len(sections), 2, figsize=(width / DPI, fig_height), dpi=DPI, squeeze=False,
                             gridspec_kw={"height_ratios": heights, "width_ratios": [4, 1]})
    palette = colormaps["tab10"]
    for (ax, grid), section in zip(axes, sections):
        _interval_panel(ax, section, name, palette)
        _membership_panel(grid, section, palette)
        ax.set_title(f"{facet} = {section['facet']}" if facet else "all data pooled", fontsize=10, loc="left")
    fig.suptitle(title, fontsize=12, fontweight="bold", y=1 - 0.12 / fig_height, va="top")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig_height))
    return fig


def _interval_panel(ax: Axes, section: dict[str, Any], name: Callable[[Any], str], palette: Colormap) -> None:
    rows = section["series"]
    ys = range(len(rows))
    for cluster in section["clusters"]:
        color = palette((cluster["rank"] - 1) % 10)
        ax.axvspan(cluster["low"], cluster["high"], color=color, alpha=0.15, linewidth=0)
        if cluster["high"] - cluster["low"] < 0.004:  # intervals that only touch: keep the band visible
            ax.axvline((cluster["low"] + cluster["high"]) / 2, color=color, alpha=0.6, linewidth=2)
    for y, row in zip(ys, rows):
        ax.errorbar(row["center"], y, xerr=row["margin"], fmt="o", color="black", markersize=4, capsize=3, linewidth=1.2)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([name(r["name"]) + ("  (≤ chance)" if r.get("below_chance") else "") for r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("accuracy (center ± 95% margin); shaded: range shared by a cluster", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="x", labelsize=8)


def _membership_panel(ax: Axes, section: dict[str, Any], palette: Colormap) -> None:
    rows = section["series"]
    member_of = memberships(section["clusters"])
    clusters = [c["rank"] for c in section["clusters"]]
    for y, row in enumerate(rows):
        for rank in member_of.get(row["name"], []):
            ax.scatter(clusters.index(rank), y, s=60, color=palette((rank - 1) % 10), edgecolor="black", linewidth=0.5)
    ax.set_xticks(range(len(clusters)))
    ax.set_xticklabels([str(c) for c in clusters], fontsize=8)
    ax.set_xlim(-0.6, max(len(clusters), 1) - 0.4)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks([])
    ax.set_xlabel("cluster (1 = best)", fontsize=8)
    ax.grid(alpha=0.3)
