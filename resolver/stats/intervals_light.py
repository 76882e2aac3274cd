"""The calibrated skill interval of one step, in pure Python (no numpy, no pandas).

The runner's adaptive rounds need one interval per step after every round.
`resolver.stats` computes the same numbers vectorised, but importing it pulls in
pandas (~0.6 s of start-up for every runner invocation); this module is the
scalar version for the runner. `tests/test_run_rounds.py` checks it against
`resolver.stats.mode_interval(..., "C_I")` on a grid of counts and against an
independent root-finding of the continuity-corrected Wilson bounds.

The interval is mode C_I of docs/statistics.md (identical to E_I): the step's
skill `s` on its answered samples. The continuity-corrected Wilson interval
(Newcombe 1998, method 4) of `c` correct of `m` answered samples is mapped
through h(q) = (q m - G) / (m - G), `G` the expected lucky guesses; the lower end
is floored at 0, the upper end capped at the raw upper end and floored at 0; a
mapped upper end below 0 is *below chance* and reads [0, 0].
"""
from __future__ import annotations

import math

Z95 = 1.96


def wilson_cc_bounds(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """(low, high) of the continuity-corrected Wilson interval; (0, 0) for no trials."""
    if trials <= 0:
        return 0.0, 0.0
    n = float(trials)
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    den = 2.0 * (n + z2)
    low = 0.0
    if p > 0:
        root = math.sqrt(max(z2 - 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) + 1.0), 0.0))
        low = min(max((2.0 * n * p + z2 - 1.0 - z * root) / den, 0.0), 1.0)
    high = 1.0
    if p < 1:
        root = math.sqrt(max(z2 + 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) - 1.0), 0.0))
        high = min(max((2.0 * n * p + z2 + 1.0 + z * root) / den, 0.0), 1.0)
    return low, high


def skill_interval(correct: float, answered: float, guess_sum: float,
                   z: float = Z95) -> tuple[float, float, bool]:
    """(low, high, below_chance) of the skill on answered samples (mode C_I).

    `correct` of `answered` untruncated samples, `guess_sum` = G, the sum of their
    guess chances. No answered samples, or no information (m - G <= 0: every
    answer a certain guess), give (0, 0, False).
    """
    scale = answered - guess_sum
    if answered <= 0 or scale <= 1e-12:
        return 0.0, 0.0, False
    raw_low, raw_high = wilson_cc_bounds(correct, answered, z)
    mapped_low = (raw_low * answered - guess_sum) / scale
    mapped_high = (raw_high * answered - guess_sum) / scale
    if mapped_high < 0:
        return 0.0, 0.0, True
    high = min(mapped_high, raw_high)
    low = min(max(mapped_low, 0.0), high)
    return low, high, False


def skill_margin(correct: float, answered: float, guess_sum: float, z: float = Z95) -> float:
    """Half-width of `skill_interval`: the margin analyze.py shows for this count in mode C_I."""
    low, high, _ = skill_interval(correct, answered, guess_sum, z)
    return (high - low) / 2.0
