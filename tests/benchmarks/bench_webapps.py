"""Benchmark: web-app start-up and server-side callback times on a 60-eval r12-sized PointsDB.

    .venv/bin/python tests/benchmarks/bench_webapps.py [--evals 60] [--points-per-task 90] [--repeats 5]

Builds the DB with tests/benchmarks/synth_db.py (60 evals x 12 tasks x 90 points, r12 is
~1,070 points per eval), then for each app times start-up (open the dataset read-only +
build the app with its precompute) and every kind of callback as the server runs it: the
callback's function plus JSON encoding of its outputs (what Dash sends back). Results the
apps cache are cleared before every repeat ("new" selections, every explorer figure), so
those figures are first-time interactions; paging / sorting / tiers / facets of the
leaderboard run on the selection its start-up precomputes, as in the app.
Prints medians; the LAST line is the RATIO slowest callback / the 500 ms budget (spec 07;
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


def bench_leaderboard(dataset_path, repeats):
    from resolver.web import leaderboard as lb
    from resolver.web.board import Board

    boards = []

    def build(ds, db):
        boards.append(Board(db))
        boards[-1].view((), ())          # build_app precomputes the default selection
        return boards[-1]

    start_s, board, _ = startup(build, dataset_path, repeats)   # paging / sorting / tiers / facets reuse its view
    groups = tuple(sorted(map(str, board.groups[:4])))
    # A new group selection re-ranks the start-up cells; a new manifold selection recomputes the cells too.
    new_groups = lambda: lb.table_update(board, "lb-groups", 0, "overall", "score", {}, [], list(groups))  # noqa: E731
    new_manifolds = lambda: lb.table_update(board, "lb-manifold", 0, "overall", "score", {},  # noqa: E731
                                            board.manifolds[:3] or [], [])
    cases = {
        "first page": lambda: lb.table_update(board, None, 0, "overall", "score", {}, [], []),
        "next page": lambda: lb.table_update(board, "lb-next", 0, "overall", "score", {}, [], []),
        "sort score/token": lambda: lb.table_update(board, "lb-sort", 0, "overall", "ratio", {}, [], []),
        "tier hard": lambda: lb.table_update(board, "lb-tier", 0, "hard", "score", {}, [], []),
        "facet arch:moe": lambda: lb.table_update(board, "x", 0, "overall", "score", {"arch": ["moe"]}, [], []),
    }
    results = {name: timed(f, repeats) for name, f in cases.items()}
    results["4 of 12 groups (new)"] = timed(new_groups, repeats, [board.view.cache_clear])
    results["3 manifolds (new)"] = timed(new_manifolds, repeats, [board.view.cache_clear, board.cells.cache_clear,
                                                                  lambda: board.view((), ())])
    return start_s, results


def bench_spiderweb(dataset_path, repeats):
    from resolver.web import spiderweb as sw

    start_s, profiles, _ = startup(lambda ds, db: sw.Profiles(db), dataset_path, repeats)
    last = profiles.eval_ids[-1]
    cases = {
        "radar, all overlays": lambda: sw.profile_update(profiles, last, "radar", list(sw.OVERLAYS)),
        "bars, all overlays": lambda: sw.profile_update(profiles, last, "bar", list(sw.OVERLAYS)),
        "radar, no overlays": lambda: sw.profile_update(profiles, profiles.eval_ids[0], "radar", []),
    }
    return start_s, {name: timed(f, repeats) for name, f in cases.items()}


def bench_explorer(dataset_path, repeats):
    from resolver.web import explorer as ex
    from resolver.web.landscape import Landscape

    start_s, land, _ = startup(lambda ds, db: Landscape(ds, db), dataset_path, repeats)
    clear = [land.view_surface.cache_clear, land.view_projection.cache_clear, land.token_histogram.cache_clear]
    two_d = next(v for v in land.views if len(v.dims) == 2)
    one_d = next(v for v in land.views if len(v.dims) == 1)
    evals2, evals4 = land.eval_ids[:2], land.eval_ids[:4]
    table = land.surface(two_d.ident, evals2[0])
    x, y = two_d.dims
    coords = {x: table[x].iloc[len(table) // 2], y: table[y].iloc[len(table) // 2]}
    cases = {
        "task -> views": lambda: ex.view_options(land, land.tasks[-1]),
        "2-D view, 2 evals": lambda: (ex.draw_update(land, two_d.ident, evals2),
                                      ex.projection_figure(land, two_d.ident, tuple(evals2))),
        "2-D view, 4 evals": lambda: (ex.draw_update(land, two_d.ident, evals4),
                                      ex.projection_figure(land, two_d.ident, tuple(evals4))),
        "1-D view, 4 evals": lambda: (ex.draw_update(land, one_d.ident, evals4),
                                      ex.projection_figure(land, one_d.ident, tuple(evals4))),
        "click a point": lambda: (ex.point_details(land, two_d.ident, evals2[0], coords),
                                  ex.projection_figure(land, two_d.ident, tuple(evals2), coords)),
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
