"""Is B better than A, and where? Paired comparison of two evals (analyze.py compare).

``compare_evals(db, a, b, ...)`` returns the docs/analyze.md JSON contract as a dict; the
markdown, JSON and PNG views only render it (resolver/analysis/compare_text.py,
resolver/plots/compare.py), and the leaderboard's difference view calls the same function.

Pairing (docs/statistics.md, "Paired comparisons"): sample i of a point is the same
problem for every model run on the same config, so a sample of A pairs with the sample
of B that has the same (base_task, params, task_version, sample_index). Templates and
samplers may differ (the problem is the same); task versions may not (the generator
changed, so the problems did): such points stay unpaired and are listed. Samples only
one eval has are counted (``unpaired_samples``), never paired.

Statistics per (tier, group) cell and overall: resolver.stats.paired (Newcombe's paired
method 10 on the mode intervals; Holm across the cells and the overall row).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from resolver import stats
from resolver.analysis.common import DEFAULT_DELTA, DEFAULT_TOP, label_missing, plain
from resolver.analysis.compare_sequential import anytime_rows, sequential_marker, sequential_summary, stopped_of
from resolver.analysis.outputs import CompareCell, ComparePoint, SamplingPlan, UnpairedSamples, VersionMismatch
from resolver.analysis.scores import DEGREE_COLUMN, group_order, tier_name
from resolver.core import UserError
from resolver.pointsdb import parse_filters
from resolver.stats import paired

if TYPE_CHECKING:
    from pathlib import Path

    from resolver.pointsdb import FiltersLike, PointsDB

__all__ = ["ALPHA", "DEFAULT_DELTA", "DEFAULT_TOP", "compare_evals", "pair_samples", "point_frame"]

ALPHA = 0.05
ALL = "all"
_KEY = "_key"
_POINT_COLUMNS = ["id", "eval_id", "base_task", "params", "task_version", DEGREE_COLUMN, "outcome", "sample_index",
                  "correct", "incorrect", "invalid", "truncated", "guess_sum", "guess_sum_all"]


def point_frame(db: PointsDB, a: str, b: str, filters: FiltersLike = None, group_by: str = "base_task") -> pd.DataFrame:
    """The two evals' points (per-sample arrays included) under the other filters."""
    items = dict(parse_filters(filters or {}).items)
    items["eval_id"] = [a, b]
    columns = list(dict.fromkeys(_POINT_COLUMNS + [group_by]))

    # points without the group dimension form a "(none)" group; a dimension no point has is an error
    return label_missing(db.points(items, columns=columns, decode_json=False), [group_by])


def _guess_chance(points: pd.DataFrame) -> np.ndarray:
    """Per point, the mean guess chance of one sample: G_all / n, else G / m (PointsDB keeps sums only)."""
    m = points[["correct", "incorrect", "invalid"]].sum(axis=1).to_numpy(float)
    n = m + points["truncated"].to_numpy(float)
    answered = np.divide(points["guess_sum"].to_numpy(float), m, out=np.zeros_like(m), where=m > 0)
    stored = pd.to_numeric(points["guess_sum_all"], errors="coerce").to_numpy(float)
    every = np.divide(stored, n, out=np.full_like(n, np.nan), where=n > 0)
    return np.where(np.isfinite(every), every, answered)


def _samples(points: pd.DataFrame, group_by: str) -> pd.DataFrame:
    """One row per sample of one eval: the pairing key, sample_index, outcome, guess chance, cell."""
    lengths = points["outcome"].map(len).to_numpy()
    version = points["task_version"].fillna(1).astype(int).astype(str)
    key = points["base_task"].astype(str) + "\x1f" + points["params"].astype(str) + "\x1f" + version
    degrees = points[DEGREE_COLUMN] if DEGREE_COLUMN in points.columns else pd.Series([None] * len(points))
    repeat = np.repeat(np.arange(len(points)), lengths)
    def flat(column: str) -> np.ndarray:
        return np.concatenate([np.asarray(v, dtype=np.int64) for v in points[column]]) \
            if len(points) else np.zeros(0, dtype=np.int64)
    return pd.DataFrame({
        _KEY: key.to_numpy()[repeat], "sample_index": flat("sample_index"), "outcome": flat("outcome"),
        "guess": _guess_chance(points)[repeat], "id": points["id"].to_numpy()[repeat],
        "tier": np.array([tier_name(d) for d in degrees], dtype=object)[repeat],
        "tier_order": np.array([-1.0 if tier_name(d) == "all" else float(d) for d in degrees])[repeat],
        "group": points[group_by].to_numpy()[repeat], "base_task": points["base_task"].to_numpy()[repeat],
        "params": points["params"].to_numpy()[repeat], "task_version": version.to_numpy()[repeat],
    })


