"""Statistics on evaluation counts: Wilson intervals, estimator modes, ReasonScore,
the runner's light interval, paired differences of two models, and interval coverage (docs/statistics.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
