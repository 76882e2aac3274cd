"""ReasonScore tables (analyze.py scores, docs/analyze.md; the leaderboard reuses this).

A cell's ``center`` / ``margin`` are the ReasonScore's inputs (docs/analyze.md: original
E_I, see resolver.stats.REASONSCORE_INTERVAL); ``modes.{MODE}`` holds every mode's
calibrated 95% interval (center, margin, low, high, below_chance) of the same cell,
the numbers resolver.analysis.cell.cell_value returns.

The computation is split so every layer can be tested and reused on its own:

* ``score_cells(agg, group_by, expected)``: one row per (eval, tier, group) cell
  with the E_I statistics, adjusted_score and completeness.
* ``summarize_scores(cells, evals)``: the docs/analyze.md JSON structure, one dict per eval
  with ``tiers.{tier}.tasks.{group}``, ranked.
* ``compute_scores(db, filters, group_by, sort, top)``: both of the above on a PointsDB.
* ``format_cell`` / ``format_score`` / ``scores_markdown``: the docs/analyze.md markdown.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np
import pandas as pd

from resolver import stats
from resolver.analysis.common import eval_labels, label_missing
from resolver.analysis.eval_groups import models_markdown
from resolver.analysis.invalid_reasons import add_to_scores
from resolver.analysis.outputs import ModeInterval, TaskCell
from resolver.analysis.skill import NO_SKILL_NOTE, marked, skill_evidence, skilled_first_key
from resolver.core import UserError, markdown_table

if TYPE_CHECKING:
    from resolver.pointsdb import FiltersLike, PointsDB

DEGREE_COLUMN = "manifold.degree"
TIER_NAMES = {0: "easy", 1: "medium", 2: "hard"}
NO_TIER = "all"          # data without manifold.degree is one tier
MISSING_CELL = "—"
TRUNCATION_SHOWN_ABOVE = 0.02   # docs/analyze.md: the [-.ZZ] penalty appears only above 2%
SORT_KEYS = {"score": "reasonscore", "ratio": "score_per_token"}
# A task cell's and a mode interval's fields, in JSON order: the output models' own lists. The
# entries stay plain dicts built from them: the leaderboard recomputes every eval's scores for each
# manifold choice, and building the models there cost 2.5x (docs/decisions.md, issue 45 item 3).
TASK_FIELDS = tuple(name for name in TaskCell.model_fields if name != "modes")
MODE_FIELDS = tuple(ModeInterval.model_fields)
BELOW_CHANCE_MARK = "≤ chance"


def tier_name(degree: float | None) -> str:
    """easy / medium / hard for degrees 0 / 1 / 2; 'degree N' beyond; 'all' when absent."""
    if degree is None or (isinstance(degree, float) and math.isnan(degree)):
        return NO_TIER
    degree = int(degree)
    return TIER_NAMES.get(degree, f"degree {degree}")


def _tier_order(degree: float | None) -> float:
    return -1.0 if degree is None or (isinstance(degree, float) and math.isnan(degree)) else float(degree)


def expected_index(expected: pd.DataFrame | None) -> dict:
    """{(base_task, degree or None): points} from the PointsDB `expected` table.

    Each task also gets a (base_task, None) entry: its row without a degree when
    there is one, else the sum over its degrees (a task without tiers is one tier).
    """
    index: dict[tuple[str, int | None], int] = {}
    totals: dict[str, int] = {}
    if expected is None or expected.empty:
        return index
    for task, degree, points in expected[["base_task", "degree", "points"]].itertuples(index=False, name=None):
        key = (task, None if _is_missing(degree) else int(degree))
        index[key] = index.get(key, 0) + int(points)
        totals[task] = totals.get(task, 0) + int(points)
    for task, total in totals.items():
        index.setdefault((task, None), total)
    return index


def expected_points_for(expected: dict | pd.DataFrame | None, base_task: str, degree: Any) -> float:
    """Expected points of (base_task, degree); NaN if unknown. `expected` is the
    PointsDB `expected` table or an expected_index() dict."""
    index = expected if isinstance(expected, dict) else expected_index(expected)
    key = (base_task, None if _is_missing(degree) else int(degree))
    return float(index[key]) if key in index else float("nan")


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def score_cells(agg: pd.DataFrame, group_by: str = "base_task", expected: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (eval, tier, group) cell statistics from aggregated counters.

    `agg` has one row per (eval_id, manifold.degree, group) with `points` and the
    summed counters (PointsDB.aggregate(by=("eval_id", "manifold.degree", group_by))).
    Expected point counts are looked up only when grouping by base_task.
    """
    cells = stats.add_statistics(agg, mode="E_I")
    for mode in stats.MODES:       # every mode's interval, so any view can show any mode by name
        interval = stats.mode_interval(cells, mode)
        for name in MODE_FIELDS:
            cells[f"{mode}.{name}"] = interval[name].to_numpy()
    # docs/analyze.md: a cell's center / margin are the ReasonScore's inputs (the original E_I);
    # below_chance is the calibrated E_I's flag (answered samples below guessing level)
    cells["center"], cells["margin"] = cells["adjusted_center"], cells["adjusted_margin"]
    degrees = cells[DEGREE_COLUMN] if DEGREE_COLUMN in cells.columns else pd.Series([None] * len(cells), index=cells.index)
    cells["tier"] = [tier_name(d) for d in degrees]
    cells["tier_order"] = [_tier_order(d) for d in degrees]
    cells["group"] = cells[group_by]
    cells["point_count"] = cells["points"].astype(int)
    if group_by == "base_task":
        index = expected_index(expected)
        cells["expected_points"] = [expected_points_for(index, g, d) for g, d in zip(cells["group"], degrees)]
    else:
        cells["expected_points"] = float("nan")
    cells["is_incomplete"] = stats.is_incomplete(cells["point_count"].to_numpy(), cells["expected_points"].to_numpy())
    if "prompt_tokens" in cells.columns:
        n = cells["samples"].to_numpy(dtype=float)
        cells["prompt_tokens_mean"] = np.divide(cells["prompt_tokens"].to_numpy(dtype=float), n,
                                                out=np.full_like(n, np.nan), where=n > 0)
    return cells


