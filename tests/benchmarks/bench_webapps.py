"""Benchmark: web-app start-up and server-side callback times on a 60-eval r12-sized PointsDB.

    .venv/bin/python tests/benchmarks/bench_webapps.py [--evals 60] [--points-per-task 90] [--repeats 5]

Builds the DB with tests/benchmarks/synth_db.py (60 evals x 12 tasks x 90 points, r12 is
~1,070 points per eval), then for each app times start-up (open the dataset read-only +
build the app with its precompute) and every kind of callback as the server runs it: the
callback's function plus JSON encoding of its outputs (what Dash sends back). Results the
apps cache are cleared before every repeat ("new" selections, every explorer figure), so
those figures are first-time interactions; paging / sorting / tiers / facets of the
leaderboard run on the selection its start-up precomputes, as in the app.
Prints medians; the LAST line is the RATIO slowest callback / the 500 ms budget (docs/performance.md;
below 1 passes). Result JSON: tests/benchmarks/out/webapps.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from benchlib import add_synth_db_args, build_synth_dataset, write_result  # noqa: E402

BUDGET_SECONDS = 0.5


def encode(outputs) -> int:
    """Serialise callback outputs the way Dash does; returns the payload size in bytes."""
    import plotly.utils

    return len(json.dumps(outputs, cls=plotly.utils.PlotlyJSONEncoder))


def timed(function, repeats: int, clear=()):
    """Median seconds of function() + encoding, clearing the given caches before each run."""
    times, size = [], 0
    for _ in range(repeats):
        for cache in clear:
            cache()
        start = time.perf_counter()
        size = encode(function())
        times.append(time.perf_counter() - start)
    return statistics.median(times), size


def startup(build, dataset_path, repeats: int):
    from resolver.web.data import open_app_dataset

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        ds, db = open_app_dataset(dataset_path)
        build(ds, db)  # timed: the app with its start-up precompute
        times.append(time.perf_counter() - start)
        db.close()
    ds, db = open_app_dataset(dataset_path)
    return statistics.median(times), build(ds, db), db


def _lb_state(board, **changes):
    from resolver.web.leaderboard import state_from_url

    state = state_from_url(board, "", list(board.evals["facets"].iloc[0] or {}))
    state.update(changes)
    return state


def bench_leaderboard(dataset_path, repeats):
    from resolver.analysis.leaderboard_scores import Board
    from resolver.web import leaderboard as lb

    boards = []

    def build(ds, db):
        boards.append(Board(db))
        boards[-1].view((), ())          # build_app precomputes the default selection
        return boards[-1]

    start_s, board, _ = startup(build, dataset_path, repeats)   # paging / sorting / tiers / facets reuse its view
    groups = sorted(map(str, board.groups[:4]))
    update = lambda **changes: lb.table_update(board, _lb_state(board, **changes), {})
    cases = {
        "first page": lambda: update(),
        "next page": lambda: update(page=1),
        "sort score/token": lambda: update(sort="ratio"),
        "sort by a task column": lambda: update(sort_by=[{"column_id": str(board.groups[0]), "direction": "desc"}]),
        "search 'e1'": lambda: update(q="e1"),
        "tier hard": lambda: update(tier="hard"),
        "facet arch:moe": lambda: update(facets={"arch": ["moe"]}),
    }
    results = {name: timed(f, repeats) for name, f in cases.items()}
    # A new group selection re-ranks the start-up cells; a new manifold selection or mode recomputes the cells.
    results["4 of 12 groups (new)"] = timed(lambda: update(groups=groups), repeats, [board.view.cache_clear])
    results["mode C_P (new)"] = timed(lambda: update(mode="C_P"), repeats, [board.mode_cells.cache_clear])
    results["3 manifolds (new)"] = timed(lambda: update(manifolds=board.manifolds[:3]), repeats,
                                         [board.view.cache_clear, board.cells.cache_clear, lambda: board.view((), ())])
    results.update(bench_difference_view(dataset_path, board, repeats))
    return start_s, results


def bench_difference_view(dataset_path, board, repeats):
    """The difference view of the two best evals (resolver.web.lbdiff): a pair seen for the first time
    (analyze.py compare's computation), the same pair again (cached), and a new cells mode."""
    from resolver.analysis import eval_labels
    from resolver.web import leaderboard as lb
    from resolver.web.data import open_app_dataset
    from resolver.web.lbdiff import Differences

    ds, db = open_app_dataset(dataset_path)
    differ = Differences(ds, db, board.group_by, board.groups, eval_labels(board.evals))
    differ.warm()                   # as build_app does at start-up
    ranked = [r["eval_id"] for r in board.view().results]
    pair = f"?a={ranked[1]}&b={ranked[0]}"
    show = lambda search: lb.diff_update(board, differ, search, {})     # noqa: E731
    return {
        "diff: new pair": timed(lambda: show(pair), repeats, [differ.result.cache_clear]),
        "diff: same pair again": timed(lambda: show(pair), repeats),
        "diff: mode C_P (new)": timed(lambda: show(pair + "&mode=C_P"), repeats, [differ.result.cache_clear]),
    }


def bench_spiderweb(dataset_path, repeats):
    from resolver.web import spiderweb as sw

    start_s, profiles, _ = startup(lambda ds, db: sw.Profiles(db), dataset_path, repeats)
    top, last = profiles.eval_ids[:3], profiles.eval_ids[-1]
    cases = {
        "radar, 3 evals, all overlays": lambda: sw.profile_update(profiles, top, "radar", list(sw.OVERLAYS)),
        "bars, 1 eval, all overlays": lambda: sw.profile_update(profiles, [last], "bar", list(sw.OVERLAYS)),
        "radar, no overlays": lambda: sw.profile_update(profiles, [profiles.eval_ids[0]], "radar", []),
    }
    results = {name: timed(f, repeats) for name, f in cases.items()}
    clear = [profiles.table_for.cache_clear, profiles.tiers_for.cache_clear, profiles.archetypes_for.cache_clear]
    results["mode E_I (new)"] = timed(lambda: sw.profile_update(profiles, top, "radar", list(sw.OVERLAYS), "E_I"),
                                      repeats, clear)
    return start_s, results


def bench_explorer(dataset_path, repeats):
    from resolver.web import explorer as ex, explorer_figures as figs
    from resolver.web.explorer_data import Landscape

    start_s, land, _ = startup(lambda ds, db: Landscape(ds, db), dataset_path, repeats)
    clear = [land.view_surface.cache_clear, land.view_projection.cache_clear, land.token_histogram.cache_clear,
             land.categories.cache_clear, land.samples.cache_clear]
    two_d = next(v for v in land.views if len(v.dims) == 2)
    one_d = next(v for v in land.views if len(v.dims) == 1)
    evals2, evals4 = land.eval_ids[:2], land.eval_ids[:4]
    manifold = land.default_manifold(two_d.ident)
    table = land.surface(two_d.ident, evals2[0], manifold)
    x, y = two_d.dims
    coords = {x: table[x].iloc[len(table) // 2], y: table[y].iloc[len(table) // 2]}

    def view(ident, evals, point=None):
        state = ex.state_update(land, "ex-view", [], "", land.view(ident).base_task, ident, manifold, "C_P",
                                list(evals), None)
        return (state, ex.draw_update(land, ident, evals, manifold, "C_P"),
                figs.projection_figure(land, ident, tuple(evals), point, manifold, "C_P"))

    cases = {
        "task -> views": lambda: ex.state_update(land, "ex-task", [], "", land.tasks[-1], None, None, "C_P",
                                                 evals2, None),
        "2-D view, 2 evals": lambda: view(two_d.ident, evals2),
        "2-D view, 4 evals": lambda: view(two_d.ident, evals4),
        "1-D view, 4 evals": lambda: view(one_d.ident, evals4),
        "click a point": lambda: (ex.point_details(land, two_d.ident, evals2[0], coords, manifold, "C_P"),
                                  figs.projection_figure(land, two_d.ident, tuple(evals2), coords, manifold, "C_P")),
    }
    return start_s, {name: timed(f, repeats, clear) for name, f in cases.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_synth_db_args(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        dataset = build_synth_dataset(tmp, args)
        results = {}
        for name, bench in (("leaderboard", bench_leaderboard), ("spiderweb", bench_spiderweb),
                            ("explorer", bench_explorer)):
            start_s, callbacks = bench(dataset, args.repeats)
            results[name] = {"startup_s": start_s, "callbacks_s": {k: v[0] for k, v in callbacks.items()},
                             "payload_bytes": {k: v[1] for k, v in callbacks.items()}}
            print(f"{name}: start-up {start_s * 1000:.0f} ms (open + precompute)")
            for case, (seconds, size) in callbacks.items():
                print(f"  {case:<22} {seconds * 1000:7.1f} ms  ({size / 1024:.0f} KiB)")
    slowest_name, slowest = max(((f"{app}: {case}", s) for app, r in results.items()
                                 for case, s in r["callbacks_s"].items()), key=lambda item: item[1])
    ratio = slowest / BUDGET_SECONDS
    write_result("webapps", {
        "evals": args.evals, "points_per_eval": args.points_per_task * 12, "samples": args.samples,
        "apps": results, "slowest": slowest_name, "slowest_s": slowest, "budget_s": BUDGET_SECONDS,
        "ratio": ratio})
    print(f"slowest callback: {slowest_name} {slowest * 1000:.1f} ms; budget {BUDGET_SECONDS * 1000:.0f} ms")
    print(f"RATIO slowest callback / budget = {ratio:.3f}")


if __name__ == "__main__":
    main()
