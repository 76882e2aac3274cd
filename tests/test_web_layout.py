"""The three apps together: links from a leaderboard row to that model's surfaces and radar, and
the layout at phone and desktop widths (screenshots saved, no sideways scrolling of the page,
the model column stays in view while the task columns scroll)."""
from __future__ import annotations

import pytest

from tests.support.browser import browser_marks, serving_apps

pytestmark = browser_marks()
WIDTHS = (390, 1280, 1600)
READY = {"leaderboard": "#lb-table .ag-cell[col-id='_model']", "explorer": "#ex-main .js-plotly-plot",
         "spiderweb": "#sw-chart .js-plotly-plot"}


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """All three apps on loopback, each linking to the others' real addresses, and one browser."""
    yield from serving_apps(tmp_path_factory, tuple(READY), 900)


def _beta_row(b):
    """Beta's model cell (the grid pins it left, apart from the row's other cells)."""
    for cell in b.find_all("#lb-table .ag-cell[col-id='_model']"):
        if "Beta-30B-A3B (test)" in cell.text:
            return cell
    raise AssertionError("Beta not on the first page")


def test_leaderboard_row_links_to_its_surfaces_and_radar(apps):
    b, links = apps["browser"], apps["links"]
    b.driver.set_window_size(1280, 900)
    b.open(links["leaderboard"], ready_selector=READY["leaderboard"])
    row = _beta_row(b)
    eval_id = row.find_element("css selector", ".rs-tags").text.split(" · ")[0]
    b.mouse_click(row.find_element("css selector", "a.lb-explorer-link"))
    b.wait_until(lambda d: d.current_url.startswith(links["explorer"]), message="the explorer opens")
    assert f"evals={eval_id}" in b.driver.current_url
    b.wait_for(READY["explorer"], timeout=30)
    titles = b.driver.execute_script("return Array.from(document.querySelectorAll('#ex-main .js-plotly-plot'))"
                                     ".map(g => g.layout.title.text.split('<br>')[0]);")
    assert titles == ["Beta-30B-A3B (test)"]
    b.driver.back()
    b.wait_for(READY["leaderboard"])
    b.mouse_click(_beta_row(b).find_element("css selector", "a.lb-spiderweb-link"))
    b.wait_until(lambda d: d.current_url.startswith(links["spiderweb"]), message="the spiderweb opens")
    b.wait_for(READY["spiderweb"])
    b.wait_until(lambda d: [t["name"] for t in b.figure("sw-chart")["data"]
                            if (t.get("meta") or [None])[0] == "accuracy"] == ["Beta-30B-A3B (test)"],
                 message="Beta's radar")
    assert "truncation-limited" in b.text("#sw-archetype")
    # The header links lead back to the other apps.
    b.mouse_click("#rs-nav-leaderboard")
    b.wait_for(READY["leaderboard"])
    assert b.console_errors() == []


@pytest.mark.parametrize("app", list(READY))
def test_screenshots_without_sideways_scrolling(apps, app):
    b, links, shots = apps["browser"], apps["links"], apps["shots"]
    for width in WIDTHS:
        b.driver.set_window_size(width, 900)
        b.open(links[app], ready_selector=READY[app], timeout=30)
        b.wait_idle(timeout=30)
        overflow = b.horizontal_overflow()
        origin = links[app].rstrip("/")
        outside = b.driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)"
                                          ".filter(u => !u.startsWith(arguments[0]) && !u.startsWith('data:'));",
                                          origin)
        assert outside == [], f"{app} fetched from outside: {outside}"
        b.screenshot(shots / f"{app}-{width}.png")
        assert overflow <= 0, f"{app} at {width} px: the page is {overflow} px wider than the window"
        if app == "leaderboard" and width == 390:
            _model_column_stays(b)
    assert all((shots / f"{app}-{w}.png").stat().st_size > 10_000 for w in WIDTHS)
    assert b.console_errors() == []


def _model_column_stays(b):
    """At phone width the task columns scroll inside the table while the model column stays put."""
    scroller = b.driver.execute_script(   # the grid's horizontal scrollbar under the unpinned columns
        "const e = document.querySelector('#lb-table .ag-body-horizontal-scroll-viewport');"
        "return e && e.scrollWidth > e.clientWidth + 10 ? e : null;")
    assert scroller is not None, "the table does not scroll sideways at 390 px"
    left = "return document.querySelector(\"#lb-table .ag-cell[col-id='%s']\").getBoundingClientRect().left;"
    edge = b.driver.execute_script("return arguments[0].getBoundingClientRect().left;", scroller)
    model_before, ratio_before = b.driver.execute_script(left % "_model"), b.driver.execute_script(left % "_ratio")
    assert model_before < edge                          # the model column is left of the part that scrolls
    for scrolled in (300, 600):
        b.driver.execute_script("arguments[0].scrollLeft = arguments[1];", scroller, scrolled)
        assert abs(b.driver.execute_script(left % "_model") - model_before) < 1     # pinned: it does not move
    assert b.driver.execute_script("return arguments[0].scrollLeft;", scroller) > 0
    assert b.driver.execute_script(left % "_ratio") < ratio_before - 200        # the other columns moved


def test_dark_mode_follows_the_system_setting(apps):
    b, links = apps["browser"], apps["links"]
    b.driver.set_window_size(1280, 900)
    background = "return getComputedStyle(document.body).backgroundColor;"
    try:
        b.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                 {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        b.open(links["leaderboard"], ready_selector=READY["leaderboard"])
        assert b.driver.execute_script(background) == "rgb(18, 22, 31)"
        cell = b.find("#lb-table .ag-cell[col-id='_model']")
        assert cell.value_of_css_property("color") == "rgba(227, 231, 239, 1)"    # light text on the dark table
    finally:
        b.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                 {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
    b.open(links["leaderboard"], ready_selector=READY["leaderboard"])
    assert b.driver.execute_script(background) == "rgb(246, 247, 249)"
