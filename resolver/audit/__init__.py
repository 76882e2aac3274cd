"""Shortcut audit of generated problems (see resolver.audit.shortcuts and docs/tasks.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.audit.render import audit_markdown
    from resolver.audit.shortcuts import MIN_SAMPLES, run_audit

__all__ = [
    "audit_markdown",
    "film_reader",
    "MIN_SAMPLES",
    "players",
    "run_audit",
    "theme_agreement",
]

_HOMES = {
    "MIN_SAMPLES": "shortcuts",
    "audit_markdown": "render",
    "run_audit": "shortcuts",
}
_MODULES = {'film_reader', 'players', 'theme_agreement'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
