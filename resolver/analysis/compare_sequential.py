"""analyze.py compare on a run that stopped on its decision (runner.py --against): the
anytime-valid intervals and verdicts instead of the fixed-n ones (docs/statistics.md,
"Stopping on the decision").

Such a run looked at its data after every round, so a fixed-n test on it would be a test
after peeking (its false-positive rate is no longer 5%): every verdict shown comes from
the confidence sequence of resolver.stats.sequential, recomputed here from the paired
samples (round = sample index // the run's count), with Holm over the same family as the
fixed-n compare. The run folder's sequential.json (found through the points' sources)
marks the run and says how each cell stopped.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from resolver.analysis.outputs import CompareSequential
from resolver.core import UserError
from resolver.stats import PROCEDURES, SEQUENTIAL_NAME, cells_and_overall, holm, pair_contributions

if TYPE_CHECKING:
    from resolver.pointsdb import PointsDB

__all__ = ["SEQUENTIAL_NAME", "anytime_rows", "sequential_marker", "sequential_summary", "stopped_of"]




def sequential_marker(db: PointsDB, eval_id: str) -> dict | None:
    """The sequential.json of the run folder an eval's samples came from, or None."""
    frame = db.points({"eval_id": [eval_id]}, columns=["sources"], decode_json=False)
    folders = {db.source_path(str(s)).parent for sources in frame["sources"] if sources is not None for s in sources}
    for folder in sorted(folders):
        path = Path(folder) / SEQUENTIAL_NAME
        if path.is_file():
            try:
                marker = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(marker, dict) and isinstance(marker.get("count"), int):
                return marker
    return None


def anytime_rows(pairs: pd.DataFrame, codes: np.ndarray, k: int, marker: dict, alpha: float) -> pd.DataFrame:
    """Per cell (codes 0..k-1) and the overall row (last): the anytime 95% interval, the
    anytime p-value, Holm's verdict over the k + 1 rows, and whether the cell is equivalent
    (its interval at alpha / (k + 1) inside ±margin)."""
    x, w = pair_contributions(pairs["outcome_a"], pairs["outcome_b"], pairs["guess_a"], str(marker.get("mode", "C_P")))
    # a file without "procedure" was written before eb-horizon: its run stopped by eb-mixture
    procedure = str(marker.get("procedure", "eb-mixture"))
    if procedure not in PROCEDURES:
        raise UserError(f"{SEQUENTIAL_NAME} names the anytime procedure {procedure!r}, which this version cannot "
                        f"recompute (known: {', '.join(PROCEDURES)}); use the version that wrote the run")
    rounds_of = pairs["sample_index"].to_numpy(np.int64) // int(marker["count"])
    planned = int(marker.get("maxrounds") or 0)
    rounds = max(int(rounds_of.max()) + 1 if len(rounds_of) else 1, planned)
    # eb-horizon's planned pairs: each cell's first round times maxrounds, as the runner's
    seq = cells_and_overall(x, w, codes, rounds_of, k, rounds, alpha, procedure=procedure)
    last = rounds - 1
    rejected, adjusted = holm(seq.p_value[last], alpha)
    diff = seq.diff[last]
    margin = float(marker.get("margin", 0.05))
    return pd.DataFrame({
        "anytime_diff": np.clip(diff, -1.0, 1.0), "anytime_low": seq.low[last], "anytime_high": seq.high[last],
        "p_anytime": seq.p_value[last], "p_holm": adjusted,
        "verdict": np.where(rejected, np.where(seq.direction[last] > 0, "b", "a"), "none"),
        "equivalent": (seq.eq_low[last] > -margin) & (seq.eq_high[last] < margin) & ~rejected,
    })


def stopped_of(marker: dict, tier_name: Any) -> dict:
    """{(tier, base_task): (how the cell stopped, rounds)} from the run's sequential.json."""
    out = {}
    for c in marker.get("cells", []):
        if not c.get("overall"):
            out[(tier_name(c.get("degree")), c.get("base_task"))] = (str(c.get("stopped")), c.get("rounds"))
    return out


def sequential_summary(marker: dict, rows: list[dict]) -> dict:
    """The compare JSON's ``sequential`` block: the run's procedure, how many cells stopped
    before maxrounds, and the median width of the anytime interval over the fixed-n paired one."""
    ratios = [(r["anytime"][1] - r["anytime"][0]) / (r["paired"][1] - r["paired"][0]) for r in rows
              if r.get("anytime") and r["paired"][1] - r["paired"][0] > 1e-12]
    early = sum(1 for r in rows if r.get("stopped") in ("decided", "equivalent")
                and (r.get("rounds") or 0) < int(marker.get("maxrounds", 0)))
    return CompareSequential(
        against=str(marker.get("against", "")), a_model=str(marker.get("a_model", "")),
        method=str(marker.get("method", "")), alpha=float(marker.get("alpha", 0.05)),
        margin=float(marker.get("margin", 0.05)), count=int(marker["count"]), maxrounds=int(marker.get("maxrounds", 0)),
        stopped_early=early, width_ratio=float(np.median(ratios)) if ratios else None).model_dump()