def group_order(value: object) -> tuple[int, float, str]:
    """Sort key of group values: numbers numerically (4, 6, 8, 10, 12, 16) before text."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def tier_columns(cells: pd.DataFrame) -> dict:
    """{tier: [groups in order]} over all evals: the columns each tier's table shows."""
    columns = {}
    for tier, frame in cells.sort_values("tier_order", kind="stable").groupby("tier", sort=False):
        columns[tier] = sorted(dict.fromkeys(frame["group"].tolist()), key=group_order)
    return columns


def task_entry(row: dict) -> dict:
    """One `tasks.{group}` JSON entry from a cell record (plain Python numbers)."""
    entry = {}
    for name in TASK_FIELDS:
        value = row.get(name, float("nan"))
        if name in ("point_count", "correct", "incorrect", "invalid", "truncated"):
            value = int(value)
        elif name in ("is_incomplete", "below_chance"):
            value = bool(value)
        elif name == "expected_points":
            value = None if _is_missing(value) else int(value)
        else:
            value = float(value)
        entry[name] = value
    entry["modes"] = {mode: {name: bool(row[f"{mode}.{name}"]) if name == "below_chance" else float(row[f"{mode}.{name}"])
                             for name in MODE_FIELDS} for mode in stats.MODES if f"{mode}.center" in row}
    return entry


def _mean_tokens(values: Iterable[float]) -> float:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def _scores_with_floor(present: list, missing: int) -> list:
    """Cell scores for a ReasonScore: a missing cell enters at the floor, so what an
    eval did not run cannot lift it above evals that ran everything."""
    return list(present) + [stats.SCORE_FLOOR] * missing


def _precision(tasks: list) -> dict:
    """Sample counts behind a ReasonScore (its precision): total and smallest cell."""
    counts = [t["samples"] for t in tasks]
    return {"samples": int(sum(counts)), "min_cell_samples": int(min(counts)) if counts else 0}


