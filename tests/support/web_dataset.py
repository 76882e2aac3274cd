"""A small, hand-made dataset for the web-app tests, built end to end through evaluate.py.

Run folders of runner-format NDJSON records are written by this module (not by the code
under test) for a dozen evals with known traits, then the real `evaluate.py --dataset`
builds the PointsDB. The traits the tests look for:

* "Alpha-8B" is the strongest, "Gamma-2B" the weakest;
* "Beta-30B-A3B" truncates a quarter of its samples at degree 1 (hatch + [-.ZZ] in the cell);
* "Gamma-2B" never ran boolean (its boolean cells are "—" and its score has "*");
* "Delta-14B" ran only half of the deep arithmetic points ((N/M) and "*");
* "Zeta-32B" collapses on hard points, "Eta-70B" spends many tokens for little, "Theta-7B" is good
  at arithmetic only (archetypes collapse, over-thinker, specialist);
* "Alpha-8B-Q4" fails some answers by format, not by reasoning: of its wrong answers, those
  with an even sample index have no final-answer marker and every fourth placeholder
  copied out (invalid, with the runner's `invalid_reason`), the rest stay wrong;
* twelve evals in all make two pages of ten.
"""
from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

from tests.conftest import evaluate_hand_dataset, write_eval_entry

CONFIG = textwrap.dedent("""\
    name: webtest
    precision:
      low: {count: 8, maxrounds: 1, target_margin: 0.25}
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
            grid: {length: [4, 8, 16], max_depth: [2, 3]}
        views:
          - view: depth_length
            group_by: [params.max_depth, params.length]
          - view: length
            group_by: [params.length]
          - view: manifold_length
            group_by: [manifold.id, params.length]
      - name: boolean
        label: Boolean
        generator: boolean
        mode: grid
        manifolds:
          - id: short
            degree: 0
            grid: {length: 4, max_depth: 1}
          - id: long
            degree: 1
            grid: {length: [8, 12], max_depth: 3}
        views:
          - view: length
            group_by: [params.length]
      - name: brackets
        label: Brackets
        generator: brackets
        mode: grid
        manifolds:
          - id: stack
            degree: 0
            grid: {length: 6, max_depth: 2}
          - id: tall
            degree: 1
            grid: {length: 12, max_depth: [2, 4]}
        views:
          - view: depth
            group_by: [params.max_depth]
    """)

TEMPLATE, SAMPLER = "zeroshot", "greedy"
SAMPLES = 8

# model -> (skill, mean completion tokens, groups, special trait)
EVALS = {
    "Alpha-8B": (0.95, 600, ["family:alpha", "arch:dense", "size:small"], None),
    "Alpha-8B-Q4": (0.85, 650, ["family:alpha", "arch:dense", "size:small", "quant:q4"], None),
    "Beta-30B-A3B": (0.75, 2400, ["family:beta", "arch:moe", "size:mid"], "truncates"),
    "Gamma-2B": (0.30, 400, ["family:gamma", "arch:dense", "size:tiny"], "no_boolean"),
    "Delta-14B": (0.65, 1200, ["family:delta", "arch:dense", "size:mid"], "incomplete"),
    "Zeta-32B": (0.95, 900, ["family:zeta", "arch:dense", "size:large"], "collapse"),
    "Eta-70B": (0.40, 4500, ["family:eta", "arch:dense", "size:xlarge"], None),
    "Theta-7B": (0.95, 700, ["family:theta", "arch:dense", "size:small"], "specialist"),
}
# model -> {sample index % 4: (answer ending, invalid_reason)} for its wrong answers
FORMAT_FAILURES = {"Alpha-8B-Q4": {0: ("I would rather not commit to a number.", "no_marker"),
                                   2: ("I would rather not commit to a number.", "no_marker"),
                                   1: ("Final Answer: <integer>", "placeholder")}}
for _i in range(4):
    EVALS[f"Filler-{_i + 1}"] = (0.50 + 0.05 * _i, 900 + 100 * _i, ["family:filler", "arch:dense", "size:small"], None)


def _p_correct(model: str, step) -> float:
    skill, _, _, trait = EVALS[model]
    if trait == "collapse":                          # fine on easy points, lost on hard ones
        skill = 0.98 if step.manifold.get("degree") == 0 else 0.08
    if trait == "specialist" and step.base_task != "arithmetic":
        skill = 0.10
    return max(0.02, min(0.98, skill - _difficulty(step.params)))


