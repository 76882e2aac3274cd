"""Benchmark: the cost curve of a study from 1 to 50 evals (docs/performance.md, *Scale*).

    .venv/bin/python tests/benchmarks/bench_scale.py [--sizes 1,10,50] [--parallel 2] [--no-browser]
        [--distinct D] [--pages-only]

Builds (once, then reuses) a simulated r12 tree of max(sizes) + 1 distinct evals with
tests/benchmarks/scale_tree.py (runner.py's own batch cycle answered by the simulator;
configs/r12.yaml at --density lowdef, zerocot-nosys, greedy-2k; about 35 CPU seconds
an eval); ``--distinct D`` builds only D of them and fills the rest with copies that
differ in the model name alone (docs/performance.md, *Scale*, says when that was used).
Then for each size N
(the first N evals, a dataset and PointsDB of their own) measures:

* records and bytes of NDJSON;
* ``evaluate.py --dataset --parallel P`` as a subprocess from an empty PointsDB and
  cache: wall, CPU (getrusage of the children) and the peak RSS of its process tree
  (polled every 50 ms, as bench_evaluate.py does); then, after everything below, the
  incremental build after adding eval N+1 to the dataset;
* the PointsDB's size;
* ``analyze.py scores``, ``cluster`` and ``compare`` (the first two evals) wall time,
  real subprocesses with their default markdown output;
* in headless Chromium (tests/support/browser.py): the leaderboard's first page and
  the explorer's first surface (and again in the same browser: a returning visitor), from
  navigation start to the first frame showing them
  with no callback pending that the next frame follows within 50 ms (timed in the page;
  bench_webapps_browser.py's rule), and one leaderboard filter change (tier "hard",
  bench_webapps_browser.py's probe: from the mouse release to the new table); then the floor
  under the explorer's figure: the same figures drawn by plotly.js alone in a bare page, in a
  fresh browser and again in it (plotly_floor.py);
* the study's disk footprint: run folders, PointsDB and evaluate's cache.

Each timed figure is stored with the 1-minute load average when it started. Prints the
table with the growth exponent of each figure (least squares on log-log) and the
limits at the largest size (evaluate < 30 min, analyze < 30 s, pages < 2 s); writes
tests/benchmarks/out/scale.json and the plot docs/scale.png. A run of some sizes keeps
the rows of the other sizes from the previous scale.json (``--sizes 50`` after
``--sizes 1,10``), so the table and the fit cover every size measured.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import bench_evaluate
import plotly_floor
import r12_tree
import scale_tree
import scalefit
from benchlib import OUT, write_result

REPO = Path(__file__).resolve().parents[2]


def _load() -> float:
    return round(os.getloadavg()[0], 1)


def _mb(paths) -> float:
    return sum(os.path.getsize(p) for p in paths if os.path.exists(p)) / 1e6


def _tree_mb(folder: Path) -> float:
    return _mb([p for p in folder.rglob("*") if p.is_file()]) if folder.exists() else 0.0


def write_sized_dataset(root: Path, names: list, size: int) -> Path:
    """data/scale<size>.json over `names`, with the PointsDB and cache of size `size` (so a
    dataset grown by one eval is an incremental build of the same database)."""
    path = r12_tree.write_dataset(root, names, f"scale{size}")
    spec = json.loads(path.read_text())
    spec.update(db=f"pointsdb-scale{size}.db", cache=f".cache-scale{size}")
    path.write_text(json.dumps(spec))
    return path


def _fresh(dataset: Path) -> None:
    spec = json.loads(dataset.read_text())
    db = dataset.parent / spec["db"]
    for path in (db, db.with_name(db.name + ".wal")):
        path.unlink(missing_ok=True)
    shutil.rmtree(dataset.parent / spec["cache"], ignore_errors=True)


def _analyze(args: list) -> tuple:
    """(wall, CPU) seconds of one analyze.py subprocess."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cpu, start = bench_evaluate._cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run([sys.executable, str(REPO / "analyze.py"), *map(str, args)], capture_output=True,
                          text=True, env=env)
    elapsed, cpu = time.perf_counter() - start, bench_evaluate._cpu(resource.RUSAGE_CHILDREN) - cpu
    if proc.returncode != 0:
        raise SystemExit(f"analyze.py {args[0]} failed:\n{proc.stderr}")
    return elapsed, cpu


