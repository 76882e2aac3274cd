"""explorer.py's app: 3-D accuracy surfaces per eval with linked panels and point inspection.

Pick a task, one of its config views and one or more evals. A 2-D view draws one surface
per eval on the same axes (accuracy red -> green, the lower 95% bound as a grey shadow,
x markers where more than 2% of answers were truncated); a 1-D view draws accuracy lines.
Below: accuracy projected on each dimension of the view, completion-token histograms, the
prompt FFT (when started with --tokenizer) and the details of the last clicked point.
"""
from __future__ import annotations

import plotly.graph_objects as go
from dash import ALL, Input, Output, State, ctx, dcc, html, no_update
from plotly.subplots import make_subplots

from resolver.web import layout, theme
from resolver.web.landscape import TRUNCATION_HEAVY, Landscape, pivot

DEFAULT_EVALS = 2
FAILURE_SAMPLES = 3
OUTCOMES = ("correct", "incorrect", "invalid", "truncated")


def build_app(dataset, db, tokenizer=None, url_base_pathname: str = "/"):
    from resolver.web.server import make_app

    land = Landscape(dataset, db, tokenizer)
    app = make_app(f"ReasonScape explorer — {dataset.name}", url_base_pathname)
    first_task = land.tasks[0]
    app.layout = layout.page("Explorer", f"{dataset.name} · {len(land.eval_ids)} evals · {len(land.tasks)} tasks "
                             "· accuracy = C_P interval", [
        html.Div([
            layout.control("Task", dcc.Dropdown(id="ex-task", options=land.tasks, value=first_task, clearable=False)),
            layout.control("View", dcc.Dropdown(id="ex-view", clearable=False)),
            layout.control("Evals (side by side)", dcc.Dropdown(
                id="ex-evals", multi=True, value=land.eval_ids[:DEFAULT_EVALS],
                options=[{"label": land.labels[e], "value": e} for e in land.eval_ids]), wide=True),
        ], className="rs-controls"),
        html.Div(id="ex-main", className="rs-grid"),
        html.Div([
            html.Div(dcc.Graph(id="ex-projection", config={"displaylogo": False}), className="rs-panel"),
            html.Div(dcc.Graph(id="ex-tokens", config={"displaylogo": False}), className="rs-panel"),
            html.Div(id="ex-fft", className="rs-panel"),
            html.Div(html.Div("Click a point of a surface or line to see its id, counters, interval and failed "
                              "samples.", className="rs-note"), id="ex-point", className="rs-panel"),
        ], className="rs-grid"),
    ])
    _register(app, land)
    return app


def _register(app, land: Landscape):
    @app.callback(Output("ex-view", "options"), Output("ex-view", "value"), Input("ex-task", "value"))
    def views_of_task(task):
        views = land.task_views(task)
        options = [{"label": f"{v.view} ({' × '.join(v.dims)})", "value": v.ident} for v in views]
        two_d = [v.ident for v in views if len(v.dims) == 2]
        return options, (two_d or [v.ident for v in views])[0]

    @app.callback(Output("ex-main", "children"), Output("ex-projection", "figure"), Output("ex-tokens", "figure"),
                  Output("ex-fft", "children"), Input("ex-view", "value"), Input("ex-evals", "value"))
    def draw(ident, eval_ids):
        if not ident or not eval_ids:
            return html.Div("Choose a view and at least one eval.", className="rs-note"), {}, {}, ""
        view = land.view(ident)
        if len(view.dims) == 2:
            main = [_surface_panel(land, ident, e) for e in eval_ids]
        else:
            main = [html.Div(dcc.Graph(id={"type": "ex-main", "eval": "*"}, figure=line_figure(land, ident, eval_ids),
                                       config={"displaylogo": False}), className="rs-panel")]
        return (main, projection_figure(land, ident, tuple(eval_ids)),
                token_figure(land, view.base_task, tuple(eval_ids)), _fft_panel(land, ident, eval_ids[0]))

    @app.callback(Output("ex-point", "children"), Input({"type": "ex-main", "eval": ALL}, "clickData"),
                  State("ex-view", "value"), prevent_initial_call=True)
    def inspect(_clicks, ident):
        trigger = ctx.triggered_id
        click = ctx.triggered[0]["value"] if ctx.triggered else None
        if not trigger or not click or not click.get("points"):
            return no_update
        point = click["points"][0]
        view = land.view(ident)
        eval_id = trigger["eval"] if trigger["eval"] != "*" else point.get("customdata")
        coords = {view.dims[0]: point["x"]}
        if len(view.dims) == 2:
            coords[view.dims[1]] = point["y"]
        return point_details(land, ident, eval_id, coords)


