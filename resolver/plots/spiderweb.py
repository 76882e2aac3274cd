"""Static spiderweb (radar) and bar charts of one eval's profile across groups."""
from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 100
ACCURACY = "#1f77b4"
TOKENS = "#ff7f0e"
TRUNCATION = "#d62728"
BELOW_CHANCE = "#8b0000"
BELOW_CHANCE_MARK = "≤ chance"


def _title(rows: pd.DataFrame, group_by: str, mode: str) -> str:
    first = rows.iloc[0]
    return f"{first['label']} ({first['eval_id']}) — accuracy by {group_by}, {mode} 95% interval"


def _below(rows: pd.DataFrame) -> np.ndarray:
    if "below_chance" not in rows:
        return np.zeros(len(rows), dtype=bool)
    return rows["below_chance"].fillna(False).to_numpy(dtype=bool)


def _spoke(group: object, below: bool) -> str:
    return f"{group}\n({BELOW_CHANCE_MARK})" if below else str(group)


def radar_figure(rows: pd.DataFrame, group_by: str, mode: str, width: int, height: int, max_tokens: float) -> Figure:
    """Radar: accuracy line with its interval band, token overlay, truncation marks."""
    if len(rows) < 3:  # a radar needs three spokes; fewer groups read better as bars
        return bar_figure(rows, group_by, mode, width, height, max_tokens)
    fig = plt.figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    ax = fig.add_subplot(111, projection="polar")
    angles = np.linspace(0, 2 * np.pi, len(rows), endpoint=False)
    closed = np.append(angles, angles[0])

    def ring(values: pd.Series | np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return np.append(values, values[0])

    ax.fill_between(closed, ring(rows["low"]), ring(rows["high"]), color=ACCURACY, alpha=0.25,
                    label="95% interval")
    ax.plot(closed, ring(rows["center"]), color=ACCURACY, linewidth=2, marker="o", label="accuracy")
    ax.plot(closed, ring(rows["tokens_scaled"]), color=TOKENS, linestyle="--", linewidth=1.5,
            label=f"completion tokens (1.0 = {max_tokens:,.0f})")
    marked = rows["truncation_marked"].to_numpy()
    if marked.any():
        ax.scatter(angles[marked], rows["center"].to_numpy()[marked], s=120, marker="X", color=TRUNCATION,
                   zorder=5, label="truncation > 2%")
        for angle, row in zip(angles[marked], rows[marked].itertuples()):
            ax.annotate(f"{row.truncated_ratio:.0%} trunc.", (angle, row.center), textcoords="offset points",
                        xytext=(6, -12), color=TRUNCATION, fontsize=8)
    below = _below(rows)
    if below.any():
        ax.scatter(angles[below], np.zeros(int(below.sum())), s=90, marker="v", color=BELOW_CHANCE, zorder=6,
                   label=f"{BELOW_CHANCE_MARK} (below guessing level)")
    ax.set_xticks(angles)
    ax.set_xticklabels([_spoke(g, b) for g, b in zip(rows["group"], below)], fontsize=9)
    ax.tick_params(axis="x", pad=14)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.set_yticklabels(["25%", "50%", "75%", "100%"], fontsize=7, color="grey")
    ax.set_title(_title(rows, group_by, mode), fontsize=11, pad=22)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def bar_figure(rows: pd.DataFrame, group_by: str, mode: str, width: int, height: int, max_tokens: float) -> Figure:
    """Bars: accuracy with interval whiskers, mean tokens on a second axis, truncation marked."""
    fig, ax = plt.subplots(figsize=(width / DPI, height / DPI), dpi=DPI)
    x = np.arange(len(rows))
    center = rows["center"].to_numpy(dtype=float)
    ax.bar(x - 0.12, center, width=0.55, color=ACCURACY, alpha=0.85, label="accuracy")
    ax.errorbar(x - 0.12, center, yerr=rows["margin"].to_numpy(dtype=float), fmt="none", ecolor="black",
                capsize=4, label="95% interval")
    trunc = rows["truncated_ratio"].to_numpy(dtype=float)
    ax.bar(x + 0.28, trunc, width=0.2, color="white", edgecolor=TRUNCATION, hatch="//",
           label="truncated share")
    for xi, share in zip(x, trunc):
        if share > 0:
            ax.annotate(f"{share:.0%}", (xi + 0.28, share), textcoords="offset points", xytext=(0, 3),
                        ha="center", color=TRUNCATION, fontsize=8)
    below = _below(rows)
    for xi in x[below]:
        ax.annotate(BELOW_CHANCE_MARK, (xi - 0.12, 0.0), textcoords="offset points", xytext=(0, 4), ha="center",
                    color=BELOW_CHANCE, fontsize=8, fontweight="bold")
    ax.set_xticks(x)
    ax.set_xticklabels([_spoke(g, b) for g, b in zip(rows["group"], below)], rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"accuracy ({mode})")
    ax.set_xlabel(group_by)
    twin = ax.twinx()
    twin.plot(x, rows["tokens_mean"].to_numpy(dtype=float), color=TOKENS, marker="D", linestyle="--",
              label="mean completion tokens")
    twin.set_ylabel("mean completion tokens", color=TOKENS)
    twin.set_ylim(0, max(max_tokens, 1) * 1.1)
    handles = ax.get_legend_handles_labels()
    extra = twin.get_legend_handles_labels()
    ax.legend(handles[0] + extra[0], handles[1] + extra[1], loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=4, fontsize=8, frameon=False)
    ax.set_title(_title(rows, group_by, mode), fontsize=11)
    fig.tight_layout()
    return fig
