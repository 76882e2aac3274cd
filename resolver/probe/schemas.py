"""Every JSON output model of the scripts, gathered from the packages that define them, and their
schema texts as docs/schemas/ holds them (docs/schemas/generate.py writes them, tests/test_json_schemas.py
checks them). It sits in probe because probe is the lowest package that sees every output model:
analysis' (analyze.py, the downloads), the shortcut audit's and probe.py's own (docs/architecture.md).
"""
from __future__ import annotations

from pydantic import BaseModel, TypeAdapter

from resolver.analysis import OUTPUT_MODELS as ANALYSIS_OUTPUTS
from resolver.audit.outputs import OUTPUT_MODELS as AUDIT_OUTPUTS
from resolver.catalog import json_schemas
from resolver.probe.outputs import OUTPUT_MODELS as PROBE_OUTPUTS
from resolver.run import RunSummary

__all__ = ["OUTPUT_MODELS", "output_schema_texts"]

# docs/schemas/<file>: (model, title) of every output; the input files' models are resolver.catalog.json_schemas'.
OUTPUT_MODELS: dict[str, tuple[type[BaseModel], str]] = {**ANALYSIS_OUTPUTS, **AUDIT_OUTPUTS, **PROBE_OUTPUTS}


def output_schema_texts() -> dict[str, str]:
    """{file name: JSON Schema text} of every output model, as docs/schemas/ holds them, and of
    the runner's summary (resolver.run.RunSummary, what run_api returns and runner.py prints)."""
    texts = {name: json_schemas.schema_text(model, title) for name, (model, title) in OUTPUT_MODELS.items()}
    texts["run-summary.json"] = json_schemas.schema_text(
        TypeAdapter(RunSummary), "What a runner.py run did (resolver.run.RunSummary; docs/runner.md)", closed=True)
    return texts
