"""What data exists: dataset configs (data/*.json), cohorts and their evals.json,
eval ids, what data/manifest.json says is published (manifest), the JSON Schemas of
the user files (json_schemas), and cohort.py's verify / context / report (docs/cohort.md).
"""
import lazy_loader

# Public names load on first use; they are listed in __init__.pyi (docs/architecture.md).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
