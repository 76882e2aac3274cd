"""explorer.py's app: 3-D accuracy surfaces per eval with linked panels and point inspection.

Pick a task, one of its config views, a manifold entry (its own grid, or all entries), the
statistics mode and one or more evals (default: the top models). A 2-D view draws one
surface per eval on the same axes (accuracy red -> green, the lower 95% bound as a grey
shadow shown from the legend, diamonds sized by the truncated share where it reaches 10%), cameras kept in step;
a 1-D view draws accuracy lines. Below: accuracy projected on each dimension of the view,
completion-token histograms, the prompt FFT and the inspected point with every one of its
samples (prompt, reasoning, answer). The whole state, inspected point included, is in the URL.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from dash import ALL, ClientsideFunction, Input, NoUpdate, Output, State, ctx, dcc, html, no_update

from resolver.analysis import format_value, tier_name
from resolver.core import UserError
from resolver.pointsdb import OUTCOME_NAMES
from resolver.stats import MODE_DESCRIPTIONS, MODES, SUMMED_COLUMNS, add_statistics
from resolver.web import explorer_figures as figs, layout, urlstate
from resolver.web.explorer_data import ALL_MANIFOLDS, MODE, Landscape
from resolver.web.ids import EX
from resolver.web.samples import render_sample
from resolver.web.server import make_app

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import dash

    from resolver.catalog import Dataset
    from resolver.pointsdb import PointsDB

DEFAULT_EVALS = 2
# plotly draws 3-D scenes at twice the screen resolution by default; at 1x a redraw costs a quarter
# of the pixels, which is what decides its time wherever WebGL runs in software.
SURFACE_CONFIG: dcc.Graph.Config = {"displaylogo": False, "plotGlPixelRatio": 1}
# Kept for callers of the old names.
surface_figure, line_figure, projection_figure, token_figure = (figs.surface_figure, figs.line_figure,
                                                                figs.projection_figure, figs.token_figure)
_from_position, _fft_panel = figs.from_position, figs.fft_panel


def build_app(dataset: Dataset, db: PointsDB, tokenizer: Any = None, url_base_pathname: str = "/", tokenizers: dict | None = None,
              links: dict | None = None) -> dash.Dash:
    land = Landscape(dataset, db, tokenizer, tokenizers)
    if not land.tasks:
        raise UserError("no task of the dataset has points in any view; nothing to draw")
    app = make_app(f"ReasonScape explorer — {dataset.name}", url_base_pathname)
    nav = {k: v for k, v in (links or {}).items() if k != "explorer"}
    loading: dict[str, Any] = {"type": "circle", "delay_show": 250}
    app.layout = layout.page("Explorer", f"{dataset.name} · {len(land.eval_ids)} evals · {len(land.tasks)} tasks", [
        dcc.Location(id=EX.URL, refresh=False),
        dcc.Store(id=EX.STATE), dcc.Store(id=EX.POINT_STORE), dcc.Store(id=EX.CAMERA), dcc.Store(id=EX.SCROLL),
        dcc.Store(id=EX.SAMPLE_POS, data=0),
        html.Div([
            layout.control("Task", dcc.Dropdown(id=EX.TASK, options=land.tasks, value=land.tasks[0],
                                                clearable=False)),
            layout.control("View", dcc.Dropdown(id=EX.VIEW, clearable=False)),
            layout.control("Manifold", dcc.Dropdown(id=EX.MANIFOLD, clearable=False, searchable=False),
                           help="Draw one manifold entry's own grid (its axes hold only its values), or all "
                                "entries of the task together (their union, with gaps where grids differ)."),
            layout.control("Mode", dcc.Dropdown(id=EX.MODE, value=MODE, clearable=False, searchable=False,
                                                options=[{"label": m, "value": m, "title": MODE_DESCRIPTIONS[m]}
                                                         for m in MODES]),
                           help="Statistics mode of every accuracy shown. " +
                                " · ".join(f"{m}: {d}" for m, d in MODE_DESCRIPTIONS.items())),
            layout.control("Evals (side by side)", dcc.Dropdown(
                id=EX.EVALS, multi=True, value=land.top_evals(DEFAULT_EVALS),
                options=[{"label": land.labels[e], "value": e} for e in land.eval_ids]), wide=True),
            html.Div([html.Button("Reset", id=EX.RESET, n_clicks=0, className="rs-button rs-secondary"),
                      dcc.Checklist(id=EX.SYNC, options=[{"label": "same camera on every surface",
                                                            "value": "sync"}], value=["sync"], inline=True)],
                     className="rs-actions"),
        ], className="rs-controls"),
        dcc.Loading(html.Div(id=EX.MAIN, className="rs-grid"), id=EX.MAIN_LOADING, **loading),
        html.Div([
            html.Div(dcc.Loading(dcc.Graph(id=EX.PROJECTION, config={"displaylogo": False}), **loading),
                     className="rs-panel"),
            html.Div(dcc.Loading(dcc.Graph(id=EX.TOKENS, config={"displaylogo": False}), **loading),
                     className="rs-panel"),
        ], className="rs-grid"),
        html.Div([
            dcc.Loading(html.Div(id=EX.POINT, className="rs-panel"), **loading),
            html.Div(id=EX.FFT, className="rs-panel"),
        ], className="rs-grid"),
    ], nav=nav)
    _register(app, land)
    warm(land)
    return app


def warm(land: Landscape) -> None:
    """Compute the default page's figures once at start-up (as the leaderboard warms its default board),
    so the first visit gets them from the caches: the prompt FFT alone reads the raw NDJSON of the two
    default evals, 90% of a cold first draw (docs/performance.md, *Scale*)."""
    current = state_update(land, None, [], "", None, None, None, None, None, None).current
    assert not isinstance(current, NoUpdate), "a page load restores the whole state"
    draw_update(land, current["view"], current["evals"], current["manifold"], current["mode"])
    if current["evals"]:
        figs.projection_figure(land, current["view"], tuple(current["evals"]), {}, current["manifold"],
                               current["mode"])


MAIN_GRAPHS = {"type": EX.MAIN, "eval": ALL, "draw": ALL}     # every surface / line graph drawn
SAMPLE_STEPS = {"type": EX.SAMPLE_STEP_TYPE, "step": ALL}
SAMPLE_FILTERS = {"type": EX.SAMPLE_FILTER_TYPE, "n": ALL}


class Current(TypedDict):
    """What is drawn (the ex-state store): a task's view, its manifold entry, the mode and the evals."""

    task: str
    view: str
    manifold: str
    mode: str
    evals: list[str]


