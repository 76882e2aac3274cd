"""runner.py's work: the experiment and its records, API mode (adaptive rounds),
batch mode (vLLM run-batch files) and offline mode; what a run shows goes through the
Reporter the command hands in (resolver/cli/runner.py).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
