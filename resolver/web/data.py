"""Opening a dataset for a web app: read-only PointsDB, validated dimensions, eval metadata.

The apps load everything they need once at start-up (small aggregated frames) and answer
callbacks from memory; only the explorer's point inspection goes back to the database,
through `LockedDB` because one DuckDB connection must not be used by two request threads
at once.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from resolver.analysis import dimension_not_carried, evaluate_command, open_dataset
from resolver.core import UserError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any, TypeVar

    import pandas as pd

    from resolver.catalog import Dataset
    from resolver.pointsdb import PointsDB

    _R = TypeVar("_R")


def open_app_dataset(path: str | Path) -> tuple[Dataset, PointsDB]:
    """(Dataset, PointsDB) for a dataset file or a PointsDB file (resolver.analysis.open_dataset:
    a one-line UserError for a bad path, PointsDBMissing for a missing DB), refusing an empty one."""
    # pandas and the scoring code load only once the dataset has opened: a failing start stays
    # quick on a busy machine (docs/performance.md, issue 46)
    dataset, db = open_dataset(path)
    if not db.has_points():
        db.close()
        raise UserError(f"PointsDB {dataset.db_path} has no points yet; fill it with: {evaluate_command(path)}")
    return dataset, db


def check_group_by(db: PointsDB, group_by: str) -> str:
    """Validate a --group-by dimension and make sure the points actually carry it."""
    from resolver.pointsdb import validate_dimension

    name = validate_dimension(group_by)
    if not db.dimension_values(name):
        raise dimension_not_carried(name)
    return name


def eval_facets(evals: pd.DataFrame) -> dict:
    """{facet key: sorted values} over the evals (family, arch, size, quant ...)."""
    facets: dict = {}
    for value in evals["facets"]:
        for key, item in (value or {}).items():
            facets.setdefault(key, set()).add(str(item))
    return {key: sorted(values) for key, values in sorted(facets.items())}


def eval_matches_facets(facets: dict, selected: dict) -> bool:
    """True when the eval has, for every facet key with a selection, one of the selected values."""
    for key, values in selected.items():
        if values and str((facets or {}).get(key)) not in set(values):
            return False
    return True


def ranked_eval_ids(db: PointsDB, present: Sequence[str]) -> list:
    """Eval ids by overall ReasonScore (analyze.py scores' ranking), the rest after them in the given order."""
    from resolver.analysis import compute_scores

    wanted = set(present)
    ranked = [r["eval_id"] for r in compute_scores(db) if r["eval_id"] in wanted]
    return ranked + [e for e in present if e not in set(ranked)]


class LockedDB:
    """Serialises access to one read-only DuckDB connection across Flask's request threads."""

    def __init__(self, db: PointsDB):
        self.db = db
        self._lock = threading.Lock()

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return getattr(self.db, method)(*args, **kwargs)

    def run(self, function: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
        """function(db, *args, **kwargs) while holding the connection."""
        with self._lock:
            return function(self.db, *args, **kwargs)
