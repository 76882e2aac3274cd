"""Benchmark: what a visitor waits for in headless Chromium, on a 60-eval x 12-task synthetic dataset.

    .venv/bin/python tests/benchmarks/bench_webapps_browser.py [--evals 60] [--points-per-task 90]

Serves the three apps on loopback (this process, threaded werkzeug as in the scripts) and drives
them with the real mouse and keyboard (Selenium ActionChains). For each interaction a probe in
the page starts its clock at the input event itself (the mouse release that completes a click,
or a key press; capture phase) and,
on every animation frame, records:

* feedback: the first frame where the page shows that something happens: a component being
  recomputed (Dash marks it; the apps' stylesheet dims it at once, dcc.Loading adds a spinner
  to the slow panels), a "reading ..." note (the explorer's point panel), or the new result;
* completion: the first frame where the new result is in the page and nothing is loading, and
  that the next frame follows within 50 ms. 3-D scenes are drawn in software (no GPU) in the
  frames after the one that mounts them, with the page frozen meanwhile: the first "ready"
  frame comes before the pixels, so a ready frame followed by a long gap does not count;
* server: when the last Dash callback response of the interaction arrived (Resource Timing;
  a 3-D point click sends its request while the button is still held, before the clock
  starts at the release), so completion - server is the time the browser spends rendering.

Bars (docs/decisions.md): feedback < 300 ms, completion < 2 s for every interaction. Prints a table; the
LAST line is the RATIO worst completion / 2 s (below 1 passes). Result JSON:
tests/benchmarks/out/webapps_browser.json.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from benchlib import add_synth_db_args, build_synth_dataset, write_result  # noqa: E402

FEEDBACK_BAR, COMPLETION_BAR = 0.300, 2.0

PROBE = """
if (!window.__rsProbe) {
  const p = window.__rsProbe = {armed: false, t0: null, feedback: null, done: null, server: null, check: null,
                                readyAt: null};
  const start = () => { if (p.armed && p.t0 === null) { p.t0 = performance.now(); } };
  document.addEventListener('mouseup', start, true);
  document.addEventListener('keydown', start, true);
  const loop = () => {
    if (p.t0 !== null && p.done === null) {
      const now = performance.now() - p.t0;
      const loading = document.querySelector('[data-dash-is-loading="true"]') !== null;
      const pending = document.querySelector('.rs-pending, .rs-pending-panel') !== null;
      let ready = false;
      try { ready = p.check(); } catch (e) { ready = false; }
      if (p.feedback === null && (loading || pending || ready)) { p.feedback = now; }
      // Done at the first ready frame that the next frame follows promptly: a frame followed by a
      // long gap was still being drawn (3-D scenes are drawn in software after the frame that mounts them).
      if (ready && !loading && !pending && p.readyAt !== null && now - p.readyAt < 50) {
        p.done = p.readyAt;
        const calls = performance.getEntriesByType('resource')
          .filter(e => e.name.indexOf('_dash-update-component') >= 0 && e.responseEnd >= p.t0);
        p.server = calls.length ? Math.max(...calls.map(e => e.responseEnd)) - p.t0 : 0;
      } else {
        p.readyAt = ready && !loading && !pending ? now : null;
      }
    }
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
}
"""


def arm(browser, check_js: str):
    browser.driver.execute_script(PROBE)
    browser.driver.execute_script(
        "const p = window.__rsProbe; p.armed = true; p.t0 = null; p.feedback = null; p.done = null; p.readyAt = null;"
        "p.server = null; p.check = new Function(arguments[0]);", check_js)


def measure(browser, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probe = browser.driver.execute_script("const p = window.__rsProbe; return p.done === null ? null : "
                                              "{feedback: p.feedback, done: p.done, server: p.server};")
        if probe:
            browser.driver.execute_script("window.__rsProbe.armed = false;")
            return {k: (v or 0) / 1000 for k, v in probe.items()}
        time.sleep(0.05)
    raise AssertionError("the interaction did not complete in time")


def _option(browser, component_id: str, text: str):
    browser.click(f"#{component_id}")
    return browser.wait_until(lambda d: next((el for el in d.find_elements("css selector", ".dash-dropdown-option")
                                              if el.text.strip() == text), None), message=f"option {text}")


def _radio(browser, scope: str, text: str):
    return browser.wait_until(lambda d: next((el for el in d.find_elements("css selector", f"{scope} [role='option']")
                                              if el.text.strip() == text), None), message=f"radio {text}")


def leaderboard(browser, url, results):
    browser.open(url, ready_selector="#lb-table .ag-cell[col-id='_model']")
    browser.wait_idle()
    steps = [
        ("next page", "return document.querySelector('#lb-page-label').textContent.startsWith('page 2');",
         lambda: browser.mouse_click("#lb-next")),
        ("sort by a task column (header click)", "return location.search.indexOf('col=') >= 0;",
         lambda: browser.mouse_click("#lb-table .ag-header-viewport .ag-header-cell:last-child .ag-header-cell-label")),
        ("tier hard", "return location.search.indexOf('tier=hard') >= 0 && "
                      "document.querySelector('#lb-tier-note').textContent.startsWith('Tier hard');",
         lambda: browser.mouse_click(_radio(browser, "#lb-tier", "hard"))),
        ("search a model", "return /· [0-9] evals$/.test(document.querySelector('#lb-page-label').textContent);",
         lambda: browser.type_into("#lb-search", "model-01", clear=False)),
    ]
    for name, check, act in steps:
        arm(browser, check)
        act()
        results[f"leaderboard: {name}"] = measure(browser)
    option = _option(browser, "lb-mode", "C_P")
    arm(browser, "return location.search.indexOf('mode=C_P') >= 0;")
    browser.mouse_click(option)
    results["leaderboard: cells mode C_P (new)"] = measure(browser)


def explorer(browser, url, results):
    from tests.support.browser import hover_point, real_click

    browser.open(url, ready_selector="#ex-main .js-plotly-plot")
    browser.wait_idle()
    surfaces = "Array.from(document.querySelectorAll('#ex-main .js-plotly-plot'))"
    option = _option(browser, "ex-evals", _third_eval(browser))
    arm(browser, f"const g = {surfaces}; return g.length === 3 && g.every(x => x._fullData && x._fullData.length);")
    browser.mouse_click(option)
    results["explorer: add an eval (3 surfaces)"] = measure(browser)
    browser.driver.find_element("css selector", "body").click()
    graph = browser.find("#ex-main .js-plotly-plot")
    offset = hover_point(browser, graph)
    # Synthetic points have no NDJSON behind them: the panel then says so instead of showing samples.
    arm(browser, "return document.querySelector('#ex-point-ids') !== null && (document.querySelector("
                 "'#ex-sample-answer') !== null || document.querySelector('#ex-point-no-samples') !== null);")
    real_click(browser, graph, offset)
    results["explorer: click a surface point (details + samples)"] = measure(browser)
    option = _option(browser, "ex-mode", "E_I")
    arm(browser, f"const g = {surfaces}; return g.length === 3 && g.every(x => x._fullData && "
                 "x._fullData[0].name === 'E_I accuracy');")
    browser.mouse_click(option)
    results["explorer: mode E_I (3 surfaces)"] = measure(browser)
    option = _option(browser, "ex-mode", "C_P")
    arm(browser, f"const g = {surfaces}; return g.length === 3 && g.every(x => x._fullData && "
                 "x._fullData[0].name === 'C_P accuracy');")
    browser.mouse_click(option)
    results["explorer: mode C_P again (3 surfaces)"] = measure(browser)
    view = _options(browser, "ex-view")[1]
    option = _option(browser, "ex-view", view)
    name = view.split(" (")[0]
    arm(browser, f"const g = {surfaces}; return g.length > 0 && g.every(x => x._fullData && x._fullData.length) && "
                 f"g[0].layout.title.text.indexOf('/{name}:') >= 0;")
    browser.mouse_click(option)
    results["explorer: change view (to a 1-D view: lines)"] = measure(browser)
    task = _last_task(browser)
    option = _option(browser, "ex-task", task)
    arm(browser, f"const g = {surfaces}; return g.length > 0 && g.every(x => x._fullData) && "
                 f"g[0].layout.title.text.indexOf('{task}/') >= 0;")
    browser.mouse_click(option)
    results["explorer: change task (3 surfaces)"] = measure(browser)


def _third_eval(browser) -> str:
    browser.click("#ex-evals")
    texts = browser.wait_until(lambda d: [el.text.strip() for el in d.find_elements("css selector",
                                                                                  ".dash-dropdown-option")],
                               message="eval options")
    chosen = browser.driver.execute_script(
        "return Array.from(document.querySelectorAll('#ex-evals .dash-dropdown-value-item, #ex-evals [class*=value]'))"
        ".map(e => e.textContent.trim());")
    browser.click("#ex-evals")
    return next(t for t in texts if t and not any(t in c for c in chosen))


def _options(browser, component_id: str) -> list:
    browser.click(f"#{component_id}")
    texts = browser.wait_until(lambda d: [el.text.strip() for el in d.find_elements("css selector",
                                                                                  ".dash-dropdown-option")],
                               message=f"{component_id} options")
    browser.click(f"#{component_id}")
    return texts


def _last_task(browser) -> str:
    return _options(browser, "ex-task")[-1]


def spiderweb(browser, url, results):
    browser.open(url, ready_selector="#sw-chart .js-plotly-plot")
    browser.wait_idle()
    accuracy = ("const g = document.querySelector('#sw-chart .js-plotly-plot'); "
                "const a = (g._fullData || []).filter(t => t.meta && t.meta[0] === 'accuracy');")
    steps = [
        ("bars", accuracy + "return a.length === 3 && a[0].type === 'bar';",
         lambda: browser.mouse_click(_radio(browser, "#sw-kind", "bars"))),
        ("radar", accuracy + "return a.length === 3 && a[0].type === 'scatterpolar';",
         lambda: browser.mouse_click(_radio(browser, "#sw-kind", "radar"))),
        ("overlay off (tokens)", "return location.search.indexOf('overlay=') >= 0;",
         lambda: browser.mouse_click(_radio(browser, "#sw-overlays", "token use"))),
    ]
    for name, check, act in steps:
        arm(browser, check)
        act()
        results[f"spiderweb: {name}"] = measure(browser)
    option = _option(browser, "sw-mode", "E_I")
    arm(browser, "return document.querySelector('#sw-chart .js-plotly-plot').layout.title.text.startsWith('E_I');")
    browser.mouse_click(option)
    results["spiderweb: mode E_I (new: archetypes of 60 evals)"] = measure(browser)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_synth_db_args(parser)
    args = parser.parse_args(argv)
    from tests.support.browser import Browser, DashServer, browser_missing_reason

    if browser_missing_reason():
        raise SystemExit(f"bench_webapps_browser.py: error: {browser_missing_reason()}")
    from resolver.web import explorer as ex, leaderboard as lb, spiderweb as sw
    from resolver.web.data import open_app_dataset

    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-webb-") as tmp:
        dataset = build_synth_dataset(tmp, args)
        for name, build, drive in (("leaderboard", lb.build_app, leaderboard), ("explorer", ex.build_app, explorer),
                                   ("spiderweb", sw.build_app, spiderweb)):
            ds, db = open_app_dataset(dataset)
            browser = Browser(1400, 1000)
            try:
                with DashServer(build(ds, db)) as server:
                    drive(browser, server.url("/"), results)
            finally:
                browser.close()
                db.close()
    print(f"{'interaction':<55} {'feedback':>9} {'complete':>9} {'server':>8}")
    for name, r in results.items():
        flag = "" if r["feedback"] < FEEDBACK_BAR and r["done"] < COMPLETION_BAR else "  <-- over a bar"
        print(f"{name:<55} {r['feedback'] * 1000:7.0f}ms {r['done'] * 1000:7.0f}ms {r['server'] * 1000:6.0f}ms{flag}")
    worst_feedback = max(r["feedback"] for r in results.values())
    worst_done = max(r["done"] for r in results.values())
    write_result("webapps_browser", {"evals": args.evals, "points_per_eval": args.points_per_task * 12,
                                     "interactions": results, "worst_feedback_s": worst_feedback,
                                     "worst_completion_s": worst_done})
    print(f"worst feedback {worst_feedback * 1000:.0f} ms (bar 300); worst completion {worst_done * 1000:.0f} ms "
          f"(bar 2000)")
    print(f"RATIO worst completion / 2 s = {worst_done / COMPLETION_BAR:.3f}")


if __name__ == "__main__":
    main()
