"""Rewrite docs/schemas/*.json from the pydantic models (run after changing a file or output model).

    .venv/bin/python docs/schemas/generate.py

tests/test_json_schemas.py fails while a schema here and its model disagree.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from resolver.catalog import json_schemas  # noqa: E402
from resolver.probe import output_schema_texts  # noqa: E402

for path in json_schemas.write_schemas() + json_schemas.write_schemas(texts=output_schema_texts()):
    print(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path)
