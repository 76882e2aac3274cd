"""analyze.py profile and point subcommands: spiderweb, surface, compression, hazard, capacity.

Each subcommand is ``register_<name>(subparsers)`` with the flags and defaults of
README.md (plus a few documented extras such as --mode and --format json) and a
``run_<name>(args)`` handler that opens the dataset, calls the pure computation in
resolver/analysis/, renders it (resolver/plots/ for PNG) and writes the files.
"""
from __future__ import annotations

from resolver.analysis import common
from resolver.core import UserError


def register(subparsers) -> None:
    for add in (register_spiderweb, register_surface, register_compression, register_hazard,
                register_capacity):
        add(subparsers)


def _split_values(frame, dims):
    """(key tuple, rows) per distinct value combination of `dims`; one group when dims is empty."""
    if not dims:
        return [((), frame)]
    out = []
    for key, rows in frame.groupby(list(dims), sort=True):
        out.append((key if isinstance(key, tuple) else (key,), rows))
    return out


def _split_title(dims, key) -> str:
    return ", ".join(f"{d}={v}" for d, v in zip(dims, key)) or "all points"


# ------------------------------------------------------------------- spiderweb

def register_spiderweb(subparsers) -> None:
    p = subparsers.add_parser("spiderweb", help="radar or bar chart of each eval's accuracy by group (one PNG per eval)",
                              description="Per-eval radar (webpng) or bar (barpng) chart of accuracy with its 95%% "
                                          "interval, mean completion tokens overlaid and truncation marked.")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    common.add_dimension_arg(p, "--group-by", "base_task", "slice dimension (spokes / bars)")
    common.add_format_arg(p, ("webpng", "barpng", "json"), "webpng")
    common.add_width_arg(p, 1000)
    p.add_argument("--height", type=common.positive_int, default=700, help="PNG height in pixels (default 700)")
    common.add_mode_arg(p)
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_spiderweb)


def run_spiderweb(args) -> int:
    from resolver.analysis.spiderweb import spiderweb_table
    from resolver.plots import bar_figure, radar_figure

    group_by = common.parse_dimension(args.group_by, allow_none=False)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        table = common.require_rows(spiderweb_table(db, filters, group_by, args.mode), "points", args.filters)
    if args.format == "json":
        common.write_output("spiderweb.json", common.to_json(table.to_dict(orient="records")), args.output_dir)
        return 0
    draw = radar_figure if args.format == "webpng" else bar_figure
    max_tokens = float(table["tokens_mean"].max() or 0)
    for eval_id, rows in table.groupby("eval_id", sort=True):
        fig = draw(rows.reset_index(drop=True), group_by, args.mode, args.width, args.height, max_tokens)
        name = common.output_name("spiderweb", rows.iloc[0]["label"], eval_id, "bars" if args.format == "barpng" else "",
                                  ext="png")
        common.write_output(name, fig, args.output_dir)
    return 0


# --------------------------------------------------------------------- surface

def register_surface(subparsers) -> None:
    p = subparsers.add_parser("surface", help="3-D accuracy surfaces of every 2-dimensional view (rows = views, cols = evals)")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    p.add_argument("--view", action="append", metavar="VIEW",
                   help="view to draw (name or task/name; repeatable; default all 2-dimensional views)")
    common.add_dimension_arg(p, "--split-by", "base_task", "one output file per value")
    common.add_format_arg(p, ("png", "json"), "png")
    p.add_argument("--cell-size", type=common.positive_int, default=420, help="pixels per grid cell (default 420)")
    common.add_mode_arg(p)
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_surface)


