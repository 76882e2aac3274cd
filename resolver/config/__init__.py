"""Experiment configs: loading and validating YAML, grid expansion, calibration,
point identity and seeds, templates and samplers, Hugging Face tokenizer loading.
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
