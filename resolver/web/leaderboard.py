"""leaderboard.py's app: ReasonScore ranking with one heat-map cell per group.

Controls: tier (overall / easy / medium / hard), sort (score or score/token), facet
checklists (family, arch, size, quant ...), manifold entries and groups (ReasonScore is
recomputed over the chosen ones), and previous / next pages of 10 evals.
"""
from __future__ import annotations

import math

from dash import ALL, Input, Output, State, ctx, dcc, html

from resolver.analysis import scores
from resolver.web import layout, theme
from resolver.web.board import OVERALL, Board, best_values, rows_for
from resolver.web.data import eval_facets, eval_matches_facets

PAGE_SIZE = 10
TRUNCATION_MARK_ABOVE = scores.TRUNCATION_SHOWN_ABOVE


def build_app(dataset, db, group_by: str = "base_task", url_base_pathname: str = "/"):
    """Precompute the board and return the Dash app."""
    from resolver.web.server import make_app

    board = Board(db, group_by)
    board.view((), ())  # warm the cache for the default selection at start-up (same key as the callback)
    facets = eval_facets(board.evals)
    app = make_app(f"ReasonScape leaderboard — {dataset.name}", url_base_pathname)
    app.layout = _layout(dataset, board, facets)
    _register(app, board)
    return app


def _layout(dataset, board: Board, facets: dict):
    tier_options = [{"label": "overall", "value": OVERALL}] + [{"label": t, "value": t} for t in board.tiers]
    controls = [
        layout.control("Tier", dcc.RadioItems(id="lb-tier", options=tier_options, value=OVERALL, inline=True)),
        layout.control("Sort by", dcc.RadioItems(id="lb-sort", inline=True, value="score", options=[
            {"label": "ReasonScore", "value": "score"}, {"label": "score/token", "value": "ratio"}])),
    ]
    for key, values in facets.items():
        controls.append(layout.control(key, dcc.Checklist(
            id={"type": "lb-facet", "key": key}, options=values, value=[], inline=True)))
    if len(board.manifolds) > 1:
        controls.append(layout.control("Manifold", dcc.Dropdown(
            id="lb-manifold", options=board.manifolds, value=[], multi=True, placeholder="all manifold entries"),
            wide=True))
    else:
        controls.append(dcc.Store(id="lb-manifold", data=[]))
    controls.append(layout.control(board.group_by, dcc.Dropdown(
        id="lb-groups", options=[str(g) for g in board.groups], value=[], multi=True,
        placeholder=f"all {board.group_by} values"), wide=True))
    return layout.page(
        "Leaderboard", f"{dataset.name} · {len(board.evals)} evals · ReasonScore by {board.group_by}",
        [
            html.Div(controls, className="rs-controls"),
            _legend(),
            html.Div([
                html.Button("← previous", id="lb-prev", n_clicks=0, className="rs-button"),
                html.Span(id="lb-page-label"),
                html.Button("next →", id="lb-next", n_clicks=0, className="rs-button"),
            ], className="rs-pager"),
            dcc.Store(id="lb-page", data=0),
            html.Div(id="lb-table"),
        ])


def _legend():
    return html.Div([
        html.Span([html.Span(className="rs-swatch", style={"background": theme.score_colour(0.1)}), "low"]),
        html.Span([html.Span(className="rs-swatch", style={"background": theme.score_colour(0.5)}), "mid"]),
        html.Span([html.Span(className="rs-swatch", style={"background": theme.score_colour(0.95)}), "high accuracy"]),
        html.Span([html.Span(className="rs-swatch rs-hatch-swatch", style={
            "backgroundImage": "repeating-linear-gradient(45deg, rgba(60,60,60,.4) 0 2px, transparent 2px 6px)"}),
            "hatched: truncation > 2% (penalty [-.ZZ])"]),
        html.Span("cell: .XX - .YY = center - upper 95% bound · (N/M) points when incomplete · * incomplete score · — no data"),
        html.Span("outlined: best in column · hover a cell for the full numbers"),
    ], className="rs-legend")


def _register(app, board: Board):
    @app.callback(
        Output("lb-table", "children"), Output("lb-page", "data"), Output("lb-page-label", "children"),
        Output("lb-prev", "disabled"), Output("lb-next", "disabled"),
        Input("lb-prev", "n_clicks"), Input("lb-next", "n_clicks"), Input("lb-tier", "value"),
        Input("lb-sort", "value"), Input({"type": "lb-facet", "key": ALL}, "value"),
        Input("lb-manifold", "data" if len(board.manifolds) <= 1 else "value"), Input("lb-groups", "value"),
        State({"type": "lb-facet", "key": ALL}, "id"), State("lb-page", "data"),
    )
    def update(_prev, _next, tier, sort, facet_values, manifolds, groups, facet_ids, page):
        selected = {i["key"]: v for i, v in zip(facet_ids, facet_values)}
        return table_update(board, ctx.triggered_id, page, tier, sort, selected, manifolds, groups)


