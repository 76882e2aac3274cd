"""data.py: content-addressed blobs, safe extraction, remotes by backend, the
manifest, scopes and push / pull / status / prune (docs/data.md).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.share.manifest import DEFAULT_PATH, load_manifest, update_manifest
    from resolver.share.remotes import choose_remote_url, open_remote
    from resolver.share.scopes import SCOPES

__all__ = [
    "blobs",
    "choose_remote_url",
    "DEFAULT_PATH",
    "load_manifest",
    "manifest",
    "open_remote",
    "SCOPES",
    "scopes",
    "sync",
    "tarsafe",
    "update_manifest",
]

_HOMES = {
    "DEFAULT_PATH": "manifest",
    "SCOPES": "scopes",
    "choose_remote_url": "remotes",
    "load_manifest": "manifest",
    "open_remote": "remotes",
    "update_manifest": "manifest",
}
_MODULES = {'blobs', 'manifest', 'scopes', 'sync', 'tarsafe'}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
