"""probe.py fft: frequency spectra of the prompt token sequences of a config's 1-dimensional views."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resolver.analysis import common
from resolver.cli.analyze import flags, output, shared
from resolver.cli.probe import options
from resolver.core import UserError

if TYPE_CHECKING:
    import argparse

    from resolver.cli.base import ArgParser
    from resolver.core.progress import Bar

__all__ = ["register_fft", "run_fft"]


def register_fft(subparsers: argparse._SubParsersAction[ArgParser]) -> None:
    p = subparsers.add_parser("fft", help="frequency spectra of prompt token sequences (from raw NDJSON)")
    flags.add_dataset_arg(p)
    flags.add_filters_arg(p)
    p.add_argument("--view", action="append", metavar="VIEW",
                   help="1-dimensional view to include (name or task/name; repeatable; default all)")
    flags.add_dimension_arg(p, "--split-by", "base_task", "one output file per value")
    options.add_tokenizer(p, "default: each eval's hf_id from the local cache, else bytes")
    flags.add_format_arg(p, ("png", "json"), "png")
    flags.add_output_dir_arg(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_fft)


def run_fft(args: argparse.Namespace) -> int:
    from resolver.analysis import output_json
    from resolver.plots import fft_figure
    from resolver.probe import FftOutput, SpectrumCache, fft_output, fft_table

    dataset, views, split_by, points, evals, db_dir = shared.view_points(
        args, "probe.py fft", 1,
        ["id", "eval_id", "model", "template", "sampler", "base_task", "task", "task_version", "params", "sources"])
    labels = common.eval_labels(evals)
    from resolver.probe import fft_tokenizers

    tokenizers = fft_tokenizers(evals, args.tokenizer, warn=options.warn)
    table = fft_table(points, views, db_dir, tokenizers, progress=None if args.quiet else progress_bar,
                      store=SpectrumCache(dataset.cache_dir))    # the dataset's "cache" (docs/probe.md)
    if table.empty:
        raise UserError("no points fall in the selected 1-dimensional views; check --view and --filters")
    if args.format == "json":
        output.write_output("fft.json", output_json(FftOutput, fft_output(table)), args.output_dir)
        return 0
    names = {e: t.name for e, t in tokenizers.items()}
    split_points = points.groupby(split_by, sort=True) if split_by else [("all", points)]
    for key, rows in split_points:
        key = key[0] if isinstance(key, tuple) else key
        ids = set(rows["id"])
        part_views = [v for v in views if not rows[rows["base_task"] == v.base_task].empty]
        part = table[table["eval_id"].isin(rows["eval_id"].unique()) &
                     table["base_task"].isin([v.base_task for v in part_views])]
        if part.empty or not ids:
            continue
        evals_here = sorted(rows["eval_id"].unique().tolist())
        title = f"Prompt token spectra — {split_by}={key}" if split_by else "Prompt token spectra"  # type: ignore[str-bytes-safe]  # a group key is never bytes
        fig = fft_figure(part, part_views, evals_here, labels, title, names)
        output.write_output(output.output_name("fft", key if split_by else "", ext="png"), fig, args.output_dir)
    return 0


def progress_bar(**kwargs: Any) -> Bar:
    """fft's bar over the points on stderr, shown whenever not --quiet (as before)."""
    from tqdm import tqdm

    return tqdm(**kwargs)
