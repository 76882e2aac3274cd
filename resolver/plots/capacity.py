"""Capacity figures: logistic frontiers and effective capacity against token budget."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from resolver.analysis import PROMPT_BUDGET, TARGET_DIM, logistic

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import ColorType

DPI = 100


def _facets(frame: pd.DataFrame, facet_by: str | None) -> list[Any]:
    return sorted(frame[facet_by].dropna().unique().tolist(), key=str) if facet_by else [None]


def _series_name(row: Mapping[str, Any], keys: list[str], labels: dict) -> str:
    parts = [labels.get(row["eval_id"], row["eval_id"])]
    parts += [f"{k}={row[k]}" for k in keys if k != "eval_id"]
    return ", ".join(str(p) for p in parts)


def _colours(frame: pd.DataFrame, series_keys: list[str]) -> dict[tuple, ColorType]:
    """One colour per series, the same in every facet."""
    keys = sorted({tuple(r) for r in frame[series_keys].itertuples(index=False, name=None)}, key=str)
    cmap = plt.get_cmap("tab10" if len(keys) <= 10 else "tab20")
    return {k: cmap(i % cmap.N) for i, k in enumerate(keys)}


def _size_axis(ax: Axes, sizes: pd.Series, label: str) -> None:
    """Log axis with plain-number ticks at the measured sizes."""
    ax.set_xscale("log")
    ticks = sorted(set(float(v) for v in sizes))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(label)


def _shared_legend(fig: Figure, colours: dict[tuple, ColorType], series_keys: list[str], labels: dict) -> None:
    handles = [Line2D([], [], color=c, marker="o", label=_series_name(dict(zip(series_keys, k)), series_keys, labels))
               for k, c in colours.items()]
    fig.legend(handles=handles, loc="lower center", ncol=min(3, len(handles)), fontsize=8, frameon=False)


def _fit_row(fits: pd.DataFrame, series_keys: list[str], key: tuple) -> pd.Series | None:
    match = fits
    for k, v in zip(series_keys, key):
        match = match[match[k] == v]
    return match.iloc[0] if len(match) else None


def _panels(frame: pd.DataFrame, keys: list, facet_by: str | None, width: int,
            height: int) -> tuple[Figure, dict[tuple, ColorType], list[str], list[tuple]]:
    """One panel per facet value, titled and gridded; each with its series (key, colour, rows),
    coloured alike in every panel. Returns (fig, colours, series_keys, panels)."""
    facets = _facets(frame, facet_by)
    series_keys = [k for k in keys if k != facet_by]
    colours = _colours(frame, series_keys)
    fig, axes = plt.subplots(1, len(facets), squeeze=False, sharey=True,
                             figsize=(width / DPI, height / DPI), dpi=DPI)
    panels = []
    for ax, facet in zip(axes[0], facets):
        part = frame if facet is None else frame[frame[facet_by] == facet]
        series = []
        for key, rows in part.groupby(series_keys, sort=True):
            key = key if isinstance(key, tuple) else (key,)
            series.append((key, colours[key], rows))
        ax.set_title(f"{facet_by}={facet}" if facet is not None else "all points", fontsize=10)
        ax.grid(alpha=0.3)
        panels.append((ax, facet, part, series))
    return fig, colours, series_keys, panels


def _finish(fig: Figure, panels: list[tuple], ylabel: str, title: str, colours: dict[tuple, ColorType],
            series_keys: list[str], labels: dict) -> Figure:
    panels[0][0].set_ylabel(ylabel)
    fig.suptitle(title, fontsize=12)
    _shared_legend(fig, colours, series_keys, labels)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


def frontier_figure(curve: pd.DataFrame, fits: pd.DataFrame, size_param: str, keys: list, facet_by: str | None,
                    labels: dict, mode: str, width: int = 1200, height: int = 560) -> Figure:
    """Accuracy vs size with fitted logistic per series; dotted line at each x50 inside the data."""
    fig, colours, series_keys, panels = _panels(curve, keys, facet_by, width, height)
    for ax, facet, part, series in panels:
        fit_part = fits if facet is None else fits[fits[facet_by] == facet]
        for key, colour, rows in series:
            ax.errorbar(rows[size_param], rows["center"], yerr=rows["margin"], fmt="o", color=colour,
                        capsize=3, markersize=4)
            fit = _fit_row(fit_part, series_keys, key)
            lo, hi = rows[size_param].min(), rows[size_param].max()
            if fit is not None and bool(fit["fitted"]):
                xs = np.geomspace(lo, hi, 100)
                inside = lo <= fit["x50"] <= hi
                note = f"50% at {fit['x50']:.3g}" if inside else \
                    (f"50% beyond {hi:g}" if fit["x50"] > hi else f"50% below {lo:g}")
                ax.plot(xs, logistic(np.log(xs), np.log(fit["x50"]), fit["slope"]), color=colour, label=note)
                if inside:
                    ax.axvline(fit["x50"], color=colour, linestyle=":", linewidth=1)
            else:
                ax.plot(rows[size_param], rows["center"], color=colour, alpha=0.4, linestyle="--",
                        label=f"no fit ({len(rows)} sizes)")
        ax.axhline(0.5, color="grey", linewidth=0.8)
        _size_axis(ax, part[size_param], size_param)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7, loc="lower left")
    return _finish(fig, panels, f"accuracy ({mode}, guess-corrected)",
                   f"Capacity frontier: accuracy vs {size_param} with logistic fit", colours, series_keys, labels)


def peak_figure(table: pd.DataFrame, summary: pd.DataFrame, keys: list, facet_by: str | None, labels: dict,
                threshold: float, width: int = 1200, height: int = 560) -> Figure:
    """Effective capacity (accuracy lower bound x size) vs the token budget; star at each series' peak.

    The budget is the table's target_tokens column, or the derived prompt_budget (docs/analysis.md)."""
    budget = TARGET_DIM if TARGET_DIM in table.columns else PROMPT_BUDGET
    fig, colours, series_keys, panels = _panels(table, keys, facet_by, width, height)
    for ax, _, part, series in panels:
        for _, colour, rows in series:
            ax.plot(rows[budget], rows["effective_capacity"], marker="o", color=colour)
            best = rows.nlargest(1, "effective_capacity").iloc[0]
            ax.scatter([best[budget]], [best["effective_capacity"]], marker="*", s=250, color=colour,
                       edgecolor="black", zorder=5)
            below = rows[~rows["above_threshold"]]
            ax.scatter(below[budget], below["effective_capacity"], marker="x", color="black", zorder=6)
        _size_axis(ax, part[budget], "manifold.target_tokens (prompt budget)" if budget == TARGET_DIM else
                   "prompt budget in tokens (power of two at or above the mean prompt)")
    return _finish(fig, panels, "effective capacity =\naccuracy (95% lower bound) × size",
                   f"Peak capacity vs token budget (★ peak, × accuracy below {threshold:.0%})",
                   colours, series_keys, labels)
