"""data.py: content-addressed blobs, safe extraction, remotes by backend, the
manifest, scopes and push / pull / status / prune (docs/data.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
