"""Strict reading of user files, in-process: one clear UserError per bad file, typos named, globs confined."""
from __future__ import annotations

import json

import pytest

from resolver.catalog.datasets import EvalSpec, eval_files, load_dataset
from resolver.config.loader import MAX_GRID_POINTS, load_config
from resolver.core.errors import UserError
from resolver.core.inputs import did_you_mean, read_json_file, read_yaml_file

DEEP = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize("content,fragment", [
    (DEEP.encode(), "nested too deeply"),
    (b'{"a": "caf\xe9"}', r"not UTF-8 text \(bad byte at offset 10\)"),
    (b'{"a": 1,}', "not valid JSON"),
    (b'{"n": ' + b"9" * 5000 + b"}", "holds a value that cannot be read"),
])
def test_json_files_fail_in_one_line(tmp_path, content, fragment):
    path = tmp_path / "f.json"
    path.write_bytes(content)
    with pytest.raises(UserError, match=fragment) as err:
        read_json_file(path, "dataset file")
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_missing_directory_and_unreadable_files(tmp_path):
    with pytest.raises(UserError, match="not found"):
        read_json_file(tmp_path / "nope.json", "dataset file")
    with pytest.raises(UserError, match="is a directory"):
        read_json_file(tmp_path, "dataset file")
    with pytest.raises(UserError, match="cannot read config"):
        read_yaml_file("/proc/self/mem", "config")          # readable by name, EIO on read
    (tmp_path / "deep.yaml").write_text(DEEP)
    with pytest.raises(UserError, match="nested too deeply"):
        read_yaml_file(tmp_path / "deep.yaml", "config")


def test_did_you_mean():
    assert did_you_mean("tag", ("tags", "groups")) == " (did you mean tags?)"
    assert did_you_mean("zzz", ("tags", "groups")) == ""


def _write_dataset(root, evals_entry, **dataset_extra):
    cohort = root / "data" / "set" / "M"
    cohort.mkdir(parents=True)
    (cohort / "evals.json").write_text(json.dumps([evals_entry]))
    body = {"name": "set", "db": "set.db", "cohorts": [{"path": "set/M/evals.json"}], **dataset_extra}
    (root / "data" / "set.json").write_text(json.dumps(body))
    return root / "data" / "set.json"


ENTRY = {"evaluate": {"glob": "data/set/M/*/*"}, "filters": {"model": "m", "template": "t", "sampler": "s"},
         "label": "M", "groups": [], "tags": ["leaderboard"]}


@pytest.mark.parametrize("where,change,fragment", [
    ("eval", {"tag": ["x"]}, "unknown key 'tag' (did you mean tags?)"),
    ("eval", {"evaluate": {"glob": "x", "glb": "y"}}, "unknown key 'glb' (did you mean glob?)"),
    ("eval", {"filters": {"model": "m", "template": "t", "sampler": "s", "modle": "x"}},
     "unknown key 'modle' (did you mean model?)"),
    ("dataset", {"cohort": []}, "unknown key 'cohort' (did you mean cohorts?)"),
    ("dataset", {"densty": "normal"}, "unknown key 'densty' (did you mean density?)"),
])
def test_unknown_keys_name_the_file_and_the_closest_key(tmp_path, where, change, fragment):
    entry = {**ENTRY, **change} if where == "eval" else ENTRY
    dataset = _write_dataset(tmp_path, entry, **(change if where == "dataset" else {}))
    with pytest.raises(UserError) as err:
        load_dataset(dataset)
    assert fragment in str(err.value)
    assert ("evals.json" if where == "eval" else "set.json") in str(err.value)


def test_globs_cannot_leave_the_tree_even_through_a_symlink(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.ndjson").write_text('{"x": 1}\n')
    repo = tmp_path / "repo"
    cohort = repo / "data" / "set" / "M"
    (cohort / "run").mkdir(parents=True)
    (cohort / "run" / "a.ndjson").write_text('{"x": 1}\n')
    (cohort / "sneaky").symlink_to(outside)
    spec = EvalSpec("abcdef", "m", "t", "s", "M", (), {}, (), None, "set/M", "*/*.ndjson", cohort, "test")
    assert eval_files(spec) == [(cohort / "run" / "a.ndjson").resolve()]
    for bad in ("/etc/*", "../../../*", "data/../../outside/*"):
        with pytest.raises(UserError, match="relative pattern without"):
            eval_files(EvalSpec("abcdef", "m", "t", "s", "M", (), {}, (), None, "set/M", bad, cohort, "test"))


def test_grid_size_is_refused_before_expansion(tmp_path):
    count = MAX_GRID_POINTS // 1000 + 1                      # 101 x 1000 = 101,000 points
    config = {"name": "big", "tasks": [{"name": "arithmetic", "manifolds": [{"id": "e", "grid": {
        "min_number": list(range(-10_000, -10_000 + count)), "max_number": list(range(1000))}}]}]}
    path = tmp_path / "big.yaml"
    path.write_text(json.dumps(config))
    with pytest.raises(UserError, match="101,000 points; the limit is 100,000"):
        load_config(path)


def test_config_unknown_key_names_the_closest(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: x\ntasks:\n  - name: arithmetic\n    manifolds:\n      - id: a\n        gird: {}\n")
    with pytest.raises(UserError, match="did you mean grid"):
        load_config(path)
