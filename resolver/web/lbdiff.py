"""The leaderboard's difference view: two chosen evals, B - A in every (tier, group) cell.

The numbers are analyze.py compare's: `resolver.analysis.compare_evals` (paired intervals,
Holm across the cells and the overall row, docs/statistics.md "Paired comparisons"), run on
the leaderboard's own selection (cells mode, manifold entries, groups) and cached per
selection; this module only lays the result out, colours it and links the largest
differences to the explorer (docs/webapps.md, "Difference view").
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from dash import html

from resolver.analysis import compare_evals, config_views
from resolver.core import UserError
from resolver.stats import MODE_DESCRIPTIONS
from resolver.web import grid as grids, theme, urlstate
from resolver.web.data import LockedDB
from resolver.web.explorer_data import inferred_views
from resolver.web.ids import LB
from resolver.web.server import DEFAULT_LINK_PORTS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dash_ag_grid import AgGrid

    from resolver.catalog import Dataset
    from resolver.pointsdb import PointsDB
    from resolver.web.leaderboard_table import ViewState

TOP_POINTS = 5                  # largest differences listed under the grid, each linked to the explorer
DECIDED_BORDER = "3px solid #111111"
VERDICTS = {"b": "B better", "a": "A better", "none": "no evidence either way"}
MARKS = {"b": "B ", "a": "A "}  # the decided cell's mark, as in analyze.py compare's PNG
ALL_MANIFOLDS = "*"             # the explorer's "every manifold entry" (resolver.web.explorer_data)


class Differences:
    """compare_evals on the leaderboard's selections, cached, plus the explorer link of a point."""

    def __init__(self, dataset: Dataset, db: PointsDB, group_by: str, groups: list, labels: dict):
        self.dataset = dataset
        self.db = LockedDB(db)          # Flask answers callbacks on several threads; one connection
        self.group_by = group_by
        self.labels = labels
        self._group_values = {str(g): g for g in groups}

    def warm(self) -> None:
        """Start-up work, so the first comparison a visitor asks for pays only its own computation."""
        import resolver.analysis.compare  # noqa: F401  (module import: scipy and the paired statistics)

        self.views()

    @lru_cache(maxsize=64)
    def result(self, a: str, b: str, mode: str, manifolds: tuple = (), groups: tuple = ()) -> dict:
        """compare_evals' dict for B - A, or {"error": text} when the two cannot be compared."""
        filters = {}
        if manifolds:
            filters["manifold.id"] = list(manifolds)
        if groups:
            filters[self.group_by] = [self._group_values.get(g, g) for g in groups]
        try:
            return self.db.run(compare_evals, a, b, mode, filters, self.group_by, top=TOP_POINTS)
        except UserError as exc:
            return {"error": str(exc)}

    @lru_cache(maxsize=1)
    def views(self) -> tuple:
        """The explorer's views (the config's, else inferred from the params), 2-D first per task."""
        config = self.dataset.config_path
        views = (config_views(config) if config is not None and config.is_file() else []) \
            or self.db.run(inferred_views)
        return tuple(sorted(views, key=lambda v: -len(v.dims)))

    @lru_cache(maxsize=256)
    def _manifold(self, point_id: int) -> dict:
        frame = self.db.call("query", "SELECT manifold FROM points WHERE id = ?", [int(point_id)])
        text = frame["manifold"].iloc[0] if len(frame) else None
        return json.loads(text) if isinstance(text, str) else (text or {})

    def explorer_link(self, base: str, result: dict, point: dict) -> str:
        """explorer.py's URL showing A and B on a view of the point's task with B's point inspected.

        The first view (2-D first) whose dimensions and filters the point has values for;
        the point's own manifold entry unless the view has the manifold as an axis.
        """
        params = json.loads(point["params"]) if isinstance(point["params"], str) else dict(point["params"])
        manifold = self._manifold(point["b_id"])
        known = {"base_task": point["base_task"], **{f"params.{k}": v for k, v in params.items()},
                 **{f"manifold.{k}": v for k, v in manifold.items()}}
        flat = {"task": point["base_task"]}
        for view in (v for v in self.views() if v.base_task == point["base_task"]):
            if not all(d in known for d in view.dims) or not _filters_hold(view.filters, known):
                continue
            entry = ALL_MANIFOLDS if "manifold.id" in view.dims else str(manifold.get("id", ALL_MANIFOLDS))
            flat.update({"view": view.ident, "manifold": entry})
            flat.update({"mode": result["mode"], "evals": [result["a"], result["b"]], "pe": result["b"]})
            flat.update({f"p.{d}": _plain(known[d]) for d in view.dims})
            return urlstate.link(base, **flat)
        return urlstate.link(base, **flat, mode=result["mode"], evals=[result["a"], result["b"]])


