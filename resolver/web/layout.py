"""The page shell and small layout helpers shared by the three apps."""
from __future__ import annotations

from dash import html


def page(title: str, subtitle: str, body: list):
    """Header bar with the app name and what is loaded, then the body."""
    return html.Div([
        html.Div([html.H1(f"ReasonScape · {title}"), html.Span(subtitle, className="rs-subtitle", id="rs-subtitle")],
                 className="rs-header"),
        html.Div(body, className="rs-body"),
    ])


def control(label: str, component, wide: bool = False):
    """A labelled control in the controls bar."""
    style = {"minWidth": "320px", "flex": "1"} if wide else {}
    return html.Div([html.Span(label, className="rs-label"), component], className="rs-control", style=style)
