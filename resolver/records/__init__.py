"""The runner's NDJSON records: the record schema, run folders (naming, writing,
reading) and completion text sizes (docs/architecture.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