class StateUpdate(NamedTuple):
    """The state callback's outputs (state_update), named as in its Dash dict form."""

    task: str | NoUpdate
    view_options: list[dict[str, str]] | NoUpdate
    view: str | None | NoUpdate
    manifold_options: list | NoUpdate
    manifold: str | NoUpdate
    mode: str | NoUpdate
    evals: list[str] | NoUpdate
    current: Current | NoUpdate
    point: dict | None | NoUpdate
    url: str | NoUpdate


def _register(app: dash.Dash, land: Landscape) -> None:
    _register_state(app, land)
    _register_figures(app, land)
    _register_inspect(app, land)
    _register_clientside(app)


def _register_state(app: dash.Dash, land: Landscape) -> None:
    @app.callback(
        output={"task": Output(EX.TASK, "value"), "view_options": Output(EX.VIEW, "options"),
                "view": Output(EX.VIEW, "value"), "manifold_options": Output(EX.MANIFOLD, "options"),
                "manifold": Output(EX.MANIFOLD, "value"), "mode": Output(EX.MODE, "value"),
                "evals": Output(EX.EVALS, "value"), "current": Output(EX.STATE, "data"),
                "point": Output(EX.POINT_STORE, "data"), "url": Output(EX.URL, "search")},
        inputs={"search": Input(EX.URL, "search"), "task": Input(EX.TASK, "value"), "view": Input(EX.VIEW, "value"),
                "manifold": Input(EX.MANIFOLD, "value"), "mode": Input(EX.MODE, "value"),
                "evals": Input(EX.EVALS, "value"), "clicks": Input(MAIN_GRAPHS, "clickData"),
                "reset_clicks": Input(EX.RESET, "n_clicks")},
        state={"point": State(EX.POINT_STORE, "data")},
    )
    def state(search: str, task: str | None, view: str | None, manifold: str | None, mode: str | None,
              evals: list[str] | None, clicks: list, reset_clicks: int | None, point: dict | None) -> dict[str, Any]:
        return state_update(land, ctx.triggered_id, ctx.triggered, search, task, view, manifold, mode,
                            evals, point)._asdict()


