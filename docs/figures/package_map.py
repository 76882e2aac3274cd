"""Draw docs/figures/package_map.png: resolver's packages as layers, from the real imports.

    .venv/bin/python docs/figures/package_map.py

Each package sits on its layer in docs/architecture.md's "Layers" list; the arrows are
every resolver import between packages, wherever written (tests/test_layout.py counts the
same graph and fails on an arrow that does not point down), so the picture cannot drift
from the code: re-run this after adding a package.
"""
from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import networkx as nx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from test_layout import documented_layers, package_graph  # noqa: E402

CONCERN = {"core": "errors, inputs, bootstrap", "tasks": "generators", "grading": "answers, kinds",
           "config": "configs, prompts, tokenizers", "records": "NDJSON schema, run folders", "client": "HTTP, retries, cache",
           "stats": "intervals, scores", "pointsdb": "DuckDB schema, I/O", "catalog": "datasets, cohorts",
           "run": "runner modes", "ingest": "evaluate.py, raw records", "share": "data.py", "analysis": "analyze.py",
           "probe": "probe.py", "audit": "shortcut audit", "plots": "PNG figures", "web": "Dash apps",
           "sim": "simulator, r12 cohorts", "llamacpp": "llama.cpp server",
           "cli": "the commands: argv, output, exit codes"}


def main() -> None:
    graph = package_graph()
    rows = {level: names for level, names in enumerate(documented_layers(), start=1)}
    pos = {}
    for level, nodes in rows.items():
        for i, node in enumerate(sorted(nodes)):
            pos[node] = (i - (len(nodes) - 1) / 2, level)
    fig, ax = plt.subplots(figsize=(13, 1.6 * (len(rows) + 1)))
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="0.75", arrows=True, arrowsize=8, width=0.7,
                           node_size=5200, connectionstyle="arc3,rad=0.05")
    for node, (x, y) in pos.items():
        ax.text(x, y, f"{node}\n{CONCERN.get(node, '')}", ha="center", va="center", fontsize=8.5,
                bbox={"boxstyle": "round,pad=0.45", "facecolor": "#e8f0fb", "edgecolor": "#4a6fa5"})
    for level in rows:
        ax.text(min(x for x, _ in pos.values()) - 1.2, level, f"layer {level}", ha="right", va="center",
                fontsize=8, color="0.4")
    ax.set_title("resolver/: packages by layer (arrows: every import between packages, always downward)", fontsize=10)
    ax.axis("off")
    ax.margins(x=0.08, y=0.12)
    fig.tight_layout()
    out = REPO / "docs" / "figures" / "package_map.png"
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
