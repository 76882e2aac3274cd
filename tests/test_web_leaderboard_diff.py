"""The leaderboard's difference view in headless Chromium: a shared link with two evals in the URL,
the evals chosen with the mouse, and the link into the explorer at the point of largest difference.

Expected numbers are those of the real `analyze.py compare --format json`, run as a separate
process (the CLI and the view share one computation; this checks the view shows it unchanged);
colours are the diverging scale's colours of those numbers.
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import run_script
from tests.support.browser import browser_marks, serving_apps

pytestmark = browser_marks()
READY = {"leaderboard": "#lb-table .ag-cell[col-id='_model']", "explorer": "#ex-main .js-plotly-plot"}
A_MODEL, B_MODEL = "Theta-7B", "Alpha-8B"          # a specialist against an all-rounder: some cells decided


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """Leaderboard and explorer on loopback, linking to each other, and one browser."""
    yield from serving_apps(tmp_path_factory, tuple(READY), 1000)


@pytest.fixture(scope="module")
def ids(apps):
    from resolver.pointsdb.reader import open_pointsdb

    with open_pointsdb(apps["dataset"].parent / "pointsdb-webtest.db") as db:
        evals = db.evals()
    return {m: evals.loc[evals["model"] == m, "eval_id"].iloc[0] for m in (A_MODEL, B_MODEL)}


@pytest.fixture(scope="module")
def compared(apps, ids):
    """`analyze.py compare --format json` for A = Theta-7B, B = Alpha-8B in the leaderboard's cells mode."""
    filters = json.dumps({"eval_id": [ids[A_MODEL], ids[B_MODEL]]})
    proc = run_script("analyze.py", "compare", apps["dataset"], "--filters", filters, "--mode", "E_I",
                      "--format", "json", check=True)
    return json.loads(proc.stdout)


def _signed(value):
    text = f"{value:+.2f}"
    return text.replace("+0.", "+.").replace("-0.", "-.")


def _grid(b):
    """{(tier, group): cell element} of the difference table (the tier column is pinned left: its cells
    and the row's others share the row's row-index)."""
    header = [h.get_attribute("col-id") for h in b.find_all("#lb-diff-table .ag-header-cell")]
    tiers = {c.find_element("xpath", "./ancestor::div[@row-index][1]").get_attribute("row-index"): c.text
             for c in b.find_all("#lb-diff-table .ag-cell[col-id='_tier']")}
    cells = {}
    for cell in b.find_all("#lb-diff-table .ag-center-cols-container .ag-cell"):
        row = cell.find_element("xpath", "./ancestor::div[@row-index][1]").get_attribute("row-index")
        cells[(tiers[row], cell.get_attribute("col-id"))] = cell
    assert header[0] == "_tier"
    return cells


def _rgb(css: str) -> str:
    return css.replace(" ", "").replace("rgba", "rgb").replace(",1)", ")")


def test_shared_link_shows_the_difference_view(apps, ids, compared):
    from resolver.web import theme

    b, links = apps["browser"], apps["links"]
    link = f"{links['leaderboard']}?a={ids[A_MODEL]}&b={ids[B_MODEL]}"
    b.open(link, ready_selector="#lb-diff-table .ag-cell")
    heading = b.text("#lb-diff-heading")
    assert f"{B_MODEL} (test) (B) minus {A_MODEL} (test) (A)" in heading
    # the A / B pickers show the evals of the link
    assert f"{A_MODEL} (test)" in b.text("#lb-a") and f"{B_MODEL} (test)" in b.text("#lb-b")
    cells = _grid(b)
    assert set(cells) == {(c["tier"], c["group"]) for c in compared["cells"]}
    limit = max([0.05] + [abs(c["diff"]) for c in compared["cells"]])
    decided = 0
    for c in compared["cells"]:
        td = cells[(c["tier"], c["group"])]
        mark = {"b": "B ", "a": "A "}.get(c["verdict"], "")
        lo, hi = c["paired"]
        assert td.text.split("\n") == [f"{mark}{_signed(c['diff'])}", f"[{_signed(lo)}, {_signed(hi)}]"]
        assert _rgb(td.value_of_css_property("background-color")) == theme.diff_colour(c["diff"], limit).replace(" ", "")
        framed = td.value_of_css_property("border-top-width") == "3px"
        assert framed == (c["verdict"] != "none"), (c["tier"], c["group"])
        decided += c["verdict"] != "none"
    assert 0 < decided < len(compared["cells"])          # the pair was chosen to have both kinds
    overall = compared["overall"]
    assert b.find("#lb-diff-overall").get_attribute("data-verdict") == overall["verdict"]
    assert f"B − A = {_signed(overall['diff'])}" in b.text("#lb-diff-overall")
    # hovering the decided cell gives both intervals and the Holm-adjusted p-value of the CLI
    cell = next(c for c in compared["cells"] if c["verdict"] != "none")
    hover = _hover_text(b, cells[(cell["tier"], cell["group"])])
    lo, hi = cell["unpaired"]
    assert f"unpaired 95%: [{_signed(lo)}, {_signed(hi)}]" in hover and f"p {cell['p_holm']:.3g}" in hover
    b.screenshot(apps["shots"] / "leaderboard-diff.png")
    assert b.console_errors() == []


