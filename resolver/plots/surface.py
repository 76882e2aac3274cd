"""3-D accuracy surfaces: rows = views, columns = evals."""
from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from resolver.plots.ticks import tick_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from resolver.analysis import TaskView

DPI = 100
CMAP = "RdYlGn"


def _axis_positions(values: list[Any]) -> tuple[list[Any], dict[Any, float], bool]:
    """Sorted distinct values and their plotting positions (numbers keep their scale)."""
    distinct = sorted(set(values), key=lambda v: (not isinstance(v, (int, float)), v if isinstance(v, (int, float)) else str(v)))
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) for v in distinct)
    positions = {v: (float(v) if numeric else float(i)) for i, v in enumerate(distinct)}
    return distinct, positions, numeric


def surface_figure(panels: list[tuple[TaskView, pd.DataFrame]], evals: list[str], labels: dict, title: str,
                   cell: int = 420) -> Figure:
    """`panels`: list of (view, table); one row per view, one column per eval id."""
    rows, cols = max(1, len(panels)), max(1, len(evals))
    fig = plt.figure(figsize=(cols * cell / DPI, rows * cell / DPI + 0.6), dpi=DPI)
    mappable = None
    for r, (view, table) in enumerate(panels):
        x_dim, y_dim = view.dims
        for c, eval_id in enumerate(evals):
            ax = fig.add_subplot(rows, cols, r * cols + c + 1, projection="3d")
            part = table[table["eval_id"] == eval_id] if len(table) else table
            ax.set_title(f"{view.ident}\n{textwrap.fill(str(labels.get(eval_id, eval_id)), 32)}", fontsize=9)
            if part.empty:
                ax.text2D(0.3, 0.5, "no points", transform=ax.transAxes)
                continue
            xs, xpos, _ = _axis_positions(part[x_dim].tolist())
            ys, ypos, _ = _axis_positions(part[y_dim].tolist())
            grid = np.full((len(ys), len(xs)), np.nan)
            for xv, yv, center in zip(part[x_dim], part[y_dim], part["center"]):
                grid[ys.index(yv), xs.index(xv)] = center
            gx, gy = np.meshgrid([xpos[v] for v in xs], [ypos[v] for v in ys])
            if len(xs) >= 2 and len(ys) >= 2:
                mappable = ax.plot_surface(gx, gy, np.ma.masked_invalid(grid), cmap=CMAP, vmin=0, vmax=1,
                                           edgecolor="grey", linewidth=0.3, alpha=0.9)
            mappable = ax.scatter(gx.ravel(), gy.ravel(), grid.ravel(), c=grid.ravel(), cmap=CMAP,
                                  vmin=0, vmax=1, s=18, depthshade=False)
            ax.set_xticks([xpos[v] for v in xs])
            ax.set_xticklabels([tick_text(v) for v in xs], fontsize=7)
            ax.set_yticks([ypos[v] for v in ys])
            ax.set_yticklabels([tick_text(v) for v in ys], fontsize=7)
            ax.set_xlabel(x_dim, fontsize=8)
            ax.set_ylabel(y_dim, fontsize=8)
            ax.set_zlim(0, 1)
            ax.set_zlabel("accuracy", fontsize=8)
            ax.view_init(elev=25, azim=-135)
    fig.subplots_adjust(left=0.03, right=0.86, bottom=0.04, top=0.84 if rows == 1 else 0.92, wspace=0.12, hspace=0.2)
    if mappable is not None:
        fig.colorbar(mappable, ax=fig.axes, shrink=0.6, pad=0.02, label="accuracy (guess-corrected)")
    fig.suptitle(title, fontsize=12)
    return fig
