"""Plumbing shared by every analyze.py subcommand.

Opening a dataset and its PointsDB, the flags most subcommands share (--filters,
--format, --output-dir, --mode, dimensions that accept "none"), writing a result to
stdout or to a descriptively named file, and rendering markdown tables.  The
computations themselves live in the other modules of this package and never print.
"""
from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Sequence

from resolver.core import UserError, choices_text, markdown_table, positive_int

MODES = ("E_I", "E_P", "E_O", "C_I", "C_P", "C_O")
DEFAULT_MODE = "C_P"
NONE_DIMENSION = "none"


# --------------------------------------------------------------------------- datasets

def evaluate_command(dataset_path) -> str:
    """The command that builds the PointsDB of a dataset (named in error messages)."""
    from resolver.catalog import is_duckdb_file

    if dataset_path is not None and is_duckdb_file(dataset_path):
        return f"python evaluate.py --interview <NDJSON files> --db {dataset_path}"
    return f"python evaluate.py --dataset {dataset_path}"


def require_config(dataset, what: str) -> None:
    """One-line UserError when `what` needs the experiment config a PointsDB file lacks."""
    if getattr(dataset, "from_pointsdb", False):
        raise UserError(f"{what} needs a dataset config (its experiment config's views); {dataset.path} is a "
                        f"PointsDB file: pass a dataset JSON whose 'db' names it, e.g. data/r12.json (docs/data.md)")


def open_dataset(path):
    """Load a dataset file -- or a PointsDB file, standing for a dataset of its own evals
    (resolver.catalog.datasets.dataset_from_pointsdb) -- and open its PointsDB read-only
    -> (Dataset, PointsDB).

    A missing dataset file or a missing database is a one-line UserError; the latter
    names the evaluate.py command that builds it.
    """
    if path is None:
        raise UserError("a dataset file is required, e.g. data/r12.json (or a PointsDB file such as "
                        "pointsdb-interview.db)")
    dataset_file = Path(path)
    if not dataset_file.is_file():
        raise UserError(f"dataset file not found: {path}; {existing_datasets_text(dataset_file)}")
    from resolver.catalog import load_dataset
    from resolver.pointsdb import open_pointsdb
    from resolver.sim.r12study import missing_data_hint

    dataset = load_dataset(dataset_file, allow_pointsdb=True)
    if not Path(dataset.db_path).exists():
        raise UserError(f"PointsDB {dataset.db_path} does not exist yet; {missing_data_hint(path)}")
    return dataset, open_pointsdb(dataset.db_path, read_only=True)


def existing_datasets_text(missing: Path) -> str:
    """The dataset configs that do exist beside a missing one (never the missing one itself)."""
    folder = missing.parent if missing.parent.is_dir() else Path("data")
    found = sorted(str(p) for p in folder.glob("*.json") if p.is_file() and p != missing and p.name != "manifest.json") if folder.is_dir() else []
    if not found:
        return f"no dataset configs in {folder}/; a dataset is a JSON file such as data/r12.json (see docs/data.md)"
    return "datasets there: " + ", ".join(found)


def load_filters(text):
    """Parse a --filters value (JSON text, dict or None) with the PointsDB parser."""
    from resolver.pointsdb import parse_filters

    if text is None or (isinstance(text, str) and not text.strip()):
        return parse_filters({})
    return parse_filters(text)


def parse_dimension(text, allow_none: bool = True):
    """A group/facet/split dimension: validated name, or None for "none"."""
    from resolver.pointsdb import validate_dimension

    if text is None:
        return None
    if allow_none and str(text).strip().lower() == NONE_DIMENSION:
        return None
    return validate_dimension(str(text).strip())


def require_rows(frame, what: str = "points", filters_text=None):
    """Raise a UserError when a selection is empty (instead of printing nothing)."""
    if frame is None or len(frame) == 0:
        hint = f" match --filters {filters_text}" if filters_text else " are in the database"
        raise UserError(f"no {what}{hint}; list what exists with: analyze.py evals / analyze.py tasks")
    return frame


# ------------------------------------------------------------------------------ flags

