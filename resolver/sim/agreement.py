"""How alike simulated profiles are problem by problem: the phi coefficient of right/wrong
between every two profiles on the same problems (docs/simulator.md, "Hard for everyone").

    python -m resolver.sim.agreement --config configs/tiny.yaml [--samples 200]
        [--template templates/zerocot-nosys.json] [--sampler samplers/greedy-4k.json]
        [--profiles sim-strong,sim-mid,...] [--seed 42]
    python -m resolver.sim.agreement --pointsdb data/pointsdb-demo.db

The first form renders the prompts the runner would send (every point of the config at
normal density, samples 0..N-1) and answers each one in process exactly as the server
does. The second reads what was actually collected: every model of a PointsDB (simulated
or real), a sample being the same problem for two evals when its task, task version,
params and sample index agree. Either prints, per pair, both accuracies, phi over all
problems, and phi within points (the pooled within-point correlation: each point's own
mean removed, which is the part a paired comparison gains from).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from os import PathLike

from resolver.config import DEFAULT_SEED
from resolver.pointsdb import OUTCOME_CORRECT, open_pointsdb
from resolver.run import RunOptions, build_experiment, messages_for, request_for
from resolver.sim.app import SimulatorApp
from resolver.sim.problems import ExperimentProblems
from resolver.sim.profiles import PROFILES

__all__ = ["agreement_table", "collected_correctness", "phi", "simulated_correctness", "within_point_phi"]


def phi(a: list[bool], b: list[bool]) -> float:
    """Pearson correlation of two 0/1 sequences (nan when either is constant)."""
    return within_point_phi({0: (a, b)})


def within_point_phi(groups: dict) -> float:
    """Correlation of 0/1 outcomes after removing each group's own means.

    `groups` maps a point to (outcomes of A, outcomes of B) on the same problems.
    """
    cov = var_a = var_b = 0.0
    for a, b in groups.values():
        n = len(a)
        if n == 0:
            continue
        mean_a, mean_b = sum(a) / n, sum(b) / n
        cov += sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b))
        var_a += sum((x - mean_a) ** 2 for x in a)
        var_b += sum((y - mean_b) ** 2 for y in b)
    return cov / math.sqrt(var_a * var_b) if var_a > 0 and var_b > 0 else math.nan


def simulated_correctness(config: str, template: str, sampler: str, profiles: Sequence[str], samples: int,
                          seed: int = DEFAULT_SEED) -> dict:
    """{profile: {(point, sample_index): correct}} for samples 0..samples-1 of every point."""
    experiment = build_experiment(RunOptions(config=config, template=template, sampler=sampler,
                                             model="sim", apibase="http://127.0.0.1:1", seed=seed).checked())
    problems = ExperimentProblems(config, seed=seed)
    problems.max_depth = max(problems.max_depth, samples)   # index as deep as asked
    app = SimulatorApp(problems, seed=seed)
    result: dict = {name: {} for name in profiles}
    for point, step in enumerate(experiment.steps):
        for index, case in experiment.cases(step, 0, samples):
            body = request_for(experiment, messages_for(experiment, step, case))
            for name in profiles:
                answer, _ = app.answer(PROFILES[name], body)
                result[name][(point, index)] = answer.outcome == "correct"
    if app.stats.unrecognised:
        raise RuntimeError(f"{app.stats.unrecognised} prompts were not recognised")
    return result


def collected_correctness(path: str | PathLike[str]) -> dict:
    """{"model (eval_id)": {(point, sample_index): correct}} from a PointsDB's outcome[] arrays."""
    with open_pointsdb(path) as db:
        rows = db.query("SELECT model, eval_id, task, task_version, CAST(params AS VARCHAR) AS params, "
                        "outcome, sample_index FROM points")
    result: dict = {}
    for model, eval_id, task, task_version, params, outcome_list, sample_index in rows.itertuples(index=False, name=None):
        point = (task, task_version, params)
        outcomes = result.setdefault(f"{model} ({eval_id})", {})
        for outcome, index in zip(outcome_list, sample_index):
            outcomes[(point, int(index))] = int(outcome) == OUTCOME_CORRECT
    return result


def agreement_table(correct: dict) -> list[dict]:
    """Per pair of profiles: n, both accuracies, phi over all problems and within points."""
    rows = []
    for name_a, name_b in combinations(correct, 2):
        keys = sorted(correct[name_a].keys() & correct[name_b].keys())
        a = [correct[name_a][k] for k in keys]
        b = [correct[name_b][k] for k in keys]
        groups: dict = {}
        for key, x, y in zip(keys, a, b):
            pair = groups.setdefault(key[0], ([], []))
            pair[0].append(x)
            pair[1].append(y)
        rows.append({"a": name_a, "b": name_b, "n": len(keys),
                     "accuracy_a": sum(a) / max(1, len(a)), "accuracy_b": sum(b) / max(1, len(b)),
                     "phi": phi(a, b), "phi_within_points": within_point_phi(groups)})
    return rows


if __name__ == "__main__":
    # The documented `python -m resolver.sim.agreement` (docs/simulator.md): the command is
    # resolver/cli/agreement.py, started by name so the library does not import the command layer.
    import runpy

    runpy.run_module("resolver.cli.agreement", run_name="__main__", alter_sys=True)
