"""Experiment configs: loading, validation errors, density/degree expansion, naming, seeding."""
from __future__ import annotations

import itertools
import textwrap

import pytest
import yaml
from hypothesis import example, given, settings, strategies as st

from resolver.config.loader import expand_steps, expected_points, load_config, step_name, step_seed, thin
from resolver.core.errors import UserError


def write(tmp_path, text, name="exp.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


BASE = """
name: t
precision:
  quick: {count: 2}
  full: {count: 16, maxrounds: 4, target_margin: 0.05}
tasks:
  - name: arithmetic
    manifolds:
      - id: a
        grid:
          length: [3, 4, 5, 6, 7]
          max_depth: [1, 2, 3]
          min_number: -9
      - id: b
        degree: 2
        grid: {length: [10, 20], max_depth: 4}
      - id: c
        degree: 1
        grid: {length: [3], max_depth: [1], min_number: -9}
    views:
      - view: dl
        group_by: [params.max_depth, params.length]
        filters: {manifold.id: a}
"""


def test_seed_and_name_hand_computed():
    # `printf '{"length": 4, "max_depth": 1}' | sha256sum` ends in e672216c
    assert step_seed({"max_depth": 1, "length": 4}) == 0xE672216C + 42
    assert step_seed({"length": 4, "max_depth": 1}, base_seed=7) == 0xE672216C + 7
    # docs/runner.md: example step; sha256sum of its params ends in f6ac0e68
    assert step_seed({"reference_count": 4, "choice_count": 3}, 0) == 0xF6AC0E68
    assert step_name(0, "movies", {"reference_count": 4, "choice_count": 3}) == \
        "000_movies_choice_count-3_reference_count-4"
    assert step_name(12, "x", {"p": 0.5}) == "012_x_p-0.5"


def test_load_and_expand(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    assert cfg.name == "t" and list(cfg.precision) == ["quick", "full"]
    assert cfg.precision_level(None)[0] == "quick"
    assert cfg.precision["full"].maxrounds == 4
    steps = expand_steps(cfg)
    # a: 5*3, b: 2, c: duplicate of a's (3, 1) point -> skipped
    assert len(steps) == 17
    assert [s.index for s in steps] == list(range(17))
    first = steps[0]
    assert first.name == "000_arithmetic_length-3_max_depth-1_min_number--9"
    assert first.params == {"length": 3, "max_depth": 1, "min_number": -9}
    assert first.manifold == {"id": "a"}
    assert first.gen_params["max_number"] == 9 and "count" not in first.params
    assert steps[15].manifold == {"id": "b", "degree": 2}
    assert first.seed == step_seed(first.params, 42)
    assert expand_steps(cfg, seed=1)[0].seed == first.seed - 41


def test_density_counts(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    # lowdef: length [3,5,7] x depth [1,3] = 6, + b 2 = 8; corner: [3,7]x[1,3] = 4 + 2
    assert len(expand_steps(cfg, density="lowdef")) == 8
    assert len(expand_steps(cfg, density="corner")) == 6
    assert expected_points(cfg) == {("arithmetic", None): 15, ("arithmetic", 2): 2, ("arithmetic", 1): 0}
    assert sum(expected_points(cfg, density="corner").values()) == 6


def test_degree_applies_to_entries_without_one(tmp_path):
    # docs/runner.md: "--degree: Degree value to apply to tasks that do not already have degree specified"
    cfg = load_config(write(tmp_path, BASE))
    for degree in (0, 1, 2, 7):
        steps = expand_steps(cfg, degree=degree)
        assert len(steps) == 17                       # every entry runs; c still duplicates a's point
        by_entry = {}
        for s in steps:
            by_entry.setdefault(s.manifold["id"], set()).add(s.manifold["degree"])
        assert by_entry == {"a": {degree}, "b": {2}}  # untagged a takes --degree, b keeps its own
    assert all("degree" not in s.manifold for s in expand_steps(cfg) if s.manifold["id"] == "a")
    with pytest.raises(UserError, match=r"--degree must be a whole number >= 0"):
        expand_steps(cfg, degree=-1)


def test_thin():
    assert thin([1, 2, 3, 4, 5, 6], "lowdef") == [1, 3, 5, 6]
    assert thin([1, 2, 3, 4, 5], "lowdef") == [1, 3, 5]
    assert thin([1, 2, 3, 4], "corner") == [1, 4]
    assert thin([9], "corner") == [9]


@pytest.mark.parametrize("snippet,fragment", [
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a, grid: {lenght: 3}}]}]",
     "tasks[0].manifolds[0].grid.lenght: unknown parameter"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a, grid: {length: 1}}]}]",
     "tasks[0].manifolds[0].grid.length"),
    ("name: t\ntasks: [{name: nosuch, manifolds: [{id: a}]}]", "unknown generator 'nosuch'"),
    ("name: t\ntasks: [{name: arithmetic, mode: fancy, manifolds: [{id: a}]}]", "mode: 'fancy' is not valid; valid: calibrate, grid"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a, grid: {min_number: 5, max_number: 1}}]}]", "min_number"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a, grid: {count: 3}}]}]", "count is not a grid parameter"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a}, {id: a}]}]", "id 'a' is used twice"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a}], views: [{view: v, group_by: [params.nope]}]}]",
     "has no parameter 'nope'"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a}], views: [{view: v, group_by: [colour]}]}]",
     "is not a task dimension"),
    ("name: t\nprecision: {low: {cnt: 3}}\ntasks: [{name: arithmetic, manifolds: [{id: a}]}]", "precision.low.cnt: unknown key"),
    ("name: t\ntasks: []", "tasks: must be a non-empty list"),
    ("name: t\nbogus: 1\ntasks: [{name: arithmetic, manifolds: [{id: a}]}]", "bogus: unknown key"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a, calibrate: {param: length, target_tokens: [9]}}]}]",
     "only allowed when the task has 'mode: calibrate'"),
    ("name: t\ntasks: [{name: 'a/b', generator: arithmetic, manifolds: [{id: a}]}]", "is not valid; use letters"),
    ("name: t\ntasks: [{name: arithmetic, manifolds: [{id: a, grid: {length: [3, [4]]}}]}]", "grid.length"),
    ("name: t\ntasks: [{name: arithmetic\n  manifolds: x", "malformed YAML at line"),
    ("- just\n- a list", "must be a mapping"),
])
def test_bad_configs(tmp_path, snippet, fragment):
    path = write(tmp_path, snippet)
    with pytest.raises(UserError) as err:
        load_config(path)
    message = str(err.value)
    assert fragment in message and str(path) in message and "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_config(tmp_path / "none.yaml")


