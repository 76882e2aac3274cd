"""The explorer's figures as plain dicts (Dash sends them as they are, without plotly's per-property
validation, which costs more than the computation itself on r12-sized data).

Every number comes from the Landscape (resolver.analysis.surface / resolver.stats); these
functions only lay them out. Each figure names the statistics mode it shows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dash import dcc, html

from resolver.core import UserError
from resolver.probe import FREQUENCIES
from resolver.web import theme
from resolver.web.explorer_data import ALL_MANIFOLDS, MODE, Landscape, pivot
from resolver.web.ids import EX

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import pandas as pd

# Diamonds mark cells where at least this share of answers hit the token limit, sized by the share:
# one truncated answer in 32 (3%) is noise that would cover a whole surface; a tenth is a pattern.
TRUNCATION_MARKER_ABOVE = 0.10
# The lower-bound "shadow" is drawn opaque under the accuracy surface: a translucent surface needs
# WebGL's extra transparency passes, which made a 3-surface redraw 2-4x slower in software rendering.
SHADOW_OPACITY = 1.0
# ... and it starts hidden, one click on its legend entry away: a second surface in every scene was
# ~0.4 s of a 3-surface redraw in software rendering (docs/performance.md); the dots' hover text
# gives each cell's margin meanwhile.
SHADOW_VISIBLE = "legendonly"


def short(dim: str) -> str:
    """Axis title for a dimension: 'params.max_depth' -> 'max_depth', 'manifold.id' -> 'manifold'."""
    head, _, tail = dim.partition(".")
    return {"manifold.id": "manifold", "manifold.degree": "tier"}.get(dim, tail if head == "params" else dim)


def _positions(values: pd.Series, categories: tuple[str, ...] | None) -> pd.Series | list[int]:
    """Numbers stay; text values become their index in `categories`."""
    if categories is None:
        return values
    index = {c: i for i, c in enumerate(categories)}
    return [index[str(v)] for v in values]


def from_position(value: float | str, categories: tuple[str, ...] | None) -> float | str:
    """Surface clicks report positions for text dimensions: turn them back into values."""
    return categories[int(round(float(value)))] if categories is not None else value


def _scene_axis(dim: str, categories: tuple[str, ...] | None) -> dict:
    axis = {"title": {"text": short(dim), "font": {"size": 12}}, "tickfont": {"size": 10}}
    if categories is not None:
        axis.update(tickvals=list(range(len(categories))), ticktext=list(categories))
    return axis


def _title(text: str) -> dict:
    """Left-aligned panel title (a centred one runs under the plotly toolbar)."""
    return {"text": text, "x": 0.01, "xanchor": "left", "font": {"size": 14}}


def _below(flags: Iterable[bool]) -> list:
    return [" ≤ chance" if flag else "" for flag in flags]


def surface_figure(land: Landscape, ident: str, eval_id: str, manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> dict:
    view = land.view(ident)
    x, y = view.dims
    table = land.surface(ident, eval_id, manifold, mode)
    axes = {dim: land.categories(ident, dim, manifold) for dim in (x, y)}
    data = []
    if not table.empty:
        table = table.assign(**{f"_{i}": _positions(table[dim], axes[dim]) for i, dim in enumerate((x, y))})
        below = table["below_chance"].tolist() if "below_chance" in table.columns else [False] * len(table)
        xs, ys, z = pivot(table, "_0", "_1", "center")
        _, _, low = pivot(table.assign(low=(table["center"] - table["margin"]).clip(lower=0)), "_0", "_1", "low")
        data.append({"type": "surface", "x": xs, "y": ys, "z": z, "name": f"{mode} accuracy", "showlegend": True,
                     "colorscale": theme.SCORE_COLORSCALE, "cmin": 0, "cmax": 1,
                     "colorbar": {"title": {"text": mode}, "len": 0.6, "thickness": 12, "x": 1.0},
                     "hovertemplate": f"{short(x)} %{{x}}<br>{short(y)} %{{y}}<br>{mode} %{{z:.3f}}<extra></extra>"})
        data.append({"type": "surface", "x": xs, "y": ys, "z": low, "name": "lower 95% bound", "showscale": False,
                     "showlegend": True, "opacity": SHADOW_OPACITY, "visible": SHADOW_VISIBLE,
                     "colorscale": [[0, "#9a9a9a"], [1, "#9a9a9a"]], "hoverinfo": "skip"})
        # Every measured cell as a dot too: on sparse grids some cells have no neighbours to form a surface.
        data.append({"type": "scatter3d", "mode": "markers", "x": table["_0"].tolist(), "y": table["_1"].tolist(),
                     "z": table["center"].tolist(), "name": "measured points",
                     "marker": {"size": 4, "color": table["center"].tolist(), "colorscale": theme.SCORE_COLORSCALE,
                                "cmin": 0, "cmax": 1, "line": {"color": "#333", "width": 1}},
                     "text": [f"± {m:.3f}, {int(p)} point(s){b}"
                              for m, p, b in zip(table["margin"], table["points"], _below(below))],
                     "hovertemplate": f"{short(x)} %{{x}}<br>{short(y)} %{{y}}<br>{mode} %{{z:.3f}} %{{text}}"
                                      "<extra></extra>"})
        heavy = table[table["truncated_ratio"] >= TRUNCATION_MARKER_ABOVE]
        data.append({"type": "scatter3d", "x": heavy["_0"].tolist(), "y": heavy["_1"].tolist(),
                     "z": (heavy["center"] + 0.04).tolist(), "mode": "markers",
                     "name": f"truncated ≥ {TRUNCATION_MARKER_ABOVE:.0%} (size = share)",
                     "marker": {"symbol": "diamond", "color": "#222222",
                                "size": [4 + 16 * t for t in heavy["truncated_ratio"]]},
                     "text": [f"{t:.0%} truncated" for t in heavy["truncated_ratio"]],
                     "hovertemplate": "%{text}<extra></extra>"})
    where = "" if manifold in ("", ALL_MANIFOLDS) else f" · {manifold}"
    layout = {"title": _title(f"{land.labels.get(eval_id, eval_id)}<br><sub>{view.ident}{where} · {mode}</sub>"),
              "margin": {"l": 0, "r": 0, "t": 56, "b": 0}, "showlegend": True, "uirevision": f"{ident}|{manifold}",
              "legend": {"orientation": "h", "y": 0.0, "x": 0.0, "font": {"size": 10}, "bgcolor": "rgba(255,255,255,.6)"},
              "scene": {"xaxis": _scene_axis(x, axes[x]), "yaxis": _scene_axis(y, axes[y]),
                        "zaxis": {"title": {"text": mode, "font": {"size": 12}}, "range": [0, 1.05],
                                  "tickfont": {"size": 10}},
                        "domain": {"x": [0, 0.94], "y": [0.06, 1]}, "aspectmode": "manual",
                        "aspectratio": {"x": 1.1, "y": 1.1, "z": 0.8},
                        "camera": {"eye": {"x": 1.5, "y": -1.5, "z": 0.8}}}}
    return {"data": data, "layout": layout}


def _accuracy_lines(table: pd.DataFrame, dim: str, eval_ids: Iterable[str], labels: dict, axes: dict | None = None, legend: bool = True,
                    categories: tuple[str, ...] | None = None) -> list:
    traces = []
    for i, eval_id in enumerate(eval_ids):
        part = table[table["eval_id"] == eval_id]
        xs = [str(v) for v in part[dim]] if categories is not None else part[dim].tolist()
        below = part["below_chance"].tolist() if "below_chance" in part.columns else [False] * len(part)
        traces.append({"type": "scatter", "mode": "lines+markers", "x": xs, "y": part["center"].tolist(),
                       "name": labels.get(eval_id, eval_id), "customdata": [eval_id] * len(part),
                       "text": _below(below), "hovertemplate": "%{x}: %{y:.3f}%{text}<extra>%{fullData.name}</extra>",
                       "legendgroup": eval_id, "showlegend": legend,
                       "error_y": {"type": "data", "array": part["margin"].tolist()},
                       "line": {"color": theme.eval_colour(i)}, **(axes or {})})
    return traces


def _category_axis(categories: tuple[str, ...] | None) -> dict:
    return {"type": "category", "categoryorder": "array", "categoryarray": list(categories)} if categories else {}


def line_figure(land: Landscape, ident: str, eval_ids: Sequence[str], manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> dict:
    view = land.view(ident)
    dim = view.dims[0]
    table = land.projection(ident, dim, tuple(eval_ids), manifold, mode)
    categories = land.categories(ident, dim, manifold)
    return {"data": _accuracy_lines(table, dim, eval_ids, land.labels, categories=categories),
            "layout": {"title": _title(f"{view.ident}: {mode} accuracy by {short(dim)}"),
                       "xaxis": {"title": {"text": short(dim)}, **_category_axis(categories)},
                       "yaxis": {"title": {"text": f"{mode} (95% CI)"}, "range": [0, 1.05]},
                       "margin": {"t": 50, "l": 50, "r": 10}, "legend": {"orientation": "h", "y": -0.25}}}


def projection_figure(land: Landscape, ident: str, eval_ids: tuple, selected: dict | None = None,
                      manifold: str = ALL_MANIFOLDS, mode: str = MODE) -> dict:
    """Accuracy along each dimension of the view, side by side, one line per eval.

    `selected` ({dim: value}, from the inspected point) is marked with a dashed line on each panel.
    """
    view = land.view(ident)
    count = len(view.dims)
    gap = 0.1
    width = (1 - gap * (count - 1)) / count
    data: list[dict] = []
    layout: dict[str, Any] = {"title": _title(f"{mode} projections (dashed: the inspected point)"), "height": 340,
                              "margin": {"t": 50, "b": 40, "l": 50, "r": 10},
                              "legend": {"orientation": "h", "y": -0.3}}
    for k, dim in enumerate(view.dims):
        suffix = "" if k == 0 else str(k + 1)
        table = land.projection(ident, dim, eval_ids, manifold, mode)
        categories = land.categories(ident, dim, manifold)
        data += _accuracy_lines(table, dim, eval_ids, land.labels, {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"},
                                legend=k == 0, categories=categories)
        left = k * (width + gap)
        layout[f"xaxis{suffix}"] = {"domain": [left, left + width], "title": {"text": short(dim)},
                                    "anchor": f"y{suffix}", **_category_axis(categories)}
        layout[f"yaxis{suffix}"] = {"range": [0, 1.05], "anchor": f"x{suffix}",
                                    "title": {"text": f"{mode} (95% CI)" if k == 0 else ""}}
        if selected and dim in selected:
            value = str(selected[dim]) if categories is not None else selected[dim]
            layout.setdefault("shapes", []).append({
                "type": "line", "xref": f"x{suffix}", "yref": f"y{suffix}", "x0": value, "x1": value,
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
                                     "height": 340, "xaxis": {"title": {"text": "completion tokens"}},
                                     "yaxis": {"title": {"text": "answers"}}, "margin": {"t": 50, "b": 40, "l": 50,
                                                                                         "r": 10},
                                     "bargap": 0, "legend": {"orientation": "h", "y": -0.3}}}


def fft_panel(land: Landscape, ident: str, eval_ids: str | Iterable[str]) -> html.Div:
    """The prompt FFT of every selected eval, one graph each, in the order chosen (probe.py fft's numbers).

    Each eval's tokenizer is the one probe.py fft would use (resolver.probe.fft_tokenizers); where that
    is UTF-8 bytes because none was given or cached, the panel says so above the eval's graph.
    """
    eval_ids = [eval_ids] if isinstance(eval_ids, str) else list(eval_ids)
    children: list = [html.Div("Prompt FFT: magnitude of each prompt's token-id sequence by frequency, averaged "
                               "per value of the view's first dimension (probe.py fft).", className="rs-note")]
    for eval_id in eval_ids:
        children += _fft_eval(land, ident, eval_id)
    return html.Div(children, id=EX.FFT_PANELS)


def _fft_eval(land: Landscape, ident: str, eval_id: str) -> list:
    label = land.labels.get(eval_id, eval_id)
    tokenizer = land.tokenizers[eval_id]
    shown: list = []
    if getattr(tokenizer, "fallback", False):
        attributes: dict[str, Any] = {"data-eval": eval_id}
        shown.append(html.Div(f"{label}: no tokenizer given (--tokenizer) or cached for this eval's hf_id, so its "
                              "prompts are read as UTF-8 bytes, as probe.py fft does.",
                              className="rs-note ex-fft-fallback", **attributes))
    dim = land.view(ident).dims[0]
    try:
        table = land.spectra(ident, dim, eval_id)
    except UserError as exc:     # raw NDJSON not present (e.g. only the DB was pulled): say so, keep the rest
        return [*shown, html.Div(f"{label}: prompt FFT unavailable: {exc}", className="rs-note ex-fft-missing")]
    # Bin 0 is the removed mean (~0): leaving it in stretches the log axis over 15 decades.
    # the spectrum cell holds an array; pandas-stubs types itertuples' fields as scalars
    data = [{"type": "scatter", "mode": "lines", "x": FREQUENCIES[1:].tolist(), "y": list(map(float, row.spectrum[1:])),  # type: ignore[index]
             "name": f"{dim} = {row.value}", "line": {"color": theme.eval_colour(i)}}
            for i, row in enumerate(table.itertuples(index=False))]
    name = f"{tokenizer.name}, fallback" if getattr(tokenizer, "fallback", False) else tokenizer.name
    layout = {"title": _title(f"Prompt FFT ({name}) by {short(dim)}<br><sub>{label}</sub>"),
              "xaxis": {"title": {"text": "frequency (cycles / token)"}},
              "yaxis": {"title": {"text": "magnitude"}, "type": "log"}, "height": 340,
              "margin": {"t": 60, "b": 40, "l": 50, "r": 10}, "legend": {"orientation": "h", "y": -0.3}}
    graph = dcc.Graph(id={"type": EX.FFT_GRAPH_TYPE, "eval": eval_id}, figure={"data": data, "layout": layout},
                      config={"displaylogo": False})
    return [*shown, graph]
