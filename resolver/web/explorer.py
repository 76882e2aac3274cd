"""explorer.py's app: 3-D accuracy surfaces per eval with linked panels and point inspection.

Pick a task, one of its config views and one or more evals. A 2-D view draws one surface
per eval on the same axes (accuracy red -> green, the lower 95% bound as a grey shadow,
x markers where more than 2% of answers were truncated); a 1-D view draws accuracy lines.
Below: accuracy projected on each dimension of the view, completion-token histograms, the
prompt FFT (with --tokenizer, or each eval's cached hf_id tokenizer) and the details of the last clicked point.
"""
from __future__ import annotations

from dash import ALL, Input, Output, State, ctx, dcc, html, no_update

from resolver.errors import UserError
from resolver.pointsdb import OUTCOME_NAMES
from resolver.stats import COUNTER_COLUMNS
from resolver.web import layout, theme
from resolver.web.landscape import TRUNCATION_HEAVY, Landscape, pivot

DEFAULT_EVALS = 2
FAILURE_SAMPLES = 3


def build_app(dataset, db, tokenizer=None, url_base_pathname: str = "/", tokenizers: dict | None = None):
    from resolver.web.server import make_app

    land = Landscape(dataset, db, tokenizer, tokenizers)
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
        dcc.Store(id="ex-selected"),
        html.Div([
            html.Div(dcc.Graph(id="ex-projection", config={"displaylogo": False}), className="rs-panel"),
            html.Div(dcc.Graph(id="ex-tokens", config={"displaylogo": False}), className="rs-panel"),
            html.Div(html.Div("Click a point of a surface or line to see its id, counters, interval and failed "
                              "samples.", className="rs-note"), id="ex-point", className="rs-panel"),
            html.Div(id="ex-fft", className="rs-panel"),
        ], className="rs-grid"),
    ])
    _register(app, land)
    return app


def _register(app, land: Landscape):
    @app.callback(Output("ex-view", "options"), Output("ex-view", "value"), Input("ex-task", "value"))
    def views_of_task(task):
        return view_options(land, task)

    @app.callback(Output("ex-main", "children"), Output("ex-tokens", "figure"),
                  Output("ex-fft", "children"), Input("ex-view", "value"), Input("ex-evals", "value"))
    def draw(ident, eval_ids):
        return draw_update(land, ident, eval_ids)

    @app.callback(Output("ex-projection", "figure"), Input("ex-view", "value"), Input("ex-evals", "value"),
                  Input("ex-selected", "data"))
    def project(ident, eval_ids, selected):
        if not ident or not eval_ids:
            return {}
        coords = selected["coords"] if selected and selected.get("view") == ident else {}
        return projection_figure(land, ident, tuple(eval_ids), coords)

    @app.callback(Output("ex-point", "children"), Output("ex-selected", "data"),
                  Input({"type": "ex-main", "eval": ALL}, "clickData"),
                  State("ex-view", "value"), prevent_initial_call=True)
    def inspect(_clicks, ident):
        trigger = ctx.triggered_id
        click = ctx.triggered[0]["value"] if ctx.triggered else None
        if not trigger or not click or not click.get("points"):
            return no_update, no_update
        point = click["points"][0]
        view = land.view(ident)
        eval_id = trigger["eval"] if trigger["eval"] != "*" else point.get("customdata")
        coords = {view.dims[0]: point["x"]}
        if len(view.dims) == 2:
            coords = {dim: _from_position(point[axis], land.categories(ident, dim))
                      for dim, axis in zip(view.dims, ("x", "y"))}
        return point_details(land, ident, eval_id, coords), {"view": ident, "coords": coords}


def view_options(land: Landscape, task: str):
    """View dropdown options of a task and the default (its first 2-D view)."""
    views = land.task_views(task)
    options = [{"label": f"{v.view} ({' × '.join(v.dims)})", "value": v.ident} for v in views]
    two_d = [v.ident for v in views if len(v.dims) == 2]
    return options, (two_d or [v.ident for v in views])[0]