def _records(files: list) -> int:
    count = 0
    for path in files:
        with open(path, "rb") as f:
            count += sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return count


# Page loads, timed in the page: the first frame after navigation start showing the result with no
# callback pending that the next frame follows within 50 ms (bench_webapps_browser.py's rule: a 3-D
# scene is drawn, in software, in the frames after the one that mounts it).
LOAD_PROBE = """
const p = window.__rsLoad = {readyAt: null, done: null};
const check = new Function(arguments[0]);
const loop = () => {
  const now = performance.now();
  const busy = document.querySelector('[data-dash-is-loading="true"], .rs-pending, .rs-pending-panel') !== null;
  let ready = false;
  try { ready = check(); } catch (e) { ready = false; }
  if (ready && !busy && p.readyAt !== null && now - p.readyAt < 50) { p.done = p.readyAt; return; }
  p.readyAt = ready && !busy ? now : null;
  requestAnimationFrame(loop);
};
requestAnimationFrame(loop);
"""
LEADERBOARD_READY = "return document.querySelector(\"#lb-table .ag-cell[col-id='_model']\") !== null;"
EXPLORER_READY = ("const g = Array.from(document.querySelectorAll('#ex-main .js-plotly-plot')); "
                  "return g.length > 0 && g.every(x => x._fullData && x._fullData.length);")


def page_load(browser, url: str, ready_js: str, timeout: float = 180) -> float:
    """Seconds from navigation start to the page's first steady ready frame (performance.now())."""
    browser.driver.get(url)          # returns at the load event, before Dash's first callbacks answer
    browser.driver.execute_script(LOAD_PROBE, ready_js)
    done = browser.wait_until(lambda d: d.execute_script("return window.__rsLoad.done;"), timeout=timeout,
                              message="the page's first result")
    return done / 1000


def browse(dataset: Path) -> dict:
    """The leaderboard's first page and a filter change, the explorer's first surface (seconds)."""
    from bench_webapps_browser import _radio, arm, measure

    from resolver.web import explorer as ex, leaderboard as lb
    from resolver.web.data import open_app_dataset
    from tests.support.browser import Browser, DashServer

    out: dict = {"load": {}}
    figures: list = []
    for name, build in (("leaderboard", lb.build_app), ("explorer", ex.build_app)):
        ds, db = open_app_dataset(dataset)
        browser = Browser(1400, 1000)
        try:
            started = time.perf_counter()
            app = build(ds, db)
            out[f"{name}_app_build_s"] = time.perf_counter() - started
            with DashServer(app) as server:
                out["load"][name] = _load()
                if name == "leaderboard":
                    out["leaderboard_load_s"] = page_load(browser, server.url("/"), LEADERBOARD_READY)
                    browser.wait_idle(timeout=120)
                    arm(browser, "return location.search.indexOf('tier=hard') >= 0 && "
                                 "document.querySelector('#lb-tier-note').textContent.startsWith('Tier hard');")
                    browser.mouse_click(_radio(browser, "#lb-tier", "hard"))
                    out["leaderboard_filter_s"] = measure(browser, timeout=120)["done"]
                else:
                    out["explorer_surface_s"] = page_load(browser, server.url("/"), EXPLORER_READY)
                    # a returning visitor: plotly.js and the page's scripts come from the browser's caches
                    out["explorer_revisit_s"] = page_load(browser, server.url("/"), EXPLORER_READY)
                    figures = browser.driver.execute_script(plotly_floor.CAPTURE)
        finally:
            browser.close()
            db.close()
    # the same figures drawn by plotly.js alone, in a fresh browser: the floor under the explorer's figures
    out.update(plotly_floor.measure_floor(figures, ex.SURFACE_CONFIG, page_load, EXPLORER_READY))
    return out


