"""analyze.py discovery and position subcommands: evals, tasks, tokens, points,
modelinfo, scores, cluster, rank, pairwise, aggregate.

Each subcommand is `register_<name>(subparsers)` (flags and defaults of README.md)
plus a handler that opens the dataset, calls a pure computation in
resolver/analysis/, renders it and writes it out. Nothing here computes.
"""
from __future__ import annotations

import sys

from resolver.analysis import common
from resolver.core import UserError
from resolver.pointsdb import COUNTER_COLUMNS


def register(subparsers) -> None:
    for add in (register_evals, register_tasks, register_tokens, register_points, register_modelinfo,
                register_scores, register_cluster, register_rank, register_pairwise, register_aggregate):
        add(subparsers)


# ------------------------------------------------------------------- discovery

def register_evals(subparsers) -> None:
    p = subparsers.add_parser("evals", help="list the evaluations of a dataset (run this first for eval_ids)",
                              description="List evals: eval_id, label, model, template, sampler, groups, hf_id, point counts.")
    common.add_dataset_arg(p)
    p.add_argument("--search", help="regex on model name or label (case-insensitive)")
    p.add_argument("--facets", help="comma-separated key:value group tags, all required (e.g. size:small,arch:moe)")
    p.add_argument("--groups", help="same as --facets (older spelling)")
    common.add_format_arg(p, ("table", "markdown", "json"), "table")
    p.set_defaults(handler=run_evals)


def run_evals(args) -> int:
    from resolver.analysis import inventory
    from resolver.analysis.inventory import list_evals, parse_tag_list

    tags = parse_tag_list(args.facets) + parse_tag_list(args.groups)
    dataset, db = common.open_dataset(args.dataset)
    with db:
        counts = db.aggregate(None, by=("eval_id",))
        counts["samples"] = counts[list(COUNTER_COLUMNS)].sum(axis=1)
        rows = list_evals(db.evals(), counts, dataset.evals, args.search, tags)
    if not rows:   # a search that finds nothing is an answer, not a mistake: empty table, exit 0
        sys.stderr.write("analyze.py: no evals match --search/--facets; run `analyze.py evals "
                         f"{args.dataset}` without them to see all\n")
    common.write_output("evals", inventory.evals_text(rows, args.format), None)
    return 0


def register_tasks(subparsers) -> None:
    p = subparsers.add_parser("tasks", help="list base tasks with their views and point counts")
    common.add_dataset_arg(p)
    p.add_argument("--search", help="regex on task name (case-insensitive)")
    common.add_format_arg(p, ("markdown", "json"), "markdown")
    p.set_defaults(handler=run_tasks)


def run_tasks(args) -> int:
    from resolver.analysis import inventory
    from resolver.analysis.inventory import list_tasks

    dataset, db = common.open_dataset(args.dataset)
    with db:
        counts = db.query("SELECT base_task, count(*) AS points, count(DISTINCT eval_id) AS evals "
                          "FROM points GROUP BY base_task ORDER BY base_task")
    rows = list_tasks(counts, load_config_or_none(dataset), args.search)
    if not rows:
        raise UserError(f"no tasks match --search {args.search!r}" if args.search else "the dataset has no tasks")
    text = common.to_json(rows) if args.format == "json" else inventory.tasks_markdown(rows)
    common.write_output("tasks", text, None)
    return 0


def load_config_or_none(dataset):
    """The dataset's experiment config (for views), or None when it names none."""
    if not getattr(dataset, "config_path", None):
        return None
    from resolver.config import load_config

    return load_config(dataset.config_path)


def register_tokens(subparsers) -> None:
    p = subparsers.add_parser("tokens", help="token utilisation per (eval, group)")
    common.add_dataset_arg(p)
    common.add_dimension_arg(p, "--group-by", "base_task", "grouping dimension")
    common.add_filters_arg(p)
    common.add_format_arg(p, ("markdown", "json"), "markdown")
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_tokens)


def run_tokens(args) -> int:
    from resolver.analysis.token_usage import compute_tokens

    group = common.parse_dimension(args.group_by)
    agg, labels = _aggregate(args, common.unique_dims("eval_id", group))
    table = compute_tokens(agg, common.unique_dims("eval_id", group))
    table.insert(1, "label", [labels.get(e, e) for e in table["eval_id"]])
    text = common.to_json(table.to_dict("records")) if args.format == "json" else \
        f"# Token utilisation by {group or 'eval'}\n\n" + common.frame_to_markdown(table, floats=1)
    ext = "json" if args.format == "json" else "md"
    common.write_output(common.output_name("tokens", "by", group or "eval", ext=ext), text, args.output_dir)
    return 0


