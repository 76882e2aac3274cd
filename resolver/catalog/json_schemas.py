"""JSON Schemas of the user files, generated from their pydantic models into docs/schemas/.

    python docs/schemas/generate.py           # rewrite docs/schemas/*.json after changing a model

An editor checks a config against them as it is typed (docs/configs.md, "Checking a file
in an editor"); tests/test_json_schemas.py fails when a file and its model disagree.
It lives in catalog, the lowest package that sees every file model (config's and catalog's).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from resolver.catalog.datasets import DatasetFile, EvalEntry
from resolver.config import ExperimentConfig, SamplerFile, TemplateFile
from resolver.records import Record, RunMetadata

__all__ = ["SCHEMA_DIR", "schema_text", "schema_texts", "write_schemas"]

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def _models() -> dict:
    return {
        "experiment-config.json": (ExperimentConfig, "An experiment config (configs/*.yaml, docs/configs.md)"),
        "template.json": (TemplateFile, "A prompt template (templates/*.json, docs/configs.md)"),
        "sampler.json": (SamplerFile, "A sampler (samplers/*.json, docs/configs.md)"),
        "dataset.json": (DatasetFile, "A dataset file (data/<name>.json, docs/cohort.md)"),
        "evals.json": (TypeAdapter(list[EvalEntry]), "A cohort's evals.json (docs/cohort.md)"),
        "record.json": (Record, "One line of a run's NDJSON (docs/architecture.md, The record)"),
        "run-metadata.json": (RunMetadata, "A run folder's metadata.json (docs/runner.md, metadata.json)"),
    }


def schema_text(model: type[BaseModel] | TypeAdapter[Any], title: str, closed: bool = False) -> str:
    """The JSON Schema text of a pydantic model (or TypeAdapter) under `title`, as docs/schemas/ holds it.

    `closed`: every property required and no other key allowed, for a type that always writes all of
    its fields and cannot say so itself (a dataclass of counters with defaults: resolver.run.RunSummary).
    """
    schema = model.json_schema() if isinstance(model, TypeAdapter) else model.model_json_schema()
    if closed:
        schema = {**schema, "required": list(schema["properties"]), "additionalProperties": False}
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, **{
        k: v for k, v in schema.items() if k != "title"}}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def schema_texts() -> dict[str, str]:
    """{file name: JSON text} of every input file's schema, as the models define them now
    (the outputs' are resolver.probe.schemas.output_schema_texts)."""
    return {name: schema_text(model, title) for name, (model, title) in _models().items()}


def write_schemas(folder: Path = SCHEMA_DIR, texts: dict[str, str] | None = None) -> list[Path]:
    """Write `texts` ({file name: schema text}; default: every input file's schema) into `folder`;
    returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (schema_texts() if texts is None else texts).items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written

