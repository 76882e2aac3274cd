"""The cost curve's arithmetic (bench_scale.py): growth exponents, the table and the plot.

Kept apart from the measuring so that tests/test_bench_scale.py can check it without
building a tree.
"""
from __future__ import annotations

import math
from pathlib import Path

# (key, column title, unit shown, limit at the largest size or None): the figures bench_scale.py measures
FIGURES = (
    ("records", "NDJSON records", "", None),
    ("ndjson_mb", "NDJSON", "MB", None),
    ("evaluate_s", "evaluate.py first build", "s", 1800.0),
    ("evaluate_cpu_s", "evaluate.py first build CPU", "s", None),
    ("evaluate_peak_mb", "evaluate.py peak RSS", "MB", None),
    ("incremental_s", "evaluate.py +1 eval", "s", 1800.0),
    ("incremental_cpu_s", "evaluate.py +1 eval CPU", "s", None),
    ("pointsdb_mb", "PointsDB", "MB", None),
    ("scores_s", "analyze scores", "s", 30.0),
    ("scores_cpu_s", "analyze scores CPU", "s", None),
    ("cluster_s", "analyze cluster", "s", 30.0),
    ("cluster_cpu_s", "analyze cluster CPU", "s", None),
    ("compare_s", "analyze compare", "s", 30.0),
    ("compare_cpu_s", "analyze compare CPU", "s", None),
    ("leaderboard_load_s", "leaderboard first page", "s", 2.0),
    ("leaderboard_filter_s", "leaderboard filter change", "s", 2.0),
    ("explorer_surface_s", "explorer first surface", "s", 2.0),
    ("explorer_revisit_s", "explorer revisit", "s", 2.0),
    ("explorer_floor_s", "plotly.js alone, same figures", "s", None),
    ("explorer_floor_revisit_s", "plotly.js alone, revisit", "s", None),
    ("footprint_mb", "study on disk", "MB", None),
)


def fit_exponent(sizes, values) -> float | None:
    """Slope of the least-squares line through (log size, log value): value ~ size**slope.

    None with fewer than two usable points (a missing or non-positive value is left out)."""
    points = [(math.log(n), math.log(v)) for n, v in zip(sizes, values) if v is not None and v > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def _cell(value) -> str:
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def table(rows: list) -> str:
    """Markdown: one line per figure, one column per size, then the fitted exponent and the limit.

    ``rows`` holds one dict per size with ``evals`` and the FIGURES keys (a missing key: "-")."""
    sizes = [row["evals"] for row in rows]
    head = "| figure | " + " | ".join(f"{n} evals" for n in sizes) + " | exponent | limit at the largest |"
    lines = [head, "|---|" + "---:|" * (len(sizes) + 2)]
    for key, title, unit, limit in FIGURES:
        values = [row.get(key) for row in rows]
        exponent = fit_exponent(sizes, values)
        name = f"{title} ({unit})" if unit else title
        verdict = "-"
        if limit is not None:
            last = values[-1]
            verdict = f"< {limit:g} {unit}: " + ("met" if last is not None and last < limit else "MISSED")
        lines.append(f"| {name} | " + " | ".join(_cell(v) for v in values)
                     + f" | {'-' if exponent is None else f'{exponent:.2f}'} | {verdict} |")
    return "\n".join(lines)


def plot(rows: list, path: Path) -> Path:
    """One log-log panel per figure against the number of evals, with its fitted line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}" if v < 1e5 else f"{v:,.0f}")   # 0.1, 2, 1000: no 10^k, no crowded minor labels

    sizes = [row["evals"] for row in rows]
    columns = 5
    count = len(FIGURES)
    fig, axes = plt.subplots((count + columns - 1) // columns, columns, figsize=(3.2 * columns, 2.6 * ((count + columns - 1) // columns)))
    for ax, (key, title, unit, limit) in zip(axes.flat, FIGURES):
        values = [row.get(key) for row in rows]
        shown = [(n, v) for n, v in zip(sizes, values) if v is not None and v > 0]
        ax.loglog([n for n, _ in shown], [v for _, v in shown], "o-", color="#1f77b4")
        exponent = fit_exponent(sizes, values)
        if exponent is not None:
            first_n, first_v = shown[0]
            ax.loglog([first_n, sizes[-1]], [first_v, first_v * sizes[-1] / first_n], ":", color="grey",
                      label="linear")
        if limit is not None:
            ax.axhline(limit, color="#d62728", linewidth=0.8, label="limit")
        ax.set_title(f"{title}" + (f" ({unit})" if unit else "") + ("" if exponent is None else f"\nexponent {exponent:.2f}"),
                     fontsize=8)
        ax.tick_params(labelsize=7)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(plain)
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("evals", fontsize=7)
    for ax in list(axes.flat)[count:]:
        ax.axis("off")
    axes.flat[2].legend(fontsize=6)      # evaluate's panel: the linear reference and the limit
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
