"""Shared Dash pieces of the three web apps (leaderboard, explorer, spiderweb):
data loading, layout, figures, URL state and the server (docs/webapps.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
