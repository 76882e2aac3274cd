"""Capacity figures: logistic frontiers and effective capacity against token budget."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from resolver.analysis.capacity import TARGET_DIM, logistic  # noqa: E402

DPI = 100


def _facets(frame, facet_by):
    return sorted(frame[facet_by].dropna().unique().tolist(), key=str) if facet_by else [None]


def _series_name(row, keys, labels) -> str:
    parts = [labels.get(row["eval_id"], row["eval_id"])]
    parts += [f"{k}={row[k]}" for k in keys if k != "eval_id"]
    return ", ".join(str(p) for p in parts)


def frontier_figure(curve, fits, size_param: str, keys: list, facet_by: str | None, labels: dict,
                    mode: str, width: int = 1200, height: int = 520):
    """Accuracy vs size with fitted logistic per series; dotted line at each x50."""
    facets = _facets(curve, facet_by)
    fig, axes = plt.subplots(1, len(facets), squeeze=False, sharey=True,
                             figsize=(width / DPI, height / DPI), dpi=DPI)
    colours = plt.get_cmap("tab10")
    series_keys = [k for k in keys if k != facet_by]
    for c, facet in enumerate(facets):
        ax = axes[0][c]
        part = curve if facet is None else curve[curve[facet_by] == facet]
        fit_part = fits if facet is None else fits[fits[facet_by] == facet]
        for i, (key, rows) in enumerate(part.groupby(series_keys, sort=True)):
            key = key if isinstance(key, tuple) else (key,)
            colour = colours(i % 10)
            name = _series_name(dict(zip(series_keys, key)), series_keys, labels)
            ax.errorbar(rows[size_param], rows["center"], yerr=rows["margin"], fmt="o", color=colour,
                        capsize=3, markersize=4)
            match = fit_part
            for k, v in zip(series_keys, key):
                match = match[match[k] == v]
            if len(match) and bool(match.iloc[0]["fitted"]):
                fit = match.iloc[0]
                xs = np.geomspace(rows[size_param].min(), rows[size_param].max(), 100)
                ax.plot(xs, logistic(np.log(xs), np.log(fit["x50"]), fit["slope"]), color=colour,
                        label=f"{name}: 50% at {fit['x50']:.3g}")
                ax.axvline(fit["x50"], color=colour, linestyle=":", linewidth=1)
            else:
                ax.plot(rows[size_param], rows["center"], color=colour, alpha=0.5, label=f"{name}: no fit")
        ax.axhline(0.5, color="grey", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel(size_param)
        ax.set_title(f"{facet_by}={facet}" if facet is not None else "all points", fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="lower left")
    axes[0][0].set_ylabel(f"accuracy ({mode}, guess-corrected)")
    fig.suptitle(f"Capacity frontier: accuracy vs {size_param} with logistic fit", fontsize=12)
    fig.tight_layout()
    return fig


def peak_figure(table, summary, keys: list, facet_by: str | None, labels: dict, threshold: float,
                width: int = 1200, height: int = 520):
    """Effective capacity (accuracy x size) vs target_tokens; star at each series' peak."""
    facets = _facets(table, facet_by)
    fig, axes = plt.subplots(1, len(facets), squeeze=False, sharey=True,
                             figsize=(width / DPI, height / DPI), dpi=DPI)
    colours = plt.get_cmap("tab10")
    series_keys = [k for k in keys if k != facet_by]
    for c, facet in enumerate(facets):
        ax = axes[0][c]
        part = table if facet is None else table[table[facet_by] == facet]
        for i, (key, rows) in enumerate(part.groupby(series_keys, sort=True)):
            key = key if isinstance(key, tuple) else (key,)
            colour = colours(i % 10)
            name = _series_name(dict(zip(series_keys, key)), series_keys, labels)
            ax.plot(rows[TARGET_DIM], rows["effective_capacity"], marker="o", color=colour, label=name)
            best = rows.loc[rows["effective_capacity"].idxmax()]
            ax.scatter([best[TARGET_DIM]], [best["effective_capacity"]], marker="*", s=250, color=colour,
                       edgecolor="black", zorder=5)
            below = rows[~rows["above_threshold"]]
            ax.scatter(below[TARGET_DIM], below["effective_capacity"], marker="x", color="black", zorder=6)
        ax.set_xscale("log")
        ax.set_xlabel("manifold.target_tokens (prompt budget)")
        ax.set_title(f"{facet_by}={facet}" if facet is not None else "all points", fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("effective capacity =\naccuracy (95% lower bound) × size")
    fig.suptitle(f"Peak capacity vs token budget (★ peak, × accuracy below {threshold:.0%})", fontsize=12)
    fig.tight_layout()
    return fig