def draw_update(land: Landscape, ident: str, eval_ids):
    """Main graphs, token histograms and FFT for a view and evals (the main callback)."""
    if not ident or not eval_ids:
        return html.Div("Choose a view and at least one eval.", className="rs-note"), {}, ""
    view = land.view(ident)
    if len(view.dims) == 2:
        main = [_surface_panel(land, ident, e) for e in eval_ids]
    else:
        main = [html.Div(dcc.Graph(id={"type": "ex-main", "eval": "*"}, figure=line_figure(land, ident, eval_ids),
                                   config={"displaylogo": False}), className="rs-panel")]
    return main, token_figure(land, view.base_task, tuple(eval_ids)), _fft_panel(land, ident, eval_ids[0])


def _surface_panel(land: Landscape, ident: str, eval_id: str):
    return html.Div(dcc.Graph(id={"type": "ex-main", "eval": eval_id}, figure=surface_figure(land, ident, eval_id),
                              config={"displaylogo": False}, style={"height": "460px"}), className="rs-panel")


# Figures are plain dicts: Dash sends them as they are, without plotly's per-property validation,
# which costs more than the computation itself on r12-sized data.

def surface_figure(land: Landscape, ident: str, eval_id: str) -> dict:
    view = land.view(ident)
    x, y = view.dims
    table = land.surface(ident, eval_id)
    data = []
    # Text-valued dimensions (e.g. params.operation) are placed at 0, 1, 2 ... and labelled with their values.
    axes = {dim: land.categories(ident, dim) for dim in (x, y)}
    if not table.empty:
        table = table.assign(**{f"_{i}": _positions(table[dim], axes[dim]) for i, dim in enumerate((x, y))})
        xs, ys, z = pivot(table, "_0", "_1", "center")
        _, _, low = pivot(table.assign(low=(table["center"] - table["margin"]).clip(lower=0)), "_0", "_1", "low")
        data.append({"type": "surface", "x": xs, "y": ys, "z": z, "name": "accuracy", "showlegend": True,
                     "colorscale": theme.SCORE_COLORSCALE,
                     "cmin": 0, "cmax": 1, "colorbar": {"title": {"text": "accuracy"}, "len": 0.7},
                     "hovertemplate": f"{x} %{{x}}<br>{y} %{{y}}<br>accuracy %{{z:.3f}}<extra></extra>"})
        data.append({"type": "surface", "x": xs, "y": ys, "z": low, "name": "lower 95% bound", "showscale": False,
                     "showlegend": True,
                     "opacity": 0.35, "colorscale": [[0, "#808080"], [1, "#808080"]], "hoverinfo": "skip"})
        # Every measured cell as a dot too: on sparse grids some cells have no neighbours to form a surface.
        data.append({"type": "scatter3d", "mode": "markers", "x": table["_0"].tolist(), "y": table["_1"].tolist(),
                     "z": table["center"].tolist(), "name": "measured points",
                     "marker": {"size": 3, "color": table["center"].tolist(), "colorscale": theme.SCORE_COLORSCALE,
                                "cmin": 0, "cmax": 1, "line": {"color": "#333", "width": 1}},
                     "text": [f"± {m:.3f}, {int(p)} point(s)" for m, p in zip(table["margin"], table["points"])],
                     "hovertemplate": f"{x} %{{x}}<br>{y} %{{y}}<br>accuracy %{{z:.3f}} %{{text}}<extra></extra>"})
        heavy = table[table["truncated_ratio"] > TRUNCATION_HEAVY]
        data.append({"type": "scatter3d", "x": heavy["_0"].tolist(), "y": heavy["_1"].tolist(),
                     "z": (heavy["center"] + 0.03).tolist(), "mode": "markers",
                     "name": f"truncation > {TRUNCATION_HEAVY:.0%}",
                     "marker": {"symbol": "diamond", "size": 5, "color": "#222222"},
                     "text": [f"{t:.0%} truncated" for t in heavy["truncated_ratio"]],
                     "hovertemplate": "%{text}<extra></extra>"})
    layout = {"title": {"text": f"{land.labels.get(eval_id, eval_id)} — {view.view}", "font": {"size": 14},
                        "x": 0.01, "xanchor": "left", "y": 0.97},
              "margin": {"l": 0, "r": 0, "t": 60, "b": 0}, "showlegend": True,
              "legend": {"orientation": "h", "y": 0.02, "x": 0.01, "font": {"size": 11}},
              "scene": {"xaxis": _scene_axis(x, axes[x]), "yaxis": _scene_axis(y, axes[y]),
                        "zaxis": {"title": {"text": "accuracy"}, "range": [0, 1]},
                        "camera": {"eye": {"x": 1.6, "y": -1.6, "z": 0.9}}}}
    return {"data": data, "layout": layout}