DATASET_HELP = "dataset config JSON, e.g. data/r12.json, or a PointsDB file, e.g. pointsdb-interview.db"


def add_dataset_arg(parser, required: bool = True):
    """The positional dataset path (optional where e.g. --hf-id can replace it)."""
    if required:
        parser.add_argument("dataset", help=DATASET_HELP)
    else:
        parser.add_argument("dataset", nargs="?", default=None, help=DATASET_HELP)


def add_filters_arg(parser):
    parser.add_argument(
        "--filters", default=None, metavar="JSON",
        help='standard filter JSON, e.g. \'{"eval_id": ["a1b2c3"], "base_task": "arithmetic"}\'',
    )


def add_format_arg(parser, choices: Sequence[str], default: str):
    parser.add_argument("--format", choices=list(choices), default=default,
                        help=f"output format: {', '.join(choices)} (default {default})")


def add_output_dir_arg(parser, default=None, required: bool = False):
    """--output-dir; with default None, text goes to stdout and images to the current directory."""
    if required:
        help_text = "directory for output files (required)"
    elif default is None:
        help_text = "directory for output files (default: text to stdout, images to .)"
    else:
        help_text = f"directory for output files (default {default})"
    parser.add_argument("--output-dir", default=None if required else default, required=required, help=help_text)


def add_mode_arg(parser, choices: Sequence[str] = MODES, default: str = DEFAULT_MODE):
    parser.add_argument("--mode", choices=list(choices), default=default,
                        help=f"statistical mode: {', '.join(choices)} (default {default}); see docs/analyze.md")


MAX_WIDTH = 10_000      # pixels; a bigger PNG is a typo, and would take minutes and gigabytes to draw


def pixel_width(text) -> int:
    import argparse

    value = positive_int(text)
    if value > MAX_WIDTH:
        raise argparse.ArgumentTypeError(f"expected a width from 1 to {MAX_WIDTH} pixels, got {text!r}")
    return value


def add_width_arg(parser, default: int):
    parser.add_argument("--width", type=pixel_width, default=default,
                        help=f"PNG width in pixels, at most {MAX_WIDTH} (default {default})")


def add_dimension_arg(parser, flag: str, default, help_text: str, action: str | None = None, allow_none: bool = True):
    """A dimension flag (--group-by, --facet-by, --split-by); 'none' turns it off when allowed."""
    note = "; 'none' disables" if allow_none else ""
    kwargs = {"default": default, "metavar": "DIM", "help": f"{help_text} (default {default or 'none'}{note})"}
    if action:
        kwargs["action"] = action
    parser.add_argument(flag, **kwargs)




# ----------------------------------------------------------------------------- output

def slug(value) -> str:
    """A filesystem-safe piece of a file name."""
    text = re.sub(r"[^A-Za-z0-9._+-]+", "_", str(value)).strip("_.")
    return text or "all"


def output_name(*parts, ext: str) -> str:
    """Descriptive file name from non-empty parts: scores_easy.png, cluster_eval_id_by_base_task.md."""
    pieces = [slug(p) for p in parts if p not in (None, "")]
    return "_".join(pieces) + "." + ext.lstrip(".")


def write_output(name: str, content, output_dir=None, stream=None) -> Path | None:
    """Write text, bytes or a matplotlib figure.

    With output_dir None, text goes to stdout (or `stream`) and None is returned;
    bytes and figures always need a file, so they go to ./<name>.  Otherwise the file
    <output_dir>/<name> is written (directories created) and its path returned; the
    path is also announced on stderr so piping stdout stays clean.
    """
    is_text = isinstance(content, str)
    if output_dir is None and is_text:
        out = stream or sys.stdout
        out.write(content if content.endswith("\n") else content + "\n")
        out.flush()
        return None
    target = Path(output_dir or ".") / name
    return write_file(target, content)