def _filters_hold(filters: dict, known: dict) -> bool:
    for key, value in (filters or {}).items():
        allowed = value if isinstance(value, list) else [value]
        if key not in known or str(known[key]) not in {str(a) for a in allowed}:
            return False
    return True


def _plain(value: object) -> str:
    """A coordinate as the explorer reads it back (4, not 4.0)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def signed(value: float) -> str:
    """+.12 / -.05 / +1.00: the seed's two-decimal style with the sign of a difference."""
    text = f"{value:+.2f}"
    return text.replace("+0.", "+.").replace("-0.", "-.")


def _interval(pair: Sequence[float]) -> str:
    return f"[{signed(pair[0])}, {signed(pair[1])}]"


def cell_text(cell: dict) -> str:
    """'B +.12' over '[+.05, +.19]': the mark of a decided cell, the difference, its paired interval."""
    return f"{MARKS.get(cell['verdict'], '')}{signed(cell['diff'])}\n{_interval(cell['paired'])}"


def cell_hover(cell: dict, result: dict, labels: dict) -> str:
    a, b = labels.get(result["a"], result["a"]), labels.get(result["b"], result["b"])
    lines = [
        f"{cell['tier']} · {result['group_by']} {cell['group']} · mode {result['mode']}",
        f"B − A = {cell['diff']:+.4f}  ({b} {cell['b']:.4f} − {a} {cell['a']:.4f})",
        f"paired 95%: {_interval(cell['paired'])} · unpaired 95%: {_interval(cell['unpaired'])}",
        f"verdict: {VERDICTS[cell['verdict']]} (Holm-adjusted p {cell['p_holm']:.3g}, family of {result['family']})",
        f"{cell['pairs']} paired samples on {cell['points']} points · {cell['discordant']} discordant · "
        f"correlation {cell['phi']:.2f}",
    ]
    if cell.get("samples_needed"):
        lines.append(f"about {cell['samples_needed']} more samples per point would resolve a difference of "
                     f"{result['delta']:.2f} (80% power)")
    if cell["only_a"] or cell["only_b"]:
        lines.append(f"unpaired (one eval only): A {cell['only_a']} samples, B {cell['only_b']} samples")
    return "\n".join(lines)


def grid(result: dict, group_order: list, labels: dict) -> dict:
    """The difference grid's rows and columns: one row per tier, one column per group."""
    cells = result["cells"]
    tiers = list(dict.fromkeys(c["tier"] for c in cells))
    present = {str(c["group"]) for c in cells}
    groups = [str(g) for g in group_order if str(g) in present]
    groups += sorted(present - set(groups))
    index = {(c["tier"], str(c["group"])): c for c in cells}
    limit = theme.diff_limit([c["diff"] for c in cells])
    columns = [grids.column("_tier", "tier", pinned="left", minWidth=72, maxWidth=90, cellClass="rs-tier-cell")]
    columns += [grids.column(g, g, autoHeight=True, cellClass="rs-diff-cell") for g in groups]
    data = []
    for tier in tiers:
        record: dict[str, Any] = {"_tier": tier}
        styles, tips = {}, {}
        for group in groups:
            cell = index.get((tier, group))
            if cell is None:
                record[group] = "—"
                styles[group] = {"backgroundColor": theme.MISSING_COLOUR, "color": "#6b7385"}
                tips[group] = f"{tier} · {group}: no paired samples"
                continue
            record[group] = cell_text(cell)
            background = theme.diff_colour(cell["diff"], limit)
            style = {"backgroundColor": background, "color": theme.text_colour_on(background)}
            if cell["verdict"] != "none":
                style.update(border=DECIDED_BORDER, fontWeight="700")
            styles[group] = style
            tips[group] = cell_hover(cell, result, labels)
        data.append({**record, grids.STYLE: styles, grids.TIP: tips})
    return {"columns": columns, "data": data, "limit": limit}


def _table(content: dict) -> AgGrid:
    table = grids.table(LB.DIFF_TABLE, "rs-diff-table")
    table.rowData, table.columnDefs = content["data"], content["columns"]
    return table


def _legend(limit: float, family: int) -> html.Div:
    def swatch(value: float, text: str) -> html.Span:
        return html.Span([html.Span(className="rs-swatch", style={"background": theme.diff_colour(value, limit)}),
                          text])
    return html.Div([
        swatch(-limit, f"A better ({signed(-limit)})"), swatch(0.0, "0"), swatch(limit, f"B better ({signed(limit)})"),
        html.Span([html.Span(className="rs-swatch", style={"border": DECIDED_BORDER}),
                   f"framed, bold, marked B / A: decided after Holm's correction (family of {family}: the cells and "
                   "the overall row, 5% family-wise)"]),
        html.Span("cell: B − A and its paired 95% interval · hover a cell for both intervals, the p-value and the "
                  "samples that would decide it · the Cells mode, manifold and group choices above apply here too"),
    ], className="rs-legend")


def _point_line(differ: Differences, base: str, result: dict, point: dict, first: bool) -> html.Li:
    params = point["params"] if isinstance(point["params"], str) else json.dumps(point["params"])
    link = differ.explorer_link(base, result, point)
    text = (f"{point['base_task']} {params} ({point['tier']}): B − A {signed(point['diff'])} "
            f"{_interval(point['paired'])} over {point['pairs']} pairs · ")
    anchor_id: dict[str, Any] = {"id": LB.DIFF_EXPLORER} if first else {}
    anchor = html.A("open in explorer", href=link, className="rs-link lb-diff-point-link", **anchor_id)
    return html.Li([text, anchor])


def panel(differ: Differences, state: ViewState, group_order: list, links: dict) -> html.Div | None:
    """The difference view for a state with A and B chosen; None when fewer than two are."""
    a, b = state["a"], state["b"]
    if not a or not b:
        return None
    label_a, label_b = differ.labels.get(a, a), differ.labels.get(b, b)
    heading = html.H3(f"Difference B − A: {label_b} (B) minus {label_a} (A)", id=LB.DIFF_HEADING)
    if a == b:
        return html.Div([heading, html.Div("A and B are the same eval: choose two different ones.",
                                           className="rs-note", id=LB.DIFF_ERROR)], className="rs-panel")
    result = differ.result(a, b, state["mode"], tuple(sorted(state["manifolds"])), tuple(sorted(state["groups"])))
    if "error" in result:
        return html.Div([heading, html.Div(result["error"], className="rs-note", id=LB.DIFF_ERROR)],
                        className="rs-panel")
    overall = result["overall"]
    content = grid(result, group_order, differ.labels)
    summary = html.Div([
        html.B(f"Overall: B − A = {signed(overall['diff'])} {_interval(overall['paired'])} paired, "
               f"{_interval(overall['unpaired'])} unpaired → {VERDICTS[overall['verdict']]}"),
        f" · mode {result['mode']} ({MODE_DESCRIPTIONS[result['mode']]}) · {overall['pairs']} paired samples on "
        f"{overall['points']} points · the numbers of analyze.py compare",
    ], id=LB.DIFF_OVERALL, className="rs-note", **{"data-verdict": overall["verdict"]})

    base = links.get("explorer") or f"http://localhost:{DEFAULT_LINK_PORTS['explorer']}/"
    points = [_point_line(differ, base, result, p, i == 0) for i, p in enumerate(result["points"])]
    children = [heading, summary, _legend(content["limit"], result["family"]), _table(content)]
    if points:
        children += [html.Div("Largest differences, point by point (the explorer opens at B's point, A beside it):",
                              className="rs-note", style={"marginTop": "8px"}), html.Ol(points, id=LB.DIFF_POINTS)]
    children += _notes(result)
    return html.Div(children, className="rs-panel", id=LB.DIFF_VIEW, style={"marginTop": "8px"})


def _notes(result: dict) -> list:
    notes = []
    unpaired = result["unpaired_samples"]
    if unpaired["only_a"] or unpaired["only_b"]:
        notes.append(f"Not paired (one eval only, left out): A {_count(unpaired['only_a'], 'sample')} on "
                     f"{_count(unpaired['only_a_points'], 'point')}, B {_count(unpaired['only_b'], 'sample')} on "
                     f"{_count(unpaired['only_b_points'], 'point')}.")
    for clash in result["version_mismatch"]:
        notes.append(f"{clash['base_task']}: {clash['points']} points ran at different task versions "
                     f"(A {clash['a_versions']}, B {clash['b_versions']}): different problems, not paired.")
    return [html.Div(n, className="rs-note lb-diff-note") for n in notes]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
