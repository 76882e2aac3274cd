"""Plumbing shared by the analyze.py and probe.py computations.

Opening a dataset and its PointsDB, parsing --filters and dimension values, explaining an
empty selection, the display-label rule, and the text forms every renderer uses (JSON with
NaN as null, markdown tables). Nothing here parses argv, prints or writes files: the flags
and the output writers live in the command layer (resolver.cli.analyze; docs/analyze.md).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence, overload

from resolver.catalog import distinct_labels, is_duckdb_file, load_dataset
from resolver.catalog.manifest import pull_hint
from resolver.core import UserError, markdown_table

if TYPE_CHECKING:
    import pandas as pd

    from resolver.catalog import Dataset
    from resolver.pointsdb import Filters, FiltersLike, PointsDB
# analyze.py compare's defaults live here, not in analysis/compare.py, so that building
# analyze.py's parser (--help) loads no scipy (docs/performance.md).
DEFAULT_DELTA = 0.03
DEFAULT_TOP = 10
NONE_DIMENSION = "none"


# --------------------------------------------------------------------------- datasets

def evaluate_command(dataset_path: str | Path | None) -> str:
    """The command that builds the PointsDB of a dataset (named in error messages)."""
    if dataset_path is not None and is_duckdb_file(dataset_path):
        return f"python evaluate.py --interview <NDJSON files> --db {dataset_path}"
    return f"python evaluate.py --dataset {dataset_path}"


def require_config(dataset: Dataset, what: str) -> None:
    """One-line UserError when `what` needs the experiment config a PointsDB file lacks."""
    if getattr(dataset, "from_pointsdb", False):
        raise UserError(f"{what} needs a dataset config (its experiment config's views); {dataset.path} is a "
                        f"PointsDB file: pass a dataset JSON whose 'db' names it, e.g. data/r12.json (docs/data.md)")


class PointsDBMissing(UserError):
    """A dataset whose PointsDB is not built (or pulled) yet. The message names the data.py
    pull and the evaluate.py command that make it; `dataset_path` and `db_path` let the
    command layer name more (the simulated study: resolver.cli.base.user_message)."""

    def __init__(self, dataset_path: str | Path, db_path: str | Path) -> None:
        self.dataset_path, self.db_path = dataset_path, db_path
        super().__init__(f"PointsDB {db_path} does not exist yet; {default_missing_hint(dataset_path)}")


def open_dataset(path: str | Path | None) -> tuple[Dataset, PointsDB]:
    """Load a dataset file -- or a PointsDB file, standing for a dataset of its own evals
    (resolver.catalog.datasets.dataset_from_pointsdb) -- and open its PointsDB read-only
    -> (Dataset, PointsDB): the one way every command and web app opens a dataset.

    A missing dataset file is a one-line UserError; a missing database is `PointsDBMissing`.
    """
    if path is None:
        raise UserError("a dataset file is required, e.g. data/r12.json (or a PointsDB file such as "
                        "pointsdb-interview.db)")
    dataset_file = Path(path)
    if not dataset_file.is_file():
        raise UserError(f"dataset file not found: {path}; {existing_datasets_text(dataset_file)}")
    from resolver.pointsdb import open_pointsdb

    dataset = load_dataset(dataset_file, allow_pointsdb=True)
    if not Path(dataset.db_path).exists():
        raise PointsDBMissing(path, dataset.db_path)
    return dataset, open_pointsdb(dataset.db_path, read_only=True)


def default_missing_hint(path: str | Path) -> str:
    """What builds a missing PointsDB: the published results (where a manifest lists them)
    or your own runs (docs/data.md)."""
    return f"{pull_hint(path)}; or build it from your own runs with: python evaluate.py --dataset {path}"


def existing_datasets_text(missing: Path) -> str:
    """The dataset configs that do exist beside a missing one (never the missing one itself)."""
    folder = missing.parent if missing.parent.is_dir() else Path("data")
    found = sorted(str(p) for p in folder.glob("*.json") if p.is_file() and p != missing and p.name != "manifest.json") if folder.is_dir() else []
    if not found:
        return f"no dataset configs in {folder}/; a dataset is a JSON file such as data/r12.json (see docs/data.md)"
    return "datasets there: " + ", ".join(found)


def load_filters(text: FiltersLike) -> Filters:
    """Parse a --filters value (JSON text, dict or None) with the PointsDB parser."""
    from resolver.pointsdb import parse_filters

    if text is None or (isinstance(text, str) and not text.strip()):
        return parse_filters({})
    return parse_filters(text)


# typing only: a name given with allow_none=False always comes back as a name, never None
@overload
def parse_dimension(text: str, allow_none: Literal[False]) -> str: ...
@overload
def parse_dimension(text: object, allow_none: bool = True) -> str | None: ...
def parse_dimension(text: object, allow_none: bool = True) -> str | None:
    """A group/facet/split dimension: validated name, or None for "none"."""
    from resolver.pointsdb import validate_dimension

    if text is None:
        return None
    if allow_none and str(text).strip().lower() == NONE_DIMENSION:
        return None
    return validate_dimension(str(text).strip())


def require_rows(frame: pd.DataFrame | None, what: str = "points", filters_text: object = None) -> pd.DataFrame:
    """Raise a UserError when a selection is empty (instead of printing nothing)."""
    if frame is None or len(frame) == 0:
        hint = f" match --filters {filters_text}" if filters_text else " are in the database"
        raise UserError(f"no {what}{hint}; list what exists with: analyze.py evals / analyze.py tasks")
    return frame


# ------------------------------------------------------------------------- text

def to_json(data: object) -> str:
    """JSON text with every number unrounded; NaN/inf become null (valid JSON)."""
    return json.dumps(to_plain(data, finite=True), indent=2, ensure_ascii=False)


def plain(value: Any) -> Any:
    """One value as Python's own type: a numpy scalar becomes int / float / bool / str."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value


