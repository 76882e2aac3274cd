"""The spiderweb's figures: several evals overlaid on one radar, or grouped bars.

Each eval keeps one colour for its line, its CI band, its token overlay and its truncation
marks; every title and hover names the statistics mode.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from resolver.web import theme

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import TypeVar

    import pandas as pd

    _T = TypeVar("_T")

OVERLAYS = ("ci", "tokens", "truncation")


def _closed(values: Iterable[_T]) -> list[_T]:
    values = list(values)
    return values + values[:1]


def radar_figure(shown: Sequence[tuple[str, pd.DataFrame]], group_by: str, overlays: set, mode: str) -> go.Figure:
    """shown: [(label, profile frame), ...] drawn in that order with the eval palette."""
    fig = go.Figure()
    groups = []
    for i, (label, profile) in enumerate(shown):
        colour = theme.eval_colour(i)
        groups = [str(g) for g in profile["group"]]
        theta = _closed(groups)
        if "ci" in overlays:
            fig.add_trace(go.Scatterpolar(r=_closed(profile["low"]), theta=theta, mode="lines", name=f"{label} CI low",
                                          line={"color": theme.with_alpha(colour, 0.3), "width": 1},
                                          showlegend=False, hoverinfo="skip", legendgroup=label))
            fig.add_trace(go.Scatterpolar(r=_closed(profile["high"]), theta=theta, mode="lines", fill="tonext",
                                          name=f"{label}: 95% CI band", fillcolor=theme.with_alpha(colour, 0.15),
                                          line={"color": theme.with_alpha(colour, 0.3), "width": 1},
                                          hoverinfo="skip", legendgroup=label, showlegend=False))
        below = profile["below_chance"] if "below_chance" in profile.columns else [False] * len(profile)
        hover = [f"{label}<br>{g}: {mode} {c:.3f} ± {m:.3f}{' ≤ chance' if b else ''}<br>truncated {t:.1%}"
                 f"<br>mean tokens {k:.0f}"
                 for g, c, m, b, t, k in zip(groups, profile["center"], profile["margin"], below,
                                             profile["truncated_ratio"], profile["tokens_mean"])]
        fig.add_trace(go.Scatterpolar(r=_closed(profile["center"]), theta=theta, mode="lines+markers", name=label,
                                      line={"color": colour, "width": 3}, text=_closed(hover), legendgroup=label,
                                      hovertemplate="%{text}<extra></extra>", meta=["accuracy"]))
        if "tokens" in overlays:
            fig.add_trace(go.Scatterpolar(
                r=_closed(profile["tokens_scaled"]), theta=theta, mode="lines", name=f"{label}: tokens (share of max)",
                line={"color": colour, "dash": "dot", "width": 1.5}, legendgroup=label,
                text=_closed([f"{label}<br>{g}: mean tokens {k:.0f}" for g, k in zip(groups, profile["tokens_mean"])]),
                hovertemplate="%{text}<extra></extra>", meta=["tokens"]))
        if "truncation" in overlays:
            marked = profile[profile["truncation_marked"]]
            fig.add_trace(go.Scatterpolar(
                r=list(marked["center"]), theta=[str(g) for g in marked["group"]], mode="markers",
                name=f"{label}: truncation > 2%", legendgroup=label, meta=["truncation"],
                marker={"symbol": "x", "color": colour, "line": {"color": theme.TRUNCATION_COLOUR, "width": 1},
                        "size": [8 + 40 * t for t in marked["truncated_ratio"]]},
                text=[f"{label}<br>{g}: {t:.1%} truncated" for g, t in zip(marked["group"], marked["truncated_ratio"])],
                hovertemplate="%{text}<extra></extra>"))
    # First spoke at the top, clockwise; the radial scale sits between the first two spokes.
    between = 90 - 180 / max(len(groups), 1)
    fig.update_layout(title={"text": f"{mode} accuracy by {group_by}", "x": 0.01, "xanchor": "left",
                             "font": {"size": 15}},
                      margin={"l": 40, "r": 40, "t": 50, "b": 30},
                      polar={"radialaxis": {"range": [0, 1], "tickformat": ".1f", "angle": between,
                                            "tickangle": between},
                             "angularaxis": {"rotation": 90, "direction": "clockwise"}},
                      legend={"orientation": "h", "y": -0.05}, uirevision="radar")
    return fig


def bar_figure(shown: Sequence[tuple[str, pd.DataFrame]], group_by: str, overlays: set, mode: str) -> go.Figure:
    fig = go.Figure()
    for i, (label, profile) in enumerate(shown):
        colour = theme.eval_colour(i)
        groups = [str(g) for g in profile["group"]]
        error = {"type": "data", "array": list(profile["margin"]), "visible": "ci" in overlays, "color": "#333"}
        fig.add_trace(go.Bar(x=groups, y=list(profile["center"]), name=label, error_y=error, meta=["accuracy"],
                             marker={"color": colour, "line": {"color": "#555", "width": 1}}, offsetgroup=str(i),
                             hovertemplate=f"{label}<br>%{{x}}: {mode} %{{y:.3f}}<extra></extra>"))
        if "truncation" in overlays:
            fig.add_trace(go.Bar(x=groups, y=list(profile["truncated_ratio"]), name=f"{label}: truncated share",
                                 offsetgroup=str(i), meta=["truncation"],
                                 marker={"color": "rgba(0,0,0,0)", "line": {"color": theme.TRUNCATION_COLOUR,
                                                                           "width": 1},
                                         "pattern": {"shape": "/", "fgcolor": theme.TRUNCATION_COLOUR}},
                                 hovertemplate=f"{label}<br>%{{x}}: truncated %{{y:.1%}}<extra></extra>"))
        if "tokens" in overlays:
            fig.add_trace(go.Scatter(x=groups, y=list(profile["tokens_mean"]), name=f"{label}: mean tokens",
                                     yaxis="y2", mode="lines+markers", meta=["tokens"],
                                     line={"color": colour, "dash": "dot"},
                                     hovertemplate=f"{label}<br>%{{x}}: mean tokens %{{y:.0f}}<extra></extra>"))
    fig.update_layout(title={"text": f"{mode} accuracy by {group_by}", "x": 0.01, "xanchor": "left",
                             "font": {"size": 15}}, barmode="overlay",
                      xaxis={"type": "category"},
                      yaxis={"range": [0, 1.05], "title": {"text": f"{mode} (95% CI)"}},
                      yaxis2={"overlaying": "y", "side": "right", "title": {"text": "mean completion tokens"},
                              "rangemode": "tozero", "showgrid": False},
                      legend={"orientation": "h", "y": -0.15}, margin={"l": 50, "r": 50, "t": 50, "b": 50})
    if len(shown) > 1:
        fig.update_layout(barmode="group")
    return fig