def register_points(subparsers) -> None:
    p = subparsers.add_parser("points", help="per-point listing with point ids for probe.py")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    common.add_dimension_arg(p, "--split-by", "base_task", "dimension for separate output files")
    p.add_argument("--sort", action="append", default=[], metavar="PARAM",
                   help="sort by a param (name without p. prefix); repeatable, first is primary")
    common.add_format_arg(p, ("md", "json"), "md")
    common.add_output_dir_arg(p, default=".")
    p.set_defaults(handler=run_points)


def run_points(args) -> int:
    from resolver.analysis import points
    from resolver.analysis.points import POINT_FIELDS, compute_points

    split = common.parse_dimension(args.split_by)
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        columns = POINT_FIELDS + ([split] if split and split not in POINT_FIELDS else [])
        frame = db.points(filters, columns=columns)
        frame = common.select_or_explain(frame, db, filters, args.filters, args.dataset)
    for value, table in compute_points(frame, split, args.sort):
        ext = "json" if args.format == "json" else "md"
        name = common.output_name("points", f"{split}-{value}" if split else None, ext=ext)
        text = common.to_json(table.to_dict("records")) if ext == "json" else points.points_markdown(table, split, value)
        common.write_output(name, text, args.output_dir)
    return 0


def register_modelinfo(subparsers) -> None:
    p = subparsers.add_parser("modelinfo", help="download model cards/configs from the HF hub and write MODELINFO.md")
    common.add_dataset_arg(p, required=False)
    common.add_filters_arg(p)
    p.add_argument("--eval-id", action="append", default=[], metavar="EVAL_ID",
                   help="only this eval (seed 002); repeatable; same as --filters '{\"eval_id\": [...]}'")
    p.add_argument("--hf-id", action="append", default=[], help="a Hugging Face model id (skips the dataset); repeatable")
    common.add_output_dir_arg(p, required=True)
    p.set_defaults(handler=run_modelinfo)


def run_modelinfo(args) -> int:
    from tqdm import tqdm

    from resolver.analysis.modelinfo import collect_modelinfo, modelinfo_markdown

    hf_ids, without = (list(dict.fromkeys(args.hf_id)), []) if args.hf_id else _dataset_hf_ids(args)
    with tqdm(total=len(hf_ids), desc="modelinfo", unit="model", disable=not hf_ids) as bar:
        models, skipped = collect_modelinfo(hf_ids, args.output_dir, bar)
    for hf_id, reason in skipped:
        sys.stderr.write(f"skipped {hf_id}: {reason}\n")
    common.write_output("MODELINFO.md", modelinfo_markdown(models, skipped, without), args.output_dir)
    return 0 if models or not hf_ids else 1


def _dataset_hf_ids(args) -> tuple:
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


def _with_eval_ids(filters_text, eval_ids) -> dict | str | None:
    """--filters plus --eval-id (the ids are added to the filter's eval_id list)."""
    if not eval_ids:
        return filters_text
    filters = dict(common.load_filters(filters_text).items)
    filters["eval_id"] = list(dict.fromkeys([*filters.get("eval_id", []), *eval_ids]))
    return filters


# --------------------------------------------------------------------- position

def register_scores(subparsers) -> None:
    p = subparsers.add_parser("scores", help="ReasonScore ranking (markdown table, JSON or PNG heat bars)")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    common.add_dimension_arg(p, "--group-by", "base_task", "aggregation dimension for the ReasonScore cells",
                             allow_none=False)
    p.add_argument("--sort", choices=["score", "ratio"], default="score", help="score (ReasonScore) or ratio (score/token)")
    p.add_argument("--top", type=common.positive_int, help="limit to the top N by rank")
    common.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    common.add_width_arg(p, 1400)
    common.add_output_dir_arg(p)
    p.add_argument("--output", help="output file path (instead of --output-dir)")
    p.add_argument("--show-token-counts", action="store_true", help="add a table of mean completion tokens per cell")
    p.set_defaults(handler=run_scores)


