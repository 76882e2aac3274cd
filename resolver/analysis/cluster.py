"""Clusters of statistically indistinguishable series (analyze.py cluster).

Within one facet, every series (eval by default) has an interval [center - margin,
center + margin]. Two series whose intervals overlap cannot be told apart; the
clusters are the maximal cliques of that overlap graph, so a series may belong to
several clusters (docs/analyze.md).

Intervals on a line have the Helly property: a set of pairwise-overlapping intervals
shares a common point. So every clique is "the intervals containing some x", and the
maximal cliques are found by sweeping x over the lower ends — exact, O(n^2), and no
general clique search is needed.

Below-chance series (resolver.stats: the data reject "at least chance") enter with
their interval [0, 0], the floor of every estimand: they tie with each other and
share a cluster with every series whose interval reaches 0; rows carry
``below_chance`` and the markdown shows "≤ chance" instead of 0.000 ± 0.000.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import pandas as pd

from resolver import stats
from resolver.analysis.common import plain
from resolver.analysis.output_base import Scalar
from resolver.analysis.outputs import Cluster, ClusterFacet, ClusterMember, ClusterOutput, ClusterSeries
from resolver.core import markdown_table

BELOW_CHANCE_MARK = "≤ chance"


def interval_cliques(lows: Sequence[float], highs: Sequence[float]) -> list:
    """Maximal cliques of the overlap graph of closed intervals, best (highest) first.

    Returns lists of indices into the inputs; members of each clique are ordered by
    their interval midpoint, highest first. Touching intervals (low == high) overlap.
    """
    n = len(lows)
    cliques: list[tuple[frozenset[int], float]] = []
    for x in sorted(set(lows), reverse=True):
        members = frozenset(i for i in range(n) if lows[i] <= x <= highs[i])
        if members and not any(members <= kept for kept, _ in cliques):
            cliques = [(kept, at) for kept, at in cliques if not kept <= members]
            cliques.append((members, x))
    mid = [(lows[i] + highs[i]) / 2 for i in range(n)]
    ordered = sorted(cliques, key=lambda item: -item[1])
    return [sorted(members, key=lambda i: (-mid[i], i)) for members, _ in ordered]


def facet_clusters(frame: pd.DataFrame, series: str) -> list[Cluster]:
    """Clusters of one facet's rows (columns: series, center, margin), best first; a
    cluster's low/high bound the region all its members share."""
    frame = frame.reset_index(drop=True)
    lows = (frame["center"] - frame["margin"]).tolist()
    highs = (frame["center"] + frame["margin"]).tolist()
    clusters = []
    for rank, members in enumerate(interval_cliques(lows, highs), start=1):
        rows = [ClusterMember(name=plain(frame[series].iloc[i]), center=float(frame["center"].iloc[i]),
                              margin=float(frame["margin"].iloc[i]), low=lows[i], high=highs[i],
                              below_chance=bool(frame["below_chance"].iloc[i]) if "below_chance" in frame else False)
                for i in members]
        clusters.append(Cluster(rank=rank, members=rows, low=max(lows[i] for i in members),
                                high=min(highs[i] for i in members)))
    return clusters


def compute_clusters(agg: pd.DataFrame, series: str, facet: str | None, mode: str = stats.DEFAULT_MODE) -> list:
    """Clusters for every facet of an aggregated table (one row per series x facet).

    Returns ClusterFacet dumps, the series sorted best first; facet None pools everything
    into one section.
    """
    frame = stats.add_statistics(agg, mode=mode)
    sections = []
    groups = [(None, frame)] if facet is None else frame.groupby(facet, sort=False, dropna=False)
    for value, part in groups:
        part = part.sort_values(["center", series], ascending=[False, True], kind="stable")
        sections.append(ClusterFacet(facet=plain(value), series=_series_rows(part, series),
                                     clusters=facet_clusters(part, series)).model_dump(exclude_unset=True))
    return sections


def _series_rows(part: pd.DataFrame, series: str) -> list[ClusterSeries]:
    return [ClusterSeries(name=plain(record[series]), center=float(record["center"]), margin=float(record["margin"]),
                          points=int(record["points"]), samples=float(record["samples"]),
                          truncated_ratio=float(record["truncated_ratio"]), below_chance=bool(record["below_chance"]))
            for record in part.to_dict("records")]


def memberships(clusters: list) -> dict:
    """{series value: [cluster ranks it belongs to]} for one facet."""
    result: dict[object, list[int]] = {}
    for cluster in clusters:
        for member in cluster["members"]:
            result.setdefault(member["name"], []).append(cluster["rank"])
    return result


def best_positions(sections: list) -> dict:
    """{facet: {series: best (lowest) cluster rank}} — what `rank` sums."""
    return {section["facet"]: {name: min(ranks) for name, ranks in memberships(section["clusters"]).items()}
            for section in sections}


# ------------------------------------------------------------------- rendering

def namer(series: str, labels: dict) -> Callable[[Any], str]:
    """Display name of a series value: evals by label and id, others as they are."""
    if series == "eval_id":
        return lambda name: f"{labels.get(name, name)} [{name}]"
    return str


def cluster_title(series: str, facet: str | None, split: str | None, value: object, mode: str) -> str:
    text = f"Clusters of {series}" + (f" by {facet}" if facet else " (all pooled)")
    return text + (f" — {split} = {value}" if split else "") + f" (mode {mode})"


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def cluster_markdown(sections: list, series: str, facet: str | None, title: str, labels: dict) -> str:
    """Per facet: clusters best first, then each series with its clusters."""
    name = namer(series, labels)
    parts = [f"# {title}", "",
             "Series whose 95% intervals overlap are indistinguishable; clusters are the maximal groups of mutually "
             "overlapping series, best first. A series may belong to several clusters."]
    for section in sections:
        if facet:
            parts += ["", f"## {facet} = {section['facet']}"]
        rows = [[c["rank"], ", ".join(name(m["name"]) for m in c["members"]), f"{_fmt(c['low'])} - {_fmt(c['high'])}"]
                for c in section["clusters"]]
        parts += ["", markdown_table(rows, ["Cluster", "Members (best first)", "Shared range"], ["r", "l", "l"])]
        member_of = memberships(section["clusters"])
        rows = [[name(s["name"]), BELOW_CHANCE_MARK if s["below_chance"] else _fmt(s["center"]),
                 "" if s["below_chance"] else _fmt(s["margin"]), s["points"],
                 ", ".join(map(str, member_of.get(s["name"], [])))] for s in section["series"]]
        parts += ["", markdown_table(rows, [series, "center", "margin", "points", "clusters"], ["l", "r", "r", "r", "l"])]
    return "\n".join(parts) + "\n"


def cluster_json(sections: list, series: str, facet: str | None, split: str | None, value: Scalar, mode: str,
                 labels: dict) -> ClusterOutput:
    """The JSON output of compute_clusters' sections; evals carry their label."""
    facets = [ClusterFacet.model_validate(section) for section in sections]
    if series == "eval_id":
        rows: list[ClusterSeries | ClusterMember] = [row for f in facets for row in f.series]
        for row in rows + [m for f in facets for c in f.clusters for m in c.members]:
            row.label = labels.get(row.name, row.name)
    return ClusterOutput(group_by=series, facet_by=facet, split_by=split, split_value=value, mode=mode, facets=facets)
