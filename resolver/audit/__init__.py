"""Shortcut audit of generated problems (see resolver.audit.shortcuts and docs/tasks.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.audit.cli import register

__all__ = [
    "film_reader",
    "players",
    "register",
    "theme_agreement",
]

_HOMES = {
    "register": "cli",
}
_MODULES = {'film_reader', 'players', 'theme_agreement'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
