"""spiderweb.py's app: evals' profiles over groups as a radar or bars, overlaid, with their archetypes.

Numbers come from resolver.analysis.spiderweb (the computation behind analyze.py spiderweb),
per statistics mode, computed once per mode and kept. Group values that are numbers are
shown as numbers (3, not 3.0) and in numeric order; points without a value of the group
dimension are left out and counted in a note (no "nan" spoke).
"""
from __future__ import annotations

import json
import math
import numbers
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd
from dash import Input, Output, State, ctx, dcc, html, no_update

from resolver.analysis import (
    DEGREE_COLUMN,
    SpiderwebExport,
    eval_labels,
    format_value,
    spiderweb_from_aggregate,
    tier_name,
)
from resolver.analysis.archetypes import classify, dataset_medians
from resolver.stats import MODE_DESCRIPTIONS, MODES, add_statistics
from resolver.web import layout, urlstate
from resolver.web.data import ranked_eval_ids
from resolver.web.ids import SW
from resolver.web.server import make_app
from resolver.web.spider_figures import OVERLAYS, bar_figure, radar_figure

if TYPE_CHECKING:
    from collections.abc import Iterable

    import dash
    import plotly.graph_objects as go

    from resolver.catalog import Dataset
    from resolver.pointsdb import PointsDB

OVERLAY_LABELS = {"ci": "95% CI band", "tokens": "token use", "truncation": "truncation"}
MODE = "C_P"
DEFAULT_EVALS = 3


