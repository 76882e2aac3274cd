"""Monte-Carlo coverage and width of the paired and unpaired intervals of B - A
(analyze.py compare; docs/statistics.md, "Paired comparisons").

Two simulated models answer the same problems. Per problem one latent U ~ Uniform(0, 1)
orders the outcome of a model: correct when U < p = (1 - tau)(g + (1 - g) s), truncated
when p <= U < p + tau, otherwise incorrect -- the same marginal as the single-model
study (tests/studies/coverage.py). With probability lambda the two models share U
(hard problems are hard for both), otherwise each draws its own; lambda is set so that
the correlation of the two models' *correct* indicators is exactly rho. A cell's pairs
are then multinomial over the 4 x 4 joint outcomes, so a replicate is one multinomial
draw: the whole grid takes a second or two.

    python -m tests.studies.paired_coverage                 # the tables of docs/statistics.md
    python -m tests.studies.paired_coverage --figure docs/figures/paired_coverage.png
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

from resolver.stats import MODES, compare_joint

RHOS = (0.0, 0.3, 0.6)
GUESSES = (0.0, 1 / 3)
TRUNCATIONS = (0.0, 0.2)
#: (skill A, skill B): equal, a small and a larger gain near 0.7-0.8, and low skill near the floor
SKILLS = ((0.7, 0.7), (0.7, 0.76), (0.75, 0.85), (0.05, 0.15))
#: r12's cells: (points, paired samples per point) at its low, medium and high precision
SIZES = {"low": (21, 16), "medium": (28, 32), "high": (36, 64)}
REPLICATES = 1000
SEED = 31
#: the skill pairs whose widths the bars of docs/statistics.md judge (accuracies near 0.7-0.8)
WIDTH_SKILLS = ((0.7, 0.7), (0.7, 0.76), (0.75, 0.85))


def _cuts(p, tau):
    """Category boundaries on U: [0, p) correct, [p, p + tau) truncated, [p + tau, 1) incorrect."""
    return np.array([0.0, p, p + tau, 1.0])


# the outcome code of the three U-ranges (PointsDB codes: 0 correct, 3 truncated, 1 incorrect)
_CODES = (0, 3, 1)


def joint_probabilities(p_a, p_b, tau, rho):
    """(4 x 4 joint probabilities of (A outcome, B outcome), lambda) for one configuration."""
    ca, cb = _cuts(p_a, tau), _cuts(p_b, tau)
    wa, wb = np.diff(ca), np.diff(cb)
    shared = np.maximum(0.0, np.minimum(ca[1:, None], cb[None, 1:]) - np.maximum(ca[:-1, None], cb[None, :-1]))
    independent = wa[:, None] * wb[None, :]
    spread = np.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    most = (shared[0, 0] - p_a * p_b) / spread if spread > 0 else 0.0
    lam = min(rho / most, 1.0) if most > 0 else 0.0
    small = lam * shared + (1 - lam) * independent
    joint = np.zeros((4, 4))
    for i, a in enumerate(_CODES):
        for j, b in enumerate(_CODES):
            joint[a, b] = small[i, j]
    return joint, lam


def estimand(mode: str, skill, tau):
    kind = mode[2]
    if kind == "I":
        return skill
    if kind == "P":
        return (1 - tau) * skill
    return (1 - tau) * skill + tau


def simulate(replicates: int = REPLICATES, seed: int = SEED, rhos=RHOS, guesses=GUESSES, truncations=TRUNCATIONS,
             skills=SKILLS, sizes=SIZES) -> tuple:
    """(grid frame, joint counts (rows, 4, 4)): one row per replicate of every configuration."""
    rng = np.random.default_rng(seed)
    rows, tables = [], []
    for rho, g, tau, (s_a, s_b), size in itertools.product(rhos, guesses, truncations, skills, sizes):
        points, per_point = sizes[size]
        p_a, p_b = (1 - tau) * (g + (1 - g) * s_a), (1 - tau) * (g + (1 - g) * s_b)
        probs, lam = joint_probabilities(p_a, p_b, tau, rho)
        draws = rng.multinomial(points * per_point, probs.ravel(), size=replicates)
        tables.append(draws.reshape(replicates, 4, 4))
        rows.append(pd.DataFrame({"rho": rho, "guess": g, "tau": tau, "skill_a": s_a, "skill_b": s_b,
                                  "size": size, "points": points, "lambda": lam}, index=range(replicates)))
    return pd.concat(rows, ignore_index=True), np.concatenate(tables).astype(float)


def _covers(low, high, truth) -> np.ndarray:
    return (low.to_numpy() <= truth + 1e-9) & (truth <= high.to_numpy() + 1e-9)


def evaluate(frame: pd.DataFrame, joint: np.ndarray, modes=MODES) -> pd.DataFrame:
    """Per replicate and mode: whether the paired / unpaired interval covers the true
    difference, and both widths."""
    g = frame["guess"].to_numpy()
    answered_a = joint[:, :3, :].sum(axis=(1, 2))
    answered_b = joint[:, :, :3].sum(axis=(1, 2))
    pairs = joint.sum(axis=(1, 2))
    parts = []
    for mode in modes:
        result = compare_joint(joint, g * answered_a, g * answered_b, g * pairs, mode, with_p=False)
        tau = frame["tau"].to_numpy()
        truth = estimand(mode, frame["skill_b"].to_numpy(), tau) - estimand(mode, frame["skill_a"].to_numpy(), tau)
        parts.append(frame.assign(
            mode=mode, phi=result["phi"].to_numpy(),
            paired=_covers(result["paired_low"], result["paired_high"], truth),
            unpaired=_covers(result["unpaired_low"], result["unpaired_high"], truth),
            paired_width=(result["paired_high"] - result["paired_low"]).to_numpy(),
            unpaired_width=(result["unpaired_high"] - result["unpaired_low"]).to_numpy()))
    return pd.concat(parts, ignore_index=True)


KEYS = ["mode", "rho", "guess", "tau", "skill_a", "skill_b", "size"]


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and mode: coverage of both intervals, median widths, their ratio, mean phi."""
    grouped = results.groupby(KEYS, sort=True)
    table = grouped.agg(paired=("paired", "mean"), unpaired=("unpaired", "mean"), phi=("phi", "mean"),
                        paired_width=("paired_width", "median"), unpaired_width=("unpaired_width", "median"))
    table["ratio"] = table["paired_width"] / table["unpaired_width"]
    return table.reset_index()


