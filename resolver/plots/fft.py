"""FFT grids: rows = 1-D views, columns = evals, one spectrum per group_by value."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
import numpy as np  # noqa: E402

from resolver.probe.fft import FREQUENCIES  # noqa: E402

DPI = 100


def _tick(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _short(dimension: str) -> str:
    return dimension.split(".", 1)[-1]


def fft_figure(table, views: list, evals: list, labels: dict, title: str, tokenizer_names: dict,
               cell_w: int = 520, cell_h: int = 340):
    """Each cell: mean magnitude spectrum per value of the view's dimension, coloured by that value."""
    rows, cols = max(1, len(views)), max(1, len(evals))
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(cols * cell_w / DPI, rows * cell_h / DPI + 0.5),
                             dpi=DPI)
    for r, view in enumerate(views):
        part = table[(table["base_task"] == view.base_task) & (table["view"] == view.view)] if len(table) else table
        values = sorted(part["value"].unique().tolist(), key=lambda v: (isinstance(v, str), v)) if len(part) else []
        numeric = bool(values) and all(isinstance(v, (int, float, np.integer, np.floating)) for v in values)
        cmap = plt.get_cmap("viridis")
        norm = Normalize(min(values), max(values) if max(values) > min(values) else min(values) + 1) if numeric else None
        for c, eval_id in enumerate(evals):
            ax = axes[r][c]
            cell = part[part["eval_id"] == eval_id] if len(part) else part
            for i, row in enumerate(cell.itertuples(index=False)):
                colour = cmap(norm(row.value)) if numeric else cmap(i / max(len(values) - 1, 1))
                # bin 0 is the mean, removed before the transform: leave it out of a log plot
                ax.plot(FREQUENCIES[1:], row.spectrum[1:], color=colour, linewidth=1.2,
                        label=f"{_short(row.dimension)}={_tick(row.value)} ({row.samples} prompts)")
            ax.set_title(f"{view.ident} — {labels.get(eval_id, eval_id)}\ntokenizer: "
                         f"{tokenizer_names.get(eval_id, '?')}", fontsize=9)
            ax.set_xlabel("frequency (cycles per token)")
            ax.set_ylabel("mean |FFT| of token ids")
            ax.set_yscale("log")
            ax.grid(alpha=0.3, which="both")
            if len(cell):
                ax.legend(fontsize=7, title=view.dims[0], title_fontsize=7)
            else:
                ax.text(0.35, 0.5, "no points", transform=ax.transAxes)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig
