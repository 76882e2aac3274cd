"""leaderboard.py's app: ReasonScore ranking with one heat-map cell per group.

Controls: model search, tier (overall / easy / medium / hard), sort (score or score/token,
and a click on any column header), statistics mode of the cells, facet checklists (family,
arch, size, quant ...), manifold entries and groups (ReasonScore is recomputed over the
chosen ones), previous / next pages of 10 evals, reset, CSV / JSON download, and two
evals A and B whose paired difference B - A is shown cell by cell above the ranking
(resolver/web/lbdiff.py). The whole view state lives in the URL, so a link reproduces what
is on screen. Each row links to the model's surfaces (explorer.py) and radar (spiderweb.py).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dash import ALL, Input, Output, State, ctx, dcc, html, no_update

from resolver.analysis import NO_SKILL_MARK, eval_labels
from resolver.analysis.leaderboard_scores import OVERALL, Board
from resolver.stats import MODE_DESCRIPTIONS, MODES
from resolver.web import grid, layout, lbdiff, leaderboard_table, theme, urlstate
from resolver.web.data import eval_facets
from resolver.web.server import make_app

if TYPE_CHECKING:
    from collections.abc import Iterable

    import dash
    from dash import NoUpdate

    from resolver.catalog import Dataset
    from resolver.pointsdb import PointsDB

PAGE_SIZE = leaderboard_table.PAGE_SIZE
SCORE_MODE = leaderboard_table.SCORE_MODE
DEFAULTS = {"tier": OVERALL, "sort": "score", "mode": SCORE_MODE, "page": "1"}


def build_app(dataset: Dataset, db: PointsDB, group_by: str = "base_task", url_base_pathname: str = "/", links: dict | None = None) -> dash.Dash:
    """Precompute the board and return the Dash app."""
    board = Board(db, group_by)
    board.view((), ())  # warm the cache for the default selection at start-up (same key as the callback)
    facets = eval_facets(board.evals)
    differ = lbdiff.Differences(dataset, db, group_by, board.groups, eval_labels(board.evals))
    differ.warm()
    app = make_app(f"ReasonScape leaderboard — {dataset.name}", url_base_pathname)
    app.layout = _layout(dataset, board, facets, differ.labels)
    _register(app, board, differ, links or {})
    return app


def _mode_options() -> list[dict[str, str]]:
    label = {m: f"{m}" + (" (ReasonScore's)" if m == SCORE_MODE else "") for m in MODES}
    return [{"label": label[m], "value": m, "title": MODE_DESCRIPTIONS[m]} for m in MODES]


def _layout(dataset: Dataset, board: Board, facets: dict, labels: dict) -> html.Div:
    tier_options = [{"label": "overall", "value": OVERALL}] + [{"label": t, "value": t} for t in board.tiers]
    controls = [
        layout.control("Find a model", dcc.Input(id="lb-search", type="search", placeholder="name, id or tag",
                                                 value="", debounce=False, className="rs-input")),
        layout.control("Tier", dcc.RadioItems(id="lb-tier", options=tier_options, value=OVERALL, inline=True)),
        layout.control("Rank by", dcc.RadioItems(id="lb-sort", inline=True, value="score", options=[
            {"label": "ReasonScore", "value": "score"}, {"label": "score/token", "value": "ratio"}]),
            help=leaderboard_table.HELP["score"] + " " + leaderboard_table.HELP["ratio"]),
        layout.control("Cells", dcc.Dropdown(id="lb-mode", options=_mode_options(), value=SCORE_MODE,
                                             clearable=False, searchable=False),
                       help="Statistics mode of the cell intervals. " +
                            " · ".join(f"{m}: {d}" for m, d in MODE_DESCRIPTIONS.items())),
    ]
    for key, values in facets.items():
        controls.append(layout.control(key, dcc.Checklist(
            id={"type": "lb-facet", "key": key}, options=values, value=[], inline=True)))
    manifold_options = [{"label": board.manifold_labels.get(m, m), "value": m} for m in board.manifolds]
    controls.append(html.Div(layout.control("Manifold", dcc.Dropdown(
        id="lb-manifold", options=manifold_options, value=[], multi=True, placeholder="all manifold entries"),
        wide=True), style={} if len(board.manifolds) > 1 else {"display": "none"}, className="rs-control-wrap"))
    controls.append(layout.control(board.group_by, dcc.Dropdown(
        id="lb-groups", options=[str(g) for g in board.groups], value=[], multi=True,
        placeholder=f"all {board.group_by} values"), wide=True))
    evals = [{"label": labels.get(e, e), "value": e} for e in sorted(labels, key=lambda e: labels[e].lower())]
    controls.append(layout.control("Compare: A", dcc.Dropdown(id="lb-a", options=evals, value=None,
                                                              placeholder="baseline eval"), wide=True))
    controls.append(layout.control("B (B − A)", dcc.Dropdown(id="lb-b", options=evals, value=None,
                                                             placeholder="eval compared with A"), wide=True,
                                   help="Choose two evals to see their paired difference B − A in every (tier, "
                                        "group) cell, decided cells framed (analyze.py compare's numbers)."))
    controls.append(html.Div([
        html.Button("Reset filters", id="lb-reset", n_clicks=0, className="rs-button rs-secondary"),
        html.Button("CSV", id="lb-csv", n_clicks=0, className="rs-button", title="download every row of this view"),
        html.Button("JSON", id="lb-json", n_clicks=0, className="rs-button", title="download every row of this view"),
    ], className="rs-actions"))
    return layout.page(
        "Leaderboard", f"{dataset.name} · {len(board.evals)} evals · ReasonScore by {board.group_by}",
        [
            dcc.Location(id="lb-url", refresh=False),
            dcc.Download(id="lb-download"),
            html.Div(controls, className="rs-controls"),
            _legend(),
            html.Div(id="lb-tier-note", className="rs-note"),
            dcc.Store(id="lb-diff-key"),
            dcc.Loading(html.Div(id="lb-diff"), id="lb-diff-loading", type="dot", delay_show=150),
            html.Div([
                html.Button("← previous", id="lb-prev", n_clicks=0, className="rs-button"),
                html.Span(id="lb-page-label"),
                html.Button("next →", id="lb-next", n_clicks=0, className="rs-button"),
            ], className="rs-pager"),
            dcc.Store(id="lb-page", data=0),
            dcc.Store(id="lb-sorted"),
            html.Div(id="lb-empty"),
            dcc.Loading(html.Div(leaderboard_table.datatable(), className="rs-table-wrap"), id="lb-loading",
                        type="dot", delay_show=150),
        ])


def _legend() -> html.Div:
    return html.Div([
        html.Span([html.Span(className="rs-swatch", style={"background": theme.score_colour(0.1)}), "low"]),
        html.Span([html.Span(className="rs-swatch", style={"background": theme.score_colour(0.5)}), "mid"]),
        html.Span([html.Span(className="rs-swatch", style={"background": theme.score_colour(0.95)}),
                   "high: colour = the cell's ranking score (center + margin − truncation)"]),
        html.Span([html.Span(className="rs-swatch", style={"backgroundImage": leaderboard_table.HATCH}),
                   "hatched: truncation > 2% (penalty [-.ZZ])"]),
        html.Span("cell: .XX - .YY = center - upper 95% bound of the mode named in the header · (N/M) points when "
                  "incomplete · * incomplete score · — no data · ≤ chance: the interval lies below guessing"),
        html.Span("bold outline: best in column · hover a cell for the full numbers · click a header to sort"),
        html.Span(f"{NO_SKILL_MARK} no evidence of skill above guessing: ranked after every model with it, "
                  "whatever the rank-by"),
    ], className="rs-legend")


def _register(app: dash.Dash, board: Board, differ: lbdiff.Differences, links: dict) -> None:
    controls = [Output("lb-search", "value"), Output("lb-tier", "value"), Output("lb-sort", "value"),
                Output("lb-mode", "value"), Output({"type": "lb-facet", "key": ALL}, "value"),
                Output("lb-manifold", "value"), Output("lb-groups", "value"),
                Output("lb-a", "value"), Output("lb-b", "value")]

    @app.callback(
        *controls, Output("lb-page", "data"), Output("lb-url", "search"),
        Output("lb-table", "rowData"), Output("lb-table", "columnDefs"),
        Output("lb-page-label", "children"), Output("lb-prev", "disabled"), Output("lb-next", "disabled"),
        Output("lb-empty", "children"), Output("lb-tier-note", "children"),
        Input("lb-url", "search"), Input("lb-search", "value"), Input("lb-tier", "value"), Input("lb-sort", "value"),
        Input("lb-mode", "value"), Input({"type": "lb-facet", "key": ALL}, "value"),
        Input("lb-manifold", "value"), Input("lb-groups", "value"), Input("lb-sorted", "data"),
        Input("lb-prev", "n_clicks"), Input("lb-next", "n_clicks"), Input("lb-reset", "n_clicks"),
        Input("lb-a", "value"), Input("lb-b", "value"),
        State({"type": "lb-facet", "key": ALL}, "id"), State("lb-page", "data"), State("lb-table", "columnState"),
    )
    def update(search: str, query: str | None, tier: str, sort: str, mode: str, facet_values: list[list[str]],
               manifolds: list[str] | None, groups: list[str] | None, _sorted: int | None, _p: int | None, _n: int | None,
               _r: int | None, a: str | None, b: str | None, facet_ids: list[dict[str, str]], page: int | None,
               column_state: list[Any] | None) -> tuple:
        trigger = ctx.triggered_id
        keys = [i["key"] for i in facet_ids]
        sort_by = grid.sort_from_state(column_state)
        if trigger in (None, "lb-url", "lb-reset"):
            state = state_from_url(board, "" if trigger == "lb-reset" else search, keys)
        else:
            state = {"q": query or "", "tier": tier, "sort": sort, "mode": mode,
                     "facets": dict(zip(keys, facet_values)), "manifolds": manifolds or [], "groups": groups or [],
                     "sort_by": [] if trigger == "lb-sort" else (sort_by or []), "page": page or 0,
                     "a": a or None, "b": b or None}
            state["page"] = _next_page(trigger, state["page"])
        out = table_update(board, state, links)
        state["page"] = out["page"]
        url_changed = trigger != "lb-url"
        control_values = ([state["q"], state["tier"], state["sort"], state["mode"],
                           [state["facets"].get(k, []) for k in keys], state["manifolds"], state["groups"],
                           state["a"], state["b"]] if trigger in (None, "lb-url", "lb-reset")
                          else [no_update] * 4 + [[no_update] * len(keys)] + [no_update] * 4)
        return (*control_values, state["page"], state_to_url(state) if url_changed else no_update,
                out["data"], out["columns"],
                out["label"], out["page"] == 0, out["page"] >= out["pages"] - 1, out["empty"], out["note"])

    # The grid reports its columns after every redraw and resize; only a new sort is news. Those reports
    # go to their own callback: as an input of `update` they re-sent its request while the first one was
    # still computing (50 evals, a loaded machine), and Dash drops a superseded request's answer, so the
    # page kept an empty table (docs/performance.md, *Scale*).
    @app.callback(Output("lb-sorted", "data"), Input("lb-table", "columnState"), State("lb-url", "search"),
                  State({"type": "lb-facet", "key": ALL}, "id"), State("lb-sorted", "data"), prevent_initial_call=True)
    def sorted_by(column_state: list[Any] | None, search: str, facet_ids: list[dict[str, str]],
                  count: int | None) -> int | NoUpdate:
        if grid.sort_from_state(column_state) == state_from_url(board, search, [i["key"] for i in facet_ids])["sort_by"]:
            return no_update
        return (count or 0) + 1

    @app.callback(Output("lb-diff", "children"), Output("lb-diff-key", "data"), Input("lb-url", "search"),
                  State("lb-diff-key", "data"))
    def difference(search: str, shown: list | None) -> tuple:
        # paging, sorting, search ... change the URL too; the view is redrawn only when its own inputs change
        key = diff_key(board, search)
        if shown is not None and key == shown:
            return no_update, no_update
        return diff_update(board, differ, search, links), key

    @app.callback(Output("lb-download", "data"), Input("lb-csv", "n_clicks"), Input("lb-json", "n_clicks"),
                  State("lb-url", "search"), State({"type": "lb-facet", "key": ALL}, "id"),
                  prevent_initial_call=True)
    def download(_csv: int | None, _json: int | None, search: str, facet_ids: list[dict[str, str]]) -> dict[str, str]:
        state = state_from_url(board, search, [i["key"] for i in facet_ids])
        rows = leaderboard_table.selected_rows(board, state)
        if ctx.triggered_id == "lb-json":
            return {"content": leaderboard_table.export_json(board, rows, state), "filename": "leaderboard.json"}
        return {"content": leaderboard_table.export_csv(board, rows, state), "filename": "leaderboard.csv"}


def diff_key(board: Board, search: str) -> list:
    """What the difference view depends on: the two evals, the cells mode, manifold entries and groups."""
    state = state_from_url(board, search, [])
    return [state["a"], state["b"], state["mode"], sorted(state["manifolds"]), sorted(state["groups"])]


def diff_update(board: Board, differ: lbdiff.Differences, search: str, links: dict) -> html.Div | None:
    """The difference view for a URL (the A / B evals, cells mode, manifold and group choice in it)."""
    state = state_from_url(board, search, [])
    return lbdiff.panel(differ, state, board.groups, links)


def state_from_url(board: Board, search: str, facet_keys: Iterable[str]) -> dict:
    """The view state a URL asks for; unknown values fall back to the defaults."""
    url = urlstate.parse(search)
    known = set(board.evals["eval_id"])
    tiers = {OVERALL, *board.tiers}
    groups = {str(g) for g in board.groups}
    column = urlstate.first(url, "col")
    sort_by = [{"column_id": column, "direction": urlstate.first(url, "dir", "desc", {"asc", "desc"})}] if column else []
    try:
        page = max(int(urlstate.first(url, "page", "1")) - 1, 0)
    except ValueError:
        page = 0
    return {
        "q": urlstate.first(url, "q", ""), "tier": urlstate.first(url, "tier", OVERALL, tiers),
        "sort": urlstate.first(url, "sort", "score", {"score", "ratio"}),
        "mode": urlstate.first(url, "mode", SCORE_MODE, set(MODES)),
        "facets": {k: urlstate.many(url, f"f.{k}") for k in facet_keys},
        "manifolds": urlstate.many(url, "manifold", set(board.manifolds)),
        "groups": urlstate.many(url, "group", groups), "sort_by": sort_by, "page": page,
        "a": urlstate.first(url, "a", None, known), "b": urlstate.first(url, "b", None, known),
    }


def state_to_url(state: dict) -> str:
    sort_by = state.get("sort_by") or []
    flat = {"q": state["q"], "tier": state["tier"], "sort": state["sort"], "mode": state["mode"],
            "manifold": state["manifolds"], "group": state["groups"],
            "col": sort_by[0]["column_id"] if sort_by else None,
            "dir": sort_by[0]["direction"] if sort_by else None, "page": str(state["page"] + 1),
            "a": state.get("a"), "b": state.get("b")}
    for key, values in sorted(state["facets"].items()):
        flat[f"f.{key}"] = values
    return urlstate.encode(flat, DEFAULTS)


def _next_page(trigger: str | dict | None, page: int) -> int:
    if trigger == "lb-prev":
        return max(page - 1, 0)
    if trigger == "lb-next":
        return page + 1
    if trigger in ("lb-a", "lb-b"):
        return page       # choosing evals to compare leaves the ranking as it is
    return 0   # any filter or sort change starts over


def table_update(board: Board, state: dict, links: dict) -> dict:
    """Everything the table shows for a view state (rows of the page, styles, labels, empty state)."""
    rows = leaderboard_table.selected_rows(board, state)
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    page = min(max(state["page"], 0), pages - 1)
    shown = rows[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]
    view = board.view(tuple(sorted(state["manifolds"])), tuple(sorted(state["groups"])))
    columns = [g for g in view.columns.get(state["tier"], [])
               if not state["groups"] or str(g) in set(state["groups"])]
    table = leaderboard_table.table_content(board, shown, rows, columns, state, links)
    return {"page": page, "pages": pages, **table,
            "label": f"page {page + 1} of {pages} · {len(rows)} evals",
            "empty": None if rows else html.Div(empty_reason(board, state), className="rs-panel rs-empty",
                                                id="lb-empty-message"),
            "note": _tier_note(state["tier"], board, state["mode"])}


def empty_reason(board: Board, state: dict) -> str:
    """Why a view has no rows, in words that point at the filter to change (each filter tried alone)."""
    alone = {"q": "", "facets": {}, "manifolds": [], "groups": [], "page": 0}
    if state["q"] and not leaderboard_table.selected_rows(board, {**state, **alone, "q": state["q"]}):
        return f"No eval's label, model, id or tag contains {state['q']!r}. Clear the search box to see all."
    chosen = {k: v for k, v in state["facets"].items() if v}
    if chosen and not leaderboard_table.selected_rows(board, {**state, **alone, "facets": chosen}):
        text = " and ".join(f"{k} in ({', '.join(v)})" for k, v in chosen.items())
        return f"No eval has {text}: facet values are OR-ed within a key and AND-ed across keys."
    if state["manifolds"] or state["groups"]:
        where = "; ".join(board.manifold_labels.get(m, m) for m in state["manifolds"]) or "all manifold entries"
        if not leaderboard_table.selected_rows(board, {**state, **alone, "manifolds": state["manifolds"],
                                             "groups": state["groups"]}):
            return (f"No points in the chosen manifold entries ({where}) for the chosen {board.group_by} "
                    f"values ({', '.join(state['groups']) or 'all'}). A manifold entry belongs to the task named "
                    "before it: pick a group of that task, or another entry.")
    if state["tier"] != OVERALL:
        return f"No eval that passes these filters has data in tier {state['tier']}."
    return "No eval passes all of these filters together; each one alone matches some. Reset filters to start over."


def _tier_note(tier: str, board: Board, mode: str) -> str:
    what = (f"Cells: {mode} interval ({MODE_DESCRIPTIONS[mode]})"
            + ("; ReasonScore always uses E_I." if mode != SCORE_MODE else " — the ReasonScore's own mode."))
    if tier != OVERALL:
        return f"Tier {tier}: its ReasonScore and cells, as the {tier} rows of analyze.py scores. {what}"
    if len(board.tiers) > 1:
        return ("Overall: ReasonScore over every (tier, group) cell; each cell pools all tiers of its group. "
                f"Pick a tier for the per-tier cells of analyze.py scores. {what}")
    return f"ReasonScore over every group; the cells are those of analyze.py scores. {what}"