def run_surface(args) -> int:
    from resolver.analysis.surface import COUNTERS, config_views, select_views, surface_table, view_columns
    from resolver.plots import surface_figure

    split_by = common.parse_dimension(args.split_by)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    common.require_config(dataset, "analyze.py surface")
    views = select_views(config_views(dataset.config_path, dims=2), args.view)
    if not views:
        raise UserError(f"config {dataset.config_path} has no 2-dimensional views (views with two group_by dimensions)")
    with db:
        columns = ["id", "eval_id", "base_task", *COUNTERS, *view_columns(views), *([split_by] if split_by else [])]
        points = common.require_rows(db.points(filters, columns=list(dict.fromkeys(columns))), "points", args.filters)
        labels = common.eval_labels(db.evals())
    results = {}
    for key, rows in _split_values(points, [split_by] if split_by else []):
        panels = [(v, surface_table(rows, v, args.mode)) for v in views]
        panels = [(v, t) for v, t in panels if len(t)]
        if not panels:
            continue
        evals = sorted(rows["eval_id"].unique().tolist())
        results[key] = panels
        if args.format == "png":
            fig = surface_figure(panels, evals, labels, f"Accuracy surfaces — {_split_title([split_by], key)}"
                                 if split_by else "Accuracy surfaces", cell=args.cell_size)
            common.write_output(common.output_name("surface", *key, ext="png"), fig, args.output_dir)
    if not results:
        raise UserError("no points fall in the selected views; check --view and --filters")
    if args.format == "json":
        data = {"/".join(map(str, k)) or "all": {v.ident: t.to_dict(orient="records") for v, t in panels}
                for k, panels in results.items()}
        common.write_output("surface.json", common.to_json(data), args.output_dir)
    return 0


# ----------------------------------------------------------------- compression

def register_compression(subparsers) -> None:
    p = subparsers.add_parser("compression", help="gzip size vs answer length: loops compress, reasoning does not")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    common.add_dimension_arg(p, "--split-by", "base_task", "one output file per value")
    common.add_dimension_arg(p, "--facet-by", "eval_id", "subplot rows within each file")
    common.add_dimension_arg(p, "--group-by", "manifold.id", "coloured series within each panel")
    common.add_format_arg(p, ("png", "markdown", "json"), "png")
    common.add_width_arg(p, 1400)
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_compression)


def _sample_columns(*dims) -> list:
    base = ["id", "eval_id", "completion_tokens", "outcome", "answer_bytes", "compressed_bytes"]
    return list(dict.fromkeys([*base, *[d for d in dims if d]]))


def run_compression(args) -> int:
    from resolver.analysis.compression import compression_samples, compression_summary
    from resolver.plots import compression_figure

    split_by, facet_by, group_by = (common.parse_dimension(d) for d in (args.split_by, args.facet_by, args.group_by))
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        points = common.require_rows(db.points(filters, columns=_sample_columns(split_by, facet_by, group_by)),
                                     "points", args.filters)
        labels = common.eval_labels(db.evals())
    points = common.label_missing(points, [d for d in (split_by, facet_by, group_by) if d])
    samples = compression_samples(points, [split_by, facet_by, group_by, "eval_id"])
    if facet_by == "eval_id":
        samples["eval_id"] = [f"{labels.get(e, e)} ({e})" for e in samples["eval_id"]]
    if args.format != "png":
        summary = compression_summary(samples, [split_by, facet_by, group_by])
        text = common.to_json(summary.to_dict(orient="records")) if args.format == "json" \
            else common.frame_to_markdown(summary)
        common.write_output(f"compression.{'json' if args.format == 'json' else 'md'}", text,
                            args.output_dir)
        return 0
    for key, rows in _split_values(samples, [split_by] if split_by else []):
        title = f"Answer compression — {_split_title([split_by], key)}" if split_by else "Answer compression"
        fig = compression_figure(rows, facet_by, group_by, title, width=args.width)
        common.write_output(common.output_name("compression", *key, ext="png"), fig, args.output_dir)
    return 0


# ---------------------------------------------------------------------- hazard

def register_hazard(subparsers) -> None:
    p = subparsers.add_parser("hazard", help="survival analysis: when during generation answers end (correct vs incorrect)")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    p.add_argument("--split-by", action="append", metavar="DIM",
                   help="dimension for separate files (repeatable; default base_task and eval_id; 'none' for one file)")
    common.add_dimension_arg(p, "--group-by", None, "series within each file")
    p.add_argument("--bucket-size", type=common.positive_int, default=256,
                   help="token bucket size for the time grid (default 256)")
    common.add_format_arg(p, ("png", "markdown", "json"), "png")
    common.add_width_arg(p, 1200)
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_hazard)


