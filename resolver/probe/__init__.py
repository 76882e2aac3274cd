"""probe.py computations: raw-trace forensics for chosen points (fft, failure, truncation).

Every function here returns plain data (DataFrames, dicts, dataclasses); rendering
lives in resolver/probe/render.py and resolver/plots/.
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
