"""PNG diverging heat map of a paired comparison (analyze.py compare --format png).

Rows are tiers, columns groups; each cell is coloured by the paired difference B - A
(blue: B better, red: A better, symmetric scale) and shows the difference and its
paired 95% interval. A cell decided after Holm's correction gets a thick black frame
and "B" or "A"; it only draws what resolver.analysis.compare computed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from resolver.plots.layout import wrap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["compare_figure"]

DPI = 100


def _grid(cells: list[dict[str, Any]]) -> tuple[list[Any], list[Any], dict[tuple[Any, Any], dict[str, Any]]]:
    tiers = list(dict.fromkeys(c["tier"] for c in cells))
    groups = list(dict.fromkeys(c["group"] for c in cells))
    index = {(c["tier"], c["group"]): c for c in cells}
    return tiers, groups, index


def compare_figure(result: dict, label_a: str, label_b: str, width: int = 1200) -> Figure:
    """The heat map of result["cells"] with the overall difference in the title."""
    tiers, groups, index = _grid(result["cells"])
    values = np.array([[index[(t, g)]["diff"] if (t, g) in index else np.nan for g in groups] for t in tiers])
    limit = max(0.05, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.05)
    height = 170 + 70 * len(tiers)
    fig, ax = plt.subplots(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
    for i, tier in enumerate(tiers):
        for j, group in enumerate(groups):
            cell = index.get((tier, group))
            if cell is None:
                continue
            low, high = cell["paired"]
            mark = {"b": "B ", "a": "A "}.get(cell["verdict"], "")
            strong = abs(cell["diff"]) > 0.6 * limit
            ax.text(j, i, f"{mark}{cell['diff']:+.3f}\n[{low:+.3f}, {high:+.3f}]", ha="center", va="center",
                    fontsize=7, color="white" if strong else "black",
                    fontweight="bold" if cell["verdict"] != "none" else "normal")
            if cell["verdict"] != "none":
                ax.add_patch(Rectangle((j - 0.48, i - 0.46), 0.96, 0.92, fill=False, lw=2.2, color="black"))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([str(g) for g in groups], fontsize=8, rotation=30 if len(groups) > 8 else 0, ha="right"
                       if len(groups) > 8 else "center")
    ax.set_yticks(range(len(tiers)))
    ax.set_yticklabels(tiers, fontsize=9)
    bar = fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01)
    bar.set_label("B - A (paired)", fontsize=8)
    bar.ax.tick_params(labelsize=8)
    overall = result["overall"]
    verdict = {"b": "B better", "a": "A better", "none": "no evidence"}[overall["verdict"]]
    title = (f"B = {label_b} minus A = {label_a} (mode {result['mode']}): overall {overall['diff']:+.3f} "
             f"[{overall['paired'][0]:+.3f}, {overall['paired'][1]:+.3f}], {verdict}. "
             f"Framed cells are decided (Holm, family of {result['family']}).")
    fig.suptitle(wrap(title, max(40, int(width / 11))), fontsize=10, fontweight="bold")
    return fig
