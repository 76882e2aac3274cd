"""The built-in simulated model server, its profiles, the simulated r12 study and the
quick-start demo (docs/simulator.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