def test_bad_expansion_flags(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    with pytest.raises(UserError, match="--density 'dense' is not valid; valid: corner, lowdef, normal"):
        expand_steps(cfg, density="dense")
    with pytest.raises(UserError, match="--task 'boolean' is not in this config; valid: arithmetic"):
        expand_steps(cfg, tasks=["boolean"])
    with pytest.raises(UserError, match="--precision 'mega' is not defined; valid: full, quick"):
        cfg.precision_level("mega")


CALIB = """
name: c
tasks:
  - name: arithmetic
    mode: calibrate
    manifolds:
      - id: sized
        degree: 0
        calibrate: {param: length, target_tokens: [100, 200, 400]}
        grid: {max_depth: [1, 2]}
"""


def test_calibrate_needs_tokenizer(tmp_path):
    cfg = load_config(write(tmp_path, CALIB))
    assert cfg.tasks[0].manifolds[0].calibrate.model_dump() == {"param": "length", "target_tokens": [100, 200, 400]}
    assert expected_points(cfg) == {("arithmetic", 0): 6}
    assert expected_points(cfg, density="corner") == {("arithmetic", 0): 4}
    with pytest.raises(UserError, match="needs --tokenizer"):
        expand_steps(cfg)


def test_calibrate_param_not_in_grid(tmp_path):
    with pytest.raises(UserError, match="cannot also be in the grid"):
        load_config(write(tmp_path, CALIB.replace("{max_depth: [1, 2]}", "{length: 5}")))


def test_tiny_config(repo):
    cfg = load_config(repo / "configs/tiny.yaml")
    steps = expand_steps(cfg)
    assert {s.base_task for s in steps} == {"arithmetic", "boolean", "brackets"}
    assert len(steps) == sum(expected_points(cfg).values()) == 14
    assert len({s.name for s in steps}) == 14


# ---- properties ---------------------------------------------------------------------
_lengths = st.lists(st.integers(3, 60), min_size=1, max_size=6, unique=True)
_depths = st.lists(st.integers(1, 6), min_size=1, max_size=4, unique=True)


@settings(max_examples=40, deadline=None)
@given(lengths=_lengths, depths=_depths, density=st.sampled_from(["normal", "lowdef", "corner"]))
def test_property_grid_expansion(tmp_path_factory, lengths, depths, density):
    doc = {"name": "p", "precision": {"x": {"count": 1}},
           "tasks": [{"name": "arithmetic", "manifolds": [{"id": "g", "grid": {"length": lengths, "max_depth": depths}}]}]}
    path = tmp_path_factory.mktemp("cfg") / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    cfg = load_config(path)
    steps = expand_steps(cfg, density=density)
    expected = list(itertools.product(thin(lengths, density), thin(depths, density)))
    assert [(s.params["length"], s.params["max_depth"]) for s in steps] == expected
    assert sum(expected_points(cfg, density=density).values()) == len(steps)
    assert len({s.name for s in steps}) == len(steps)
    for s in steps:
        assert s.name.startswith(f"{s.index:03d}_arithmetic_length-{s.params['length']}_max_depth-")


@settings(max_examples=60, deadline=None)
@example(doc=[{"\n": None}])                 # found by hypothesis: a key with a newline in its message
@given(doc=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
                        max_leaves=12))
def test_property_garbage_is_a_user_error(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("cfg") / "g.yaml"
    path.write_text(yaml.safe_dump({"name": "g", "tasks": doc}))
    try:
        cfg = load_config(path)
    except UserError as exc:
        assert "\n" not in str(exc)
    else:
        expand_steps(cfg)


def test_empty_file_and_directory(tmp_path):
    with pytest.raises(UserError, match="the file is empty"):
        load_config(write(tmp_path, ""))
    with pytest.raises(UserError, match="is a directory"):
        load_config(tmp_path)