def run_scores(args) -> int:
    from resolver.analysis.scores import compute_scores, scores_markdown

    group = common.parse_dimension(args.group_by, allow_none=False)
    filters = common.load_filters(args.filters)
    dataset, db = common.open_dataset(args.dataset)
    with db:
        results = compute_scores(db, filters, group, args.sort, args.top)
        if not results:
            common.select_or_explain(None, db, filters, args.filters, args.dataset)
    title = f"ReasonScore — {dataset.name}" + ("" if group == "base_task" else f" by {group}")
    if args.format == "png":
        from resolver.plots import scores_figure

        content = scores_figure(results, args.width, title)
    elif args.format == "json":
        content = common.to_json(results)
    else:
        content = scores_markdown(results, title, args.show_token_counts)
    ext = {"markdown": "md", "json": "json", "png": "png"}[args.format]
    name = common.output_name("scores", None if group == "base_task" else f"by_{group}", ext=ext)
    _write(name, content, args)
    return 0


def _write(name, content, args):
    """--output FILE wins over --output-dir; otherwise write_output's rules."""
    if getattr(args, "output", None):
        return common.write_file(args.output, content)
    return common.write_output(name, content, args.output_dir)


def _aggregate(args, dims):
    """Aggregated counters per dims for args.filters -> (agg, {eval_id: label})."""
    filters = common.load_filters(args.filters)
    _, db = common.open_dataset(args.dataset)
    with db:
        agg = common.select_or_explain(db.aggregate(filters, by=dims), db, filters, args.filters, args.dataset)
        labels = common.eval_labels(db.evals())
    return common.label_missing(agg, dims), labels


def _add_series_facet_split(p, group_default, facet_default, split_default=None, split=True):
    common.add_filters_arg(p)
    common.add_dimension_arg(p, "--group-by", group_default, "series dimension: the things compared", allow_none=False)
    common.add_dimension_arg(p, "--facet-by", facet_default, "facet dimension: sections within each output")
    if split:
        common.add_dimension_arg(p, "--split-by", split_default, "split dimension: one output file per value")
    common.add_mode_arg(p)


def register_cluster(subparsers) -> None:
    p = subparsers.add_parser("cluster", help="clusters of statistically indistinguishable models (CI overlap cliques)")
    common.add_dataset_arg(p)
    _add_series_facet_split(p, "eval_id", "base_task")
    common.add_format_arg(p, ("markdown", "json", "png"), "markdown")
    common.add_width_arg(p, 1200)
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_cluster)


def run_cluster(args) -> int:
    from resolver.analysis import cluster
    from resolver.analysis.cluster import compute_clusters

    series, facet, split = _dims(args)
    agg, labels = _aggregate(args, common.unique_dims(split, facet, series))
    for value, part in common.split_frames(agg, split):
        sections = compute_clusters(part, series, facet, args.mode)
        title = cluster.cluster_title(series, facet, split, value, args.mode)
        name_parts = ("cluster", series, "by", facet or "all", f"{split}-{value}" if split else None)
        if args.format == "png":
            from resolver.plots import cluster_figure

            content = cluster_figure(sections, cluster.namer(series, labels), title, args.width, facet)
        elif args.format == "json":
            content = common.to_json(cluster.cluster_json(sections, series, facet, split, value, args.mode, labels))
        else:
            content = cluster.cluster_markdown(sections, series, facet, title, labels)
        ext = {"markdown": "md", "json": "json", "png": "png"}[args.format]
        common.write_output(common.output_name(*name_parts, ext=ext), content, _split_dir(args, split))
    return 0


def _dims(args):
    series = common.parse_dimension(args.group_by, allow_none=False)
    facet = common.parse_dimension(args.facet_by)
    split = common.parse_dimension(getattr(args, "split_by", None))
    if series in (facet, split):
        # Legal (README.md itself splits cluster output by eval_id) but each section then
        # holds a single series; say so rather than leave the user puzzled.
        sys.stderr.write(f"note: --group-by {series} is also a facet/split dimension; each section holds one {series}\n")
    return series, facet, split


def _split_dir(args, split):
    """Several split files never go to stdout: they land in --output-dir or '.'."""
    return args.output_dir if args.output_dir or not split else "."