def _hover_text(b, element):
    return b.hover_text(element)


def test_explorer_link_opens_the_largest_difference(apps, ids, compared):
    b, links = apps["browser"], apps["links"]
    b.open(f"{links['leaderboard']}?a={ids[A_MODEL]}&b={ids[B_MODEL]}", ready_selector="#lb-diff-explorer")
    top = compared["points"][0]
    params = json.loads(top["params"])
    href = b.find("#lb-diff-explorer").get_attribute("href")
    assert href.startswith(links["explorer"]) and f"task={top['base_task']}" in href
    b.mouse_click("#lb-diff-explorer")
    b.wait_until(lambda d: d.current_url.startswith(links["explorer"]), message="the explorer opens")
    b.wait_for(READY["explorer"], timeout=30)
    heading = b.wait_until(lambda d: d.find_elements("css selector", "#ex-point-heading")
                           and d.find_element("css selector", "#ex-point-heading").text, message="inspected point")
    # B's point, in the task of the largest difference, at that point's parameters
    assert heading.startswith(f"{B_MODEL} (test) · {top['base_task']} / ")
    for key, value in params.items():
        if f"{key} = " in heading:
            assert f"{key} = {value}" in heading
    assert any(f"{key} = {value}" in heading for key, value in params.items())
    ids_shown = b.text("#ex-point-ids").split(", ")
    assert str(top["b_id"]) in ids_shown
    assert f"evals={ids[A_MODEL]}&evals={ids[B_MODEL]}" in b.driver.current_url    # both drawn, A first
    assert b.console_errors() == []


def test_choosing_two_evals_with_the_mouse_puts_them_in_the_url(apps, ids):
    b, links = apps["browser"], apps["links"]
    b.open(links["leaderboard"], ready_selector=READY["leaderboard"])
    assert not b.find_all("#lb-diff-table")
    b.select_dropdown("lb-a", f"{A_MODEL} (test)")
    b.wait_until(lambda d: f"a={ids[A_MODEL]}" in d.current_url, message="A in the URL")
    assert not b.find_all("#lb-diff-table")                       # one eval: nothing to compare yet
    b.select_dropdown("lb-b", f"{B_MODEL} (test)")
    b.wait_until(lambda d: f"b={ids[B_MODEL]}" in d.current_url, message="B in the URL")
    b.wait_for("#lb-diff-table .ag-cell")
    assert f"{B_MODEL} (test) (B) minus {A_MODEL} (test) (A)" in b.text("#lb-diff-heading")
    b.select_dropdown("lb-mode", "C_P")               # the cells mode is the comparison's mode too
    b.wait_until(lambda d: "mode C_P" in d.find_element("css selector", "#lb-diff-overall").text,
                 message="the difference recomputed in C_P")
    assert f"a={ids[A_MODEL]}" in b.driver.current_url and "mode=C_P" in b.driver.current_url
    b.mouse_click("#lb-reset")
    b.wait_until(lambda d: not d.find_elements("css selector", "#lb-diff-table"), message="view gone after reset")
    assert "a=" not in b.driver.current_url
    assert b.console_errors() == []