def _register_figures(app: dash.Dash, land: Landscape) -> None:
    @app.callback(output={"main": Output(EX.MAIN, "children"), "tokens": Output(EX.TOKENS, "figure")},
                  inputs={"current": Input(EX.STATE, "data")})
    def draw(current: Current | None) -> dict[str, Any]:
        if not current:
            return {"main": no_update, "tokens": no_update}
        main, tokens = surfaces_update(land, current["view"], current["evals"], current["manifold"], current["mode"])
        return {"main": main, "tokens": tokens}

    # The prompt FFT reads raw NDJSON (seconds on a cold cache): a callback of its own, so the surfaces
    # above never wait for it.
    @app.callback(output={"panel": Output(EX.FFT, "children")}, inputs={"current": Input(EX.STATE, "data")})
    def fft(current: Current | None) -> dict[str, html.Div | str | NoUpdate]:
        return {"panel": fft_update(land, current["view"], current["evals"]) if current else no_update}

    @app.callback(output={"figure": Output(EX.PROJECTION, "figure")},
                  inputs={"current": Input(EX.STATE, "data"), "point": Input(EX.POINT_STORE, "data")})
    def project(current: Current | None, point: dict | None) -> dict[str, dict]:
        if not current or not current["evals"]:
            return {"figure": {}}
        coords = point["coords"] if point else {}
        return {"figure": figs.projection_figure(land, current["view"], tuple(current["evals"]), coords,
                                                 current["manifold"], current["mode"])}


def _register_inspect(app: dash.Dash, land: Landscape) -> None:
    @app.callback(output={"details": Output(EX.POINT, "children"), "position": Output(EX.SAMPLE_POS, "data")},
                  inputs={"point": Input(EX.POINT_STORE, "data"), "steps": Input(SAMPLE_STEPS, "n_clicks"),
                          "filters": Input(SAMPLE_FILTERS, "value")},
                  state={"current": State(EX.STATE, "data"), "position": State(EX.SAMPLE_POS, "data")})
    def inspect(point: dict | None, steps: list, filters: list[list[str]], current: Current | None,
                position: int | None) -> dict[str, html.Div | int]:
        trigger = ctx.triggered_id
        failed_only = bool(filters and filters[0])
        if isinstance(trigger, dict) and trigger.get("type") == EX.SAMPLE_STEP_TYPE:
            position = (position or 0) + int(trigger["step"])
        else:
            position = 0
        if not point or not current:
            return {"details": _point_hint(), "position": 0}
        position = max(position, 0)
        return {"details": point_details(land, current["view"], point["eval"], point["coords"], current["manifold"],
                                         current["mode"], position, failed_only), "position": position}


def _register_clientside(app: dash.Dash) -> None:
    """The browser's own callbacks (assets/rs.js): cameras kept in step, a click's pending note, the scroll."""
    app.clientside_callback(ClientsideFunction("rs", "syncCameras"), Output(EX.CAMERA, "data"),
                            Input(MAIN_GRAPHS, "relayoutData"), State(EX.SYNC, "value"))
    app.clientside_callback(ClientsideFunction("rs", "pointPending"),
                            Output(EX.POINT, "children", allow_duplicate=True),
                            Input(MAIN_GRAPHS, "clickData"), prevent_initial_call=True)
    app.clientside_callback(ClientsideFunction("rs", "scrollAnswer"), Output(EX.SCROLL, "data"),
                            Input(EX.POINT, "children"), prevent_initial_call=True)


