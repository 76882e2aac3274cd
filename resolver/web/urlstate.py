"""View state in the page URL (dcc.Location's `search`): what a shared link or a reload restores.

A state is a dict of lists of strings; `encode` writes only what differs from the defaults,
so a plain app URL stays short and a permalink carries just the choices made.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode

if TYPE_CHECKING:
    from collections.abc import Container


def parse(search: str | None) -> dict:
    """'?a=1&a=2&b=x' -> {'a': ['1', '2'], 'b': ['x']} (blank values kept out)."""
    return {k: v for k, v in parse_qs((search or "").lstrip("?"), keep_blank_values=False).items()}


def first(state: dict, key: str, default: Any = None, valid: Container[Any] | None = None) -> Any:
    """The single value of a key, the default when absent or not among `valid`."""
    values = state.get(key) or []
    value = values[0] if values else default
    return value if valid is None or value in valid else default


def many(state: dict, key: str, valid: Container[Any] | None = None) -> list:
    values = state.get(key) or []
    return [v for v in values if valid is None or v in valid]


def encode(state: dict, defaults: dict | None = None) -> str:
    """The query string ('' or '?...') for a state, leaving out default and empty values."""
    defaults = defaults or {}
    pairs = []
    for key, value in state.items():
        if value in (None, "", [], ()) or value == defaults.get(key):
            continue
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            pairs.append((key, str(item)))
    return ("?" + urlencode(pairs)) if pairs else ""


def link(base: str, **params: Any) -> str:
    """An app URL with query parameters (lists repeat the key)."""
    return base + encode(params)
