"""Statistics on evaluation counts: Wilson intervals and friends (see spec 03)."""
from __future__ import annotations

import numpy as np

Z95 = 1.96


def wilson_interval(successes, trials, z: float = Z95):
    """Wilson score interval as (center, margin); works on scalars or numpy arrays.

    Fractional counts are allowed (excess accuracy subtracts expected guesses);
    zero trials give (0, 0).
    """
    s = np.asarray(successes, dtype=float)
    k = np.asarray(trials, dtype=float)
    safe_k = np.where(k > 0, k, 1.0)
    p = np.clip(s / safe_k, 0.0, 1.0)
    z2 = z * z
    den = 1.0 + z2 / safe_k
    center = (p + z2 / (2 * safe_k)) / den
    margin = z * np.sqrt(p * (1 - p) / safe_k + z2 / (4 * safe_k * safe_k)) / den
    center = np.where(k > 0, center, 0.0)
    margin = np.where(k > 0, margin, 0.0)
    if center.ndim == 0:
        return float(center), float(margin)
    return center, margin
