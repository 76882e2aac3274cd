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
from resolver.web.ids import LB
from resolver.web.leaderboard_table import TableView, ViewState
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
        layout.control("Find a model", dcc.Input(id=LB.SEARCH, type="search", placeholder="name, id or tag",
                                                 value="", debounce=False, className="rs-input")),
        layout.control("Tier", dcc.RadioItems(id=LB.TIER, options=tier_options, value=OVERALL, inline=True)),
        layout.control("Rank by", dcc.RadioItems(id=LB.SORT, inline=True, value="score", options=[
            {"label": "ReasonScore", "value": "score"}, {"label": "score/token", "value": "ratio"}]),
            help=leaderboard_table.HELP["score"] + " " + leaderboard_table.HELP["ratio"]),
        layout.control("Cells", dcc.Dropdown(id=LB.MODE, options=_mode_options(), value=SCORE_MODE,
                                             clearable=False, searchable=False),
                       help="Statistics mode of the cell intervals. " +
                            " · ".join(f"{m}: {d}" for m, d in MODE_DESCRIPTIONS.items())),
    ]
    for key, values in facets.items():
        controls.append(layout.control(key, dcc.Checklist(
            id={"type": LB.FACET_TYPE, "key": key}, options=values, value=[], inline=True)))
    manifold_options = [{"label": board.manifold_labels.get(m, m), "value": m} for m in board.manifolds]
    controls.append(html.Div(layout.control("Manifold", dcc.Dropdown(
        id=LB.MANIFOLD, options=manifold_options, value=[], multi=True, placeholder="all manifold entries"),
        wide=True), style={} if len(board.manifolds) > 1 else {"display": "none"}, className="rs-control-wrap"))
    controls.append(layout.control(board.group_by, dcc.Dropdown(
        id=LB.GROUPS, options=[str(g) for g in board.groups], value=[], multi=True,
        placeholder=f"all {board.group_by} values"), wide=True))
    evals = [{"label": labels.get(e, e), "value": e} for e in sorted(labels, key=lambda e: labels[e].lower())]
    controls.append(layout.control("Compare: A", dcc.Dropdown(id=LB.A, options=evals, value=None,
                                                              placeholder="baseline eval"), wide=True))
    controls.append(layout.control("B (B − A)", dcc.Dropdown(id=LB.B, options=evals, value=None,
                                                             placeholder="eval compared with A"), wide=True,
                                   help="Choose two evals to see their paired difference B − A in every (tier, "
                                        "group) cell, decided cells framed (analyze.py compare's numbers)."))
    controls.append(html.Div([
        html.Button("Reset filters", id=LB.RESET, n_clicks=0, className="rs-button rs-secondary"),
        html.Button("CSV", id=LB.CSV, n_clicks=0, className="rs-button", title="download every row of this view"),
        html.Button("JSON", id=LB.JSON, n_clicks=0, className="rs-button", title="download every row of this view"),
    ], className="rs-actions"))
    return layout.page(
        "Leaderboard", f"{dataset.name} · {len(board.evals)} evals · ReasonScore by {board.group_by}",
        [
            dcc.Location(id=LB.URL, refresh=False),
            dcc.Download(id=LB.DOWNLOAD),
            html.Div(controls, className="rs-controls"),
            _legend(),
            html.Div(id=LB.TIER_NOTE, className="rs-note"),
            dcc.Store(id=LB.DIFF_KEY),
            dcc.Loading(html.Div(id=LB.DIFF), id=LB.DIFF_LOADING, type="dot", delay_show=150),
            html.Div([
                html.Button("← previous", id=LB.PREV, n_clicks=0, className="rs-button"),
                html.Span(id=LB.PAGE_LABEL),
                html.Button("next →", id=LB.NEXT, n_clicks=0, className="rs-button"),
            ], className="rs-pager"),
            dcc.Store(id=LB.PAGE, data=0),
            dcc.Store(id=LB.SORTED),
            html.Div(id=LB.EMPTY),
            dcc.Loading(html.Div(leaderboard_table.datatable(), className="rs-table-wrap"), id=LB.LOADING,
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


FACETS = {"type": LB.FACET_TYPE, "key": ALL}      # every facet checklist (one per facet key)
# The controls that the view state sets and reads: (its name in the callbacks, component id); all by "value".
CONTROLS = (("query", LB.SEARCH), ("tier", LB.TIER), ("sort", LB.SORT), ("mode", LB.MODE), ("facets", FACETS),
            ("manifolds", LB.MANIFOLD), ("groups", LB.GROUPS), ("a", LB.A), ("b", LB.B))
RESTORING = (None, LB.URL, LB.RESET)   # triggers that set the controls from the URL (a load, back/forward, reset)


def _register(app: dash.Dash, board: Board, differ: lbdiff.Differences, links: dict) -> None:
    _register_view(app, board, links)
    _register_sorted(app, board)
    _register_difference(app, board, differ, links)
    _register_download(app, board)


def _register_view(app: dash.Dash, board: Board, links: dict) -> None:
    """Controls <-> URL <-> the table: the one callback that every control and the URL drive."""
    @app.callback(
        output={**{name: Output(ident, "value") for name, ident in CONTROLS},
                "page": Output(LB.PAGE, "data"), "url": Output(LB.URL, "search"),
                "rows": Output(LB.TABLE, "rowData"), "columns": Output(LB.TABLE, "columnDefs"),
                "label": Output(LB.PAGE_LABEL, "children"), "first_page": Output(LB.PREV, "disabled"),
                "last_page": Output(LB.NEXT, "disabled"), "empty": Output(LB.EMPTY, "children"),
                "note": Output(LB.TIER_NOTE, "children")},
        inputs={"search": Input(LB.URL, "search"), **{name: Input(ident, "value") for name, ident in CONTROLS},
                "sorted_count": Input(LB.SORTED, "data"), "prev_clicks": Input(LB.PREV, "n_clicks"),
                "next_clicks": Input(LB.NEXT, "n_clicks"), "reset_clicks": Input(LB.RESET, "n_clicks")},
        state={"facet_ids": State(FACETS, "id"), "page": State(LB.PAGE, "data"),
               "column_state": State(LB.TABLE, "columnState")},
    )
    def update(search: str, query: str | None, tier: str, sort: str, mode: str, facets: list[list[str]],
               manifolds: list[str] | None, groups: list[str] | None, a: str | None, b: str | None,
               sorted_count: int | None, prev_clicks: int | None, next_clicks: int | None, reset_clicks: int | None,
               facet_ids: list[dict[str, str]], page: int | None, column_state: list[Any] | None) -> dict[str, Any]:
        trigger = ctx.triggered_id
        keys = [i["key"] for i in facet_ids]
        if trigger in RESTORING:
            state = state_from_url(board, "" if trigger == LB.RESET else search, keys)
        else:
            state = ViewState(q=query or "", tier=tier, sort=sort, mode=mode, facets=dict(zip(keys, facets)),
                              manifolds=manifolds or [], groups=groups or [],
                              sort_by=[] if trigger == LB.SORT else (grid.sort_from_state(column_state) or []),
                              page=_next_page(trigger, page or 0), a=a or None, b=b or None)
        out = table_update(board, state, links)
        state["page"] = out["page"]
        return {**(_control_values(state, keys) if trigger in RESTORING else _unchanged_controls(keys)),
                "page": state["page"], "url": state_to_url(state) if trigger != LB.URL else no_update,
                "rows": out["data"], "columns": out["columns"], "label": out["label"],
                "first_page": out["page"] == 0, "last_page": out["page"] >= out["pages"] - 1,
                "empty": out["empty"], "note": out["note"]}


def _control_values(state: ViewState, facet_keys: list[str]) -> dict[str, Any]:
    """What each control shows for a view state (named as in CONTROLS)."""
    return {"query": state["q"], "tier": state["tier"], "sort": state["sort"], "mode": state["mode"],
            "facets": [state["facets"].get(k, []) for k in facet_keys], "manifolds": state["manifolds"],
            "groups": state["groups"], "a": state["a"], "b": state["b"]}


def _unchanged_controls(facet_keys: list[str]) -> dict[str, Any]:
    """Every control left as the user set it (a pattern-matched output takes one value per component)."""
    return {name: [no_update] * len(facet_keys) if ident is FACETS else no_update for name, ident in CONTROLS}


def _register_sorted(app: dash.Dash, board: Board) -> None:
    # The grid reports its columns after every redraw and resize; only a new sort is news. Those reports
    # go to their own callback: as an input of `update` they re-sent its request while the first one was
    # still computing (50 evals, a loaded machine), and Dash drops a superseded request's answer, so the
    # page kept an empty table (docs/performance.md, *Scale*).
    @app.callback(output={"count": Output(LB.SORTED, "data")},
                  inputs={"column_state": Input(LB.TABLE, "columnState")},
                  state={"search": State(LB.URL, "search"), "facet_ids": State(FACETS, "id"),
                         "count": State(LB.SORTED, "data")}, prevent_initial_call=True)
    def sorted_by(column_state: list[Any] | None, search: str, facet_ids: list[dict[str, str]],
                  count: int | None) -> dict[str, int | NoUpdate]:
        shown = state_from_url(board, search, [i["key"] for i in facet_ids])["sort_by"]
        return {"count": no_update if grid.sort_from_state(column_state) == shown else (count or 0) + 1}


def _register_difference(app: dash.Dash, board: Board, differ: lbdiff.Differences, links: dict) -> None:
    @app.callback(output={"view": Output(LB.DIFF, "children"), "key": Output(LB.DIFF_KEY, "data")},
                  inputs={"search": Input(LB.URL, "search")}, state={"shown": State(LB.DIFF_KEY, "data")})
    def difference(search: str, shown: list | None) -> dict[str, Any]:
        # paging, sorting, search ... change the URL too; the view is redrawn only when its own inputs change
        key = diff_key(board, search)
        if shown is not None and key == shown:
            return {"view": no_update, "key": no_update}
        return {"view": diff_update(board, differ, search, links), "key": key}


def _register_download(app: dash.Dash, board: Board) -> None:
    @app.callback(output={"file": Output(LB.DOWNLOAD, "data")},
                  inputs={"csv_clicks": Input(LB.CSV, "n_clicks"), "json_clicks": Input(LB.JSON, "n_clicks")},
                  state={"search": State(LB.URL, "search"), "facet_ids": State(FACETS, "id")},
                  prevent_initial_call=True)
    def download(csv_clicks: int | None, json_clicks: int | None, search: str,
                 facet_ids: list[dict[str, str]]) -> dict[str, dict[str, str]]:
        state = state_from_url(board, search, [i["key"] for i in facet_ids])
        rows = leaderboard_table.selected_rows(board, state)
        if ctx.triggered_id == LB.JSON:
            return {"file": {"content": leaderboard_table.export_json(board, rows, state),
                             "filename": "leaderboard.json"}}
        return {"file": {"content": leaderboard_table.export_csv(board, rows, state), "filename": "leaderboard.csv"}}


def diff_key(board: Board, search: str) -> list:
    """What the difference view depends on: the two evals, the cells mode, manifold entries and groups."""
    state = state_from_url(board, search, [])
    return [state["a"], state["b"], state["mode"], sorted(state["manifolds"]), sorted(state["groups"])]


def diff_update(board: Board, differ: lbdiff.Differences, search: str, links: dict) -> html.Div | None:
    """The difference view for a URL (the A / B evals, cells mode, manifold and group choice in it)."""
    state = state_from_url(board, search, [])
    return lbdiff.panel(differ, state, board.groups, links)


def state_from_url(board: Board, search: str, facet_keys: Iterable[str]) -> ViewState:
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
    return ViewState(
        q=urlstate.first(url, "q", ""), tier=urlstate.first(url, "tier", OVERALL, tiers),
        sort=urlstate.first(url, "sort", "score", {"score", "ratio"}),
        mode=urlstate.first(url, "mode", SCORE_MODE, set(MODES)),
        facets={k: urlstate.many(url, f"f.{k}") for k in facet_keys},
        manifolds=urlstate.many(url, "manifold", set(board.manifolds)),
        groups=urlstate.many(url, "group", groups), sort_by=sort_by, page=page,
        a=urlstate.first(url, "a", None, known), b=urlstate.first(url, "b", None, known),
    )


def state_to_url(state: ViewState) -> str:
    sort_by = state["sort_by"]
    flat = {"q": state["q"], "tier": state["tier"], "sort": state["sort"], "mode": state["mode"],
            "manifold": state["manifolds"], "group": state["groups"],
            "col": sort_by[0]["column_id"] if sort_by else None,
            "dir": sort_by[0]["direction"] if sort_by else None, "page": str(state["page"] + 1),
            "a": state["a"], "b": state["b"]}
    for key, values in sorted(state["facets"].items()):
        flat[f"f.{key}"] = values
    return urlstate.encode(flat, DEFAULTS)


def _next_page(trigger: str | dict | None, page: int) -> int:
    if trigger == LB.PREV:
        return max(page - 1, 0)
    if trigger == LB.NEXT:
        return page + 1
    if trigger in (LB.A, LB.B):
        return page       # choosing evals to compare leaves the ranking as it is
    return 0   # any filter or sort change starts over


def table_update(board: Board, state: ViewState, links: dict) -> TableView:
    """Everything the table shows for a view state (rows of the page, styles, labels, empty state)."""
    rows = leaderboard_table.selected_rows(board, state)
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    page = min(max(state["page"], 0), pages - 1)
    shown = rows[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]
    view = board.view(tuple(sorted(state["manifolds"])), tuple(sorted(state["groups"])))
    columns = [g for g in view.columns.get(state["tier"], [])
               if not state["groups"] or str(g) in set(state["groups"])]
    table = leaderboard_table.table_content(board, shown, rows, columns, state, links)
    return TableView(page=page, pages=pages, data=table["data"], columns=table["columns"],
                     label=f"page {page + 1} of {pages} · {len(rows)} evals",
                     empty=None if rows else html.Div(empty_reason(board, state), className="rs-panel rs-empty",
                                                      id=LB.EMPTY_MESSAGE),
                     note=_tier_note(state["tier"], board, state["mode"]))


def empty_reason(board: Board, state: ViewState) -> str:
    """Why a view has no rows, in words that point at the filter to change (each filter tried alone)."""
    bare: ViewState = {**state, "q": "", "facets": {}, "manifolds": [], "groups": [], "page": 0}
    if state["q"] and not leaderboard_table.selected_rows(board, {**bare, "q": state["q"]}):
        return f"No eval's label, model, id or tag contains {state['q']!r}. Clear the search box to see all."
    chosen = {k: v for k, v in state["facets"].items() if v}
    if chosen and not leaderboard_table.selected_rows(board, {**bare, "facets": chosen}):
        text = " and ".join(f"{k} in ({', '.join(v)})" for k, v in chosen.items())
        return f"No eval has {text}: facet values are OR-ed within a key and AND-ed across keys."
    if state["manifolds"] or state["groups"]:
        where = "; ".join(board.manifold_labels.get(m, m) for m in state["manifolds"]) or "all manifold entries"
        if not leaderboard_table.selected_rows(board, {**bare, "manifolds": state["manifolds"],
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