def _eval_summary(records: list, columns: dict) -> dict:
    """Tiers, tier scores and the overall score of one eval's cell records.

    Scores are over every column of the table: a (tier, group) cell this eval lacks
    enters at SCORE_FLOOR (and makes the score `*`). `reasonscore_neutral` is the same
    geometric mean of neutral_score (no sample-size bonus). Avg Tokens is the mean
    over the present cells of each cell's mean completion tokens per sample (cells
    weighted equally, as in the ReasonScore); Score/Token = ReasonScore / Avg Tokens.
    """
    tiers, any_incomplete = {}, False
    all_scores, all_neutral, all_missing = [], [], 0
    for tier, groups in columns.items():
        rows = [r for r in records if r["tier"] == tier]
        if not rows:
            any_incomplete = True   # a whole tier missing: its cells enter the overall score at the floor
            all_missing += len(groups)
            continue
        tasks = {r["group"]: task_entry(r) for r in rows}
        missing = [g for g in groups if g not in tasks]
        incomplete = any(t["is_incomplete"] for t in tasks.values()) or bool(missing)
        any_incomplete = any_incomplete or incomplete
        tokens = _mean_tokens([t["completion_tokens_mean"] for t in tasks.values()])
        cell_scores = [t["adjusted_score"] for t in tasks.values()]
        neutral = [t["neutral_score"] for t in tasks.values()]
        all_scores += cell_scores
        all_neutral += neutral
        all_missing += len(missing)
        score = stats.reasonscore(_scores_with_floor(cell_scores, len(missing)))
        tiers[tier] = {
            "reasonscore": score, "reasonscore_neutral": stats.reasonscore(_scores_with_floor(neutral, len(missing))),
            "any_incomplete": incomplete, "missing_tasks": missing,
            "completion_tokens_mean": tokens, "score_per_token": stats.score_per_token(score, tokens),
            **_precision(list(tasks.values())), "tasks": tasks,
        }
    tokens = _mean_tokens([r["completion_tokens_mean"] for r in records])
    score = stats.reasonscore(_scores_with_floor(all_scores, all_missing))
    return {"reasonscore": score, "reasonscore_neutral": stats.reasonscore(_scores_with_floor(all_neutral, all_missing)),
            "completion_tokens_mean": tokens, "score_per_token": stats.score_per_token(score, tokens),
            "any_incomplete": any_incomplete, "missing_cells": all_missing,
            **_precision([t for tier in tiers.values() for t in tier["tasks"].values()]), "tiers": tiers}


def summarize_scores(cells: pd.DataFrame, evals: pd.DataFrame | None = None, sort: str = "score",
                     top: int | None = None) -> list:
    """The docs/analyze.md JSON structure: a list of evals, best first, with 1-based `rank`."""
    if sort not in SORT_KEYS:
        raise UserError(f"unknown --sort {sort!r}; valid: score, ratio")
    columns = tier_columns(cells)
    meta = _eval_metadata(evals)
    by_eval: dict[str, list[dict]] = {}
    if "completion_tokens_mean" not in cells.columns:
        cells = cells.assign(completion_tokens_mean=float("nan"))
    for record in cells.to_dict("records"):
        by_eval.setdefault(record["eval_id"], []).append(record)
    results = []
    for eval_id, records in by_eval.items():
        info = meta.get(eval_id, {})
        entry = {"eval_id": eval_id, "model": info.get("model", eval_id), "label": info.get("label") or info.get("model", eval_id),
                 "template": info.get("template"), "sampler": info.get("sampler"), "groups": info.get("groups", [])}
        entry.update(_eval_summary(records, columns))
        results.append(entry)
    key = SORT_KEYS[sort]
    # evals without evidence of skill above guessing come after all others, whatever the sort
    evidence = skill_evidence(cells, "eval_id")
    for entry in results:
        entry["skill_evidence"] = evidence.get(entry["eval_id"], False)
    results.sort(key=lambda e: (skilled_first_key(e["skill_evidence"]), -_sortable(e[key]),
                                -_sortable(e["reasonscore"]), e["eval_id"]))
    for rank, entry in enumerate(results, start=1):
        entry["rank"] = rank
    return results[:top] if top else results


def _sortable(value: float | None) -> float:
    return -math.inf if value is None or math.isnan(value) else value


