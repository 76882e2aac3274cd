"""Head-to-head win probabilities and Bradley-Terry strengths (analyze.py pairwise).

For every pair of series (evals) and every group (task by default) in which both have
data, P(A beats B) comes from the two intervals by a normal approximation: each
estimate ~ N(center, sigma) with sigma = margin / 1.96, independent of each other, so
P = Phi((cA - cB) / sqrt(sA^2 + sB^2)). The intervals are those of --mode: C_P
(pessimistic: truncations count as failures) or C_I (truncations ignored, i.e.
treated as independent of correctness). Expected wins = the sum of these
probabilities over opponents and groups. Bradley-Terry strengths are fitted to the
matrix of (fractional) wins with Hunter's MM algorithm.

Below-chance cells (resolver.stats) enter at their interval [0, 0], the floor of the
estimand, as in cluster and rank: two of them tie (P = 0.5), and against an interval
[0, h] they lose with P = Phi(-center / sigma). ``below_chance_cells`` counts them
per series so the ranking says how many of its contests were at the floor.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components
from scipy.special import ndtr

from resolver import stats
from resolver.analysis.skill import NO_SKILL_NOTE, marked, skill_evidence, skilled_first_key
from resolver.core import markdown_table

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

# When some series never wins (or the win graph is not strongly connected) the
# Bradley-Terry maximum-likelihood estimate does not exist; a small symmetric pseudo
# count per pair (half a win each way, times this weight) keeps it finite.
BT_PSEUDO_WINS = 0.01
BT_MAX_ITER = 20000
BT_TOLERANCE = 1e-12


def win_probability(center_a: ArrayLike, margin_a: ArrayLike, center_b: ArrayLike, margin_b: ArrayLike,
                    z: float = stats.Z95) -> np.ndarray:
    """P(A beats B) under independent normal estimates with sigma = margin / z."""
    diff = np.asarray(center_a, dtype=float) - np.asarray(center_b, dtype=float)
    spread = np.hypot(np.asarray(margin_a, dtype=float) / z, np.asarray(margin_b, dtype=float) / z)
    safe = np.where(spread > 0, spread, 1.0)
    certain = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5))
    return np.where(spread > 0, ndtr(diff / safe), certain)


def win_matrices(frame: pd.DataFrame, series: str, group: str | None) -> tuple[list, np.ndarray, np.ndarray]:
    """(names, wins[i, j] = sum over groups of P(i beats j), games[i, j] = shared groups)."""
    names = list(dict.fromkeys(frame[series].tolist()))
    index = {name: i for i, name in enumerate(names)}
    k = len(names)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    parts = [(None, frame)] if group is None else frame.groupby(group, sort=False, dropna=False)
    for _, part in parts:
        idx = np.array([index[n] for n in part[series]])
        c, m = part["center"].to_numpy(float), part["margin"].to_numpy(float)
        prob = win_probability(c[:, None], m[:, None], c[None, :], m[None, :])
        np.fill_diagonal(prob, 0.0)
        wins[np.ix_(idx, idx)] += prob
        played = np.ones((len(idx), len(idx)))
        np.fill_diagonal(played, 0.0)
        games[np.ix_(idx, idx)] += played
    return names, wins, games


def bradley_terry(wins: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
    """Bradley-Terry strengths (geometric mean 1) by the MM algorithm (Hunter 2004).

    wins[i, j] = (possibly fractional) wins of i over j; games[i, j] = wins[i, j] +
    wins[j, i] by default. Maximises sum_ij wins_ij * log(p_i / (p_i + p_j)).
    """
    wins = np.asarray(wins, dtype=float).copy()
    games = wins + wins.T if games is None else np.asarray(games, dtype=float)
    k = len(wins)
    if k == 0:
        return np.zeros(0)
    played = games > 0
    n_components, _ = connected_components(wins > 0, directed=True, connection="strong")
    if n_components > 1:
        wins = wins + BT_PSEUDO_WINS * 0.5 * played
    games = wins + wins.T
    total = wins.sum(axis=1)
    p = np.ones(k)
    for _ in range(BT_MAX_ITER):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1.0), p)
        new = new / np.exp(np.mean(np.log(np.maximum(new, 1e-300))))
        if np.max(np.abs(new - p)) < BT_TOLERANCE:
            p = new
            break
        p = new
    return p


def compute_pairwise(agg: pd.DataFrame, series: str = "eval_id", group: str | None = "base_task",
                     mode: str = "C_P", sort: str = "expected-wins") -> dict:
    """Win probabilities, expected wins and Bradley-Terry strengths.

    Returns {"names": [...sorted], "expected_wins", "max_wins", "bt_strength",
    "win_probability": k x k list (row beats column, mean over shared groups; None
    on the diagonal and for pairs without shared groups), "groups": count}.
    """
    frame = stats.add_statistics(agg, mode=mode)
    names, wins, games = win_matrices(frame, series, group)
    below = frame.groupby(series, sort=False)["below_chance"].sum()
    expected = wins.sum(axis=1)
    strength = bradley_terry(wins, games)
    evidence = skill_evidence(frame, series)
    # series without evidence of skill above guessing come after all others (docs/statistics.md)
    unskilled = np.array([skilled_first_key(evidence.get(n, False)) for n in names])
    order = np.lexsort((np.arange(len(names)), -strength, -expected, unskilled)) if sort == "expected-wins" \
        else np.lexsort((np.arange(len(names)), -expected, -strength, unskilled))
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = np.where(games > 0, wins / np.where(games > 0, games, 1.0), np.nan)
    prob = prob[np.ix_(order, order)]
    matrix = [[None if np.isnan(v) else float(v) for v in row] for row in prob]
    return {
        "names": [names[i] for i in order],
        "expected_wins": [float(expected[i]) for i in order],
        "max_wins": [float(games[i].sum()) for i in order],
        "bt_strength": [float(strength[i]) for i in order],
        # strengths span many orders of magnitude when wins are near-certain: the log reads better
        "bt_log_strength": [float(np.log(strength[i])) for i in order],
        "win_probability": matrix,
        "below_chance_cells": [int(below.get(names[i], 0)) for i in order],
        "skill_evidence": [bool(evidence.get(names[i], False)) for i in order],
        "groups": 1 if group is None else int(frame[group].nunique()),
        "mode": mode, "sort": sort,
    }


def pairwise_markdown(result: dict, labels: dict, group: str | None) -> str:
    """Ranking (expected wins, Bradley-Terry) and the win-probability matrix."""
    names = result["names"]
    below = result.get("below_chance_cells", [0] * len(names))
    skilled = result.get("skill_evidence", [True] * len(names))
    rows = [[i + 1, marked(labels.get(n, n), k), n, f"{w:.2f}", f"{m:.0f}", f"{s:.3g}", f"{ls:+.2f}", b]
            for i, (n, w, m, s, ls, b, k) in enumerate(zip(names, result["expected_wins"], result["max_wins"],
                                                           result["bt_strength"], result["bt_log_strength"], below,
                                                           skilled))]
    ranking = markdown_table(rows, ["Rank", "Model", "eval_id", "Expected wins", "Contests", "Bradley-Terry",
                                    "BT log-strength", "≤ chance cells"], ["r", "l", "l", "r", "r", "r", "r", "r"])
    short = [f"{i + 1}" for i in range(len(names))]
    matrix = [[f"{i + 1}. {labels.get(n, n)}"] + ["—" if p is None else f"{p:.2f}" for p in row]
              for i, (n, row) in enumerate(zip(names, result["win_probability"]))]
    title = f"# Pairwise win probabilities by {group or 'all data'} (mode {result['mode']}, sorted by {result['sort']})"
    note = ("P(row beats column) per contest from the two intervals (normal approximation, sigma = margin / 1.96), "
            "averaged over the contests both took part in; Expected wins sums them over opponents and contests; "
            "Bradley-Terry strengths are fitted to the same wins (geometric mean 1; the log-strength difference of two "
            "models is the log-odds that the first wins). A ≤ chance cell (below guessing level) enters at [0, 0].")
    if not all(skilled):
        note += "\n\n" + NO_SKILL_NOTE
    return "\n".join([title, "", note, "", ranking, "", "## Win probability (row beats column)", "",
                      markdown_table(matrix, ["Model"] + short, ["l"] + ["r"] * len(short))]) + "\n"