def table_update(board: Board, trigger, page, tier: str, sort: str, selected: dict, manifolds, groups):
    """The table, page number, page label and pager states for a selection (the one callback)."""
    view = board.view(tuple(sorted(manifolds or ())), tuple(sorted(map(str, groups or ()))))
    keep = {e.eval_id for e in board.evals.itertuples(index=False) if eval_matches_facets(e.facets, selected)}
    rows = rows_for(view, tier, sort, keep)
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    page = _next_page(trigger, page or 0, pages)
    shown = rows[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]
    columns = [g for g in view.columns.get(tier, []) if not groups or str(g) in set(map(str, groups))]
    table = render_table(shown, columns, best_values(rows), tier, board.group_by) if rows else \
        html.Div("No eval matches these filters.", className="rs-panel", id="lb-empty")
    table = html.Div([html.Div(_tier_note(tier, board), className="rs-note", id="lb-tier-note"), table])
    label = f"page {page + 1} of {pages} · {len(rows)} evals"
    return table, page, label, page == 0, page >= pages - 1


def _tier_note(tier: str, board: Board) -> str:
    if tier != OVERALL:
        return (f"Tier {tier}: its ReasonScore and cells, as the {tier} rows of analyze.py scores.")
    if len(board.tiers) > 1:
        return ("Overall: ReasonScore over every (tier, group) cell; each cell pools all tiers of its group. "
                "Pick a tier for the per-tier cells of analyze.py scores.")
    return "ReasonScore over every group; the cells are those of analyze.py scores."


def _next_page(trigger, page: int, pages: int) -> int:
    if trigger == "lb-prev":
        return max(page - 1, 0)
    if trigger == "lb-next":
        return min(page + 1, pages - 1)
    return 0 if trigger is not None else min(page, pages - 1)  # any filter change starts over


def render_table(rows: list, columns: list, best: dict, tier: str, group_by: str):
    header = html.Tr([html.Th("#"), html.Th("Model"), html.Th("ReasonScore"), html.Th("Avg tokens"),
                      html.Th("Score/token")] + [html.Th(str(g)) for g in columns])
    body = [_row(r, columns, best, tier, group_by) for r in rows]
    return html.Table([html.Thead(header), html.Tbody(body)], className="rs-board", id="lb-board")


def _row(row: dict, columns: list, best: dict, tier: str, group_by: str):
    tags = ", ".join(row["groups"])
    model = html.Td([html.Div(row["label"]), html.Div(f"{row['eval_id']} · {tags}", className="rs-tags")],
                    className="rs-model", title=f"{row['model']}\neval_id {row['eval_id']}")
    numbers = [
        _num(scores.format_score(row["score"], row["incomplete"]), row["score"] == best["score"], "lb-score",
             f"ReasonScore {row['score']:.2f}" + (" (* some cells incomplete or missing)" if row["incomplete"] else "")),
        _num(scores.format_tokens(row["tokens"]), row["tokens"] == best["tokens"], "lb-tokens",
             f"mean completion tokens {row['tokens']:.1f}" if _ok(row["tokens"]) else "no token data"),
        _num(scores.format_ratio(row["ratio"]), row["ratio"] == best["ratio"], "lb-ratio",
             f"ReasonScore per mean completion token {row['ratio']:.5f}" if _ok(row["ratio"]) else "no token data"),
    ]
    cells = [_cell(row["cells"].get(g), g, best["cells"].get(g), tier, group_by) for g in columns]
    return html.Tr([html.Td(str(row["rank"]), className="rs-num")] + [model] + numbers + cells,
                   **{"data-eval-id": row["eval_id"]})


def _num(text, is_best, cls, title):
    return html.Td(text, className=f"rs-num {cls}" + (" rs-best" if is_best else ""), title=title)


def _cell(task, group, best_center, tier: str, group_by: str):
    if not task:
        return html.Td(scores.MISSING_CELL, className="rs-cell rs-missing", title=f"{group}: no data",
                       **{"data-group": str(group)})
    text = scores.format_task_cell(task)
    interval, _, extra = text.partition(" [") if " [" in text else text.partition(" (")
    extra = ("[" + extra) if " [" in text else (("(" + extra) if extra else "")
    classes = "rs-cell"
    if task["truncated_ratio"] > TRUNCATION_MARK_ABOVE:
        classes += " rs-truncated"
    if best_center is not None and task["center"] == best_center:
        classes += " rs-best"
    background = theme.score_colour(task["center"])
    return html.Td([html.Span(interval, className="rs-interval"), html.Span(extra, className="rs-extra")],
                   className=classes, title=cell_hover(task, group, tier, group_by),
                   style={"background-color": background, "color": theme.text_colour_on(background)},
                   **{"data-group": str(group)})


def cell_hover(task: dict, group, tier: str, group_by: str) -> str:
    """The full numbers of one cell, shown on hover."""
    where = "all tiers pooled" if tier == OVERALL else f"tier {tier}"
    expected = task["expected_points"]
    lines = [
        f"{group_by} {group} ({where})",
        f"excess accuracy {task['center']:.4f} ± {task['margin']:.4f} (95% Wilson)",
        f"adjusted score {task['adjusted_score']:.4f} = center + margin - truncation",
        f"truncated {task['truncated_ratio']:.2%}, invalid {task.get('invalid_ratio', float('nan')):.2%}",
        f"samples {task.get('samples', float('nan')):.0f}: correct {task['correct']}, incorrect {task['incorrect']}, "
        f"invalid {task['invalid']}, truncated {task['truncated']}",
        f"points {task['point_count']}" + (f" of {expected} expected" if expected is not None else ""),
        f"mean completion tokens {task['completion_tokens_mean']:.0f}" if _ok(task["completion_tokens_mean"]) else "",
    ]
    return "\n".join(line for line in lines if line)


def _ok(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))