def _eval_metadata(evals: pd.DataFrame | None) -> dict:
    """{eval_id: the eval's row}; the label is the stored one (else the model): data, not display.

    Views tell apart evals that share a label with analysis.eval_labels (markdown, PNG, web).
    """
    if evals is None or evals.empty:
        return {}
    meta = {}
    for row in evals.to_dict("records"):
        groups = row.get("groups")
        row["groups"] = list(groups) if groups is not None else []
        label, model = row.get("label"), row.get("model")
        row["label"] = label if isinstance(label, str) and label else (model if isinstance(model, str) and model
                                                                        else row["eval_id"])
        meta[row["eval_id"]] = row
    return meta


def score_table_columns(results: list) -> dict:
    """{tier: [groups]} across the ranked evals (the markdown/PNG column layout)."""
    columns: dict[str, list[str]] = {}
    for entry in results:
        for tier, data in entry["tiers"].items():
            names = columns.setdefault(tier, [])
            for group in list(data["tasks"]) + data.get("missing_tasks", []):
                if group not in names:
                    names.append(group)
    return {tier: sorted(names, key=group_order) for tier, names in columns.items()}


def _filters_within_tasks(filters: FiltersLike) -> bool:
    """Filters on params / manifold / step select part of each task on purpose: the
    config's expected point counts no longer apply, so completeness is not judged."""
    items = filters if isinstance(filters, dict) else (getattr(filters, "items", None) or {})
    return any(key == "task" or key.startswith(("params.", "manifold.")) for key in items)


def compute_scores(db: PointsDB, filters: FiltersLike = None, group_by: str = "base_task", sort: str = "score",
                   top: int | None = None) -> list:
    """ReasonScore results (docs/analyze.md JSON structure) for the evals of a PointsDB."""
    agg = db.aggregate(filters, by=("eval_id", DEGREE_COLUMN, group_by))
    if agg.empty:
        return []
    agg = label_missing(agg, [group_by])
    expected = db.expected() if group_by == "base_task" and not _filters_within_tasks(filters) else None
    results = summarize_scores(score_cells(agg, group_by, expected), db.evals(), sort=sort, top=top)

    return add_to_scores(results, db, filters)      # each eval's invalid answers by reason


# ------------------------------------------------------------------- formatting

def format_fraction(value: float) -> str:
    """.81 style: two decimals, no leading zero (1.00 stays 1.00, negatives -.05)."""
    text = f"{value:.2f}"
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return text


def format_cell(center: float | None, margin: float, truncated_ratio: float | None, point_count: Any = None,
                expected_points: Any = None, is_incomplete: bool | np.ndarray | None = None,
                below_chance: bool = False) -> str:
    """Seed 001 cell `.XX - .YY [-.ZZ] (N/M)`; `—` when center is None (missing).

    A below-chance cell (the data reject "at least chance") shows `≤ chance` in place
    of its numbers, never a zero-width interval."""
    if center is None or (isinstance(center, float) and math.isnan(center)):
        return MISSING_CELL
    text = BELOW_CHANCE_MARK if below_chance else f"{format_fraction(center)} - {format_fraction(center + margin)}"
    if truncated_ratio is not None and truncated_ratio > TRUNCATION_SHOWN_ABOVE:
        text += f" [-{format_fraction(truncated_ratio)}]"
    if is_incomplete is None:
        is_incomplete = stats.is_incomplete(point_count, expected_points) if point_count is not None else False
    if is_incomplete:
        text += f" ({int(point_count)}/{int(expected_points)})"
    return text


def format_task_cell(task: dict | None) -> str:
    """format_cell for one `tasks.{group}` entry of the JSON structure (None -> —)."""
    if not task:
        return MISSING_CELL
    return format_cell(task["center"], task["margin"], task["truncated_ratio"],
                       task["point_count"], task["expected_points"], task["is_incomplete"],
                       bool(task.get("below_chance", False)))


def format_score(score: float | None, incomplete: bool) -> str:
    """ReasonScore as an integer, `*` when any of its cells is incomplete or missing."""
    if score is None or math.isnan(score):
        return MISSING_CELL
    return f"{score:.0f}" + ("*" if incomplete else "")