def _surface_panel(land: Landscape, ident: str, eval_id: str):
    return html.Div(dcc.Graph(id={"type": "ex-main", "eval": eval_id}, figure=surface_figure(land, ident, eval_id),
                              config={"displaylogo": False}, style={"height": "460px"}), className="rs-panel")


def surface_figure(land: Landscape, ident: str, eval_id: str) -> go.Figure:
    view = land.view(ident)
    x, y = view.dims
    table = land.surface(ident, eval_id)
    fig = go.Figure()
    if not table.empty:
        xs, ys, z = pivot(table, x, y, "center")
        _, _, low = pivot(table.assign(low=(table["center"] - table["margin"]).clip(lower=0)), x, y, "low")
        fig.add_trace(go.Surface(x=xs, y=ys, z=z, name="accuracy", colorscale=theme.SCORE_SCALE, cmin=0, cmax=1,
                                 colorbar={"title": {"text": "accuracy"}, "len": 0.7},
                                 hovertemplate=f"{x} %{{x}}<br>{y} %{{y}}<br>accuracy %{{z:.3f}}<extra></extra>"))
        fig.add_trace(go.Surface(x=xs, y=ys, z=low, name="lower 95% bound", showscale=False, opacity=0.35,
                                 colorscale=[[0, "#808080"], [1, "#808080"]], hoverinfo="skip"))
        heavy = table[table["truncated_ratio"] > TRUNCATION_HEAVY]
        fig.add_trace(go.Scatter3d(
            x=heavy[x].tolist(), y=heavy[y].tolist(), z=(heavy["center"] + 0.03).tolist(), mode="markers",
            name=f"truncation > {TRUNCATION_HEAVY:.0%}",
            marker={"symbol": "x", "size": 6, "color": theme.TRUNCATION_COLOUR},
            text=[f"{t:.0%} truncated" for t in heavy["truncated_ratio"]],
            hovertemplate="%{text}<extra></extra>"))
    fig.update_layout(title={"text": f"{land.labels.get(eval_id, eval_id)} — {view.view}", "font": {"size": 14}},
                      margin={"l": 0, "r": 0, "t": 40, "b": 0}, showlegend=False,
                      scene={"xaxis": {"title": {"text": x}}, "yaxis": {"title": {"text": y}},
                             "zaxis": {"title": {"text": "accuracy"}, "range": [0, 1]},
                             "camera": {"eye": {"x": 1.6, "y": -1.6, "z": 0.9}}})
    return fig


def line_figure(land: Landscape, ident: str, eval_ids) -> go.Figure:
    view = land.view(ident)
    dim = view.dims[0]
    table = land.projection(ident, dim, tuple(eval_ids))
    fig = go.Figure()
    for i, eval_id in enumerate(eval_ids):
        part = table[table["eval_id"] == eval_id]
        fig.add_trace(go.Scatter(x=part[dim].tolist(), y=part["center"].tolist(), mode="lines+markers",
                                 name=land.labels.get(eval_id, eval_id), customdata=[eval_id] * len(part),
                                 error_y={"type": "data", "array": part["margin"].tolist()},
                                 line={"color": theme.eval_colour(i)}))
    fig.update_layout(title={"text": f"{view.base_task} — {view.view}: accuracy by {dim}"},
                      xaxis={"title": {"text": dim}}, yaxis={"title": {"text": "accuracy (95% CI)"}, "range": [0, 1.05]},
                      margin={"t": 50}, legend={"orientation": "h", "y": -0.2})
    return fig


def projection_figure(land: Landscape, ident: str, eval_ids: tuple) -> go.Figure:
    view = land.view(ident)
    fig = make_subplots(rows=1, cols=len(view.dims), subplot_titles=[f"by {d}" for d in view.dims],
                        shared_yaxes=True)
    for col, dim in enumerate(view.dims, start=1):
        table = land.projection(ident, dim, eval_ids)
        for i, eval_id in enumerate(eval_ids):
            part = table[table["eval_id"] == eval_id]
            fig.add_trace(go.Scatter(x=part[dim].tolist(), y=part["center"].tolist(), mode="lines+markers",
                                     name=land.labels.get(eval_id, eval_id), legendgroup=eval_id, showlegend=col == 1,
                                     error_y={"type": "data", "array": part["margin"].tolist()},
                                     line={"color": theme.eval_colour(i)}), row=1, col=col)
        fig.update_xaxes(title_text=dim, row=1, col=col)
    fig.update_yaxes(title_text="accuracy (95% CI)", range=[0, 1.05], row=1, col=1)
    fig.update_layout(title={"text": "Accuracy projections"}, height=360, margin={"t": 60, "b": 40},
                      legend={"orientation": "h", "y": -0.3})
    return fig


