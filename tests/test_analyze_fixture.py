"""A small dataset with hand-known numbers for the analyze.py tests, built end to end:
runner-format NDJSON run folders + evals.json + data/hand.json written here, then the
real `evaluate.py --dataset` builds the PointsDB.

Every point has exactly the outcome counts listed in OUTCOMES, so the tests can compute
every statistic by hand from these tables (independently of resolver.stats).

    model   arithmetic (guess 0)            boolean (guess 0.5)
    Alpha   19 correct, 1 incorrect          18 correct, 2 incorrect
    Beta    16 c, 3 x, 1 truncated           15 c, 5 x
    Gamma   12 c, 8 x                         — (never ran boolean)
    Delta   10 c, 10 x; only one of the two   10 c, 10 x
            deep arithmetic points (N/M)

These are the easy (degree 0) points; on medium (degree 1) points two correct answers
become incorrect. Config (below): arithmetic has 2 easy + 2 medium points, boolean
2 easy + 2 medium. Token usage per sample is fixed per outcome (TOKENS).
"""
from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import duckdb
from conftest import evaluate_hand_dataset, write_eval_entry

from resolver.catalog.datasets import eval_id

CONFIG = textwrap.dedent("""\
    name: hand
    precision:
      low: {count: 20, maxrounds: 1, target_margin: 0.2}
    tasks:
      - name: arithmetic
        label: Arithmetic
        generator: arithmetic
        mode: grid
        manifolds:
          - id: shallow
            degree: 0
            grid: {length: [4, 8], max_depth: 1}
          - id: deep
            degree: 1
            grid: {length: 8, max_depth: [2, 3]}
        views:
          - view: depth_length
            group_by: [params.max_depth, params.length]
          - view: length
            group_by: [params.length]
      - name: boolean
        label: Boolean
        generator: boolean
        mode: grid
        manifolds:
          - id: short
            degree: 0
            grid: {length: 4, format: [0, 3]}
          - id: long
            degree: 1
            grid: {length: 10, max_depth: 3, format: [0, 3]}
        views:
          - view: length_format
            group_by: [params.length, params.format]
    """)

TEMPLATE, SAMPLER = "zs", "greedy"
# (base_task, manifold id, degree, params without count)
POINTS = [
    ("arithmetic", "shallow", 0, {"length": 4, "max_depth": 1}),
    ("arithmetic", "shallow", 0, {"length": 8, "max_depth": 1}),
    ("arithmetic", "deep", 1, {"length": 8, "max_depth": 2}),
    ("arithmetic", "deep", 1, {"length": 8, "max_depth": 3}),
    ("boolean", "short", 0, {"length": 4, "format": 0}),
    ("boolean", "short", 0, {"length": 4, "format": 3}),
    ("boolean", "long", 1, {"length": 10, "max_depth": 3, "format": 0}),
    ("boolean", "long", 1, {"length": 10, "max_depth": 3, "format": 3}),
]
GUESS = {"arithmetic": 0.0, "boolean": 0.5}
# model -> base_task -> (correct, incorrect, invalid, truncated) per point
OUTCOMES = {
    "Alpha": {"arithmetic": (19, 1, 0, 0), "boolean": (18, 2, 0, 0)},
    "Beta": {"arithmetic": (16, 3, 0, 1), "boolean": (15, 5, 0, 0)},
    "Gamma": {"arithmetic": (12, 8, 0, 0)},
    "Delta": {"arithmetic": (10, 10, 0, 0), "boolean": (10, 10, 0, 0)},
}
MISSING_POINTS = {"Delta": [("arithmetic", {"length": 8, "max_depth": 3})]}
GROUPS = {"Alpha": ["size:large", "arch:dense"], "Beta": ["size:large", "arch:moe"],
          "Gamma": ["size:small", "arch:dense"], "Delta": ["size:small", "arch:moe"]}
TOKENS = {"correct": 100, "incorrect": 200, "invalid": 300, "truncated": 1000}
PROMPT_TOKENS = 50
KINDS = ("correct", "incorrect", "invalid", "truncated")


def model_eval_id(model: str) -> str:
    return eval_id(model, TEMPLATE, SAMPLER)


def points_of(model: str):
    """The (base_task, manifold, degree, params, counts) a model has data for."""
    for task, manifold, degree, params in POINTS:
        if task not in OUTCOMES[model] or (task, params) in MISSING_POINTS.get(model, []):
            continue
        c, x, v, t = OUTCOMES[model][task]
        yield task, manifold, degree, params, ((c - 2, x + 2, v, t) if degree == 1 else (c, x, v, t))


