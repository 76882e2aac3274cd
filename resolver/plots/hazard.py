"""Hazard and cumulative-incidence figures (analyze.py hazard)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DPI = 100
CORRECT = "#2ca02c"
INCORRECT = "#d62728"


def hazard_figure(series: dict, title: str, bucket_size: int, width: int = 1200, height: int = 500):
    """Left: hazard per token bucket; right: cumulative incidence. Green correct, red incorrect.

    `series` maps a series name to a hazard table; several series differ by line style.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(width / DPI, height / DPI), dpi=DPI)
    styles = ["-", "--", ":", "-."]
    for i, (name, table) in enumerate(series.items()):
        if table.empty:
            continue
        style = styles[i % len(styles)]
        mid = (table["start"] + table["end"]) / 2
        suffix = "" if name == "all" else f" — {name}"
        left.plot(mid, table["hazard_correct"], style, color=CORRECT, marker="o", markersize=3,
                  label=f"ends correct{suffix}")
        left.plot(mid, table["hazard_incorrect"], style, color=INCORRECT, marker="o", markersize=3,
                  label=f"ends incorrect{suffix}")
        edges = np.concatenate([[0], table["end"].to_numpy()])
        right.step(edges, np.concatenate([[0], table["cif_correct"]]), style, where="post", color=CORRECT,
                   label=f"correct{suffix}")
        right.step(edges, np.concatenate([[0], table["cif_incorrect"]]), style, where="post", color=INCORRECT,
                   label=f"incorrect{suffix}")
        censored = table["censored"].sum()
        if censored:
            right.step(edges, np.concatenate([[1], table["survival"]]), style, where="post", color="grey",
                       label=f"still generating{suffix} ({censored} truncated = censored)")
    left.set_title(f"Hazard per {bucket_size}-token bucket")
    left.set_xlabel("completion tokens")
    left.set_ylabel("P(answer ends in bucket | still generating)")
    left.set_ylim(bottom=0)
    right.set_title("Cumulative incidence (competing risks)")
    right.set_xlabel("completion tokens")
    right.set_ylabel("share of samples ended by then")
    right.set_ylim(0, 1.02)
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig
