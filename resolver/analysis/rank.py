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
from resolver.analysis.outputs import FacetPosition, RankOutput, RankRow
from resolver.analysis.skill import NO_SKILL_NOTE, marked, skill_evidence, skilled_first_key
from resolver.core import markdown_table


def compute_rank(agg: pd.DataFrame, series: str, facet: str | None, mode: str = stats.DEFAULT_MODE) -> dict:
    """{"facets": [facet values], "rows": [RankRow dumps: name, positions [{facet, position|None}],
    total|None, missing, skill_evidence, rank|None]}.

    Rows with a total come first (ascending total, ties share a rank), then the
    invalidated rows by name; within each, series without evidence of skill above
    guessing (resolver.analysis.skill) come after those with it.
    """
    sections = compute_clusters(agg, series, facet, mode)
    positions = best_positions(sections)
    facets = [section["facet"] for section in sections]
    names = list(dict.fromkeys(row["name"] for section in sections for row in section["series"]))
    evidence = skill_evidence(agg, series)
    rows = []
    for name in names:
        per_facet = [FacetPosition(facet=f, position=positions[f].get(name)) for f in facets]
        found = [p.position for p in per_facet if p.position is not None]
        # ranked below, once the totals are known
        rows.append(RankRow(name=name, positions=per_facet, total=sum(found) if len(found) == len(facets) else None,
                            missing=[p.facet for p in per_facet if p.position is None],
                            skill_evidence=evidence.get(name, False), rank=None))
    # series without evidence of skill above guessing come after all others (docs/statistics.md)
    ranked = sorted((r for r in rows if r.total is not None),
                    key=lambda r: (skilled_first_key(r.skill_evidence), r.total, str(r.name)))
    invalid = sorted((r for r in rows if r.total is None), key=lambda r: (skilled_first_key(r.skill_evidence), str(r.name)))
    previous: tuple | None = None
    place = 0
    for i, row in enumerate(ranked, start=1):
        if (row.skill_evidence, row.total) != previous:
            place, previous = i, (row.skill_evidence, row.total)
        row.rank = place
    return {"facets": facets, "rows": [row.model_dump(exclude_unset=True) for row in ranked + invalid]}


def positions_of(row: dict) -> dict:
    """{facet: position or None} of a compute_rank row."""
    return {p["facet"]: p["position"] for p in row["positions"]}


def _display(series: str, labels: dict, name: object) -> str:
    return f"{labels.get(name, name)} [{name}]" if series == "eval_id" else str(name)


def rank_markdown(result: dict, series: str, facet: str | None, mode: str, labels: dict) -> str:
    """Leaderboard: rank, series, best cluster position per facet, total penalty."""
    facets = result["facets"]
    headers = ["Rank", series] + [str(f) if f is not None else "all" for f in facets] + ["Total"]
    rows = []
    for row in result["rows"]:
        positions = positions_of(row)
        rows.append([row["rank"] if row["rank"] is not None else "—",
                     marked(_display(series, labels, row["name"]), row.get("skill_evidence", True))]
                    + [positions[f] if positions[f] is not None else "—" for f in facets]
                    + [row["total"] if row["total"] is not None else "—"])
    title = f"# Rank of {series} across {facet or 'all data'} (mode {mode})"
    note = ("Each cell is the best cluster position in that facet (1 = top cluster); Total sums them, lower is "
            "better; a row missing any facet gets no total.")
    if not all(row.get("skill_evidence", True) for row in result["rows"]):
        note += "\n\n" + NO_SKILL_NOTE
    return f"{title}\n\n{note}\n\n" + markdown_table(rows, headers, ["r", "l"] + ["r"] * (len(facets) + 1)) + "\n"


def rank_json(result: dict, series: str, facet: str | None, mode: str, labels: dict) -> RankOutput:
    """The JSON output of compute_rank's result; evals carry their label."""
    rows = [RankRow.model_validate(row) for row in result["rows"]]
    if series == "eval_id":
        for row in rows:
            row.label = labels.get(row.name, row.name)
    return RankOutput(group_by=series, facet_by=facet, mode=mode, facets=result["facets"], rows=rows)
