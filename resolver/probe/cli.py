"""probe.py subcommands: fft, failure, truncation (flags of README.md plus documented extras),
and shortcuts (the generator audit of resolver.audit)."""
from __future__ import annotations

from resolver.analysis import common
from resolver.core import UserError


def register(subparsers) -> None:
    register_fft(subparsers)
    register_failure(subparsers)
    register_truncation(subparsers)
    from resolver.audit import register as register_shortcuts

    register_shortcuts(subparsers)


def _labels(db) -> dict:
    evals = db.evals()
    return {e: (lab or m) for e, lab, m in zip(evals["eval_id"], evals["label"], evals["model"])}


def _add_point_ids(p) -> None:
    p.add_argument("--point-id", type=int, action="append", required=True, metavar="ID",
                   help="point id from analyze.py points (repeatable)")


def _add_tokenizer(p, default_text: str) -> None:
    p.add_argument("--tokenizer", default=None, metavar="NAME_OR_PATH",
                   help=f"tokenizer: a local directory or tokenizer.json, a Hugging Face id, or 'bytes' ({default_text})")


# ------------------------------------------------------------------------- fft

def register_fft(subparsers) -> None:
    p = subparsers.add_parser("fft", help="frequency spectra of prompt token sequences (from raw NDJSON)")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    p.add_argument("--view", action="append", metavar="VIEW",
                   help="1-dimensional view to include (name or task/name; repeatable; default all)")
    common.add_dimension_arg(p, "--split-by", "base_task", "one output file per value")
    _add_tokenizer(p, "default: each eval's hf_id from the local cache, else bytes")
    common.add_format_arg(p, ("png", "json"), "png")
    common.add_output_dir_arg(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_fft)


def run_fft(args) -> int:
    from resolver.analysis import config_views, select_views, view_columns
    from resolver.plots import fft_figure
    from resolver.probe.fft import FREQUENCIES, fft_table

    split_by = common.parse_dimension(args.split_by)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    common.require_config(dataset, "probe.py fft")
    views = select_views(config_views(dataset.config_path, dims=1), args.view)
    if not views:
        raise UserError(f"config {dataset.config_path} has no 1-dimensional views (views with one group_by dimension)")
    with db:
        columns = ["id", "eval_id", "model", "template", "sampler", "base_task", "task", "task_version", "params",
                   "sources",
                   *view_columns(views), *([split_by] if split_by else [])]
        points = common.require_rows(db.points(filters, columns=list(dict.fromkeys(columns))), "points", args.filters)
        evals = db.evals()
        labels = _labels(db)
        db_dir = db.path.parent
    from resolver.probe.tokenizers import ByteTokenizer, eval_tokenizers

    tokenizers = eval_tokenizers(evals, args.tokenizer, fallback=ByteTokenizer(), who="probe.py")
    table = fft_table(points, views, db_dir, tokenizers, progress=not args.quiet)
    if table.empty:
        raise UserError("no points fall in the selected 1-dimensional views; check --view and --filters")
    if args.format == "json":
        records = table.assign(spectrum=[s.tolist() for s in table["spectrum"]]).to_dict(orient="records")
        common.write_output("fft.json", common.to_json({"frequencies": FREQUENCIES.tolist(), "spectra": records}),
                            args.output_dir)
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
        title = f"Prompt token spectra — {split_by}={key}" if split_by else "Prompt token spectra"
        fig = fft_figure(part, part_views, evals_here, labels, title, names)
        common.write_output(common.output_name("fft", key if split_by else "", ext="png"), fig, args.output_dir)
    return 0


# --------------------------------------------------------------------- failure

def register_failure(subparsers) -> None:
    p = subparsers.add_parser("failure", help="failed samples of points (raw answers) and failures by genresult field")
    common.add_dataset_arg(p)
    _add_point_ids(p)
    p.add_argument("--limit", type=common.positive_int, default=None, help="show only the first N failures (default all)")
    p.add_argument("--full", action="store_true", help="show whole answers (default: head and tail of long ones)")
    common.add_format_arg(p, ("markdown", "json"), "markdown")
    p.set_defaults(handler=run_failure)


def run_failure(args) -> int:
    from resolver.probe.failure import failure_report
    from resolver.probe.render import failure_markdown

    _, db = common.open_dataset(args.dataset)
    with db:
        report = failure_report(db, args.point_id, args.limit)
        labels = _labels(db)
    if args.format == "json":
        data = {"points": report.points.drop(columns=["sources"]).to_dict(orient="records"),
                "samples": report.samples, "failures": report.failures,
                "breakdown": report.breakdown.to_dict(orient="records")}
        common.write_output("failure.json", common.to_json(data), None)
    else:
        common.write_output("failure.md", failure_markdown(report, labels, args.full), None)
    return 0


# ------------------------------------------------------------------ truncation

def register_truncation(subparsers) -> None:
    p = subparsers.add_parser("truncation", help="loop detection on every truncated sample of a point")
    common.add_dataset_arg(p)
    _add_point_ids(p)
    _add_tokenizer(p, "default: a word/punctuation approximation")
    common.add_format_arg(p, ("markdown", "json"), "markdown")
    p.set_defaults(handler=run_truncation)


def run_truncation(args) -> int:
    from resolver.probe.render import truncation_markdown
    from resolver.probe.tokenizers import load_tokenizer
    from resolver.probe.truncation import truncation_report

    tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None
    _, db = common.open_dataset(args.dataset)
    with db:
        points, table, distribution = truncation_report(db, args.point_id, tokenizer)
        labels = _labels(db)
    if args.format == "json":
        data = {"points": points.drop(columns=["sources"]).to_dict(orient="records"),
                "samples": table.to_dict(orient="records"), "distribution": distribution}
        common.write_output("truncation.json", common.to_json(data), None)
    else:
        common.write_output("truncation.md", truncation_markdown(points, table, distribution, labels), None)
    return 0
