"""analyze.py compare: is B better than A, and where (docs/analyze.md).

The two evals come from --filters '{"eval_id": ["<A>", "<B>"]}' (first A, second B)
and/or --search; the handler opens the dataset, calls resolver.analysis.compare, renders
markdown / JSON / PNG and writes it.
"""
from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.analysis.common import DEFAULT_DELTA, DEFAULT_TOP
from resolver.cli.analyze import flags, output
from resolver.core import UserError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from resolver.catalog import Dataset
    from resolver.cli.base import ArgParser
    from resolver.pointsdb import Filters

__all__ = ["choose_evals", "delta_value", "register_compare", "run_compare"]


def delta_value(text: str) -> float:
    """argparse type: a difference strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"--delta must be a number between 0 and 1 (exclusive), e.g. 0.03; "
                                         f"got {text!r}")
    return value


def register_compare(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("compare", help="paired comparison of two evals on the same problems (B - A per cell)",
                              description="Paired difference B - A of two evals per (tier, group) cell and overall, "
                                          "with paired and unpaired 95% intervals, Holm-corrected verdicts, the "
                                          "points that differ most and the samples a decision would need.")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    p.add_argument("--search", help="regex on model name or label (case-insensitive) choosing the two evals; "
                                    "with an eval_id filter, keeps its order")
    flags.add_dimension_arg(p, "--group-by", "base_task", "group dimension of the cells", allow_none=False)
    flags.add_mode_arg(p)
    p.add_argument("--delta", type=delta_value, default=DEFAULT_DELTA,
                   help=f"difference the samples-needed estimate should decide (default {DEFAULT_DELTA})")
    p.add_argument("--top", type=flags.positive_int, default=DEFAULT_TOP,
                   help=f"how many most-different points to list (default {DEFAULT_TOP})")
    flags.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    flags.add_width_arg(p, 1200)
    flags.add_output_dir_arg(p)
    p.add_argument("--output", help="output file path (instead of --output-dir; default stdout, ./compare.png for png)")
    p.set_defaults(handler=run_compare)


def choose_evals(evals: pd.DataFrame, filters: Filters, search: str | None) -> tuple:
    """(A, B) from the filter's eval_id list (in order) and/or --search; exactly two or a UserError."""
    known = evals["eval_id"].tolist()
    raw = [str(e) for e in filters.items.get("eval_id", [])]
    listed = list(dict.fromkeys(raw))
    if len(raw) == 2 and len(listed) == 1:
        raise UserError(f"compare needs two different evals (A first, then B); got {raw[0]} twice")
    unknown = [e for e in listed if e not in known]
    if unknown:
        raise UserError(f"unknown eval {unknown[0]}; valid: {', '.join(known)} (see analyze.py evals)")
    chosen = listed or known
    if search:
        try:
            pattern = re.compile(search, re.IGNORECASE)
        except re.error as exc:
            raise UserError(f"--search {search!r} is not a valid regular expression ({exc})") from None
        names = {r["eval_id"]: (str(r.get("model") or ""), str(r.get("label") or ""))
                 for r in evals.to_dict("records")}
        chosen = [e for e in chosen if any(pattern.search(n) for n in names.get(e, ()))]
    if len(chosen) != 2:
        how = "--filters '{\"eval_id\": [\"<A>\", \"<B>\"]}'" + (" and --search" if search else "")
        raise UserError(f"compare needs exactly two evals (A first, then B); {how} selected {len(chosen)}"
                        + (f": {', '.join(chosen[:8])}" if chosen else "") + "; list them with analyze.py evals")
    return chosen[0], chosen[1]


def _levels(dataset: Dataset) -> dict | None:
    if not getattr(dataset, "config_path", None):
        return None
    from resolver.config import load_config

    assert dataset.config_path is not None  # the getattr above found it set
    config = load_config(dataset.config_path, check_points=False)
    return {name: (level.count, level.maxrounds) for name, level in config.precision.items()}


def _config_text(dataset: Dataset) -> str | None:
    from pathlib import Path

    path = getattr(dataset, "config_path", None)
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_compare(args: argparse.Namespace) -> int:
    from resolver.analysis import CompareLabels, compare_text
    from resolver.analysis.compare import compare_evals, sampling_plan

    group = common.parse_dimension(args.group_by, allow_none=False)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    with db:
        evals = db.evals()
        a, b = choose_evals(evals, filters, args.search)
        rest = {k: v for k, v in filters.items.items() if k != "eval_id"}
        result = compare_evals(db, a, b, args.mode, rest, group, args.delta, args.top)
    labels = common.eval_labels(evals)
    result["labels"] = CompareLabels(a=labels.get(a, a), b=labels.get(b, b)).model_dump()
    plan = sampling_plan(result, evals, _config_text(dataset), _levels(dataset))
    result["sampling"] = plan
    content: Figure | str
    if args.format == "png":
        from resolver.plots import compare_figure

        content, name = compare_figure(result, labels.get(a, a), labels.get(b, b), args.width), "compare.png"
    elif args.format == "json":
        from resolver.analysis.outputs import CompareOutput, output_json

        content, name = output_json(CompareOutput, result), "compare.json"
    else:
        content, name = compare_text.compare_markdown(result, labels, plan), "compare.md"
    if args.output:
        output.write_file(args.output, content)
    else:
        output.write_output(name, content, args.output_dir)
    return 0