def format_tokens(value: float | None) -> str:
    return MISSING_CELL if value is None or math.isnan(value) else f"{value:.0f}"


def format_ratio(value: float | None) -> str:
    return MISSING_CELL if value is None or math.isnan(value) else f"{value:.3f}"


def format_samples(summary: dict) -> str:
    """`total (min/cell)` sample counts: the precision behind a ReasonScore."""
    return f"{summary.get('samples', 0)} ({summary.get('min_cell_samples', 0)})"


# --------------------------------------------------------------------- markdown

CELL_LEGEND = ("Cells: `.XX - .YY [-.ZZ] (N/M)` = the ReasonScore's inputs: excess-accuracy center - its Wilson "
               "upper end (seed 001's E_I on guess-corrected counts; not a calibrated 95% interval when guessing is "
               "possible: compare cells with `analyze.py cluster/pairwise` or the `modes` of the JSON, "
               "docs/statistics.md), [truncation penalty, shown above 2%], (points collected / expected, shown when "
               "incomplete); `≤ chance` = the answers are below chance (the data reject guessing level); `—` = no data; "
               "`*` = at least one cell incomplete or missing (a missing cell enters the score at 0.01). "
               "Neutral = the same geometric mean of (excess accuracy - truncation), without the upper-bound bonus of "
               "small samples; Samples = total (smallest cell); Avg Tokens = mean over the cells of mean completion "
               "tokens per sample; Score/Token = ReasonScore / Avg Tokens.")


def _score_rows(results: list, columns: list, multi_tier: bool, cell: Callable[[dict | None], str],
                tier_groups: dict | None = None) -> list:
    """Table rows; a column that is not a group of a tier at all stays blank in that
    tier's rows (only a group the tier has elsewhere but this eval lacks shows —)."""
    rows, names = [], eval_labels(results)
    for entry in results:
        name = marked(names[entry["eval_id"]], entry.get("skill_evidence", True))
        if multi_tier:
            rows.append([name, "overall", format_score(entry["reasonscore"], entry["any_incomplete"]),
                         format_tokens(entry["completion_tokens_mean"]), format_ratio(entry["score_per_token"]),
                         format_score(entry["reasonscore_neutral"], entry["any_incomplete"]), format_samples(entry)]
                        + [""] * len(columns))
        for tier, data in entry["tiers"].items():
            rows.append([name, tier, format_score(data["reasonscore"], data["any_incomplete"]),
                         format_tokens(data["completion_tokens_mean"]), format_ratio(data["score_per_token"]),
                         format_score(data["reasonscore_neutral"], data["any_incomplete"]), format_samples(data)]
                        + [cell(data["tasks"].get(group)) if tier_groups is None or group in tier_groups[tier] else ""
                           for group in columns])
    return rows


def scores_markdown(results: list, title: str = "ReasonScore", show_token_counts: bool = False) -> str:
    """The docs/analyze.md markdown table, the evals' group/family metadata (## Models), and a
    token table with show_token_counts."""
    tiers = score_table_columns(results)
    columns = sorted(dict.fromkeys(g for groups in tiers.values() for g in groups), key=group_order)
    multi_tier = len(tiers) > 1
    headers = ["Model", "Tier", "ReasonScore", "Avg Tokens", "Score/Token", "Neutral", "Samples"] + [str(c) for c in columns]
    align = ["l", "l", "r", "r", "r", "r", "r"] + ["l"] * len(columns)
    parts = [f"# {title}", "", markdown_table(_score_rows(results, columns, multi_tier, format_task_cell, tiers), headers, align),
             "", CELL_LEGEND]
    if not all(entry.get("skill_evidence", True) for entry in results):
        parts += ["", NO_SKILL_NOTE]
    if show_token_counts:
        def tokens_cell(task: dict | None) -> str:
            return format_tokens(task["completion_tokens_mean"]) if task else MISSING_CELL
        parts += ["", "## Mean completion tokens per task", "",
                  markdown_table(_score_rows(results, columns, multi_tier, tokens_cell, tiers), headers,
                                 ["l", "l", "r", "r", "r", "r", "r"] + ["r"] * len(columns))]
    parts += ["", models_markdown(results)]
    return "\n".join(parts) + "\n"