def measure_size(root: Path, names: list, extra: str, parallel: int, browser: bool) -> dict:
    size = len(names)
    dataset = write_sized_dataset(root, names, size)
    files = r12_tree.ndjson_files(root, names)
    row: dict = {"evals": size, "copied_evals": len(scale_tree.copies(root, names)), "files": len(files), "ndjson_mb": _mb(files), "records": _records(files), "load": {}}
    _fresh(dataset)
    row["load"]["evaluate"] = _load()
    first = bench_evaluate.run_evaluate(dataset, parallel, watch_memory=True)
    row.update(evaluate_s=first["seconds"], evaluate_cpu_s=first["cpu"], evaluate_peak_mb=first["peak_rss_mb"],
               evaluate_summary=first["summary"])
    spec = json.loads(dataset.read_text())
    db = dataset.parent / spec["db"]
    row["pointsdb_mb"] = _mb([db, db.with_name(db.name + ".wal")])
    commands = {"scores": ["scores", dataset], "cluster": ["cluster", dataset]}
    if size >= 2:
        commands["compare"] = ["compare", dataset, "--search", f"^({names[0]}|{names[1]})$"]
    for command, args in commands.items():
        row["load"][command] = _load()
        row[f"{command}_s"], row[f"{command}_cpu_s"] = _analyze(args)
    if browser:
        pages = browse(dataset)
        row["load"].update(pages.pop("load"))
        row.update(pages)
    row["footprint_mb"] = (sum(_tree_mb(root / "data" / "r12" / n) for n in names) + row["pointsdb_mb"]
                           + _tree_mb(dataset.parent / spec["cache"]))
    write_sized_dataset(root, names + [extra], size)      # the same PointsDB, one eval more
    row["load"]["incremental"] = _load()
    more = bench_evaluate.run_evaluate(dataset, parallel, watch_memory=True)
    row.update(incremental_s=more["seconds"], incremental_cpu_s=more["cpu"], incremental_peak_mb=more["peak_rss_mb"])
    print(f"[{size} evals] " + ", ".join(f"{k} {v:.2f}" for k, v in row.items() if isinstance(v, float)), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,50", help="comma-separated numbers of evals (default 1,10,50)")
    parser.add_argument("--parallel", type=int, default=2, help="evaluate.py --parallel (default 2)")
    parser.add_argument("--dir", default=str(scale_tree.DEFAULT_DIR))
    parser.add_argument("--no-browser", action="store_true", help="leave out the web apps")
    parser.add_argument("--pages-only", action="store_true",
                        help="only the web apps, on each size's dataset and PointsDB as the last run left them "
                             "(no build, no evaluate); prints the figures, writes out/scale-pages.json")
    parser.add_argument("--plot", default=str(REPO / "docs" / "scale.png"))
    parser.add_argument("--distinct", type=int, default=None,
                        help="build only this many distinct evals (a multiple of 5) and copy them to the "
                             "others under their own names (scale_tree.py); default: every eval distinct")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    root = Path(args.dir)
    if args.pages_only:
        pages = {n: browse(root / "data" / f"scale{n}.json") for n in sizes}
        write_result("scale-pages", {"rows": pages})
        for n, figures in pages.items():
            print(f"[{n} evals] " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items() if isinstance(v, float))
                  + f"; load average {figures['load']}")
        return
    names = scale_tree.build(sizes[-1] + 1, root, distinct=args.distinct)
    fresh = [measure_size(root, names[:n], names[n], args.parallel, not args.no_browser) for n in sizes]
    # a run of some sizes keeps the other sizes' rows of earlier runs (the 50-eval size is the long one)
    previous = OUT / "scale.json"
    kept = json.loads(previous.read_text())["rows"] if previous.exists() else []
    rows = sorted([r for r in kept if r["evals"] not in sizes] + fresh, key=lambda r: r["evals"])
    all_sizes = [r["evals"] for r in rows]
    write_result("scale", {"cpu_count": os.cpu_count(), "density": scale_tree.DENSITY, "parallel": args.parallel,
                           "distinct": args.distinct,
                           "rows": rows, "exponents": {key: scalefit.fit_exponent(all_sizes, [r.get(key) for r in rows])
                                                       for key, *_ in scalefit.FIGURES}})
    scalefit.plot(rows, Path(args.plot))
    print(scalefit.table(rows))
    print("load average (1 min) at each step: " + "; ".join(
        f"{r['evals']} evals: " + ", ".join(f"{k} {v}" for k, v in r["load"].items()) for r in rows))
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