def register_rank(subparsers) -> None:
    p = subparsers.add_parser("rank", help="rank aggregation across facets from per-facet cluster positions")
    common.add_dataset_arg(p)
    _add_series_facet_split(p, "eval_id", "base_task", split=False)
    common.add_format_arg(p, ("markdown", "json"), "markdown")
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_rank)


def run_rank(args) -> int:
    from resolver.analysis import rank
    from resolver.analysis.rank import compute_rank

    series, facet, _ = _dims(args)
    agg, labels = _aggregate(args, common.unique_dims(facet, series))
    result = compute_rank(agg, series, facet, args.mode)
    if args.format == "json":
        content = common.to_json(rank.rank_json(result, series, facet, args.mode, labels))
    else:
        content = rank.rank_markdown(result, series, facet, args.mode, labels)
    ext = "json" if args.format == "json" else "md"
    common.write_output(common.output_name("rank", series, "by", facet or "all", ext=ext), content, args.output_dir)
    return 0


def register_pairwise(subparsers) -> None:
    p = subparsers.add_parser("pairwise", help="head-to-head win probabilities and Bradley-Terry strengths")
    common.add_dataset_arg(p)
    common.add_filters_arg(p)
    common.add_dimension_arg(p, "--group-by", "base_task", "comparison dimension (one contest per value)")
    common.add_mode_arg(p, ("C_P", "C_I"), "C_P")
    p.add_argument("--sort", choices=["expected-wins", "bradley-terry"], default="expected-wins")
    common.add_format_arg(p, ("markdown", "png"), "markdown")
    common.add_width_arg(p, 1200)
    p.add_argument("--output", help="output file path (default: stdout for markdown, ./pairwise.png for png)")
    p.set_defaults(handler=run_pairwise, output_dir=None)


def run_pairwise(args) -> int:
    from resolver.analysis import pairwise
    from resolver.analysis.pairwise import compute_pairwise

    group = common.parse_dimension(args.group_by)
    agg, labels = _aggregate(args, common.unique_dims(group, "eval_id"))
    result = compute_pairwise(agg, "eval_id", group, args.mode, args.sort)
    if len(result["names"]) < 2:
        raise UserError("pairwise needs at least two evals in the selection")
    if args.format == "png":
        from resolver.analysis.skill import marked
        from resolver.plots import pairwise_figure

        shown = [marked(labels.get(n, n), k) for n, k in zip(result["names"], result["skill_evidence"])]
        content = pairwise_figure(result, shown, args.width, group)
        _write("pairwise.png", content, args)   # the default its --help names: ./pairwise.png
    else:
        _write("pairwise.md", pairwise.pairwise_markdown(result, labels, group), args)
    return 0


def register_aggregate(subparsers) -> None:
    p = subparsers.add_parser("aggregate", help="raw aggregated statistics (debugging, custom analysis)")
    common.add_dataset_arg(p)
    _add_series_facet_split(p, "eval_id", "base_task")
    p.add_argument("--compare-modes", action="store_true", help="show all six estimators side by side")
    p.add_argument("--raw-counters", action="store_true", help="add n_u, n_t, n_e and g columns")
    p.add_argument("--tokens", action="store_true", help="add token average columns")
    common.add_format_arg(p, ("markdown", "json"), "markdown")
    common.add_output_dir_arg(p)
    p.set_defaults(handler=run_aggregate)


def run_aggregate(args) -> int:
    from resolver.analysis.aggregate import compute_aggregate

    series, facet, split = _dims(args)
    dims = common.unique_dims(split, facet, series)
    agg, labels = _aggregate(args, dims)
    table = compute_aggregate(agg, dims, args.mode, args.compare_modes, args.raw_counters, args.tokens)
    if series == "eval_id":
        table.insert(dims.index(series) + 1, "label", [labels.get(e, e) for e in table["eval_id"]])
    for value, part in common.split_frames(table, split):
        title = f"Aggregate of {series}" + (f" by {facet}" if facet else "") + (f" — {split} = {value}" if split else "") \
            + f" (mode {args.mode})"
        if args.format == "json":
            content = common.to_json(part.to_dict("records"))
        else:
            content = common.sectioned_markdown(part.drop(columns=[split] if split else []), facet, title)
        ext = "json" if args.format == "json" else "md"
        name = common.output_name("aggregate", series, "by", facet or "all", f"{split}-{value}" if split else None, ext=ext)
        common.write_output(name, content, _split_dir(args, split))
    return 0
