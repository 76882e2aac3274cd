"""configs/r12.yaml: the twelve r12 tasks, about a thousand points, three degree tiers,
and a real offline run of the runner over it."""
from __future__ import annotations

import json

import pytest

from resolver.config.loader import expand_steps, expected_points, load_config

R12 = {"arithmetic", "boolean", "brackets", "cars", "dates", "letters", "movies", "objects",
       "shapes", "shuffle", "sort", "tables"}


def test_r12_has_the_twelve_tasks_and_about_a_thousand_points(repo):
    cfg = load_config(repo / "configs" / "r12.yaml")
    assert {t.name for t in cfg.tasks} == R12 and all(t.mode == "grid" for t in cfg.tasks)
    steps = expand_steps(cfg)
    assert 900 <= len(steps) <= 1100
    assert sum(expected_points(cfg).values()) == len(steps)
    per_task = {}
    for s in steps:
        per_task[s.base_task] = per_task.get(s.base_task, 0) + 1
    assert set(per_task) == R12 and min(per_task.values()) >= 60
    assert list(cfg.precision) == ["low", "medium", "high"]


def test_r12_degrees_split_every_task_into_three_tiers(repo):
    cfg = load_config(repo / "configs" / "r12.yaml")
    steps = expand_steps(cfg)
    tiers = {d: [s for s in steps if s.manifold.get("degree") == d] for d in (0, 1, 2)}
    for d, tier in tiers.items():
        assert {s.base_task for s in tier} == R12
    assert sum(len(t) for t in tiers.values()) == len(steps)
    # every entry has a degree, so --degree (docs/runner.md: only for entries without one) changes nothing
    assert [s.manifold for s in expand_steps(cfg, degree=1)] == [s.manifold for s in steps]


@pytest.mark.slow
def test_runner_offline_over_r12_corner_writes_every_task(repo, script, tmp_path):
    proc = script("runner.py", "--config", "configs/r12.yaml", "--template", "templates/zerocot-nosys.json",
                  "--sampler", "samplers/greedy-4k.json", "--model", "m", "--offline", "1",
                  "--density", "corner", "--output", tmp_path, "--quiet")
    assert proc.returncode == 0, proc.stderr
    files = list(tmp_path.glob("*/*.ndjson"))
    tasks = set()
    for f in files:
        records = [json.loads(line) for line in f.read_text().splitlines()]
        assert records and all(r["input"] and r["target"] is not None for r in records)
        tasks.add(records[0]["base_task"])
    assert tasks == R12


def test_zero_and_zero_point_zero_are_one_point(tmp_path):
    """`0` and `0.0` (and `1` / `1.0`) name one point: same params, name, seed and problems."""
    body = ("name: z\ntasks:\n  - name: arithmetic\n    manifolds:\n      - id: a\n"
            "        grid: {{length: 4, max_depth: {depth}, prob_dewhitespace: {p}}}\n")
    (tmp_path / "a.yaml").write_text(body.format(depth="1", p="0"))
    (tmp_path / "b.yaml").write_text(body.format(depth="1.0", p="0.0"))
    a = expand_steps(load_config(tmp_path / "a.yaml"))[0]
    b = expand_steps(load_config(tmp_path / "b.yaml"))[0]
    assert (a.name, a.seed) == (b.name, b.seed)
    assert json.dumps(a.params) == json.dumps(b.params) == '{"length": 4, "max_depth": 1, "prob_dewhitespace": 0.0}'


def test_calibrate_and_manifold_do_not_import_each_other(repo):
    """The dependency runs one way: manifold may use calibrate, calibrate never manifold."""
    import ast

    source = (repo / "resolver" / "config" / "calibrate.py").read_text()
    imported = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    assert "resolver.config.loader" not in imported
