"""The paired-interval coverage figure of docs/statistics.md (python -m tests.studies.paired_coverage
--figure FILE): it only draws the table tests/studies/paired_coverage.py computed.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from tests.studies.paired_coverage import SIZES, WIDTH_SKILLS

__all__ = ["paired_coverage_figure"]


def paired_coverage_figure(table):
    """Two panels: coverage of both intervals per configuration, and the paired / unpaired
    width ratio against rho (the sqrt(1 - rho) reference dashed)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=100, layout="constrained")
    jitter = {"low": -0.04, "medium": 0.0, "high": 0.04}
    for column, marker, colour in (("unpaired", "o", "tab:grey"), ("paired", "s", "tab:blue")):
        x = table["rho"] + table["size"].map(jitter) + (0.012 if column == "paired" else -0.012)
        left.scatter(x, 100 * table[column], s=8, marker=marker, color=colour, alpha=0.5, label=f"{column} interval")
    left.axhline(95, color="black", lw=0.8)
    left.axhline(93, color="tab:red", lw=0.8, ls="--", label="93% bar")
    left.set(xlabel="per-problem correlation rho (sizes low / medium / high side by side)",
             ylabel="coverage of the true B - A (%)", title="Coverage, every mode and configuration")
    left.set_ylim(90, 100.5)
    left.legend(fontsize=8, loc="lower left")
    judged = table[[(a, b) in set(WIDTH_SKILLS) for a, b in zip(table["skill_a"], table["skill_b"])]]
    for size, colour in zip(SIZES, ("tab:orange", "tab:green", "tab:purple")):
        part = judged[judged["size"] == size]
        right.scatter(part["rho"] + jitter[size], part["ratio"], s=10, color=colour, alpha=0.6, label=f"{size} precision")
    grid = np.linspace(0, 0.65, 50)
    right.plot(grid, np.sqrt(1 - grid), "k--", lw=0.8, label="sqrt(1 - rho)")
    for rho, bar in ((0.0, 1.05), (0.3, 0.88), (0.6, 0.70)):
        right.hlines(bar, rho - 0.06, rho + 0.06, color="tab:red", lw=1.5)
    right.set(xlabel="per-problem correlation rho", ylabel="median width: paired / unpaired",
              title="Paired interval width (red: the bars)")
    right.legend(fontsize=8, loc="lower left")
    return fig
