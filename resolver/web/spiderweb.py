"""spiderweb.py's app: one eval's profile over groups as a radar or bars, with its archetype.

Numbers come from resolver.analysis.spiderweb (the computation behind analyze.py spiderweb),
computed once for every eval at start-up.
"""
from __future__ import annotations

import plotly.graph_objects as go
from dash import Input, Output, dcc, html

from resolver.analysis.spiderweb import spiderweb_from_aggregate
from resolver.stats import add_statistics
from resolver.web import layout, theme
from resolver.web.archetypes import classify
from resolver.web.data import eval_labels

OVERLAYS = ("ci", "tokens", "truncation")
OVERLAY_LABELS = {"ci": "95% CI band", "tokens": "token use", "truncation": "truncation"}
MODE = "C_P"


class Profiles:
    """Per-eval radar numbers, tier accuracies and archetypes, all computed at start-up."""

    def __init__(self, db, group_by: str = "base_task"):
        self.group_by = group_by
        evals = db.evals()
        self.table = spiderweb_from_aggregate(db.aggregate(None, by=["eval_id", group_by]), evals, group_by, MODE)
        self.labels = eval_labels(evals)
        present = set(self.table["eval_id"])
        self.eval_ids = sorted((e for e in evals["eval_id"] if e in present), key=lambda e: self.labels[e].lower())
        self.groups = list(dict.fromkeys(self.table["group"].tolist()))
        self.tiers = _tier_table(db)
        self.archetypes = {e: classify(self.profile(e), self.table, self.tier_rows(e)) for e in self.eval_ids}

    def profile(self, eval_id: str):
        return self.table[self.table["eval_id"] == eval_id].reset_index(drop=True)

    def tier_rows(self, eval_id: str):
        if self.tiers is None:
            return None
        return self.tiers[self.tiers["eval_id"] == eval_id]


def _tier_table(db):
    """Accuracy per (eval, difficulty tier) for the collapse rule; None without degrees."""
    from resolver.analysis.scores import DEGREE_COLUMN, tier_name

    agg = db.aggregate(None, by=["eval_id", DEGREE_COLUMN]).dropna(subset=[DEGREE_COLUMN])
    if agg.empty:
        return None
    agg = add_statistics(agg, MODE)
    agg["tier_order"] = agg[DEGREE_COLUMN].astype(int)
    agg["tier"] = [tier_name(d) for d in agg["tier_order"]]
    return agg[["eval_id", "tier", "tier_order", "center"]]


def build_app(dataset, db, group_by: str = "base_task", url_base_pathname: str = "/"):
    from resolver.web.server import make_app

    profiles = Profiles(db, group_by)
    app = make_app(f"ReasonScape spiderweb — {dataset.name}", url_base_pathname)
    options = [{"label": profiles.labels[e], "value": e} for e in profiles.eval_ids]
    app.layout = layout.page("Spiderweb", f"{dataset.name} · {len(options)} evals · profile by {group_by} "
                             f"· accuracy = {MODE} interval", [
        html.Div([
            layout.control("Eval", dcc.Dropdown(id="sw-eval", options=options, value=profiles.eval_ids[0],
                                                clearable=False), wide=True),
            # A radar needs three spokes; with fewer groups bars read better.
            layout.control("Chart", dcc.RadioItems(id="sw-kind", inline=True,
                                                   value="radar" if len(profiles.groups) >= 3 else "bar",
                                                   options=[{"label": "radar", "value": "radar"},
                                                            {"label": "bars", "value": "bar"}])),
            layout.control("Overlays", dcc.Checklist(id="sw-overlays", inline=True, value=list(OVERLAYS),
                                                     options=[{"label": OVERLAY_LABELS[o], "value": o}
                                                              for o in OVERLAYS])),
        ], className="rs-controls"),
        html.Div(id="sw-archetype", className="rs-archetype"),
        html.Div(dcc.Graph(id="sw-chart", config={"displaylogo": False}, style={"height": "620px"}),
                 className="rs-panel"),
        html.Div(id="sw-table", className="rs-panel"),
        html.Div("Archetype rules (first match wins): truncation-limited → collapse → over-thinker → "
                 "specialist → balanced → uneven; thresholds in docs/webapps.md.", className="rs-note"),
    ])

    @app.callback(Output("sw-chart", "figure"), Output("sw-archetype", "children"), Output("sw-table", "children"),
                  Input("sw-eval", "value"), Input("sw-kind", "value"), Input("sw-overlays", "value"))
    def update(eval_id, kind, overlays):
        return profile_update(profiles, eval_id, kind, overlays)

    return app


def profile_update(profiles: Profiles, eval_id: str, kind: str, overlays):
    """Chart, archetype line and numbers table of one eval (the one callback)."""
    profile = profiles.profile(eval_id)
    overlays = set(overlays or ())
    title = profiles.labels.get(eval_id, eval_id)
    figure = radar_figure(profile, title, overlays) if kind == "radar" else bar_figure(profile, title, overlays)
    archetype = profiles.archetypes[eval_id]
    label = [html.B(archetype.name, id="sw-archetype-name"), html.Span(" — " + archetype.reason)]
    return figure, label, _numbers_table(profile, profiles.group_by)


def _closed(values):
    values = list(values)
    return values + values[:1]