def token_figure(land: Landscape, task: str, eval_ids: tuple) -> go.Figure:
    samples = land.token_samples(task, eval_ids)
    fig = go.Figure()
    for i, eval_id in enumerate(eval_ids):
        values = samples.loc[samples["eval_id"] == eval_id, "completion_tokens"].astype(float).tolist()
        fig.add_trace(go.Histogram(x=values, name=land.labels.get(eval_id, eval_id), opacity=0.55, nbinsx=40,
                                   marker={"color": theme.eval_colour(i)}))
    fig.update_layout(title={"text": f"{task}: completion tokens per answer"}, barmode="overlay", height=360,
                      xaxis={"title": {"text": "completion tokens"}}, yaxis={"title": {"text": "answers"}},
                      margin={"t": 60, "b": 40}, legend={"orientation": "h", "y": -0.3})
    return fig


def _fft_panel(land: Landscape, ident: str, eval_id: str):
    if land.tokenizer is None:
        return html.Div("Prompt FFT: start explorer.py with --tokenizer (a local tokenizer path, a cached hub id, "
                        "or 'bytes') to see the spectra of the prompts.", className="rs-note", id="ex-fft-note")
    view = land.view(ident)
    dim = view.dims[0]
    from resolver.probe.fft import FREQUENCIES

    table = land.spectra(ident, dim, eval_id)
    fig = go.Figure()
    for i, row in enumerate(table.itertuples(index=False)):
        fig.add_trace(go.Scatter(x=FREQUENCIES.tolist(), y=list(row.spectrum), mode="lines",
                                 name=f"{dim} = {row.value}", line={"color": theme.eval_colour(i)}))
    fig.update_layout(title={"text": f"Prompt FFT ({land.tokenizer.name}) by {dim}: {land.labels.get(eval_id)}"},
                      xaxis={"title": {"text": "frequency (cycles / token)"}},
                      yaxis={"title": {"text": "magnitude"}, "type": "log"}, height=360, margin={"t": 60, "b": 40},
                      legend={"orientation": "h", "y": -0.3})
    return dcc.Graph(id="ex-fft-graph", figure=fig, config={"displaylogo": False})


def point_details(land: Landscape, ident: str, eval_id: str, coords: dict):
    rows = land.points_at(ident, eval_id, coords)
    where = ", ".join(f"{k} = {v}" for k, v in coords.items())
    if rows.empty:
        return html.Div(f"No point of this eval at {where}.", className="rs-note")
    from resolver.stats import add_statistics

    summed = rows[["correct", "incorrect", "invalid", "truncated", "guess_sum"]].sum().to_frame().T
    stats = add_statistics(summed, "C_P").iloc[0]
    ids = [int(i) for i in rows["id"]]
    report = land.failures(ids, limit=FAILURE_SAMPLES)
    counters = ", ".join(f"{name} {int(stats[name])}" for name in OUTCOMES)
    children = [
        html.H4(f"{land.labels.get(eval_id, eval_id)} at {where}"),
        html.Div([html.B("point id" + ("s" if len(ids) > 1 else "") + ": "),
                  html.Span(", ".join(map(str, ids)), id="ex-point-ids")]),
        html.Div([html.B("counters: "), html.Span(counters, id="ex-point-counters")]),
        html.Div([html.B("accuracy (C_P, 95%): "),
                  html.Span(f"{stats['center']:.3f} ± {stats['margin']:.3f}", id="ex-point-interval")]),
        html.Div(f"probe.py failure <dataset> --point-id {ids[0]} shows every failed sample", className="rs-note"),
        html.H5(f"failed samples ({len(report.failures)} shown of {int(stats['incorrect'] + stats['invalid'] + stats['truncated'])})"),
    ]
    for failure in report.failures:
        children.append(html.Div([
            html.Div(f"{failure['key']} · {failure['outcome']} · expected {failure['target']!r} · "
                     f"extracted {failure['extracted']!r}", className="rs-note"),
            html.Pre(failure["answer"][-1500:], className="rs-sample")], className="ex-failure"))
    return html.Div(children, id="ex-point-details")
