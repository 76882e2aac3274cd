"""No config or dataset field is accepted and ignored (issue 36): every field of the experiment
config and of the dataset file is fed here and its effect (or its refusal) checked.

The field lists are read from the pydantic models, so a field added without a check here
fails `test_every_*_field_is_checked`.
"""
from __future__ import annotations

import json
import os
import typing
from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import run_script
from pydantic import BaseModel

from resolver.analysis import config_views
from resolver.analysis.inventory import list_tasks, tasks_markdown
from resolver.catalog.datasets import DatasetFile, eval_id
from resolver.config import ExperimentConfig, expand_steps, load_config
from resolver.core import UserError
from resolver.records import new_run_folder
from resolver.run.rounds import Tally, needs_another_round


def field_paths(model, prefix: str = "") -> set[str]:
    """Every field of `model` and of the models nested in it, as dotted paths."""
    out = set()
    for name, info in model.model_fields.items():
        out.add(prefix + name)
        for sub in _models_in(info.annotation):
            out |= field_paths(sub, f"{prefix}{name}.")
    return out


def _models_in(annotation) -> list:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


# ---------------------------------------------------------------- the experiment config

CONFIG = """\
name: fieldcheck-config
description: Every documented key, once.
precision:
  quick: {count: 3, maxrounds: 2, target_margin: 0.3}
  slow: {count: 5}
tasks:
  - name: sums
    label: Sums
    generator: arithmetic
    mode: grid
    description: Arithmetic under another name.
    manifolds:
      - id: short
        degree: 1
        grid: {length: [4, 8, 16], max_depth: 1}
        description: Short chains only.
      - id: free
        grid: {length: 6}
    views:
      - view: by_length
        group_by: params.length
        filters: {manifold.id: short}
        facet_by: manifold.degree
        description: Accuracy by chain length.
"""

# field -> where its effect is checked (this module's test, or the named test elsewhere)
CONFIG_CHECKS = {
    "name": "test_config_fields_take_effect", "description": "test_config_fields_take_effect",
    "precision": "test_config_fields_take_effect", "precision.count": "test_config_fields_take_effect",
    "precision.maxrounds": "test_config_fields_take_effect",
    "precision.target_margin": "test_config_fields_take_effect",
    "tasks": "test_config_fields_take_effect", "tasks.name": "test_config_fields_take_effect",
    "tasks.label": "test_config_fields_take_effect", "tasks.generator": "test_config_fields_take_effect",
    "tasks.mode": "test_config_fields_take_effect", "tasks.description": "test_config_fields_take_effect",
    "tasks.manifolds": "test_config_fields_take_effect", "tasks.manifolds.id": "test_config_fields_take_effect",
    "tasks.manifolds.grid": "test_config_fields_take_effect",
    "tasks.manifolds.degree": "test_config_fields_take_effect",
    "tasks.manifolds.description": "test_config_fields_take_effect",
    "tasks.manifolds.calibrate": "test_config_fields_take_effect",
    "tasks.manifolds.calibrate.param": "test_config_calibrate.py::test_calibrated_prompts_stay_within_their_target",
    "tasks.manifolds.calibrate.target_tokens": "test_config_calibrate.py::test_expand_steps_records_target_tokens",
    "tasks.views": "test_config_fields_take_effect", "tasks.views.view": "test_config_fields_take_effect",
    "tasks.views.group_by": "test_config_fields_take_effect", "tasks.views.filters": "test_config_fields_take_effect",
    "tasks.views.facet_by": "test_config_fields_take_effect",
    "tasks.views.description": "test_config_fields_take_effect",
}


def test_every_config_field_is_checked():
    assert field_paths(ExperimentConfig) == set(CONFIG_CHECKS)
    here = Path(__file__).parent
    for where in set(CONFIG_CHECKS.values()):
        module, _, name = where.rpartition("::")
        text = (here / (module or Path(__file__).name)).read_text()
        assert f"def {name}(" in text, where