def radar_figure(profile, title: str, overlays: set) -> go.Figure:
    groups = [str(g) for g in profile["group"]]
    theta = _closed(groups)
    fig = go.Figure()
    if "ci" in overlays:
        fig.add_trace(go.Scatterpolar(r=_closed(profile["low"]), theta=theta, mode="lines", name="CI low",
                                      line={"color": theme.with_alpha(theme.EVAL_PALETTE[0], 0.3), "width": 1},
                                      showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatterpolar(r=_closed(profile["high"]), theta=theta, mode="lines", fill="tonext",
                                      name="95% CI band", fillcolor=theme.with_alpha(theme.EVAL_PALETTE[0], 0.18),
                                      line={"color": theme.with_alpha(theme.EVAL_PALETTE[0], 0.3), "width": 1},
                                      hoverinfo="skip"))
    hover = [f"{g}<br>accuracy {c:.3f} ± {m:.3f}<br>truncated {t:.1%}<br>mean tokens {k:.0f}"
             for g, c, m, t, k in zip(groups, profile["center"], profile["margin"],
                                      profile["truncated_ratio"], profile["tokens_mean"])]
    fig.add_trace(go.Scatterpolar(r=_closed(profile["center"]), theta=theta, mode="lines+markers", name="accuracy",
                                  line={"color": theme.EVAL_PALETTE[0], "width": 3}, text=_closed(hover),
                                  hovertemplate="%{text}<extra></extra>"))
    if "tokens" in overlays:
        fig.add_trace(go.Scatterpolar(
            r=_closed(profile["tokens_scaled"]), theta=theta, mode="lines+markers", name="tokens (share of max)",
            line={"color": theme.TOKEN_COLOUR, "dash": "dash", "width": 2},
            text=_closed([f"{g}<br>mean tokens {k:.0f}" for g, k in zip(groups, profile["tokens_mean"])]),
            hovertemplate="%{text}<extra></extra>"))
    if "truncation" in overlays:
        marked = profile[profile["truncation_marked"]]
        fig.add_trace(go.Scatterpolar(
            r=list(marked["center"]), theta=[str(g) for g in marked["group"]], mode="markers",
            name="truncation > 2%", marker={"symbol": "x", "color": theme.TRUNCATION_COLOUR,
                                            "size": [10 + 40 * t for t in marked["truncated_ratio"]]},
            text=[f"{g}: {t:.1%} truncated" for g, t in zip(marked["group"], marked["truncated_ratio"])],
            hovertemplate="%{text}<extra></extra>"))
    # First spoke at the top, clockwise; the radial scale sits between the first two spokes.
    between = 90 - 180 / max(len(groups), 1)
    fig.update_layout(title={"text": f"{title}: accuracy by group (0 centre – 1 rim)"},
                      margin={"l": 60, "r": 60, "t": 70, "b": 40},
                      polar={"radialaxis": {"range": [0, 1], "tickformat": ".1f", "angle": between,
                                            "tickangle": between},
                             "angularaxis": {"rotation": 90, "direction": "clockwise"}},
                      legend={"orientation": "h", "y": -0.08})
    return fig


def bar_figure(profile, title: str, overlays: set) -> go.Figure:
    groups = [str(g) for g in profile["group"]]
    fig = go.Figure()
    error = {"type": "data", "array": list(profile["margin"]), "visible": "ci" in overlays, "color": "#333"}
    fig.add_trace(go.Bar(x=groups, y=list(profile["center"]), name="accuracy", error_y=error,
                         marker={"color": [theme.score_colour(c) for c in profile["center"]],
                                 "line": {"color": "#555", "width": 1}},
                         hovertemplate="%{x}<br>accuracy %{y:.3f}<extra></extra>"))
    if "truncation" in overlays:
        fig.add_trace(go.Bar(x=groups, y=list(profile["truncated_ratio"]), name="truncated share",
                             marker={"color": "rgba(0,0,0,0)", "line": {"color": theme.TRUNCATION_COLOUR, "width": 1},
                                     "pattern": {"shape": "/", "fgcolor": theme.TRUNCATION_COLOUR}},
                             hovertemplate="%{x}<br>truncated %{y:.1%}<extra></extra>"))
    if "tokens" in overlays:
        fig.add_trace(go.Scatter(x=groups, y=list(profile["tokens_mean"]), name="mean tokens", yaxis="y2",
                                 mode="lines+markers", line={"color": theme.TOKEN_COLOUR, "dash": "dash"},
                                 hovertemplate="%{x}<br>mean tokens %{y:.0f}<extra></extra>"))
    fig.update_layout(title={"text": f"{title}: accuracy by group"}, barmode="group",
                      yaxis={"range": [0, 1.05], "title": {"text": "accuracy (95% CI)"}},
                      yaxis2={"overlaying": "y", "side": "right", "title": {"text": "mean completion tokens"},
                              "rangemode": "tozero", "showgrid": False},
                      legend={"orientation": "h", "y": -0.15}, margin={"l": 60, "r": 70, "t": 70, "b": 60})
    return fig


def _numbers_table(profile, group_by: str):
    header = html.Tr([html.Th(group_by), html.Th("accuracy (95% CI)"), html.Th("truncated"),
                      html.Th("mean tokens"), html.Th("samples")])
    rows = [html.Tr([html.Td(str(r.group)), html.Td(f"{r.center:.3f} ± {r.margin:.3f}", className="rs-num"),
                     html.Td(f"{r.truncated_ratio:.1%}", className="rs-num"),
                     html.Td(f"{r.tokens_mean:.0f}", className="rs-num"),
                     html.Td(f"{r.samples:.0f}", className="rs-num")], **{"data-group": str(r.group)})
            for r in profile.itertuples(index=False)]
    return html.Table([html.Thead(header), html.Tbody(rows)], className="rs-board", id="sw-numbers")