def _positions(values, categories):
    """Numbers stay; text values become their index in `categories`."""
    if categories is None:
        return values
    index = {c: i for i, c in enumerate(categories)}
    return [index[str(v)] for v in values]


def _from_position(value, categories):
    """Surface clicks report positions for text dimensions: turn them back into values."""
    return categories[int(round(float(value)))] if categories is not None else value


def _scene_axis(dim: str, categories) -> dict:
    axis = {"title": {"text": dim}}
    if categories is not None:
        axis.update(tickvals=list(range(len(categories))), ticktext=list(categories))
    return axis


def _title(text: str) -> dict:
    """Left-aligned panel title (a centred one runs under the plotly toolbar)."""
    return {"text": text, "x": 0.01, "xanchor": "left"}


def _accuracy_lines(table, dim: str, eval_ids, labels: dict, axes: dict | None = None, legend: bool = True) -> list:
    traces = []
    for i, eval_id in enumerate(eval_ids):
        part = table[table["eval_id"] == eval_id]
        traces.append({"type": "scatter", "mode": "lines+markers", "x": part[dim].tolist(), "y": part["center"].tolist(),
                       "name": labels.get(eval_id, eval_id), "customdata": [eval_id] * len(part),
                       "legendgroup": eval_id, "showlegend": legend,
                       "error_y": {"type": "data", "array": part["margin"].tolist()},
                       "line": {"color": theme.eval_colour(i)}, **(axes or {})})
    return traces


def line_figure(land: Landscape, ident: str, eval_ids) -> dict:
    view = land.view(ident)
    dim = view.dims[0]
    table = land.projection(ident, dim, tuple(eval_ids))
    return {"data": _accuracy_lines(table, dim, eval_ids, land.labels),
            "layout": {"title": _title(f"{view.base_task} — {view.view}: accuracy by {dim}"),
                       "xaxis": {"title": {"text": dim}},
                       "yaxis": {"title": {"text": "accuracy (95% CI)"}, "range": [0, 1.05]},
                       "margin": {"t": 50}, "legend": {"orientation": "h", "y": -0.2}}}