def width_by_rho(table: pd.DataFrame, skills=WIDTH_SKILLS) -> pd.DataFrame:
    """Worst (largest) and median paired / unpaired width ratio per rho, over the width-judged skills."""
    judged = table[[(a, b) in set(skills) for a, b in zip(table["skill_a"], table["skill_b"])]]
    return judged.groupby("rho")["ratio"].agg(["median", "max", "min"]).reset_index()


def coverage_markdown(table: pd.DataFrame) -> str:
    """Per rho and cell size: the worst coverage of both intervals over the other factors and
    modes, and the median width ratio at accuracies near 0.7-0.8."""
    from resolver.core import markdown_table

    rows = []
    judged = table[[(a, b) in set(WIDTH_SKILLS) for a, b in zip(table["skill_a"], table["skill_b"])]]
    for (rho, size), part in table.groupby(["rho", "size"], sort=False):
        widths = judged[(judged["rho"] == rho) & (judged["size"] == size)]["ratio"]
        rows.append([f"{rho:g}", size, f"{100 * part['paired'].min():.1f}", f"{100 * part['unpaired'].min():.1f}",
                     f"{part['phi'].mean():.2f}", f"{100 * (1 - widths.median()):+.1f}",
                     f"{100 * (1 - widths.max()):+.1f}"])
    order = {name: i for i, name in enumerate(SIZES)}
    rows.sort(key=lambda r: (float(r[0]), order.get(r[1], 9)))
    return markdown_table(rows, ["rho", "cell size", "min paired coverage %", "min unpaired coverage %",
                                 "mean phi", "median narrowing %", "least narrowing %"],
                          ["r", "l", "r", "r", "r", "r", "r"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Coverage and width of the paired and unpaired intervals of B - A.")
    parser.add_argument("--replicates", type=int, default=REPLICATES, help=f"per configuration (default {REPLICATES})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    parser.add_argument("--figure", help="also write the two-panel PNG here")
    args = parser.parse_args(argv)
    table = summary(evaluate(*simulate(args.replicates, args.seed)))
    print(coverage_markdown(table))
    print()
    print(width_by_rho(table).to_string(index=False))
    if args.figure:
        from tests.studies.paired_coverage_figure import paired_coverage_figure

        paired_coverage_figure(table).savefig(args.figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