def group_label(value: object) -> str:
    """3.0 -> '3', 2.5 -> '2.5', 'add' -> 'add'."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        return str(int(number)) if number.is_integer() else f"{number:g}"
    return str(value)


def _group_key(label: str) -> tuple[int, float, str]:
    try:
        return (0, float(label), "")
    except ValueError:
        return (1, 0.0, label)


class Profiles:
    """Per-eval radar numbers, tier accuracies and archetypes, per statistics mode."""

    def __init__(self, db: PointsDB, group_by: str = "base_task"):
        self.group_by = group_by
        self.evals = db.evals()
        agg = db.aggregate(None, by=["eval_id", group_by])
        missing = agg[group_by].isna()
        self.dropped_points = int(agg.loc[missing, "points"].sum()) if "points" in agg.columns else 0
        agg = agg[~missing].copy()
        agg[group_by] = [group_label(v) for v in agg[group_by]]
        self.groups = sorted(set(agg[group_by]), key=_group_key)
        order = {g: i for i, g in enumerate(self.groups)}
        self.agg = agg.assign(_o=agg[group_by].map(order)).sort_values(["eval_id", "_o"]).drop(columns="_o")
        self.labels = eval_labels(self.evals)
        present = set(self.agg["eval_id"])
        self.eval_ids = [e for e in ranked_eval_ids(db, sorted(present, key=lambda e: self.labels[e].lower()))
                         if e in present]
        tiers = db.aggregate(None, by=["eval_id", DEGREE_COLUMN]).dropna(subset=[DEGREE_COLUMN])
        self._tier_agg = tiers if not tiers.empty else None
        self.table = self.table_for(MODE)
        self.archetypes = self.archetypes_for(MODE)

    @lru_cache(maxsize=8)
    def table_for(self, mode: str) -> pd.DataFrame:
        return spiderweb_from_aggregate(self.agg, self.evals, self.group_by, mode)

    def profile(self, eval_id: str, mode: str = MODE) -> pd.DataFrame:
        table = self.table_for(mode)
        return table[table["eval_id"] == eval_id].reset_index(drop=True)

    @lru_cache(maxsize=8)
    def tiers_for(self, mode: str) -> pd.DataFrame | None:
        """Accuracy per (eval, difficulty tier) for the collapse rule; None without degrees."""
        if self._tier_agg is None:
            return None
        agg = add_statistics(self._tier_agg, mode)
        agg["tier_order"] = agg[DEGREE_COLUMN].astype(int)
        agg["tier"] = [tier_name(d) for d in agg["tier_order"]]
        return agg[["eval_id", "tier", "tier_order", "center", "margin"]]

    def tier_rows(self, eval_id: str, mode: str = MODE) -> pd.DataFrame | None:
        tiers = self.tiers_for(mode)
        return None if tiers is None else tiers[tiers["eval_id"] == eval_id]

    @lru_cache(maxsize=8)
    def archetypes_for(self, mode: str) -> dict:
        table = self.table_for(mode)
        medians = dataset_medians(table)
        tiers = self.tiers_for(mode)
        by_eval = dict(iter(table.groupby("eval_id", sort=False)))
        tier_rows = dict(iter(tiers.groupby("eval_id", sort=False))) if tiers is not None else {}
        return {e: classify(by_eval[e].reset_index(drop=True), medians, tier_rows.get(e)) for e in self.eval_ids}


def build_app(dataset: Dataset, db: PointsDB, group_by: str = "base_task", url_base_pathname: str = "/", links: dict | None = None) -> dash.Dash:
    profiles = Profiles(db, group_by)
    app = make_app(f"ReasonScape spiderweb — {dataset.name}", url_base_pathname)
    options = [{"label": profiles.labels[e], "value": e} for e in profiles.eval_ids]
    nav = {k: v for k, v in (links or {}).items() if k != "spiderweb"}
    dropped = (f" {profiles.dropped_points} points have no {group_by} value and are left out."
               if profiles.dropped_points else "")
    app.layout = layout.page("Spiderweb", f"{dataset.name} · {len(options)} evals · by {group_by}", [
        dcc.Location(id=SW.URL, refresh=False), dcc.Download(id=SW.DOWNLOAD),
        html.Div([
            layout.control("Evals (overlaid)", dcc.Dropdown(id=SW.EVALS, options=options, multi=True,
                                                            value=profiles.eval_ids[:DEFAULT_EVALS]), wide=True),
            layout.control("Chart", dcc.RadioItems(id=SW.KIND, inline=True, value=_default_kind(profiles),
                                                   options=[{"label": "radar", "value": "radar"},
                                                            {"label": "bars", "value": "bar"}])),
            layout.control("Mode", dcc.Dropdown(id=SW.MODE, value=MODE, clearable=False, searchable=False,
                                                options=[{"label": m, "value": m, "title": MODE_DESCRIPTIONS[m]}
                                                         for m in MODES]),
                           help="Statistics mode of the accuracy drawn. " +
                                " · ".join(f"{m}: {d}" for m, d in MODE_DESCRIPTIONS.items())),
            layout.control("Overlays", dcc.Checklist(id=SW.OVERLAYS, inline=True, value=list(OVERLAYS),
                                                     options=[{"label": OVERLAY_LABELS[o], "value": o}
                                                              for o in OVERLAYS])),
            html.Div([html.Button("Reset", id=SW.RESET, n_clicks=0, className="rs-button rs-secondary"),
                      html.Button("CSV", id=SW.CSV, n_clicks=0, className="rs-button",
                                  title="download the numbers of the evals shown"),
                      html.Button("JSON", id=SW.JSON, n_clicks=0, className="rs-button",
                                  title="download the numbers of the evals shown")], className="rs-actions"),
        ], className="rs-controls"),
        html.Div(id=SW.ARCHETYPE, className="rs-archetype"),
        dcc.Loading(html.Div(dcc.Graph(id=SW.CHART, config={"displaylogo": False, "responsive": True},
                                       style={"height": "min(620px, 110vw)"}), className="rs-panel"),
                    type="circle", delay_show=250),
        html.Div(id=SW.TABLE, className="rs-panel", style={"overflowX": "auto"}),
        html.Div("Archetype rules (first match wins): over-thinker → truncation-limited → collapse → specialist "
                 "→ balanced; thresholds in docs/webapps.md." + dropped, className="rs-note", id=SW.RULES),
    ], nav=nav)
    _register(app, profiles)
    return app


def _default_kind(profiles: Profiles) -> str:
    return "radar" if len(profiles.groups) >= 3 else "bar"   # a radar needs three spokes


RESTORING = (None, SW.URL, SW.RESET)   # triggers that set the controls from the URL (a load, back/forward, reset)


class ViewState(NamedTuple):
    """What the spiderweb shows, all of it in the URL (state_from_url / state_to_url)."""

    evals: list[str]
    kind: str                              # "radar" or "bar"
    overlays: list[str]                    # of OVERLAYS
    mode: str


def _register(app: dash.Dash, profiles: Profiles) -> None:
    @app.callback(
        output={"evals": Output(SW.EVALS, "value"), "kind": Output(SW.KIND, "value"),
                "overlays": Output(SW.OVERLAYS, "value"), "mode": Output(SW.MODE, "value"),
                "url": Output(SW.URL, "search"), "chart": Output(SW.CHART, "figure"),
                "archetypes": Output(SW.ARCHETYPE, "children"), "numbers": Output(SW.TABLE, "children")},
        inputs={"search": Input(SW.URL, "search"), "evals": Input(SW.EVALS, "value"), "kind": Input(SW.KIND, "value"),
                "overlays": Input(SW.OVERLAYS, "value"), "mode": Input(SW.MODE, "value"),
                "reset_clicks": Input(SW.RESET, "n_clicks")},
    )
    def update(search: str, evals: list[str] | None, kind: str, overlays: list[str] | None, mode: str,
               reset_clicks: int | None) -> dict[str, Any]:
        trigger = ctx.triggered_id
        if trigger in RESTORING:
            state = state_from_url(profiles, search if trigger != SW.RESET else "")
        else:
            state = ViewState(evals or [], kind, overlays or [], mode)
        chart, archetypes, numbers = profile_update(profiles, *state)
        controls = state._asdict() if trigger in RESTORING else dict.fromkeys(ViewState._fields, no_update)
        return {**controls, "url": no_update if trigger == SW.URL else state_to_url(profiles, *state),
                "chart": chart, "archetypes": archetypes, "numbers": numbers}

    @app.callback(output={"file": Output(SW.DOWNLOAD, "data")},
                  inputs={"csv_clicks": Input(SW.CSV, "n_clicks"), "json_clicks": Input(SW.JSON, "n_clicks")},
                  state={"evals": State(SW.EVALS, "value"), "mode": State(SW.MODE, "value")},
                  prevent_initial_call=True)
    def download(csv_clicks: int | None, json_clicks: int | None, evals: list[str] | None,
                 mode: str) -> dict[str, dict[str, str]]:
        frame = export_frame(profiles, evals or [], mode or MODE)
        if ctx.triggered_id == SW.JSON:
            return {"file": {"content": export_json(frame, mode, profiles.group_by), "filename": "spiderweb.json"}}
        return {"file": {"content": frame.to_csv(index=False), "filename": "spiderweb.csv"}}


def state_from_url(profiles: Profiles, search: str) -> ViewState:
    url = urlstate.parse(search)
    known = set(profiles.eval_ids)
    eval_ids = [e for e in url.get("evals", []) if e in known] if "evals" in url else \
        profiles.eval_ids[:DEFAULT_EVALS]
    kind = urlstate.first(url, "kind", _default_kind(profiles), {"radar", "bar"})
    overlays = urlstate.many(url, "overlay", set(OVERLAYS)) if "overlay" in url else list(OVERLAYS)
    if url.get("overlay") == ["none"]:
        overlays = []
    mode = urlstate.first(url, "mode", MODE, set(MODES))
    return ViewState(eval_ids, kind, overlays, mode)


def state_to_url(profiles: Profiles, eval_ids: Iterable[str] | None, kind: str, overlays: Iterable[str] | None, mode: str) -> str:
    overlays = list(overlays or [])
    return urlstate.encode({"evals": list(eval_ids or []), "kind": kind, "mode": mode,
                            "overlay": (overlays or ["none"]) if set(overlays) != set(OVERLAYS) else []},
                           {"kind": _default_kind(profiles), "mode": MODE})


def export_frame(profiles: Profiles, eval_ids: Iterable[str], mode: str) -> pd.DataFrame:
    """The radar numbers of the chosen evals (one row per eval and group), as drawn."""
    table = profiles.table_for(mode)
    frame = table[table["eval_id"].isin(list(eval_ids))].copy()
    # the analysis table names its mode already; keep it as the first column either way
    frame.insert(0, "mode", frame.pop("mode") if "mode" in frame else mode)
    archetypes = profiles.archetypes_for(mode)
    frame["archetype"] = [archetypes[e].name if e in archetypes else "" for e in frame["eval_id"]]
    return frame.drop(columns=["tokens_scaled"], errors="ignore")


def export_json(frame: pd.DataFrame, mode: str, group_by: str) -> str:
    """The JSON download: the export frame's rows as pandas writes them (NaN as null, floats to 10
    significant digits), checked against its model (docs/schemas/spiderweb-export.json)."""
    records = json.loads(frame.to_json(orient="records"))
    export = SpiderwebExport(mode=mode, group_by=group_by, rows=records)
    return json.dumps(export.model_dump(mode="json"), indent=1)


def profile_update(profiles: Profiles, eval_ids: Iterable[str] | None, kind: str, overlays: Iterable[str] | None,
                   mode: str = MODE) -> tuple[dict | go.Figure, html.Div | list[html.Div], html.Table | str]:
    """Chart, archetype lines and numbers table of the chosen evals (the one callback)."""
    eval_ids = [e for e in (eval_ids or []) if e in set(profiles.eval_ids)]
    if not eval_ids:
        note = html.Div("Choose at least one eval in the Evals box to draw its profile.", className="rs-empty",
                        id=SW.EMPTY)
        return {"data": [], "layout": {"title": {"text": "no eval chosen"}}}, note, ""
    overlays = set(overlays or ())
    shown = [(profiles.labels.get(e, e), profiles.profile(e, mode)) for e in eval_ids]
    figure = (radar_figure if kind == "radar" else bar_figure)(shown, profiles.group_by, overlays, mode)
    archetypes = profiles.archetypes_for(mode)
    # dash's component signatures name no data-* attribute (they arrive through **kwargs)
    lines = [html.Div([html.Span(f"{profiles.labels.get(e, e)}: "),
                       html.B(archetypes[e].name, className="sw-archetype-name"),
                       html.Span(" — " + archetypes[e].reason)], **{"data-eval": e}) for e in eval_ids]  # type: ignore[arg-type]
    return figure, lines, _numbers_table(profiles, eval_ids, mode)


def _numbers_table(profiles: Profiles, eval_ids: Iterable[str], mode: str) -> html.Table:
    header = html.Tr([html.Th("eval"), html.Th(profiles.group_by),
                      html.Th(f"{mode} accuracy (95% CI)", title=MODE_DESCRIPTIONS[mode]), html.Th("truncated"),
                      html.Th("mean tokens"), html.Th("samples")])
    rows = []
    for eval_id in eval_ids:
        for r in profiles.profile(eval_id, mode).to_dict("records"):
            tokens = "—" if r["tokens_mean"] is None or math.isnan(r["tokens_mean"]) else f"{r['tokens_mean']:.0f}"
            # pandas-stubs key a record by Hashable (the columns are str); dash's signatures name no data-* attribute
            rows.append(html.Tr([html.Td(profiles.labels.get(eval_id, eval_id)), html.Td(str(r["group"])),
                                 html.Td(format_value(r), className="rs-num"),  # type: ignore[arg-type]
                                 html.Td(f"{r['truncated_ratio']:.1%}", className="rs-num"),
                                 html.Td(tokens, className="rs-num"),
                                 html.Td(f"{r['samples']:.0f}", className="rs-num")],
                                **{"data-group": str(r["group"]), "data-eval": eval_id}))  # type: ignore[arg-type]
    return html.Table([html.Thead(header), html.Tbody(rows)], className="rs-board", id=SW.NUMBERS)