def test_config_fields_take_effect(tmp_path):
    path = tmp_path / "fieldcheck.yaml"
    path.write_text(CONFIG)
    config = load_config(path)
    # name: the run folder's name
    assert "_fieldcheck-config_" in new_run_folder(tmp_path / "out", config.name, "m", "t", "s").name
    # tasks / name / generator / mode grid / manifolds / id / grid / degree: the steps
    steps = expand_steps(config)
    assert [(s.base_task, s.generator, s.params, s.manifold) for s in steps] == [
        ("sums", "arithmetic", {"length": 4, "max_depth": 1}, {"id": "short", "degree": 1}),
        ("sums", "arithmetic", {"length": 8, "max_depth": 1}, {"id": "short", "degree": 1}),
        ("sums", "arithmetic", {"length": 16, "max_depth": 1}, {"id": "short", "degree": 1}),
        ("sums", "arithmetic", {"length": 6}, {"id": "free"})]
    assert expand_steps(config, degree=2)[-1].manifold == {"id": "free", "degree": 2}
    # precision: the first level is the default; count, maxrounds and target_margin drive the rounds
    name, level = config.precision_level(None)
    assert (name, level.count) == ("quick", 3)
    three_right = Tally(correct=3)                 # margin of 3/3 is far above 0.3
    assert needs_another_round(three_right, 1, level) and not needs_another_round(three_right, 2, level)
    _, slow = config.precision_level("slow")       # defaults: maxrounds 1, target_margin 0.05
    assert (slow.count, slow.maxrounds, slow.target_margin) == (5, 1, 0.05)
    assert not needs_another_round(three_right, 1, slow)
    # views: view, group_by, filters, facet_by
    (view,) = config_views(path)
    assert (view.base_task, view.view, view.dims, view.filters, view.facet_by) == \
        ("sums", "by_length", ("params.length",), {"manifold.id": "short"}, ("manifold.degree",))
    # label and every description: analyze.py tasks shows them
    rows = list_tasks(_no_counts(), config)
    text = tasks_markdown(rows, config.description)
    for shown in ("Every documented key, once.", "Sums<br>Arithmetic under another name.",
                  "short: Short chains only.", "by_length (1-D: params.length; manifold.id=short; "
                  "facet manifold.degree): Accuracy by chain length."):
        assert shown in text, shown
    # mode / calibrate: a calibrate entry in a grid task, or a calibrate task without one, is refused
    for bad in (CONFIG.replace("        degree: 1\n", "        degree: 1\n        calibrate: {param: length, "
                                                      "target_tokens: [100]}\n"),
                CONFIG.replace("    mode: grid\n", "    mode: calibrate\n")):
        path.write_text(bad)
        with pytest.raises(UserError):
            expand_steps(load_config(path))


def _no_counts():
    import pandas as pd
    return pd.DataFrame({"base_task": [], "points": [], "evals": []})


# ---------------------------------------------------------------- the dataset file

DATASET_CHECKS = {"name", "db", "cache", "config", "cohorts", "cohorts.path", "cohorts.filters", "density"}


def test_every_dataset_field_is_checked():
    assert field_paths(DatasetFile) == DATASET_CHECKS


@pytest.mark.slow
def test_dataset_fields_take_effect(tmp_path):
    from test_analyze_forensics_fixture import CONFIG as FORENSICS, MIDPOINT, SAMPLER, TEMPLATE, write_cohort

    kept, dropped = list(MIDPOINT)
    for model in MIDPOINT:
        write_cohort(tmp_path / "data", model)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "forensics.yaml").write_text(FORENSICS)
    dataset = tmp_path / "data" / "every-field.json"
    dataset.write_text(json.dumps({
        "name": "shown-name", "db": "dbs/points.db", "cache": "caches/here", "config": "../configs/forensics.yaml",
        "density": "corner",
        "cohorts": [{"path": f"forensics/{kept}/evals.json", "filters": {"model": kept}},
                    {"path": f"forensics/{dropped}", "filters": {"tags": "not-a-tag"}}]}))
    run_script("evaluate.py", "--dataset", dataset, "--quiet", check=True)
    db = tmp_path / "data" / "dbs" / "points.db"                        # db: relative to the dataset file
    con = duckdb.connect(str(db), read_only=True)
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    expected = dict(con.execute("SELECT base_task, points FROM expected").fetchall())
    evals = [r[0] for r in con.execute("SELECT eval_id FROM evals").fetchall()]
    con.close()
    assert meta["dataset"] == "shown-name" and meta["density"] == "corner"
    # config + density: corner keeps the first and last of each list: length 2 x max_depth 2, rows 2
    assert expected == {"arithmetic": 4, "tables": 2}
    # cohorts: the path (file or folder), and the filters that keep one eval and drop the other
    assert evals == [eval_id(kept, TEMPLATE, SAMPLER)]

    # cache: probe.py fft keeps its point spectra there, reads them back, and notices changed files
    def fft() -> dict:
        out = run_script("probe.py", "fft", dataset, "--view", "rows", "--tokenizer", "bytes", "--format", "json",
                         "--quiet", check=True)
        return {r["value"]: r["spectrum"] for r in json.loads(out.stdout)["spectra"]}

    first = fft()
    stored = sorted((tmp_path / "data" / "caches" / "here" / "fft").glob("*.npz"))
    assert len(stored) == 5                                              # the five table sizes of one eval
    assert not (tmp_path / "data" / ".cache-shown-name").exists()
    for path in stored:                                                  # mark every entry
        np.savez(path, spectrum=np.full(256, 7.0), samples=np.int64(16))
    assert all(s == [7.0] * 256 for s in fft().values())                 # read back, not recomputed
    for source in (tmp_path / "data" / "forensics" / kept).rglob("*tables*.ndjson"):
        os.utime(source, ns=(1, 1))                                      # a changed source: a new key
    assert fft() == first