def to_plain(value: Any, finite: bool = False) -> Any:
    """Dicts, lists, tuples and numpy arrays and scalars as plain Python data for JSON (keys as
    text); with `finite`, NaN and infinities become None. The one numpy-to-JSON converter."""
    if isinstance(value, dict):
        return {str(k): to_plain(v, finite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, finite) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()  # numpy scalars (and one-element arrays)
        except (ValueError, AttributeError):
            return to_plain(value.tolist(), finite)
    if finite and isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "tolist"):
        return to_plain(value.tolist(), finite)
    return value


# --------------------------------------------------------------------------- markdown

def frame_to_markdown(frame: pd.DataFrame, columns: Sequence[str] | None = None, floats: int = 4) -> str:
    """Render a DataFrame as a markdown table; floats rounded for reading only."""
    columns = list(columns or frame.columns)
    numeric = {c for c in columns if str(frame[c].dtype).startswith(("float", "int", "uint", "Int", "Float"))}

    def cell(value: Any, col: str) -> object:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "—"
        if isinstance(value, float):
            return f"{value:.{floats}f}"
        if isinstance(value, (list, tuple)):
            return ", ".join(map(str, value))
        return value

    rows = [[cell(v, c) for v, c in zip(rec, columns)] for rec in frame[columns].itertuples(index=False, name=None)]
    return markdown_table(rows, columns, ["r" if c in numeric else "l" for c in columns])


# -------------------------------------------------------------------- selections

MAX_LISTED_VALUES = 40


def _listed(values: Iterable[Any]) -> str:
    values = [str(v) for v in values]
    shown = ", ".join(values[:MAX_LISTED_VALUES])
    return shown + (f", ... ({len(values)} in all)" if len(values) > MAX_LISTED_VALUES else "") or "(none)"


