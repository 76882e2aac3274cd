"""Rank aggregation across facets (analyze.py rank; docs/analyze.md, our design).

Cluster the series within each facet; a series' position in a facet is the best
(lowest) rank of any cluster it belongs to; its penalty is the sum of positions over
all facets; lower is better. A series absent from any facet gets no total: missing
data invalidates the row (README.md) instead of flattering it. Below-chance series are
treated as in cluster: interval [0, 0], tied with each other at the bottom.
"""
from __future__ import annotations

import pandas as pd

from resolver import stats
from resolver.analysis.cluster import best_positions, compute_clusters
from resolver.analysis.skill import NO_SKILL_NOTE, marked, skill_evidence, skilled_first_key
from resolver.core import markdown_table


def compute_rank(agg: pd.DataFrame, series: str, facet: str | None, mode: str = stats.DEFAULT_MODE) -> dict:
    """{"facets": [facet values], "rows": [{name, positions {facet: rank|None}, total|None, rank|None}]}.

    Rows with a total come first (ascending total, ties share a rank), then the
    invalidated rows by name; within each, series without evidence of skill above
    guessing (resolver.analysis.skill) come after those with it.
    """
    sections = compute_clusters(agg, series, facet, mode)
    positions = best_positions(sections)
    facets = [section["facet"] for section in sections]
    names = list(dict.fromkeys(row["name"] for section in sections for row in section["series"]))
    rows = []
    for name in names:
        per_facet = {f: positions[f].get(name) for f in facets}
        complete = all(v is not None for v in per_facet.values())
        rows.append({"name": name, "positions": per_facet,
                     "total": sum(per_facet.values()) if complete else None,
                     "missing": [f for f, v in per_facet.items() if v is None]})
    evidence = skill_evidence(agg, series)
    for row in rows:
        row["skill_evidence"] = evidence.get(row["name"], False)
    # series without evidence of skill above guessing come after all others (docs/statistics.md)
    ranked = sorted((r for r in rows if r["total"] is not None),
                    key=lambda r: (skilled_first_key(r["skill_evidence"]), r["total"], str(r["name"])))
    invalid = sorted((r for r in rows if r["total"] is None),
                     key=lambda r: (skilled_first_key(r["skill_evidence"]), str(r["name"])))
    previous, place = None, 0
    for i, row in enumerate(ranked, start=1):
        if (row["skill_evidence"], row["total"]) != previous:
            place, previous = i, (row["skill_evidence"], row["total"])
        row["rank"] = place
    for row in invalid:
        row["rank"] = None
    return {"facets": facets, "rows": ranked + invalid}


def _display(series: str, labels: dict, name: object) -> str:
    return f"{labels.get(name, name)} [{name}]" if series == "eval_id" else str(name)


def rank_markdown(result: dict, series: str, facet: str | None, mode: str, labels: dict) -> str:
    """Leaderboard: rank, series, best cluster position per facet, total penalty."""
    facets = result["facets"]
    headers = ["Rank", series] + [str(f) if f is not None else "all" for f in facets] + ["Total"]
    rows = []
    for row in result["rows"]:
        rows.append([row["rank"] if row["rank"] is not None else "—",
                     marked(_display(series, labels, row["name"]), row.get("skill_evidence", True))]
                    + [row["positions"][f] if row["positions"][f] is not None else "—" for f in facets]
                    + [row["total"] if row["total"] is not None else "—"])
    title = f"# Rank of {series} across {facet or 'all data'} (mode {mode})"
    note = ("Each cell is the best cluster position in that facet (1 = top cluster); Total sums them, lower is "
            "better; a row missing any facet gets no total.")
    if not all(row.get("skill_evidence", True) for row in result["rows"]):
        note += "\n\n" + NO_SKILL_NOTE
    return f"{title}\n\n{note}\n\n" + markdown_table(rows, headers, ["r", "l"] + ["r"] * (len(facets) + 1)) + "\n"


def rank_json(result: dict, series: str, facet: str | None, mode: str, labels: dict) -> dict:
    rows = []
    for row in result["rows"]:
        entry = dict(row)
        entry["positions"] = [{"facet": f, "position": p} for f, p in row["positions"].items()]
        if series == "eval_id":
            entry["label"] = labels.get(row["name"], row["name"])
        rows.append(entry)
    return {"group_by": series, "facet_by": facet, "mode": mode, "facets": result["facets"], "rows": rows}