def _difficulty(params: dict) -> float:
    return 0.05 * params.get("max_depth", 1) + 0.01 * params.get("length", 4)


def _records(model: str, step, rng: random.Random):
    _, tokens, _, trait = EVALS[model]
    guess = 0.5 if step.base_task == "boolean" else 0.0
    p_correct = _p_correct(model, step)
    for index in range(SAMPLES):
        truncated = trait == "truncates" and step.manifold.get("degree") == 1 and index % 4 == 0
        correct = (not truncated) and rng.random() < p_correct
        target = {"boolean": "True", "brackets": "valid"}.get(step.base_task, str(17 + step.params["length"]))
        answer = f"Working it out step by step.\nFinal Answer: {target if correct else 'wrong-' + str(index)}"
        failure = None if correct or truncated else FORMAT_FAILURES.get(model, {}).get(index % 4)
        if failure:
            answer = f"Working it out step by step.\n{failure[0]}"
        completion = int(tokens * (0.6 + 0.8 * rng.random())) * (3 if truncated else 1)
        yield {
            "task": step.name, "version": 1, "base_task": step.base_task, "key": f"{step.name}-{index}",
            "input": f"problem {step.name} #{index}", "target": target, "response_enum": None,
            "genresult": {"operator_mix": "plus" if index % 2 else "times"},
            "messages": [{"role": "user", "content": f"problem {step.name} #{index}"}],
            "answer": None if truncated else answer,
            "usage": {"prompt_tokens": 120 + step.params["length"] * 6, "completion_tokens": completion},
            "timings": {"termination_reason": "length" if truncated else "stop",
                        "finish_reason": "length" if truncated else "stop"},
            "step": step.index, "params": dict(step.params, count=SAMPLES), "model": model,
            "template": TEMPLATE, "sampler": SAMPLER, "guess_chance": guess,
            "normalized_answer": None if truncated or failure else (target if correct else f"wrong-{index}"),
            "extracted_answer": None if truncated or failure else (target if correct else f"wrong-{index}"),
            "is_valid": not truncated and not failure, "is_correct": bool(correct), "is_truncated": bool(truncated),
            "manifold": step.manifold,
            **({"invalid_reason": failure[1]} if failure else {}),
        }


def _steps_for(model: str, steps):
    trait = EVALS[model][3]
    chosen = []
    deep_seen = 0
    for step in steps:
        if trait == "no_boolean" and step.base_task == "boolean":
            continue
        if trait == "incomplete" and step.manifold.get("id") == "deep":
            deep_seen += 1
            if deep_seen % 2 == 0:
                continue
        chosen.append(step)
    return chosen


def build_web_dataset(root: Path) -> Path:
    """Write config, cohorts and run folders under root, run evaluate.py; return the dataset file."""
    from resolver.config.loader import expand_steps, load_config

    root = Path(root)
    (root / "configs").mkdir(parents=True, exist_ok=True)
    config_path = root / "configs" / "webtest.yaml"
    config_path.write_text(CONFIG)
    steps = expand_steps(load_config(config_path), density="normal")
    data = root / "data"
    for n, model in enumerate(EVALS):
        rng = random.Random(1000 + n)
        cohort = data / "webtest" / model
        run = cohort / f"2026-01-01_00-00-00_webtest_{model}_{TEMPLATE}_{SAMPLER}"
        run.mkdir(parents=True, exist_ok=True)
        for step in _steps_for(model, steps):
            with open(run / f"{step.name}.ndjson", "w", encoding="utf-8") as out:
                for record in _records(model, step, rng):
                    out.write(json.dumps(record) + "\n")
        _, _, groups, _ = EVALS[model]
        write_eval_entry(cohort, model, TEMPLATE, SAMPLER, label=f"{model} (test)", groups=groups)
    return evaluate_hand_dataset(root, "webtest", CONFIG, EVALS, db="pointsdb-webtest.db", parallel=2)


def shared_web_dataset(tmp_path_factory) -> Path:
    """build_web_dataset once per test run, shared by the workers (the web test modules only read it)."""
    from tests.support.built_once import built_once

    return built_once(tmp_path_factory, "web-dataset", build_web_dataset) / "data" / "webtest.json"