def _point_hint() -> html.Div:
    return html.Div("Click a point of a surface or a line to see its id, counters, interval and every sample "
                    "(prompt, reasoning, answer).", className="rs-note", id=EX.POINT_HINT)


def view_options(land: Landscape, task: str) -> tuple[list[dict[str, str]], str]:
    """View dropdown options of a task and the default (its first 2-D view)."""
    views = land.task_views(task)
    options = [{"label": f"{v.view} ({' × '.join(figs.short(d) for d in v.dims)})", "value": v.ident} for v in views]
    two_d = [v.ident for v in views if len(v.dims) == 2]
    return options, (two_d or [v.ident for v in views])[0]


def manifold_options(land: Landscape, task: str) -> list:
    options = [{"label": "all entries (union of their grids)", "value": ALL_MANIFOLDS}]
    for mid, degree, points in land.manifolds(task):
        tier = f", {tier_name(degree)}" if degree is not None else ""
        options.append({"label": f"{mid} ({points} points{tier})", "value": mid})
    return options


def _valid_evals(land: Landscape, values: Iterable[str] | None) -> list:
    known = set(land.eval_ids)
    return [e for e in (values or []) if e in known]


def _url_point(land: Landscape, url: dict, ident: str, eval_ids: Iterable[str] | None) -> dict | None:
    point_eval = urlstate.first(url, "pe")
    if point_eval not in set(eval_ids or ()):
        return None
    coords = {dim: urlstate.first(url, f"p.{dim}") for dim in land.view(ident).dims}
    if any(v is None for v in coords.values()):
        return None
    return {"eval": point_eval, "coords": {d: _number_or_text(v) for d, v in coords.items()}}


def _number_or_text(text: str) -> int | float | str:
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() else number


def state_update(land: Landscape, trigger: str | dict | None, triggered: list[dict], search: str, task: str | None,
                 ident: str | None, manifold: str | None, mode: str | None, eval_ids: list[str] | None,
                 point: dict | None) -> StateUpdate:
    """The state callback: controls <-> URL, resetting what a change makes stale (the inspected point)."""
    if trigger in (None, EX.URL, EX.RESET):
        url = urlstate.parse(search if trigger != EX.RESET else "")
        task = urlstate.first(url, "task", land.tasks[0], set(land.tasks))
        _, default_view = view_options(land, task)
        ident = urlstate.first(url, "view", default_view, {v.ident for v in land.task_views(task)})
        manifolds = {o["value"] for o in manifold_options(land, task)}
        manifold = urlstate.first(url, "manifold", land.default_manifold(ident), manifolds)
        mode = urlstate.first(url, "mode", MODE, set(MODES))
        eval_ids = _valid_evals(land, url.get("evals")) if "evals" in url else land.top_evals(DEFAULT_EVALS)
        point = _url_point(land, url, ident, eval_ids)
    elif trigger == EX.TASK:
        assert task is not None, "the task dropdown (not clearable) triggered, so it holds a task"
        _, ident = view_options(land, task)
        manifold, point = land.default_manifold(ident), None
    elif trigger == EX.VIEW:
        point = None
        if land.has_view(ident) and "manifold.id" in land.view(ident).dims:
            manifold = ALL_MANIFOLDS    # the manifold is an axis of this view: show every entry
    elif isinstance(trigger, dict) and trigger.get("type") == EX.MAIN:
        click = triggered[0]["value"] if triggered else None
        assert ident is not None and manifold is not None, "a click comes from a graph, drawn once both are chosen"
        found = _clicked_point(land, ident, trigger, click, manifold)
        if found is None:
            return StateUpdate(*(no_update,) * 10)
        point = found
    else:                                   # manifold, mode or evals changed: the point belongs to the old view
        point = None
    eval_ids = _valid_evals(land, eval_ids)
    assert task is not None, "read from the URL above, else the dropdown's (not clearable) value"
    assert ident is not None, "read from the URL above, else the view dropdown's (not clearable) value"
    current = Current(task=task, view=ident, manifold=manifold or ALL_MANIFOLDS, mode=mode or MODE, evals=eval_ids)
    view_opts, _ = view_options(land, task)
    flat = {"task": task, "view": ident, "manifold": current["manifold"], "mode": current["mode"], "evals": eval_ids}
    if point:
        flat["pe"] = point["eval"]
        flat.update({f"p.{d}": v for d, v in point["coords"].items()})
    search_out = no_update if trigger == EX.URL else urlstate.encode(flat)
    if isinstance(trigger, dict):           # a click: the view is unchanged, only the point and the URL move
        return StateUpdate(*(no_update,) * 8, point, search_out)
    return StateUpdate(task, view_opts, ident, manifold_options(land, task), current["manifold"], current["mode"],
                       eval_ids, current, point, search_out)


