"""A small PointsDB of two (or more) evals with hand-chosen per-sample outcomes, written with
the real PointsWriter, for the analyze.py compare tests.

``write_paired_db(path, evals)``: ``evals`` maps (model, template) to a list of points, each
``{"base_task", "params", "degree", "outcomes": [codes], "indices"?: [sample indices],
"guess": chance, "version"?: n}`` (outcome codes 0 correct, 1 incorrect, 2 invalid,
3 truncated). Returns {(model, template): eval_id}.
"""
from __future__ import annotations

from resolver.catalog.datasets import eval_id
from resolver.pointsdb import canonical_json, points_batch
from resolver.pointsdb.writer import PointsWriter

SAMPLER = "greedy"


def _point_row(eid, model, template, number, point) -> dict:
    outcomes = list(point["outcomes"])
    indices = list(point.get("indices", range(len(outcomes))))
    counts = [outcomes.count(k) for k in range(4)]
    answered = counts[0] + counts[1] + counts[2]
    guess = float(point.get("guess", 0.0))
    manifold = {"id": f"m{point['degree']}", "degree": point["degree"]}
    return {
        "id": (int(eid, 16) << 20) + number, "eval_id": eid, "model": model, "template": template,
        "sampler": SAMPLER, "base_task": point["base_task"], "task": f"{number:03d}_{point['base_task']}",
        "params": canonical_json(point["params"]), "manifold": canonical_json(manifold), "facets": "{}",
        "groups": [], "correct": counts[0], "incorrect": counts[1], "invalid": counts[2], "truncated": counts[3],
        "guess_sum": guess * answered, "guess_sum_all": guess * len(outcomes), "prompt_tokens": 10 * len(outcomes),
        "completion_tokens_sum": 100 * len(outcomes), "tokens_correct": 100 * counts[0],
        "tokens_incorrect": 100 * counts[1], "tokens_invalid": 100 * counts[2], "tokens_truncated": 100 * counts[3],
        "completion_tokens": [100] * len(outcomes), "outcome": outcomes, "answer_bytes": [400] * len(outcomes),
        "compressed_bytes": [200] * len(outcomes), "sample_index": indices, "sources": ["hand.ndjson"],
        "task_version": int(point.get("version", 1)), "grader_version": 1, "invalid_reasons": "{}",
    }


def write_paired_db(path, evals: dict) -> dict:
    ids = {}
    rows = []
    for (model, template), points in evals.items():
        eid = eval_id(model, template, SAMPLER)
        ids[(model, template)] = eid
        rows += [_point_row(eid, model, template, i, p) for i, p in enumerate(points)]
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    with PointsWriter(path, keep_existing=False) as writer:
        for (model, template), eid in ids.items():
            writer.put_eval({"eval_id": eid, "model": model, "template": template, "sampler": SAMPLER,
                             "label": model, "groups": [], "facets": "{}", "tags": []})
        writer.write_points(points_batch(columns))
    return ids
