"""Monte-Carlo coverage of the toolkit's 95% intervals (docs/decisions.md, docs/statistics.md).

A simulated model answers n samples of a task with guess chance g: each sample is
truncated with probability tau, otherwise correct with probability g + (1 - g) s
(s = true skill on answered samples). Every replicate's counters go through
resolver.stats exactly as PointsDB sums would, and each interval is checked against
its mode's estimand (s, (1 - tau) s or (1 - tau) s + tau). All replicates of the
whole grid are one vectorised DataFrame, so the full grid takes seconds.

    python -m tests.studies.coverage            # the markdown table of docs/statistics.md
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

from resolver import stats

GUESSES = (0.0, 1 / 12, 1 / 3, 1 / 2)
SKILLS = (0.0, 0.1, 0.3, 0.5, 0.8)
SAMPLES = (24, 100, 888)
TRUNCATIONS = (0.0, 0.3)
REPLICATES = 4000
SEED = 15
#: the docs/analyze.md ReasonScore interval, reported beside the modes (not promised 95%)
ORIGINAL = "E_I (original)"


def estimand(mode: str, skill, truncation):
    """What a mode estimates for true skill s and truncation rate tau."""
    kind = mode[2] if mode in stats.MODES else "I"
    if kind == "I":
        return skill
    if kind == "P":
        return (1 - truncation) * skill
    return (1 - truncation) * skill + truncation


def simulate(replicates: int = REPLICATES, seed: int = SEED, guesses=GUESSES, skills=SKILLS, samples=SAMPLES,
             truncations=TRUNCATIONS) -> pd.DataFrame:
    """Counters of `replicates` simulated cells for every grid combination (one row each)."""
    rng = np.random.default_rng(seed)
    grid = np.array(list(itertools.product(guesses, skills, samples, truncations)), dtype=float)
    g, s, n, tau = (np.repeat(grid[:, i], replicates) for i in range(4))
    n_int = n.astype(np.int64)
    truncated = rng.binomial(n_int, tau)
    answered = n_int - truncated
    correct = rng.binomial(answered, g + (1 - g) * s)
    return pd.DataFrame({
        "guess": g, "skill": s, "n": n_int, "tau": tau,
        "correct": correct, "incorrect": answered - correct, "invalid": 0, "truncated": truncated,
        "guess_sum": g * answered, "guess_sum_all": g * n,
    })


def coverage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Share of replicates whose interval contains the estimand, per grid cell and mode."""
    hits = {}
    for mode in stats.MODES:
        interval = stats.mode_interval(frame, mode)
        target = estimand(mode, frame["skill"].to_numpy(), frame["tau"].to_numpy())
        hits[mode] = (interval["low"].to_numpy() <= target + 1e-9) & (target <= interval["high"].to_numpy() + 1e-9)
    center, margin = stats.original_excess_interval(frame)
    target = frame["skill"].to_numpy()
    hits[ORIGINAL] = (center - margin <= target + 1e-9) & (target <= center + margin + 1e-9)
    table = pd.DataFrame(hits).assign(guess=frame["guess"], skill=frame["skill"], n=frame["n"], tau=frame["tau"])
    return table.groupby(["guess", "skill", "n", "tau"], sort=True).mean().reset_index()


def coverage_markdown(table: pd.DataFrame) -> str:
    """One row per grid cell: coverage (%) of every mode and of the original E_I."""
    from resolver.core import markdown_table

    columns = list(stats.MODES) + [ORIGINAL]
    rows = []
    for record in table.to_dict("records"):
        guess = "0" if record["guess"] == 0 else f"1/{round(1 / record['guess'])}"
        rows.append([guess, f"{record['skill']:g}", int(record["n"]), f"{record['tau']:g}"]
                    + [f"{100 * record[c]:.1f}" for c in columns])
    minimum = ["**min**", "", "", ""] + [f"**{100 * table[c].min():.1f}**" for c in columns]
    return markdown_table(rows + [minimum], ["guess", "skill", "n", "tau"] + columns,
                          ["l", "r", "r", "r"] + ["r"] * len(columns))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Monte-Carlo coverage of the 95% intervals of every mode.")
    parser.add_argument("--replicates", type=int, default=REPLICATES, help=f"per grid cell (default {REPLICATES})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    args = parser.parse_args(argv)
    print(coverage_markdown(coverage_table(simulate(args.replicates, args.seed))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