def projection_figure(land: Landscape, ident: str, eval_ids: tuple, selected: dict | None = None) -> dict:
    """Accuracy along each dimension of the view, side by side, one line per eval.

    `selected` ({dim: value}, from the last clicked point) is marked with a dashed line
    on each panel, so the projections follow the point being inspected.
    """
    view = land.view(ident)
    count = len(view.dims)
    gap = 0.08
    width = (1 - gap * (count - 1)) / count
    data, layout = [], {"title": _title("Accuracy projections (dashed: the inspected point)"), "height": 360, "margin": {"t": 60, "b": 40},
                        "legend": {"orientation": "h", "y": -0.3}, "annotations": []}
    for k, dim in enumerate(view.dims):
        suffix = "" if k == 0 else str(k + 1)
        table = land.projection(ident, dim, eval_ids)
        data += _accuracy_lines(table, dim, eval_ids, land.labels, {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"},
                                legend=k == 0)
        left = k * (width + gap)
        layout[f"xaxis{suffix}"] = {"domain": [left, left + width], "title": {"text": dim}, "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"range": [0, 1.05], "anchor": f"x{suffix}",
                                    "title": {"text": "accuracy (95% CI)" if k == 0 else ""}}
        if selected and dim in selected:
            layout.setdefault("shapes", []).append({
                "type": "line", "xref": f"x{suffix}", "yref": f"y{suffix}", "x0": selected[dim], "x1": selected[dim],
                "y0": 0, "y1": 1.05, "line": {"color": "#333", "dash": "dash", "width": 1.5}})
    return {"data": data, "layout": layout}


def token_figure(land: Landscape, task: str, eval_ids: tuple) -> dict:
    edges, counts = land.token_histogram(task, eval_ids)
    centers = ((edges[:-1] + edges[1:]) / 2).tolist()
    width = float(edges[1] - edges[0]) if len(edges) > 1 else 1.0
    data = [{"type": "bar", "x": centers, "y": counts[e].tolist(), "width": width, "opacity": 0.55,
             "name": land.labels.get(e, e), "marker": {"color": theme.eval_colour(i)},
             "hovertemplate": "%{x:.0f} tokens: %{y} answers<extra></extra>"}
            for i, e in enumerate(eval_ids) if e in counts]
    return {"data": data, "layout": {"title": _title(f"{task}: completion tokens per answer"), "barmode": "overlay",
                                     "height": 360, "xaxis": {"title": {"text": "completion tokens"}},
                                     "yaxis": {"title": {"text": "answers"}}, "margin": {"t": 60, "b": 40},
                                     "bargap": 0, "legend": {"orientation": "h", "y": -0.3}}}


def _fft_panel(land: Landscape, ident: str, eval_id: str):
    tokenizer = land.tokenizers.get(eval_id)
    if tokenizer is None:
        return html.Div("Prompt FFT: this eval has no tokenizer here. Start explorer.py with --tokenizer (a local "
                        "tokenizer path, a cached hub id, or 'bytes'), or give the eval an hf_id whose tokenizer is "
                        "in the local Hugging Face cache.", className="rs-note", id="ex-fft-note")
    from resolver.probe.fft import FREQUENCIES

    view = land.view(ident)
    dim = view.dims[0]
    table = land.spectra(ident, dim, eval_id)
    # Bin 0 is the removed mean (~0): leaving it in stretches the log axis over 15 decades.
    data = [{"type": "scatter", "mode": "lines", "x": FREQUENCIES[1:].tolist(), "y": list(map(float, row.spectrum[1:])),
             "name": f"{dim} = {row.value}", "line": {"color": theme.eval_colour(i)}}
            for i, row in enumerate(table.itertuples(index=False))]
    layout = {"title": _title(f"Prompt FFT ({tokenizer.name}) by {dim}<br><sub>{land.labels.get(eval_id)}</sub>"),
              "xaxis": {"title": {"text": "frequency (cycles / token)"}},
              "yaxis": {"title": {"text": "magnitude"}, "type": "log"}, "height": 360, "margin": {"t": 60, "b": 40},
              "legend": {"orientation": "h", "y": -0.3}}
    return dcc.Graph(id="ex-fft-graph", figure={"data": data, "layout": layout}, config={"displaylogo": False})


def point_details(land: Landscape, ident: str, eval_id: str, coords: dict):
    rows = land.points_at(ident, eval_id, coords)
    where = ", ".join(f"{k} = {v}" for k, v in coords.items())
    if rows.empty:
        return html.Div(f"No point of this eval at {where}.", className="rs-note")
    from resolver.stats import add_statistics

    summed = rows[list(COUNTER_COLUMNS)].sum().to_frame().T
    stats = add_statistics(summed, "C_P").iloc[0]
    ids = [int(i) for i in rows["id"]]
    try:
        report = land.failures(ids, limit=FAILURE_SAMPLES)
        unavailable = None
    except UserError as exc:     # raw NDJSON not present (e.g. only the DB was pulled): say so, keep the rest
        report, unavailable = None, str(exc)
    counters = ", ".join(f"{name} {int(stats[name])}" for name in OUTCOME_NAMES)
    children = [
        html.H4(f"{land.labels.get(eval_id, eval_id)} at {where}"),
        html.Div([html.B("point id" + ("s" if len(ids) > 1 else "") + ": "),
                  html.Span(", ".join(map(str, ids)), id="ex-point-ids")]),
        html.Div([html.B("counters: "), html.Span(counters, id="ex-point-counters")]),
        html.Div([html.B("accuracy (C_P, 95%): "),
                  html.Span(f"{stats['center']:.3f} ± {stats['margin']:.3f}", id="ex-point-interval")]),
        html.Div(f"probe.py failure <dataset> --point-id {ids[0]} shows every failed sample", className="rs-note"),
    ]
    failed = int(stats["incorrect"] + stats["invalid"] + stats["truncated"])
    if report is None:
        children.append(html.Div(f"failed samples unavailable: {unavailable}", className="rs-note",
                                 id="ex-point-no-samples"))
        return html.Div(children, id="ex-point-details")
    children.append(html.H5(f"failed samples ({len(report.failures)} shown of {failed})"))
    for failure in report.failures:
        children.append(html.Div([
            html.Div(f"{failure['key']} · {failure['outcome']} · expected {failure['target']!r} · "
                     f"extracted {failure['extracted']!r}", className="rs-note"),
            html.Pre(failure["answer"][-1500:], className="rs-sample")], className="ex-failure"))
    return html.Div(children, id="ex-point-details")
