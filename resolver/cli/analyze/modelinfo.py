"""analyze.py modelinfo: model cards and configs from the Hugging Face hub -> MODELINFO.md."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from resolver.analysis import common
from resolver.cli.analyze import flags, output
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser

__all__ = ["register_modelinfo", "run_modelinfo"]


def register_modelinfo(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("modelinfo", help="download model cards/configs from the HF hub and write MODELINFO.md")
    flags.add_dataset_arg(p, required=False)
    flags.add_filters_arg(p)
    p.add_argument("--eval-id", action="append", default=[], metavar="EVAL_ID",
                   help="only this eval (seed 002); repeatable; same as --filters '{\"eval_id\": [...]}'")
    p.add_argument("--hf-id", action="append", default=[], help="a Hugging Face model id (skips the dataset); repeatable")
    flags.add_output_dir_arg(p, required=True)
    p.set_defaults(handler=run_modelinfo)


def run_modelinfo(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from resolver.analysis.modelinfo import collect_modelinfo, modelinfo_markdown

    hf_ids, without = (list(dict.fromkeys(args.hf_id)), []) if args.hf_id else _dataset_hf_ids(args)
    with tqdm(total=len(hf_ids), desc="modelinfo", unit="model", disable=not hf_ids) as bar:
        models, skipped = collect_modelinfo(hf_ids, args.output_dir, bar)
    for hf_id, reason in skipped:
        sys.stderr.write(f"skipped {hf_id}: {reason}\n")
    output.write_output("MODELINFO.md", modelinfo_markdown(models, skipped, without), args.output_dir)
    return 0 if models or not hf_ids else 1


def _dataset_hf_ids(args: argparse.Namespace) -> tuple:
    """(hf_ids of the selected evals, [(eval_id, label)] of selected evals without one)."""
    if not args.dataset:
        raise UserError("give a dataset or --hf-id MODEL_ID")
    filters = common.load_filters(_with_eval_ids(args.filters, args.eval_id))
    dataset, db = common.open_dataset(args.dataset)
    with db:
        ids = common.select_or_explain(db.aggregate(filters, by=("eval_id",)), db, filters, args.filters,
                                       args.dataset)["eval_id"]
        evals = db.evals()
    selected = evals[evals["eval_id"].isin(set(ids))]
    hf_ids = [h for h in selected["hf_id"] if isinstance(h, str) and h]
    if not hf_ids and dataset.from_pointsdb:
        raise UserError(f"modelinfo needs Hugging Face ids; the evals of PointsDB {args.dataset} have no hf_id: "
                        "pass --hf-id MODEL_ID, or a dataset config whose evals.json sets hf_id")
    without = [(e, label) for e, label, h in zip(selected["eval_id"], selected["label"], selected["hf_id"])
               if not (isinstance(h, str) and h)]
    return list(dict.fromkeys(hf_ids)), without


def _with_eval_ids(filters_text: str | None, eval_ids: list[str]) -> dict | str | None:
    """--filters plus --eval-id (the ids are added to the filter's eval_id list)."""
    if not eval_ids:
        return filters_text
    filters = dict(common.load_filters(filters_text).items)
    filters["eval_id"] = list(dict.fromkeys([*filters.get("eval_id", []), *eval_ids]))
    return filters