def _clicked_point(land: Landscape, ident: str, trigger: dict, click: dict | None, manifold: str) -> dict | None:
    if not click or not click.get("points") or not land.has_view(ident):
        return None
    point = click["points"][0]
    view = land.view(ident)
    eval_id = trigger["eval"] if trigger["eval"] != "*" else point.get("customdata")
    if eval_id is None:
        return None
    if len(view.dims) == 2:
        coords = {dim: figs.from_position(point[axis], land.categories(ident, dim, manifold))
                  for dim, axis in zip(view.dims, ("x", "y"))}
    else:
        coords = {view.dims[0]: point["x"]}
    return {"eval": eval_id, "coords": coords}


def draw_update(land: Landscape, ident: str, eval_ids: Sequence[str], manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> tuple:
    """Main graphs, token histograms and FFT for a view and evals (the draw and fft callbacks together)."""
    return (*surfaces_update(land, ident, eval_ids, manifold, mode), fft_update(land, ident, eval_ids))


def fft_update(land: Landscape, ident: str, eval_ids: Sequence[str]) -> html.Div | str:
    """The FFT panel of a view and evals (the fft callback)."""
    return figs.fft_panel(land, ident, eval_ids) if ident and eval_ids else ""


def surfaces_update(land: Landscape, ident: str, eval_ids: Sequence[str], manifold: str = ALL_MANIFOLDS,
                    mode: str = MODE) -> tuple[html.Div | list[html.Div], dict]:
    """Main graphs and token histograms for a view and evals (the draw callback)."""
    if not ident or not eval_ids:
        return html.Div("Choose at least one eval to draw (the Evals box above).", className="rs-note rs-empty",
                        id=EX.EMPTY), {}
    view = land.view(ident)
    if len(view.dims) == 2:
        main = [_surface_panel(land, ident, e, manifold, mode) for e in eval_ids]
    else:
        drawn = set(land.projection(ident, view.dims[0], tuple(eval_ids), manifold, mode)["eval_id"])
        main = [html.Div(dcc.Graph(id={"type": EX.MAIN, "eval": "*", "draw": _draw_key(ident, manifold, mode)},
                                   figure=figs.line_figure(land, ident, eval_ids, manifold, mode),
                                   config={"displaylogo": False}), className="rs-panel")]
        main += [_no_data(land, ident, e, manifold) for e in eval_ids if e not in drawn]
    return main, figs.token_figure(land, view.base_task, tuple(eval_ids))


def _surface_panel(land: Landscape, ident: str, eval_id: str, manifold: str, mode: str) -> html.Div:
    if land.surface(ident, eval_id, manifold, mode).empty:
        return _no_data(land, ident, eval_id, manifold)
    return html.Div(dcc.Graph(id={"type": EX.MAIN, "eval": eval_id, "draw": _draw_key(ident, manifold, mode)},
                              figure=figs.surface_figure(land, ident, eval_id, manifold, mode),
                              config=SURFACE_CONFIG, style={"height": "480px"}),
                    className="rs-panel")


def _draw_key(ident: str, manifold: str, mode: str) -> str:
    """Part of each graph's id: a new view, manifold or mode mounts new graphs (measured with the pixels
    drawn, updating three 3-D scenes in place was no faster); a click or an added eval keeps the others."""
    return f"{ident}|{manifold}|{mode}"


def _no_data(land: Landscape, ident: str, eval_id: str, manifold: str) -> html.Div:
    where = "" if manifold == ALL_MANIFOLDS else f" in manifold entry {manifold}"
    data_attributes: dict[str, Any] = {"data-eval": eval_id}
    return html.Div(f"{land.labels.get(eval_id, eval_id)} has no points of {ident}{where}: this eval did not run "
                    "that part of the task. Choose another manifold entry, view or eval.",
                    className="rs-panel rs-empty ex-no-data", **data_attributes)


def point_details(land: Landscape, ident: str, eval_id: str, coords: dict, manifold: str = ALL_MANIFOLDS,
                  mode: str = MODE, position: int = 0, failed_only: bool = False) -> html.Div:
    rows = land.points_at(ident, eval_id, coords, manifold)
    view = land.view(ident)
    where = ", ".join(f"{figs.short(k)} = {v}" for k, v in coords.items())
    entry = "" if manifold in ("", ALL_MANIFOLDS) else f" ({manifold})"
    heading = html.H4(f"{land.labels.get(eval_id, eval_id)} · {view.base_task} / {view.view}{entry} at {where}",
                      id=EX.POINT_HEADING)
    if rows.empty:
        return html.Div([heading, html.Div("No point of this eval at these coordinates.", className="rs-note")],
                        id=EX.POINT_DETAILS)
    summed = rows[[c for c in SUMMED_COLUMNS if c in rows.columns]].sum(min_count=1).to_frame().T
    stats = add_statistics(summed, mode).iloc[0]
    ids = [int(i) for i in rows["id"]]
    counters = ", ".join(f"{name} {int(stats[name])}" for name in OUTCOME_NAMES)
    children = [
        heading,
        html.Div([html.B("point id" + ("s" if len(ids) > 1 else "") + ": "),
                  html.Span(", ".join(map(str, ids)), id=EX.POINT_IDS)]),
        html.Div([html.B("counters: "), html.Span(counters, id=EX.POINT_COUNTERS)]),
        html.Div([html.B(f"accuracy ({mode}, 95%): ", title=MODE_DESCRIPTIONS[mode]),
                  html.Span(format_value(stats), id=EX.POINT_INTERVAL)]),
    ]
    try:
        samples = land.samples(tuple(ids))
    except UserError as exc:     # raw NDJSON not present (e.g. only the DB was pulled): say so, keep the rest
        children.append(html.Div(f"samples unavailable: {exc}", className="rs-note", id=EX.POINT_NO_SAMPLES))
        return html.Div(children, id=EX.POINT_DETAILS)
    chosen = [s for s in samples if s["outcome"] != "correct"] if failed_only else samples
    children.append(_sample_browser(chosen, len(samples), position, failed_only))
    return html.Div(children, id=EX.POINT_DETAILS)


def _sample_browser(samples: list, total: int, position: int, failed_only: bool) -> html.Div:
    controls = html.Div([
        html.Button("← sample", id={"type": EX.SAMPLE_STEP_TYPE, "step": -1}, n_clicks=0, className="rs-button",
                    disabled=not samples or position <= 0),
        html.Button("sample →", id={"type": EX.SAMPLE_STEP_TYPE, "step": 1}, n_clicks=0, className="rs-button",
                    disabled=not samples or position >= len(samples) - 1),
        dcc.Checklist(id={"type": EX.SAMPLE_FILTER_TYPE, "n": 0}, inline=True, value=["failed"] if failed_only else [],
                      options=[{"label": "failed samples only", "value": "failed"}]),
        html.Span(f"{len(samples)} of {total} samples", className="rs-note", id=EX.SAMPLE_COUNT),
    ], className="rs-sample-pager")
    if not samples:
        return html.Div([controls, html.Div("No sample matches (every sample of this point is correct).",
                                            className="rs-note")])
    position = min(max(position, 0), len(samples) - 1)
    return html.Div([controls, render_sample(samples[position], position, len(samples))])