def _record(model, step, task, manifold, degree, params, index, kind):
    name = f"{step:03d}_{task}_" + "_".join(f"{k}-{v}" for k, v in sorted(params.items()))
    return {
        "task": name, "version": 1, "base_task": task, "key": f"{name}-{index}", "input": "q", "target": "1",
        "response_enum": None, "genresult": {}, "messages": [{"role": "user", "content": "q"}],
        "answer": {"correct": "Final Answer: 1", "incorrect": "Final Answer: 2", "invalid": "no idea",
                   "truncated": "and so on " * 20}[kind],
        "usage": {"completion_tokens": TOKENS[kind], "prompt_tokens": PROMPT_TOKENS,
                  "total_tokens": TOKENS[kind] + PROMPT_TOKENS},
        "timings": {"termination_reason": None, "finish_reason": "length" if kind == "truncated" else "stop"},
        "step": step, "params": dict(params, count=20), "model": model, "template": TEMPLATE, "sampler": SAMPLER,
        "guess_chance": GUESS[task], "normalized_answer": None, "extracted_answer": None,
        "is_valid": kind in ("correct", "incorrect"), "is_correct": kind == "correct",
        "is_truncated": kind == "truncated", "manifold": {"id": manifold, "degree": degree},
    }


def write_cohort(data_dir: Path, model: str) -> None:
    cohort = data_dir / "hand" / model
    run = cohort / f"2026-01-01_00-00-00_hand_{model}_{TEMPLATE}_{SAMPLER}"
    run.mkdir(parents=True)
    for step, (task, manifold, degree, params, counts) in enumerate(points_of(model)):
        kinds = [k for k, n in zip(KINDS, counts) for _ in range(n)]
        lines = [json.dumps(_record(model, step, task, manifold, degree, params, i, kind)) for i, kind in enumerate(kinds)]
        name = lines and json.loads(lines[0])["task"]
        (run / f"{name}.ndjson").write_text("\n".join(lines) + "\n")
    write_eval_entry(cohort, model, TEMPLATE, SAMPLER, label=f"{model} model", groups=GROUPS[model],
                     hf_id=f"org/{model}")


def build_dataset(root: Path) -> Path:
    """Write the cohorts, config and data/hand.json under root and run evaluate.py."""
    for model in OUTCOMES:
        write_cohort(root / "data", model)
    return evaluate_hand_dataset(root, "hand", CONFIG, OUTCOMES)


def hand_dataset(tmp_path_factory, prefix: str = "hand") -> Path:
    """build_dataset's data/hand.json, built once per test run (the one factory of this dataset)
    and copied into a folder of the caller's own."""
    from tests.support.built_once import copy_of

    return copy_of(tmp_path_factory, "hand-dataset", build_dataset, prefix) / "data" / "hand.json"


# ------------------------------------------------------- hand statistics (docs/statistics.md)

def wilson(s: float, k: float, z: float = 1.96):
    """The docs/statistics.md formula, written out again here so tests do not trust resolver.stats."""
    if k <= 0:
        return 0.0, 0.0
    p = min(max(s / k, 0.0), 1.0)
    den = 1 + z * z / k
    return (p + z * z / (2 * k)) / den, z * math.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / den


def cell_counts(model: str, task: str, degree=None):
    """Summed (c, x, v, t, G, points) of a model's points of a task (and degree)."""
    c = x = v = t = g = points = 0
    for p_task, _, p_degree, _, counts in points_of(model):
        if p_task != task or (degree is not None and p_degree != degree):
            continue
        c, x, v, t = c + counts[0], x + counts[1], v + counts[2], t + counts[3]
        g += GUESS[task] * (counts[0] + counts[1] + counts[2])
        points += 1
    return c, x, v, t, g, points


def hand_adjusted_score(model: str, task: str, degree=None) -> float:
    c, x, v, t, g, _ = cell_counts(model, task, degree)
    center, margin = wilson(c - g, c + x + v - g)
    return center + margin - t / (c + x + v + t)


def hand_reasonscore(scores) -> float:
    return 1000 * math.exp(sum(math.log(max(s, 0.01)) for s in scores) / len(scores))


# ---------------------------------------------------------- tests of the fixture

def test_fixture_db_has_the_designed_points(tmp_path_factory):
    dataset = hand_dataset(tmp_path_factory)
    con = duckdb.connect(str(dataset.parent / "hand.db"), read_only=True)
    rows = con.execute("SELECT model, base_task, count(*), sum(correct), sum(truncated) FROM points "
                       "GROUP BY ALL ORDER BY ALL").fetchall()
    con.close()
    expected = sorted((m, t, sum(1 for p in points_of(m) if p[0] == t), *(
        lambda cc: (cc[0], cc[3]))(cell_counts(m, t))) for m in OUTCOMES for t in OUTCOMES[m])
    assert [tuple(r) for r in rows] == expected
