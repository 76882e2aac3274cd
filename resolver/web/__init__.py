"""Shared Dash pieces of the three web apps (leaderboard, explorer, spiderweb):
data loading, layout, figures, URL state and the server (docs/webapps.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.web.data import check_group_by, open_app_dataset
    from resolver.web.server import DEFAULT_HOST, DEFAULT_LINK_PORTS, app_links, check_port, normalize_base_pathname, serve

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_LINK_PORTS",
    "app_links",
    "archetypes",
    "check_group_by",
    "check_port",
    "explorer",
    "explorer_figures",
    "lbdiff",
    "lbtable",
    "leaderboard",
    "normalize_base_pathname",
    "open_app_dataset",
    "serve",
    "spiderweb",
    "theme",
    "urlstate",
]

_HOMES = {
    "DEFAULT_HOST": "server",
    "DEFAULT_LINK_PORTS": "server",
    "app_links": "server",
    "check_group_by": "data",
    "check_port": "server",
    "normalize_base_pathname": "server",
    "open_app_dataset": "data",
    "serve": "server",
}
_MODULES = {'archetypes', 'explorer', 'explorer_figures', 'lbdiff', 'lbtable', 'leaderboard', 'spiderweb', 'theme', 'urlstate'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