def pair_samples(points: pd.DataFrame, a: str, b: str,
                 group_by: str = "base_task") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(pairs, only_a, only_b): paired samples (columns *_a / *_b) and the samples of one eval only."""
    left = _samples(points[points["eval_id"] == a].reset_index(drop=True), group_by)
    right = _samples(points[points["eval_id"] == b].reset_index(drop=True), group_by)
    merged = left.merge(right, on=[_KEY, "sample_index"], how="outer", suffixes=("_a", "_b"), indicator=True)
    pairs = merged[merged["_merge"] == "both"].reset_index(drop=True)
    return pairs, merged[merged["_merge"] == "left_only"], merged[merged["_merge"] == "right_only"]


def _version_mismatch(points: pd.DataFrame, a: str, b: str) -> list:
    """Base tasks whose same (base_task, params) ran at different generator versions in A and B."""
    frame = points.assign(task_version=points["task_version"].fillna(1).astype(int))
    # a Series of tuples: pandas-stubs' Series dtypes leave tuple out
    versions = frame.groupby(["base_task", "params", "eval_id"])["task_version"].agg(lambda v: tuple(sorted(set(v))))  # type: ignore[type-var]
    table = versions.unstack("eval_id")
    if a not in table.columns or b not in table.columns:
        return []
    clash = table.dropna()
    clash = clash[clash[a] != clash[b]]
    result = []
    for task, part in clash.groupby(level="base_task"):
        result.append(VersionMismatch(base_task=task, points=len(part),
                                      a_versions=sorted({v for t in part[a] for v in t}),
                                      b_versions=sorted({v for t in part[b] for v in t})).model_dump())
    return result


def _joint(pairs: pd.DataFrame, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(joint table, guess_a, guess_b, guess_all) per group code."""
    joint = paired.joint_table(pairs["outcome_a"], pairs["outcome_b"], codes, k)
    guess = pairs["guess_a"].to_numpy(float)   # the same problem: A's point guess chance
    answered_a = (pairs["outcome_a"].to_numpy() != paired.TRUNCATED)
    answered_b = (pairs["outcome_b"].to_numpy() != paired.TRUNCATED)
    def sums(weights: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=weights, minlength=k)
    return joint, sums(guess * answered_a), sums(guess * answered_b), sums(guess)


def _table(pairs: pd.DataFrame, codes: np.ndarray, k: int, mode: str, with_p: bool = True) -> pd.DataFrame:
    joint, guess_a, guess_b, guess_all = _joint(pairs, codes, k)
    table = paired.compare_joint(joint, guess_a, guess_b, guess_all, mode, with_p=with_p)
    if with_p:
        # the same test with no correlation: what the unpaired intervals alone would decide
        unpaired = paired.compare_joint(joint, guess_a, guess_b, guess_all, mode, phi=0.0)
        table["p_unpaired"] = unpaired["p_value"].to_numpy()
    return table


def _interval(low: float, high: float) -> list:
    return [float(low), float(high)]


def _cells(pairs: pd.DataFrame, only_a: pd.DataFrame, only_b: pd.DataFrame,
           mode: str) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Per (tier, group) cell plus the overall row: the compare_joint table with labels and
    counts, and each pair's cell code."""
    keys = pairs[["tier_a", "tier_order_a", "group_a"]].drop_duplicates()
    keys = keys.sort_values("tier_order_a", kind="stable")
    ordered = sorted(keys.itertuples(index=False, name=None), key=lambda r: (r[1], group_order(r[2])))
    lookup = pd.MultiIndex.from_tuples([(t, g) for t, _, g in ordered])
    codes = lookup.get_indexer(pd.MultiIndex.from_arrays([pairs["tier_a"], pairs["group_a"]])).astype(np.int64)
    k = len(ordered)
    table = _table(pairs, codes, k, mode)
    table["tier"] = [t for t, _, _ in ordered]
    table["group"] = [g for _, _, g in ordered]
    table["points"] = pairs.groupby(codes)["_key"].nunique().reindex(range(k), fill_value=0).to_numpy()
    for name, frame, side in (("only_a", only_a, "a"), ("only_b", only_b, "b")):
        counted = frame.groupby([f"tier_{side}", f"group_{side}"]).size().to_dict()
        table[name] = [int(counted.get((t, g), 0)) for t, _, g in ordered]
    overall = _table(pairs, np.zeros(len(pairs), dtype=np.int64), 1, mode)
    overall["tier"], overall["group"] = ALL, ALL
    overall["points"] = pairs["_key"].nunique()
    overall["only_a"], overall["only_b"] = len(only_a), len(only_b)
    return table, overall, codes


