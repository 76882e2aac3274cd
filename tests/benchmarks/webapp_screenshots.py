"""Screenshots of the three web apps for the README and docs/webapps.md.

    .venv/bin/python tests/benchmarks/webapp_screenshots.py data/demo.json --output-dir docs

Serves each app on a free loopback port in this process, drives it with headless Chromium
(tests/support/browser.py: Debian's chromium + chromedriver, Selenium) the way a person would, and
writes leaderboard.png, leaderboard-diff.png (the difference view of the two best evals, opened from
a shared link), explorer.png and spiderweb.png. The demo dataset comes from
`python3 -m resolver.demo --no-serve` (README quick start).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.browser import Browser, DashServer, browser_missing_reason  # noqa: E402

WIDTH = 1500


def _settle(browser, seconds: float = 1.5):
    browser.wait_idle()
    time.sleep(seconds)         # let plotly finish drawing (WebGL surfaces take a moment)


def _fit_height(browser, minimum: int = 700, maximum: int = 2400):
    height = browser.driver.execute_script("return document.body.scrollHeight")
    browser.driver.set_window_size(WIDTH, max(minimum, min(maximum, height + 140)))


def leaderboard(browser, dataset, db, out: Path):
    from resolver.web.leaderboard import build_app

    with DashServer(build_app(dataset, db)) as server:
        browser.open(server.url("/"), ready_selector="#lb-table .ag-cell[col-id='_model']")
        _settle(browser)
        _fit_height(browser)
        _settle(browser, 0.5)
        browser.screenshot(out / "leaderboard.png")


def leaderboard_diff(browser, dataset, db, out: Path):
    """The difference view from a shared link: B = the best eval by ReasonScore, A = the second."""
    from resolver.analysis.leaderboard_scores import Board
    from resolver.web.leaderboard import build_app

    ranked = [r["eval_id"] for r in Board(db).view().results]
    with DashServer(build_app(dataset, db)) as server:
        browser.open(server.url(f"/?a={ranked[1]}&b={ranked[0]}"), ready_selector="#lb-diff-table .ag-cell")
        _settle(browser)
        bottom = browser.driver.execute_script(
            "return document.querySelector('#lb-diff-view').getBoundingClientRect().bottom + window.scrollY")
        browser.driver.set_window_size(WIDTH, int(bottom) + 150)      # the page down to the view's end
        _settle(browser, 0.5)
        browser.screenshot(out / "leaderboard-diff.png")


def explorer(browser, dataset, db, out: Path):
    from resolver.web.explorer import build_app

    # As `explorer.py DATASET`: no download; an eval without a cached tokenizer shows the bytes fallback.
    with DashServer(build_app(dataset, db)) as server:
        browser.open(server.url(_inspected_point(dataset, db)), ready_selector="#ex-main .js-plotly-plot")
        browser.wait_for("#ex-sample-answer", timeout=60)
        _settle(browser, 3)
        _fit_height(browser, maximum=2400)       # down to the FFT of every selected eval
        _settle(browser, 3)
        browser.screenshot(out / "explorer.png")


def _inspected_point(dataset, db) -> str:
    """The link of the default view with the first measured cell of the top eval inspected (a shared
    link, as a click leaves in the URL: a click on a 3-D point under a loaded CPU's software WebGL
    does not always register, and the picture is the same)."""
    from resolver.web import explorer as ex, urlstate
    from resolver.web.explorer_data import Landscape

    land = Landscape(dataset, db)
    task = land.tasks[0]
    _, ident = ex.view_options(land, task)
    evals = land.top_evals(ex.DEFAULT_EVALS)
    manifold = land.default_manifold(ident)
    cell = land.surface(ident, evals[0], manifold).iloc[0]
    coords = {f"p.{d}": _plain(cell[d]) for d in land.view(ident).dims}
    return "/" + urlstate.encode({"task": task, "view": ident, "manifold": manifold, "evals": evals,
                                  "pe": evals[0], **coords})


def _plain(value) -> str:
    """A coordinate as the explorer reads it back from a URL (8, not 8.0)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def spiderweb(browser, dataset, db, out: Path):
    from resolver.web.spiderweb import Profiles, build_app

    app = build_app(dataset, db)
    profiles = Profiles(db)
    # The top three overlaid (the default) plus the most telling profile: the first non-balanced archetype.
    pick = next((e for e in profiles.eval_ids if profiles.archetypes[e].name != "balanced"), None)
    with DashServer(app) as server:
        browser.open(server.url("/"), ready_selector="#sw-chart .js-plotly-plot")
        if pick is not None and pick not in profiles.eval_ids[:3]:
            browser.select_dropdown("sw-evals", profiles.labels[pick])
            browser.wait_until(lambda d: len(browser.find_all("#sw-archetype > div")) == 4, message="4 evals drawn")
        _fit_height(browser, maximum=1400)
        _settle(browser)
        browser.screenshot(out / "spiderweb.png")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="dataset config, e.g. data/demo.json")
    parser.add_argument("--output-dir", default="docs", help="where the PNGs go (default docs)")
    args = parser.parse_args(argv)
    reason = browser_missing_reason()
    if reason:
        raise SystemExit(f"webapp_screenshots.py: error: {reason}")
    from resolver.web.data import open_app_dataset

    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    dataset, db = open_app_dataset(args.dataset)
    browser = Browser(WIDTH, 1000)
    try:
        for shoot in (leaderboard, leaderboard_diff, explorer, spiderweb):
            browser.driver.set_window_size(WIDTH, 1000)
            shoot(browser, dataset, db, out)
            errors = browser.console_errors()
            print(f"wrote {out / (shoot.__name__.replace('_', '-') + '.png')}" + (f" (console errors: {errors})" if errors else ""))
    finally:
        browser.close()
        db.close()


if __name__ == "__main__":
    main()
