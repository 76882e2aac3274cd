"""A synthetic r12-sized PointsDB written through the real writer (for benchmarks).

    from tests.benchmarks.synth_db import write_synth_db
    write_synth_db("/tmp/synth.db")                      # 60 evals x 12 tasks x 1,000 points
    write_synth_db(path, evals=8, points_per_task=100)   # smaller

or ``python tests/benchmarks/synth_db.py OUT.db [--evals N] [--points-per-task N] [--samples N]``.

Counters follow a simple model so analyses have something real-looking to show:
each eval has a skill, each point a difficulty (growing with its params), accuracy
is a logistic of skill - difficulty, truncation grows with difficulty and falls with
skill, completion tokens are lognormal and grow with difficulty, truncated samples
sit at the token limit and compress badly (repetition loops). Deterministic for a
seed. Also writes a matching dataset JSON next to the DB when ``dataset=True``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from resolver.catalog.datasets import eval_id, facets_from_groups  # noqa: E402
from resolver.pointsdb import schema, writer as pointsdb_writer  # noqa: E402

TASKS = ("arithmetic", "boolean", "brackets", "cars", "dates", "letters", "movies", "objects",
         "sequence", "shapes", "shuffle", "sort")
ARCHS, SIZES, FAMILIES = ("dense", "moe"), ("small", "mid", "large"), ("qwen3", "llama", "phi4", "granite", "glm")
MAX_TOKENS = 8192
GUESS = {"boolean": 0.5, "movies": 0.25, "objects": 0.1}


def _grid(points: int):
    """(length, depth) pairs: a near-square grid with about `points` cells."""
    depths = max(1, int(round(points ** 0.5 / 2)))
    lengths = max(1, -(-points // depths))
    return [(4 + 4 * i, 1 + j) for i in range(lengths) for j in range(depths)][:points]


def _list_array(flat: np.ndarray, n_points: int, samples: int, kind) -> pa.Array:
    offsets = pa.array(np.arange(0, (n_points + 1) * samples, samples, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(flat).cast(kind))


def _identities(tasks, grid):
    """The points every eval has: task names, params / manifold JSON, difficulty."""
    task_list, params, manifolds, diffs = [], [], [], []
    for t_index, task in enumerate(tasks):
        for p_index, (length, depth) in enumerate(grid):
            task_list.append(task)
            params.append(schema.canonical_json({"length": length, "max_depth": depth}))
            manifolds.append(schema.canonical_json({"id": "grid", "degree": p_index * 3 // len(grid)}))
            diffs.append(0.04 * length + 0.5 * depth + 0.3 * t_index - 2.0)
    return task_list, params, manifolds, diffs


_SLOTS = {}


def _slots(task_list, params) -> np.ndarray:
    key = (len(task_list), task_list[0], params[-1])
    if key not in _SLOTS:
        ids = schema.point_ids("000000", list(zip(task_list, params)))
        _SLOTS[key] = np.array(ids, dtype=np.int64)
    return _SLOTS[key]


def _eval_batch(model: str, groups: list, identities, samples: int, rng) -> pa.Table:
    eid = eval_id(model, "zeroshot-nosys", "greedy-max")
    skill = rng.normal(1.0, 1.2)
    task_list, params, manifolds, diffs = identities
    n = len(task_list)
    diff = np.repeat(np.array(diffs), samples)
    guess_chance = np.repeat(np.array([GUESS.get(t, 0.0) for t in task_list]), samples)
    u = rng.random(n * samples)
    p_trunc = 1 / (1 + np.exp(-(diff - skill - 2.5)))
    p_correct = guess_chance + (1 - guess_chance) / (1 + np.exp(diff - skill))
    outcome = np.where(u < p_trunc, 3, np.where(rng.random(n * samples) < p_correct, 0,
                                                 np.where(rng.random(n * samples) < 0.05, 2, 1))).astype(np.uint8)
    tokens = np.minimum(rng.lognormal(np.log(300) + 0.35 * np.clip(diff, 0, None), 0.5), MAX_TOKENS - 1)
    tokens = np.where(outcome == 3, MAX_TOKENS, tokens).astype(np.int32)
    answer_bytes = (tokens * rng.uniform(3.5, 4.5, n * samples)).astype(np.int32)
    ratio = np.where(outcome == 3, rng.uniform(0.02, 0.12, n * samples), rng.uniform(0.28, 0.42, n * samples))
    compressed = np.maximum(20, answer_bytes * ratio).astype(np.int32)
    prompt = np.repeat(rng.integers(150, 1500, n), samples).astype(np.int64)
    shape = (n, samples)
    o, tok = outcome.reshape(shape), tokens.reshape(shape).astype(np.int64)
    by_outcome = [np.where(o == k, tok, 0).sum(axis=1) for k in range(4)]
    # Slots depend only on the identity, so every eval shares the first eval's slots.
    slots = _slots(task_list, params)
    ids = (np.int64(int(eid, 16)) << schema.ID_SLOT_BITS) + slots
    cols = {
        "id": ids, "eval_id": [eid] * n, "model": [model] * n, "template": ["zeroshot-nosys"] * n,
        "sampler": ["greedy-max"] * n, "base_task": task_list,
        "task": [f"{i:03d}_{t}" for i, t in enumerate(task_list)], "params": params, "manifold": manifolds,
        "facets": [schema.canonical_json(facets_from_groups(groups))] * n, "groups": [groups] * n,
        "correct": (o == 0).sum(axis=1), "incorrect": (o == 1).sum(axis=1), "invalid": (o == 2).sum(axis=1),
        "truncated": (o == 3).sum(axis=1),
        "guess_sum": np.where(o != 3, guess_chance.reshape(shape), 0.0).sum(axis=1),
        "guess_sum_all": guess_chance.reshape(shape).sum(axis=1), "task_version": [1] * n, "grader_version": [1] * n,
        "prompt_tokens": prompt.reshape(shape).sum(axis=1), "completion_tokens_sum": tok.sum(axis=1),
        "tokens_correct": by_outcome[0], "tokens_incorrect": by_outcome[1], "tokens_invalid": by_outcome[2],
        "tokens_truncated": by_outcome[3],
        "completion_tokens": _list_array(tokens, n, samples, pa.int32()),
        "outcome": _list_array(outcome, n, samples, pa.uint8()),
        "answer_bytes": _list_array(answer_bytes, n, samples, pa.int32()),
        "compressed_bytes": _list_array(compressed, n, samples, pa.int32()),
        "sample_index": _list_array(np.tile(np.arange(samples, dtype=np.int32), n), n, samples, pa.int32()),
        "sources": [[f"synthetic/{model}/{i:03d}.ndjson"] for i in range(n)],
    }
    for name in ("correct", "incorrect", "invalid", "truncated"):
        cols[name] = pa.array(cols[name].astype(np.int32))
    return pointsdb_writer.points_batch(cols), eid, skill


def write_synth_db(path, evals: int = 60, tasks: int = 12, points_per_task: int = 1000, samples: int = 32,
                   seed: int = 0, dataset: bool = False) -> Path:
    """Write a synthetic PointsDB at `path` (replacing it) and return the path."""
    path = Path(path)
    rng = np.random.default_rng(seed)
    task_names = TASKS[:tasks] if tasks <= len(TASKS) else [f"task{i:02d}" for i in range(tasks)]
    grid = _grid(points_per_task)
    identities = _identities(task_names, grid)
    with pointsdb_writer.PointsWriter(path, keep_existing=False) as writer:
        for i in range(evals):
            groups = [f"arch:{ARCHS[i % 2]}", f"size:{SIZES[i % 3]}", f"family:{FAMILIES[i % 5]}"]
            model = f"synth-model-{i:02d}"
            batch, eid, _ = _eval_batch(model, groups, identities, samples, rng)
            writer.write_points(batch)
            writer.put_eval({"eval_id": eid, "model": model, "template": "zeroshot-nosys", "sampler": "greedy-max",
                             "label": f"Synth Model {i:02d}", "groups": groups,
                             "facets": schema.canonical_json(facets_from_groups(groups)),
                             "tags": ["leaderboard"] if i % 4 else [], "hf_id": f"synthetic/model-{i:02d}",
                             "cohort": f"synth/{model}", "fingerprint": "synthetic", "files": len(task_names),
                             "samples": batch.num_rows * samples, "points": batch.num_rows})
        per_degree = np.bincount([j * 3 // len(grid) for j in range(len(grid))], minlength=3)
        writer.set_expected([(t, d, int(per_degree[d])) for t in task_names for d in range(3)])
        writer.set_meta({"dataset": "synthetic", "density": "normal", "seed": seed})
    if dataset:
        (path.parent / f"{path.stem}.json").write_text(json.dumps(
            {"name": path.stem, "db": path.name, "cache": f".cache-{path.stem}", "cohorts": []}, indent=2))
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--evals", type=int, default=60)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--points-per-task", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dataset", action="store_true", help="also write <out stem>.json naming the DB")
    args = parser.parse_args(argv)
    write_synth_db(args.out, args.evals, args.tasks, args.points_per_task, args.samples, args.seed, args.dataset)
    print(args.out)


if __name__ == "__main__":
    main()