def _decide(table: pd.DataFrame, overall: pd.DataFrame, delta: float,
            alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Holm across the cells and the overall row; verdict and samples needed per row."""
    both = pd.concat([table, overall], ignore_index=True)
    rejected, adjusted = paired.holm(both["p_value"].to_numpy(), alpha)
    both["p_holm"] = adjusted
    both["verdict"] = np.where(rejected, np.where(both["diff"] > 0, "b", "a"), "none")
    rejected_unpaired, _ = paired.holm(both["p_unpaired"].to_numpy(), alpha)
    both["unpaired_verdict"] = np.where(rejected_unpaired, np.where(both["diff"] > 0, "b", "a"), "none")
    more = paired.samples_needed(both["pair_sd"], both["pairs"], both["points"], delta, len(both), alpha=alpha)
    both["samples_needed"] = pd.Series([None if v != "none" else int(m) for v, m in zip(both["verdict"], more)],
                                       dtype=object)
    return both.iloc[:len(table)], both.iloc[len(table):]


def _count_or_none(value: float | None) -> int | None:
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else int(value)


def _row(record: dict, anytime: dict | None = None) -> dict:
    """One output row, built as its CompareCell (each field written once). ``anytime``: the
    row's anytime-valid results (compare_sequential) for a run that stopped on its decision:
    they replace the fixed-n p-values and verdicts, which a run that peeked must not show."""
    extra: dict = {} if anytime is None else {
        "anytime": _interval(anytime["anytime_low"], anytime["anytime_high"]),
        "anytime_diff": float(anytime["anytime_diff"]), "equivalent": bool(anytime["equivalent"]),
        "stopped": anytime["stopped"], "rounds": anytime["rounds"]}
    cell = CompareCell(
        tier=record["tier"], group=plain(record["group"]), pairs=int(record["pairs"]), points=int(record["points"]),
        a=float(record["a"]), b=float(record["b"]), diff=float(record["diff"]),
        paired=_interval(record["paired_low"], record["paired_high"]),
        unpaired=_interval(record["unpaired_low"], record["unpaired_high"]), phi=float(record["phi"]),
        discordant=int(record["discordant"]),
        p_value=float(record["p_value"] if anytime is None else anytime["p_anytime"]),
        p_holm=float(record["p_holm"] if anytime is None else anytime["p_holm"]),
        verdict=record["verdict"] if anytime is None else anytime["verdict"],
        unpaired_verdict=record["unpaired_verdict"] if anytime is None else "none",
        samples_needed=_count_or_none(record["samples_needed"]) if anytime is None else None,
        only_a=int(record["only_a"]), only_b=int(record["only_b"]), **extra)
    return cell.model_dump(exclude_unset=True)


def _points(pairs: pd.DataFrame, mode: str, top: int) -> list:
    """The paired points where B - A is largest in size, each with its paired interval."""
    if not len(pairs) or top <= 0:
        return []
    codes, keys = pd.factorize(pairs["_key"])
    table = _table(pairs, codes.astype(np.int64), len(keys), mode, with_p=False)
    first = pairs.groupby(codes).first()
    distance = np.maximum(table["paired_low"], -table["paired_high"])      # > 0 where the interval excludes 0
    order = np.lexsort((-np.asarray(distance), -table["diff"].abs().to_numpy()))[:top]
    rows = []
    for i in order:
        f, t = first.iloc[i], table.iloc[i]
        rows.append(ComparePoint(
            a_id=int(f["id_a"]), b_id=int(f["id_b"]), base_task=f["base_task_a"], params=f["params_a"],
            task_version=int(f["task_version_a"]), tier=f["tier_a"], group=plain(f["group_a"]), pairs=int(t["pairs"]),
            a=float(t["a"]), b=float(t["b"]), diff=float(t["diff"]), paired=_interval(t["paired_low"], t["paired_high"]),
            unpaired=_interval(t["unpaired_low"], t["unpaired_high"])).model_dump())
    return rows


def compare_evals(db: PointsDB, a: str, b: str, mode: str = stats.DEFAULT_MODE, filters: FiltersLike = None, group_by: str = "base_task",
                  delta: float = DEFAULT_DELTA, top: int = DEFAULT_TOP, alpha: float = ALPHA) -> dict:
    """The docs/analyze.md compare contract for B - A on a PointsDB (``db``: an open PointsDB).

    ``filters``: further PointsDB filters (a dict or JSON text; its eval_id is replaced
    by [a, b]). Raises UserError when an eval has no points or nothing pairs.
    """
    stats.check_mode(mode)
    if a == b:
        raise UserError(f"compare needs two different evals; got {a} twice")
    points = point_frame(db, a, b, filters, group_by)
    for name in (a, b):
        if not (points["eval_id"] == name).any():
            raise UserError(f"eval {name} has no points in this selection; list evals with: analyze.py evals")
    pairs, only_a, only_b = pair_samples(points, a, b, group_by)
    mismatch = _version_mismatch(points, a, b)
    if not len(pairs):
        why = " (their task versions differ: " + ", ".join(m["base_task"] for m in mismatch) + ")" if mismatch else ""
        raise UserError(f"evals {a} and {b} share no problem (same base_task, params, task version and "
                        f"sample index){why}; nothing to pair")
    table, overall, codes = _cells(pairs, only_a, only_b, mode)
    table, overall = _decide(table, overall, delta, alpha)
    marker = sequential_marker(db, b) or sequential_marker(db, a)
    anytime: list[dict | None] = [None] * (len(table) + 1)
    if marker:
        anytime = list(_anytime(pairs, codes, table, marker, group_by, alpha))
    def point_count(frame: pd.DataFrame) -> int:
        return int(frame["_key"].nunique()) if len(frame) else 0
    cells = [_row(r, t) for r, t in zip(table.to_dict("records"), anytime)]
    overall_row = _row(overall.to_dict("records")[0], anytime[-1])
    result: dict = {
        "a": a, "b": b, "mode": mode, "estimand": stats.MODE_ESTIMANDS[mode[2]], "difference": "b - a",
        "group_by": group_by, "alpha": alpha, "correction": "holm", "family": len(table) + 1, "delta": delta,
        "power": 0.8, "cells": cells, "overall": overall_row,
        "points": _points(pairs, mode, top),
        "unpaired_samples": UnpairedSamples(only_a=len(only_a), only_b=len(only_b), only_a_points=point_count(only_a),
                                            only_b_points=point_count(only_b)).model_dump(),
        "version_mismatch": mismatch,
    }
    if marker:
        result["sequential"] = sequential_summary(marker, [*cells, overall_row])
    return result


def _anytime(pairs: pd.DataFrame, codes: np.ndarray, table: pd.DataFrame, marker: dict, group_by: str,
             alpha: float) -> list[dict]:
    """Per cell and the overall row: the anytime results (compare_sequential) and how the run stopped it."""
    rows = anytime_rows(pairs, codes, len(table), marker, alpha).to_dict("records")
    stopped = stopped_of(marker, tier_name) if group_by == "base_task" else {}
    keys = [(t, g) for t, g in zip(table["tier"], table["group"])] + [None]
    for row, key in zip(rows, keys):
        row["stopped"], row["rounds"] = stopped.get(key, (None, None)) if key is not None else ("overall", None)
    return rows


def sampling_plan(result: dict, evals: pd.DataFrame, config_path: str | Path | None = None, levels: dict | None = None) -> dict:
    """What would decide the undecided cells: the samples per point to aim for, the
    config's precision level that reaches it, and the runner command for each eval.

    ``evals``: the PointsDB evals frame (model, template, sampler per eval_id);
    ``levels``: the config's precision levels {name: (count, maxrounds)}. Sample i of a
    step is the same problem on every run, so a rerun at a larger level through the same
    cache only adds the new rounds (docs/runner.md).
    """
    rows = [c for c in result["cells"] + [result["overall"]] if c["verdict"] == "none" and c["samples_needed"]]
    if not rows:
        return SamplingPlan(target_per_point=None, level=None, commands=[], tasks=[], note="").model_dump()
    target = max(int(np.ceil(c["pairs"] / max(c["points"], 1))) + c["samples_needed"] for c in rows)
    tasks = sorted({c["group"] for c in rows if c["tier"] != ALL}) if result["group_by"] == "base_task" else []
    level, note = None, ""
    if levels:
        fitting = [(count * rounds, name) for name, (count, rounds) in levels.items() if count * rounds >= target]
        if fitting:
            level = min(fitting)[1]
        else:
            level = max((count * rounds, name) for name, (count, rounds) in levels.items())[1]
            note = (f"the config's largest precision level ({level}) samples at most "
                    f"{max(c * r for c, r in levels.values())} per point, below the {target} wanted: "
                    "add a level with more rounds to the config")
    config = str(config_path) if config_path else "<config.yaml>"
    commands = []
    for eid in (result["a"], result["b"]):
        row = evals[evals["eval_id"] == eid]
        if not len(row):
            continue
        r = row.iloc[0]
        parts = ["python runner.py", f"--config {config}", f"--template templates/{r['template']}.json",
                 f"--sampler samplers/{r['sampler']}.json", f"--model {r['model']}"]
        parts += [f"--precision {level}"] if level else []
        parts += [f"--task {t}" for t in tasks] + ["--apibase <URL>"]
        commands.append(" ".join(parts))
    return SamplingPlan(target_per_point=target, level=level, commands=commands, tasks=tasks,
                        note=note or "a step stops early once its own interval reaches the level's target_margin, "
                                     "so some points may get fewer samples than the target").model_dump()