def run_hazard(args) -> int:
    from resolver.analysis.hazard import hazard_by, median_end_tokens
    from resolver.plots import hazard_figure

    raw_splits = args.split_by or ["base_task", "eval_id"]
    split_by = [d for d in (common.parse_dimension(s) for s in raw_splits) if d]
    group_by = common.parse_dimension(args.group_by)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        columns = list(dict.fromkeys(["id", "eval_id", "completion_tokens", "outcome", *split_by,
                                      *([group_by] if group_by else [])]))
        points = common.require_rows(db.points(filters, columns=columns), "points", args.filters)
        labels = common.eval_labels(db.evals())
    points = common.label_missing(points, [*split_by, *([group_by] if group_by else [])])
    results = hazard_by(points, split_by, args.bucket_size, group_by)
    if args.format != "png":
        records = [{**dict(zip(split_by, key)), "series": name, "median_end_tokens": median_end_tokens(table),
                    "buckets": table.to_dict(orient="records")}
                   for key, series in results.items() for name, table in series.items()]
        if args.format == "json":
            text = common.to_json(records)
        else:
            text = "\n\n".join(f"### {_split_title(split_by, key)} — {name}\n\n" + common.frame_to_markdown(table)
                               for key, series in results.items() for name, table in series.items())
        common.write_output(f"hazard.{'json' if args.format == 'json' else 'md'}", text,
                            args.output_dir)
        return 0
    for key, series in results.items():
        shown = [f"{d}={labels.get(v, v) if d == 'eval_id' else v}" for d, v in zip(split_by, key)]
        title = "When answers end — " + (", ".join(shown) or "all points")
        names = labels if group_by == "eval_id" else {}
        fig = hazard_figure(series, title, args.bucket_size, width=args.width, names=names)
        common.write_output(common.output_name("hazard", *key, ext="png"), fig, args.output_dir)
    return 0


# -------------------------------------------------------------------- capacity

def register_capacity(subparsers) -> None:
    p = subparsers.add_parser("capacity", help="effective capacity: accuracy-vs-size frontier, or peak vs token budget")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--frontier", nargs="?", const="eval_id", metavar="GROUP_BY",
                       help="accuracy vs size with a logistic fit, one series per eval (and GROUP_BY value)")
    which.add_argument("--peak", nargs="?", const="eval_id", metavar="GROUP_BY",
                       help="effective capacity vs manifold.target_tokens, one series per eval (and GROUP_BY value)")
    common.add_dimension_arg(p, "--facet-by", None, "subplot columns")
    p.add_argument("--size-param", default="params.num_rows",
                   help="the numeric size dimension (default params.num_rows)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="--peak: accuracy a size must keep to count toward capacity (default 0.5)")
    common.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    common.add_width_arg(p, 1200)
    common.add_mode_arg(p)
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_capacity)


def run_capacity(args) -> int:
    from resolver.analysis import capacity
    from resolver.plots import frontier_figure, peak_figure

    if not 0 < args.threshold < 1:
        raise UserError(f"--threshold must be between 0 and 1, got {args.threshold}")
    group_by = common.parse_dimension(args.frontier or args.peak)
    facet_by = common.parse_dimension(args.facet_by)
    size_param = common.parse_dimension(args.size_param, allow_none=False)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        labels = common.eval_labels(db.evals())
        if args.frontier:
            table, summary = capacity.frontier(db, filters, size_param, group_by, facet_by, args.mode)
        else:
            table, summary = capacity.peak(db, filters, size_param, group_by, facet_by, args.mode, args.threshold)
    keys = list(dict.fromkeys(d for d in ("eval_id", facet_by, group_by) if d))
    kind = "frontier" if args.frontier else "peak"
    out_dir = args.output_dir
    if args.format == "png":
        fig = frontier_figure(table, summary, size_param, keys, facet_by, labels, args.mode, width=args.width) \
            if args.frontier else peak_figure(table, summary, keys, facet_by, labels, args.threshold, width=args.width)
        common.write_output(common.output_name("capacity", kind, ext="png"), fig, args.output_dir)
    elif args.format == "json":
        data = {"summary": summary.to_dict(orient="records"), "table": table.to_dict(orient="records")}
        common.write_output(common.output_name("capacity", kind, ext="json"), common.to_json(data), out_dir)
    else:
        summary.insert(1, "label", [labels.get(e, e) for e in summary["eval_id"]])
        text = f"## Capacity {kind} ({size_param})\n\n" + common.frame_to_markdown(summary)
        common.write_output(common.output_name("capacity", kind, ext="md"), text, out_dir)
    return 0