def explain_empty_selection(db: PointsDB, filters: Filters, filters_text: object = None) -> str:
    """Why a selection is empty: the first filter value that matches nothing, with the
    valid values, or that the values exist but not together."""
    for key, values in filters.items.items():
        if key == "groups":
            known = sorted({tag for groups in db.evals()["groups"] for tag in (groups if groups is not None else [])})
            for tags in values:
                unknown = [t for t in tags if t not in known]
                if unknown:
                    return f"filter 'groups' tag '{unknown[0]}' matches no eval; valid: {_listed(known)}"
            continue
        known = db.dimension_values(key)
        known_text = {str(v) for v in known} | {json.dumps(v) for v in known}
        unknown = [v for v in values if str(v) not in known_text]
        if unknown:
            return f"filter '{key}' value {json.dumps(unknown[0])} matches nothing; valid: {_listed(known)}"
    shown = filters_text if isinstance(filters_text, str) else json.dumps(filters.items)
    return f"no points match --filters {shown} (each value exists, but not in combination)"


def select_or_explain(frame: pd.DataFrame | None, db: PointsDB, filters: Filters, filters_text: object = None,
                      dataset_path: str | Path | None = None) -> pd.DataFrame:
    """Return the frame, or raise a UserError explaining an empty selection."""
    if frame is not None and len(frame) > 0:
        return frame
    if not filters:
        raise UserError(f"the PointsDB {db.path} has no points; build it with: "
                        f"{evaluate_command(dataset_path or '<dataset.json>')}")
    raise UserError(explain_empty_selection(db, filters, filters_text))


def eval_labels(evals: pd.DataFrame | Iterable[dict]) -> dict:
    """{eval_id: display label}: the label, else the model; evals sharing one get " [eval_id]".

    `evals`: the PointsDB evals frame or dicts with eval_id / label / model. The one rule
    for every view (analyze.py tables, the web apps; resolver.catalog.distinct_labels),
    so equal labels never look like one eval.
    """
    rows = evals.to_dict("records") if hasattr(evals, "to_dict") else list(evals)
    return distinct_labels((row["eval_id"], row.get("label"), row.get("model")) for row in rows)


def unique_dims(*dims: str | None) -> list:
    """The non-None dimensions, each once, in order (for PointsDB.aggregate(by=...))."""
    return list(dict.fromkeys(d for d in dims if d))


MISSING_VALUE = "(none)"


def label_missing(frame: pd.DataFrame, dims: Iterable[str]) -> pd.DataFrame:
    """Points without a value for a dimension (e.g. a param only some tasks have) form
    their own group named "(none)" instead of silently disappearing from groupbys."""
    for dim in dims:
        if dim in frame.columns and len(frame) and frame[dim].isna().all():
            # a typo such as params.lenght would otherwise give one "(none)" group, silently
            raise dimension_not_carried(dim)
        if dim in frame.columns and frame[dim].isna().any():
            # NaN turned whole numbers into floats: give them back as ints (file names, labels)
            frame[dim] = [MISSING_VALUE if _missing(v) else int(v) if isinstance(v, float) and v.is_integer() else v
                          for v in frame[dim]]
    return frame


def dimension_not_carried(dim: str) -> UserError:
    """The one-line error for a dimension that no selected point has a value for."""
    return UserError(f"no selected point has a value for {dim}; valid: base_task, eval_id, model, "
                     "template, sampler, or a params./manifold./facets. key the points carry "
                     "(list them with: analyze.py tasks)")


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def split_frames(frame: pd.DataFrame, split: str | None) -> list[tuple[Any, pd.DataFrame]]:
    """[(value, part)] per split value, or [(None, frame)] without a split."""
    if split is None:
        return [(None, frame)]
    return [(value.item() if hasattr(value, "item") else value, part)
            for value, part in frame.groupby(split, sort=False, dropna=False)]


def sectioned_markdown(frame: pd.DataFrame, facet: str | None, title: str, floats: int = 4) -> str:
    """A titled markdown document with one table per facet value (or one table)."""
    parts = [f"# {title}"]
    for value, part in split_frames(frame, facet):
        if facet:
            parts += ["", f"## {facet} = {value}"]
        parts += ["", frame_to_markdown(part.drop(columns=[facet] if facet else []), floats=floats)]
    return "\n".join(parts) + "\n"
