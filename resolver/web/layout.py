"""The page shell and small layout helpers shared by the three apps."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dash import html

if TYPE_CHECKING:
    from dash.development.base_component import Component


def page(title: str, subtitle: str, body: list, nav: dict | None = None) -> html.Div:
    """Header bar with the app name, what is loaded and links to the other apps, then the body."""
    links = [html.A(name, href=url, className="rs-nav-link", id=f"rs-nav-{name}")
             for name, url in (nav or {}).items()]
    return html.Div([
        html.Div([html.H1(f"ReasonScape · {title}"), html.Span(subtitle, className="rs-subtitle", id="rs-subtitle"),
                  html.Span(links, className="rs-nav")],
                 className="rs-header"),
        html.Div(body, className="rs-body"),
    ])


def help_mark(text: str, ident: str | None = None) -> html.Span:
    """A small (?) whose tooltip explains the control next to it."""
    props: dict[str, Any] = {"id": ident} if ident else {}
    return html.Span("?", className="rs-help", title=text, tabIndex="0", **props)


def control(label: str, component: Component, wide: bool = False, help: str | None = None) -> html.Div:
    """A labelled control in the controls bar, with an optional help tooltip."""
    style = {"minWidth": "min(320px, 100%)", "flex": "1"} if wide else {}
    head: list[str | Component] = [label, help_mark(help)] if help else [label]
    return html.Div([html.Span(head, className="rs-label"), component], className="rs-control", style=style)
