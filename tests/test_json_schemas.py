"""docs/schemas/ against the pydantic models, and against the files in the repository
(the outputs' schemas against real outputs: tests/test_output_schemas.py).

The schemas are generated from the models (docs/schemas/generate.py); a model changed
without regenerating fails here. Every config, template, sampler, dataset file and
evals.json shipped in the repository is checked with `jsonschema` (a validator written
apart from pydantic), and a few broken files are refused by both.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from resolver.catalog import json_schemas, load_dataset
from resolver.config import load_config, load_sampler, load_template
from resolver.core import UserError
from resolver.probe import output_schema_texts

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = REPO / "docs" / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def test_schema_files_are_the_models_schemas():
    texts = json_schemas.schema_texts() | output_schema_texts()   # the input files', then the outputs'
    assert not set(json_schemas.schema_texts()) & set(output_schema_texts())
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == sorted(texts)
    for name, text in texts.items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == text, \
            f"docs/schemas/{name} is out of date: run docs/schemas/generate.py"



# The modules that define output models; each package lists its own outputs and
# resolver.probe.schemas gathers the lists (docs/decisions.md, issue 45).
OUTPUT_MODULES = ("resolver.analysis.outputs", "resolver.analysis.output_tables", "resolver.probe.outputs",
                  "resolver.audit.outputs")


def test_every_output_model_is_listed_or_inside_a_listed_one():
    """A model defined in an output module that no listed schema reaches would ship without a
    schema file; with the lists spread over three packages, one left out is easy to miss."""
    from pydantic import BaseModel

    from resolver.probe import OUTPUT_MODELS
    models = [obj for module in OUTPUT_MODULES for name, obj in vars(importlib.import_module(module)).items()
              if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == module
              and "[" not in name]     # pydantic keeps RootModel[...] parametrisations in the module too
    # a base of other models (output_tables.Rows) is not an output itself
    defined = {m.__name__ for m in models if not any(m in other.__mro__[1:] for other in models)}
    reached = {name for model, _ in OUTPUT_MODELS.values()
               for name in (model.__name__, *model.model_json_schema().get("$defs", {}))}
    assert {"FailureOutput", "ShortcutsOutput", "ScoresOutput", "ReaderAudit"} <= defined   # the modules are read
    assert sorted(defined - reached) == []

def test_each_schema_is_a_valid_draft_2020_12_schema():
    for path in SCHEMAS.glob("*.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text(encoding="utf-8")))


FILES = ([("experiment-config.json", p) for p in sorted((REPO / "configs").glob("*.yaml"))]
         + [("template.json", p) for p in sorted((REPO / "templates").glob("*.json"))]
         + [("sampler.json", p) for p in sorted((REPO / "samplers").glob("*.json"))]
         + [("dataset.json", p) for p in sorted((REPO / "data").glob("*.json"))]
         + [("evals.json", p) for p in sorted((REPO / "data").glob("*/*/evals.json"))])


@pytest.mark.parametrize("schema,path", FILES, ids=[str(p.relative_to(REPO)) for _, p in FILES])
def test_repository_files_conform_to_their_schema(schema, path):
    data = yaml.safe_load(path.read_text()) if path.suffix == ".yaml" else json.loads(path.read_text())
    jsonschema.validate(data, _schema(schema), cls=jsonschema.Draft202012Validator)


def test_the_configs_docs_name_the_schemas():
    text = (REPO / "docs" / "configs.md").read_text(encoding="utf-8")
    for name in ("experiment-config.json", "template.json", "sampler.json"):
        assert f"docs/schemas/{name}" in text
    assert "yaml-language-server: $schema=" in text


# (schema, loader, file name, content): a file both jsonschema and the loader refuse.
BROKEN = [
    ("sampler.json", load_sampler, "s.json", {"temperature": 2.5}),
    ("sampler.json", load_sampler, "s.json", {"temprature": 0.5}),
    ("sampler.json", load_sampler, "s.json", {"max_tokens": 0}),
    ("sampler.json", load_sampler, "s.json", {"top_p": 0}),
    ("template.json", load_template, "t.json", {"messages": [{"role": "robot", "content": "{input}"}]}),
    ("template.json", load_template, "t.json", {"messages": [{"role": "user", "content": "{input}"}], "shots": 17}),
    ("experiment-config.json", load_config, "c.yaml", {"tasks": []}),
    ("experiment-config.json", load_config, "c.yaml",
     {"tasks": [{"name": "arithmetic", "manifolds": [{"id": "a", "degree": -1}]}]}),
    ("experiment-config.json", load_config, "c.yaml",
     {"precision": {"q": {"count": 4, "target_margin": 1.5}}, "tasks": [{"name": "arithmetic", "manifolds": [{"id": "a"}]}]}),
    ("experiment-config.json", load_config, "c.yaml", {"tasks": [{"name": "arithmetic", "manifolds": [{"id": "a", "gird": {}}]}]}),
]


@pytest.mark.parametrize("schema,loader,name,content", BROKEN, ids=[f"{b[0]}-{json.dumps(b[3])[:40]}" for b in BROKEN])
def test_schema_and_loader_refuse_the_same_broken_files(tmp_path, schema, loader, name, content):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(content, _schema(schema), cls=jsonschema.Draft202012Validator)
    path = tmp_path / name
    path.write_text(json.dumps(content))
    with pytest.raises(UserError) as err:
        loader(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_dataset_schema_and_loader_refuse_a_misspelt_key(tmp_path):
    body = {"db": "x.db", "cohort": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(body, _schema("dataset.json"), cls=jsonschema.Draft202012Validator)
    (tmp_path / "d.json").write_text(json.dumps(body))
    with pytest.raises(UserError, match=r"unknown key 'cohort' \(did you mean cohorts\?\)"):
        load_dataset(tmp_path / "d.json")