def write_file(target, content) -> Path:
    """Write content to an explicit path (for --output FILE)."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content if content.endswith("\n") else content + "\n", encoding="utf-8")
        elif isinstance(content, (bytes, bytearray)):
            target.write_bytes(bytes(content))
        else:
            save_figure(content, target)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}")
    sys.stderr.write(f"wrote {target}\n")
    return target


def save_figure(figure, target) -> None:
    """Save a matplotlib figure as PNG and release its memory."""
    import matplotlib.pyplot as plt

    figure.savefig(target, format="png", dpi=figure.get_dpi())
    plt.close(figure)


def to_json(data) -> str:
    """JSON text with every number unrounded; NaN/inf become null (valid JSON)."""
    return json.dumps(_json_safe(data), indent=2, ensure_ascii=False)


def _json_safe(value):
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()  # numpy scalars
        except (ValueError, AttributeError):
            value = value.tolist()
            return _json_safe(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "tolist"):
        return _json_safe(value.tolist())
    return value


# --------------------------------------------------------------------------- markdown

def frame_to_markdown(frame, columns=None, floats: int = 4) -> str:
    """Render a DataFrame as a markdown table; floats rounded for reading only."""
    columns = list(columns or frame.columns)
    numeric = {c for c in columns if str(frame[c].dtype).startswith(("float", "int", "uint", "Int", "Float"))}

    def cell(value, col):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "—"
        if isinstance(value, float):
            return f"{value:.{floats}f}"
        if isinstance(value, (list, tuple)):
            return ", ".join(map(str, value))
        return value

    rows = [[cell(v, c) for v, c in zip(rec, columns)] for rec in frame[columns].itertuples(index=False, name=None)]
    return markdown_table(rows, columns, ["r" if c in numeric else "l" for c in columns])


def check_choice(value, valid, what: str):
    """UserError naming the valid choices when value is not one of them."""
    if value not in valid:
        raise UserError(f"unknown {what} {value!r}; valid: {choices_text(valid)}")
    return value


# -------------------------------------------------------------------- selections

MAX_LISTED_VALUES = 40


def _listed(values) -> str:
    values = [str(v) for v in values]
    shown = ", ".join(values[:MAX_LISTED_VALUES])
    return shown + (f", ... ({len(values)} in all)" if len(values) > MAX_LISTED_VALUES else "") or "(none)"


def explain_empty_selection(db, filters, filters_text=None) -> str:
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


def select_or_explain(frame, db, filters, filters_text=None, dataset_path=None):
    """Return the frame, or raise a UserError explaining an empty selection."""
    if frame is not None and len(frame) > 0:
        return frame
    if not filters:
        raise UserError(f"the PointsDB {db.path} has no points; build it with: "
                        f"{evaluate_command(dataset_path or '<dataset.json>')}")
    raise UserError(explain_empty_selection(db, filters, filters_text))


def eval_labels(evals) -> dict:
    """{eval_id: display label}: the label, else the model; evals sharing one get " [eval_id]".

    `evals`: the PointsDB evals frame or dicts with eval_id / label / model. The one rule
    for every view (analyze.py tables, the web apps; resolver.catalog.distinct_labels),
    so equal labels never look like one eval.
    """
    from resolver.catalog import distinct_labels

    rows = evals.to_dict("records") if hasattr(evals, "to_dict") else list(evals)
    return distinct_labels((row["eval_id"], row.get("label"), row.get("model")) for row in rows)


def unique_dims(*dims) -> list:
    """The non-None dimensions, each once, in order (for PointsDB.aggregate(by=...))."""
    return list(dict.fromkeys(d for d in dims if d))


MISSING_VALUE = "(none)"


def label_missing(frame, dims):
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


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def split_frames(frame, split):
    """[(value, part)] per split value, or [(None, frame)] without a split."""
    if split is None:
        return [(None, frame)]
    return [(value.item() if hasattr(value, "item") else value, part)
            for value, part in frame.groupby(split, sort=False, dropna=False)]


def sectioned_markdown(frame, facet, title: str, floats: int = 4) -> str:
    """A titled markdown document with one table per facet value (or one table)."""
    parts = [f"# {title}"]
    for value, part in split_frames(frame, facet):
        if facet:
            parts += ["", f"## {facet} = {value}"]
        parts += ["", frame_to_markdown(part.drop(columns=[facet] if facet else []), floats=floats)]
    return "\n".join(parts) + "\n"
