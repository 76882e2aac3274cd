"""analyze.py's computations: each subcommand returns data (frames, dicts) and its text
renderers; flags and output live in resolver.cli.analyze, figures in resolver/plots/ (docs/analyze.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
