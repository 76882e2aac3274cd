"""datasets.py: eval_id, facets, evals.json and dataset parsing, cohort filters, globs."""
import hashlib
import json

import pytest

from resolver.catalog.datasets import eval_files, eval_id, eval_matches, facets_from_groups, load_dataset, load_evals
from resolver.core.errors import UserError


def test_eval_id_test_vector():
    assert eval_id("GLM-4.5-Air-AWQ", "zeroshot-nosys", "qwen3-think-max") == "1f0030"


def test_eval_id_matches_independent_sha256():
    expected = hashlib.sha256(b"m|t|s").hexdigest()[:6]
    assert eval_id("m", "t", "s") == expected


def test_facets_from_groups():
    assert facets_from_groups(["arch:moe", "size:large", "plain", "ctx:16k:x"]) == {
        "arch": "moe", "size": "large", "ctx": "16k:x"}
    assert facets_from_groups([]) == {}


def _write_cohort(tmp_path, name, evals):
    cohort = tmp_path / "data" / "r12" / name
    cohort.mkdir(parents=True)
    (cohort / "evals.json").write_text(json.dumps(evals))
    return cohort


def _eval(model, sampler="greedy-max", tags=None, glob=None, groups=("arch:dense",)):
    entry = {"evaluate": {"glob": glob or f"data/r12/{model}/*_{model}_*/*"},
             "filters": {"model": model, "template": "zeroshot-nosys", "sampler": sampler},
             "label": f"{model} label", "groups": list(groups), "hf_id": f"org/{model}"}
    if tags is not None:
        entry["tags"] = tags
    return entry


def test_dataset_with_cohort_filters(tmp_path):
    _write_cohort(tmp_path, "A", [_eval("A", tags=["leaderboard"]), _eval("A", sampler="hot")])
    _write_cohort(tmp_path, "B", [_eval("B"), _eval("B", sampler="hot")])
    ds_file = tmp_path / "data" / "r12.json"
    ds_file.write_text(json.dumps({
        "name": "r12", "db": "pointsdb-r12.db", "cache": "r12/.cache", "config": "../configs/r12.yaml",
        "cohorts": [{"path": "r12/A/evals.json", "filters": {"tags": "leaderboard"}},
                    {"path": "r12/B/evals.json", "filters": {"sampler": ["hot"]}}]}))
    ds = load_dataset(ds_file)
    assert [(e.model, e.sampler) for e in ds.evals] == [("A", "greedy-max"), ("B", "hot")]
    assert ds.db_path == (tmp_path / "data" / "pointsdb-r12.db").resolve()
    assert ds.config_path == (tmp_path / "configs" / "r12.yaml").resolve()
    assert ds.density == "normal"
    first = ds.evals[0]
    assert first.cohort == "r12/A" and first.facets == {"arch": "dense"} and first.tags == ("leaderboard",)
    assert first.eval_id == hashlib.sha256(b"A|zeroshot-nosys|greedy-max").hexdigest()[:6]


def test_eval_files_resolves_repo_relative_and_cohort_relative_globs(tmp_path):
    cohort = _write_cohort(tmp_path, "M", [_eval("M"), _eval("M", sampler="s2", glob="run2/*")])
    run = cohort / "2026-01-01_00-00-00_r12_M_zeroshot-nosys_greedy-max"
    run.mkdir()
    (run / "000_a.ndjson").write_text("")
    (run / "metadata.json").write_text("{}")
    (cohort / "run2").mkdir()
    (cohort / "run2" / "x.ndjson").write_text("")
    specs = load_evals(cohort / "evals.json")
    assert eval_files(specs[0]) == [(run / "000_a.ndjson").resolve()]
    assert eval_files(specs[1]) == [(cohort / "run2" / "x.ndjson").resolve()]


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not valid JSON"),
    ('{"a": 1}', "JSON array"),
    ('[{"evaluate": {"glob": "x"}, "filters": {"model": "m", "template": "t"}}]', "'sampler'"),
    ('[{"filters": {"model": "m", "template": "t", "sampler": "s"}}]', "'evaluate'"),
    ('[{"evaluate": {"glob": "x"}, "filters": {"model": "m", "template": "t", "sampler": "s"}, "groups": 3}]',
     "'groups'"),
])
def test_bad_evals_json_names_file_and_key(tmp_path, content, needle):
    path = tmp_path / "evals.json"
    path.write_text(content)
    with pytest.raises(UserError) as err:
        load_evals(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_bad_dataset_files(tmp_path):
    ds_file = tmp_path / "d.json"
    with pytest.raises(UserError, match="not found"):
        load_dataset(ds_file)
    ds_file.write_text(json.dumps({"db": "x.db", "cohorts": [{"path": "c/evals.json", "filters": {"colour": "red"}}]}))
    with pytest.raises(UserError, match="unknown filter key 'colour'"):
        load_dataset(ds_file)
    ds_file.write_text(json.dumps({"cohorts": []}))
    with pytest.raises(UserError, match="'db'"):
        load_dataset(ds_file)
    ds_file.write_text(json.dumps({"db": "x.db", "cohorts": [], "density": "dense"}))
    with pytest.raises(UserError, match="density"):
        load_dataset(ds_file)
    ds_file.write_text(json.dumps({"db": "x.db", "cohorts": [{"path": "missing/evals.json"}]}))
    with pytest.raises(UserError, match="evals.json not found"):
        load_dataset(ds_file)


def test_duplicate_eval_rejected(tmp_path):
    cohort = _write_cohort(tmp_path, "D", [_eval("D"), _eval("D")])
    with pytest.raises(UserError, match="duplicate eval"):
        load_evals(cohort / "evals.json")


def test_eval_matches_groups_and_lists(tmp_path):
    cohort = _write_cohort(tmp_path, "G", [_eval("G", groups=["arch:moe", "size:large"])])
    spec = load_evals(cohort / "evals.json")[0]
    assert eval_matches(spec, {"groups": "arch:moe"})
    assert eval_matches(spec, {"groups": ["arch:dense", "size:large"]})
    assert not eval_matches(spec, {"groups": "arch:dense"})
    assert not eval_matches(spec, {"tags": "leaderboard"})
    assert eval_matches(spec, {"model": "G", "eval_id": spec.eval_id})
