"""leaderboard.py in headless Chromium on a hand-made dataset built by the real evaluate.py.

Expected cell contents come from the fixture's design (tests/support/web_dataset.py) worked out by
hand, and the ranking / scores are compared with `analyze.py scores --format json` run as a
separate process. Every interaction uses the real mouse and keyboard (ActionChains).
"""
from __future__ import annotations

import csv
import json
import urllib.request
from collections import Counter

import pytest

from tests.conftest import run_script
from tests.support.browser import Browser, free_port, needs_browser, serve_in_browser
from tests.support.in_process import run_refused_start
from tests.support.web_dataset import EVALS, shared_web_dataset

READY = "#lb-table .ag-cell[col-id='_model']"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return shared_web_dataset(tmp_path_factory)


@pytest.fixture(scope="module")
def ranked(dataset):
    """The ranking printed by the real `analyze.py scores --format json` (a separate process)."""
    return json.loads(run_script("analyze.py", "scores", dataset, "--format", "json", check=True).stdout)


@pytest.fixture(scope="module")
def page(dataset):
    from resolver.web.leaderboard import build_app

    for browser in serve_in_browser(dataset, build_app, READY):
        browser.home = browser.driver.current_url.split("?")[0]
        yield browser


def _reset(b):
    b.open(b.home, ready_selector=READY)
    _wait_label(b, f"page 1 of 2 · {len(EVALS)} evals")


class _Row:
    """One shown row of the grid: its pinned cells (rank, model) and the others sit in two containers,
    each holding an element with the row's row-index."""

    def __init__(self, b, index: int):
        self.b, self.index = b, index

    def cell(self, column: str):
        return self.b.find(f"#lb-table .ag-row[row-index='{self.index}'] .ag-cell[col-id='{column}']")


def _rows(b):
    shown = {int(r.get_attribute("row-index")) for r in b.find_all("#lb-table .ag-center-cols-container .ag-row")}
    return [_Row(b, i) for i in sorted(shown)]


def _label(row):
    return row.cell("_model").find_element("css selector", "strong").text


def _eval_id(row):
    return row.cell("_model").find_element("css selector", ".rs-tags").text.split(" · ")[0]


def _labels(b):
    return [_label(r) for r in _rows(b)]


def _row_of(b, model):
    for row in _rows(b):
        if _label(row) == f"{model} (test)":
            return row
    raise AssertionError(f"{model} not on this page")


def _cell(row, column):
    return row.cell(column)


def _wait_label(b, text):
    b.wait_until(lambda d: d.find_element("css selector", "#lb-page-label").text == text, message=f"label {text!r}")


def _two_decimals(value):
    text = f"{value:.2f}"
    return text[1:] if text.startswith("0.") else text


def _hover_text(b, element):
    return b.hover_text(element)


@needs_browser
def test_first_page_matches_analyze_scores(page, ranked):
    assert page.text("#lb-page-label") == f"page 1 of 2 · {len(EVALS)} evals"
    rows = _rows(page)
    assert len(rows) == 10
    for row, entry in zip(rows, ranked[:10]):
        assert _eval_id(row) == entry["eval_id"]
        shown = _cell(row, "_score").text
        assert shown.rstrip("*") == f"{entry['reasonscore']:.0f}"
        assert shown.endswith("*") == entry["any_incomplete"]
        assert _cell(row, "_ratio").text == f"{entry['score_per_token']:.3f}"
    assert _labels(page)[0] == "Alpha-8B (test)"
    assert page.console_errors() == []


@needs_browser
def test_cells_truncation_hatch_hover_and_incomplete(page):
    beta = _cell(_row_of(page, "Beta-30B-A3B"), "arithmetic")
    # 12 of Beta's 64 arithmetic samples are truncated (a quarter of the 48 deep ones): 0.1875 -> [-.19]
    assert "[-.19]" in beta.text and "repeating-linear-gradient" in beta.value_of_css_property("background-image")
    hover = _hover_text(page, beta)
    assert "truncated 18.75%" in hover and "E_I accuracy" in hover
    alpha = _cell(_row_of(page, "Alpha-8B"), "arithmetic")
    assert "[-" not in alpha.text and alpha.value_of_css_property("background-image") == "none"
    # Delta ran 2 shallow + 3 of the 6 deep arithmetic points: 5 of 8 expected.
    delta_row = _row_of(page, "Delta-14B")
    assert "(5/8)" in _cell(delta_row, "arithmetic").text
    assert _cell(delta_row, "_score").text.endswith("*")


@needs_browser
def test_pagination_previous_next_and_url(page):
    _reset(page)
    first_page = _labels(page)
    page.mouse_click("#lb-next")
    _wait_label(page, f"page 2 of 2 · {len(EVALS)} evals")
    assert "page=2" in page.driver.current_url
    second = _labels(page)
    assert len(second) == len(EVALS) - 10 and not set(second) & set(first_page)
    assert page.find("#lb-next").get_attribute("disabled") is not None
    gamma = _row_of(page, "Gamma-2B")
    assert _cell(gamma, "boolean").text == "—"           # never ran boolean
    assert _cell(gamma, "_score").text.endswith("*")
    page.mouse_click("#lb-prev")
    _wait_label(page, f"page 1 of 2 · {len(EVALS)} evals")
    assert _labels(page) == first_page


@needs_browser
def test_click_headers_to_sort(page, ranked, dataset):
    _reset(page)
    page.choose("medium", "#lb-tier")
    page.wait_until(lambda d: "tier=medium" in d.current_url, message="medium tier")
    by_id = {e["eval_id"]: e["tiers"].get("medium", {}).get("tasks", {}) for e in ranked}

    def scores_shown():
        return [by_id[_eval_id(r)].get("arithmetic", {}).get("adjusted_score") for r in _rows(page)]

    page.mouse_click("#lb-table .ag-header-cell[col-id='arithmetic'] .ag-header-cell-label")
    page.wait_until(lambda d: "col=arithmetic" in d.current_url, message="sorted by arithmetic")
    direction = "asc" if "dir=asc" in page.driver.current_url else "desc"
    assert direction == "desc"                           # the first click puts the best cells first
    values = [v for v in scores_shown() if v is not None]
    assert values == sorted(values, reverse=direction == "desc") and len(values) >= 5
    page.mouse_click("#lb-table .ag-header-cell[col-id='arithmetic'] .ag-header-cell-label")
    page.wait_until(lambda d: f"dir={'desc' if direction == 'asc' else 'asc'}" in d.current_url
                    or "col=" not in d.current_url, message="sort direction flipped")
    if "col=arithmetic" in page.driver.current_url:
        values = [v for v in scores_shown() if v is not None]
        assert values == sorted(values, reverse=direction == "asc")
    # Sort by a fixed column too: fewest tokens first (or most), compared with analyze.py's numbers.
    page.mouse_click("#lb-table .ag-header-cell[col-id='_tokens'] .ag-header-cell-label")
    page.wait_until(lambda d: "col=_tokens" in d.current_url, message="sorted by tokens")
    assert "dir=asc" in page.driver.current_url          # ... and the fewest tokens first
    page.wait_until(lambda d: [float(_cell(r, "_tokens").text) for r in _rows(page)]
                    == sorted(float(_cell(r, "_tokens").text) for r in _rows(page)), message="fewest tokens first")
    assert page.console_errors() == []


@needs_browser
def test_search_box_finds_a_model(page):
    _reset(page)
    page.type_into("#lb-search", "gamma")
    _wait_label(page, "page 1 of 1 · 1 evals")
    assert _labels(page) == ["Gamma-2B (test)"]
    page.type_into("#lb-search", "zzz-no-such-model")
    message = page.wait_for("#lb-empty-message").text
    assert "zzz-no-such-model" in message and "search" in message
    page.type_into("#lb-search", "")
    _wait_label(page, f"page 1 of 2 · {len(EVALS)} evals")


@needs_browser
def test_facet_filter_empty_state_and_reset(page):
    _reset(page)
    page.choose("gamma", "body")
    _wait_label(page, "page 1 of 1 · 1 evals")
    page.choose("alpha", "body")                 # OR within a facet key
    _wait_label(page, "page 1 of 1 · 3 evals")
    assert set(_labels(page)) == {"Gamma-2B (test)", "Alpha-8B (test)", "Alpha-8B-Q4 (test)"}
    page.choose("moe", "body")                   # AND across keys: none of them is moe
    message = page.wait_for("#lb-empty-message").text
    assert "OR-ed within a key and AND-ed across keys" in message
    page.mouse_click("#lb-reset")
    _wait_label(page, f"page 1 of 2 · {len(EVALS)} evals")
    assert "?" not in page.driver.current_url.rstrip("?")


@needs_browser
def test_tier_filter_matches_analyze(page, ranked):
    _reset(page)
    page.choose("medium", "#lb-tier")
    page.wait_until(lambda d: "(3/6)" in _cell(_row_of(page, "Delta-14B"), "arithmetic").text,
                    message="Delta's medium-tier arithmetic cell (3 of 6 deep points)")
    assert page.text("#lb-tier-note").startswith("Tier medium")
    by_id = {e["eval_id"]: e for e in ranked}
    for row in _rows(page):
        medium = by_id[_eval_id(row)]["tiers"]["medium"]
        assert _cell(row, "_score").text.rstrip("*") == f"{medium['reasonscore']:.0f}"
        for group, task in medium["tasks"].items():
            text = _cell(row, group).text
            numbers = f"{_two_decimals(task['center'])} - {_two_decimals(task['center'] + task['margin'])}"
            assert text.startswith("≤ chance" if task.get("below_chance") else numbers)   # docs/decisions.md: no 0-width claim
    beta = _cell(_row_of(page, "Beta-30B-A3B"), "arithmetic")
    assert "[-.25]" in beta.text                 # a quarter of the deep samples


@needs_browser
def test_colour_follows_the_ranking_score(page, ranked):
    """A cell's colour is the scale's colour of its adjusted score (center + margin - truncation), so a heavily
    truncated cell is not painted like an untruncated one with the same center."""
    from resolver.web import theme

    _reset(page)
    page.choose("medium", "#lb-tier")
    page.wait_until(lambda d: "tier=medium" in d.current_url, message="medium tier")
    beta_id = next(e["eval_id"] for e in ranked if e["label"] == "Beta-30B-A3B (test)")
    task = next(e for e in ranked if e["eval_id"] == beta_id)["tiers"]["medium"]["tasks"]["arithmetic"]
    expected = theme.score_colour(task["adjusted_score"]).replace(" ", "")
    shown = _cell(_row_of(page, "Beta-30B-A3B"), "arithmetic").value_of_css_property("background-color")
    assert shown.replace(" ", "").replace("rgba", "rgb").replace(",1)", ")") == expected
    assert theme.score_colour(task["center"]).replace(" ", "") != expected


@needs_browser
def test_mode_switch_names_the_mode_and_changes_the_numbers(page, dataset):
    from tests.test_web_spiderweb import _hand_counts, _wilson

    _reset(page)
    page.select_dropdown("lb-mode", "C_P")
    page.wait_until(lambda d: "mode=C_P" in d.current_url, message="mode in the URL")
    assert "C_P interval" in page.text("#lb-tier-note")
    hand = _hand_counts(dataset, "Alpha-8B")["arithmetic"]          # no guessing: C_P = Wilson of c / n
    center, margin = _wilson(hand["correct"], hand["n"])
    cell = _cell(_row_of(page, "Alpha-8B"), "arithmetic")
    assert cell.text.startswith(f"{_two_decimals(center)} - {_two_decimals(center + margin)}")
    assert "C_P accuracy" in _hover_text(page, cell)


@needs_browser
def test_permalink_restores_the_view(page):
    _reset(page)
    page.choose("medium", "#lb-tier")
    page.type_into("#lb-search", "a")
    page.choose("score/token", "#lb-sort")
    page.wait_until(lambda d: "sort=ratio" in d.current_url and "q=a" in d.current_url, message="state in URL")
    page.wait_idle()
    link, labels = page.driver.current_url, _labels(page)
    page.open(page.home, ready_selector=READY)
    _wait_label(page, f"page 1 of 2 · {len(EVALS)} evals")
    page.open(link, ready_selector=READY)
    page.wait_until(lambda d: _labels(page) == labels, message="same rows after opening the link")
    assert page.find("#lb-search").get_attribute("value") == "a"
    checked = page.find("#lb-tier input[value='medium']")
    assert checked.is_selected()
    page.driver.refresh()
    page.wait_for(READY)
    page.wait_until(lambda d: _labels(page) == labels, message="same rows after a reload")


@needs_browser
def test_csv_and_json_download_read_back(page, ranked, tmp_path):
    _reset(page)
    page.enable_downloads(tmp_path)
    page.mouse_click("#lb-csv")
    path = page.wait_download(tmp_path, "leaderboard.csv")
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["eval_id"] for r in rows] == [e["eval_id"] for e in ranked]          # every page, in rank order
    for row, entry in zip(rows, ranked):
        assert float(row["reasonscore"]) == pytest.approx(entry["reasonscore"], rel=1e-12)
        assert float(row["score_per_token"]) == pytest.approx(entry["score_per_token"], rel=1e-12)
    page.mouse_click("#lb-json")
    data = json.loads(page.wait_download(tmp_path, "leaderboard.json").read_text())
    assert data["mode"] == "E_I" and len(data["rows"]) == len(ranked)


@needs_browser
def test_group_and_manifold_selection_recompute(page):
    _reset(page)
    page.select_dropdown("lb-groups", "arithmetic")
    page.wait_until(lambda d: not d.find_elements("css selector", "#lb-table .ag-cell[col-id='boolean']"),
                    message="boolean column hidden")
    # Over arithmetic only, Gamma (which lacks boolean) is complete again: no '*'.
    page.mouse_click("#lb-next")
    _wait_label(page, f"page 2 of 2 · {len(EVALS)} evals")
    assert not _cell(_row_of(page, "Gamma-2B"), "_score").text.endswith("*")
    page.select_dropdown("lb-manifold", "arithmetic · shallow (easy)")   # manifolds are named with their task
    page.wait_until(lambda d: d.find_element("css selector", "#lb-page-label").text.startswith("page 1"),
                    message="filter change resets to page 1")
    assert "[-" not in _cell(_row_of(page, "Beta-30B-A3B"), "arithmetic").text   # no truncation when shallow
    page.select_dropdown("lb-groups", "boolean")
    page.select_dropdown("lb-groups", "arithmetic")       # now boolean only, with the arithmetic manifold
    message = page.wait_for("#lb-empty-message").text
    assert "arithmetic · shallow (easy)" in message and "belongs to the task" in message
    assert page.console_errors() == []


def test_bad_dataset_path_is_one_line_error(tmp_path):
    # the real script in its own process; the other refused starts below run in this one
    proc = run_script("leaderboard.py", tmp_path / "nope.json", "--port", str(free_port()), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "dataset file not found" in proc.stderr


def test_missing_db_names_evaluate_command(tmp_path):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"name": "d", "db": "missing.db", "cohorts": []}))
    proc = run_refused_start("leaderboard.py", dataset, "--port", str(free_port()))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "evaluate.py --dataset" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_group_by_and_base_path(dataset):
    proc = run_refused_start("leaderboard.py", dataset, "--group-by", "params.nonexistent", "--port", str(free_port()))
    assert proc.returncode == 2 and "params.nonexistent" in proc.stderr and proc.stderr.count("\n") == 1
    proc = run_refused_start("leaderboard.py", dataset, "--url-base-pathname", "/a b/", "--port", str(free_port()))
    assert proc.returncode == 2 and "--url-base-pathname" in proc.stderr


@needs_browser
def test_served_under_base_pathname_by_the_real_script(dataset):
    from tests.test_web_server import started

    port = free_port()
    browser = None
    with started("leaderboard.py", dataset, "--port", port, "--url-base-pathname", "/rs/") as (_proc, line):
        assert line.endswith(f"http://localhost:{port}/rs/  (Ctrl-C to stop)")
        with pytest.raises(urllib.error.HTTPError):       # nothing is served outside the prefix
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
        try:
            browser = Browser()
            browser.open(f"http://127.0.0.1:{port}/rs/", ready_selector=READY)
            assert len(_rows(browser)) == 10
            assert browser.console_errors() == []
        finally:
            if browser:
                browser.close()


def test_empty_db_is_one_line_error(tmp_path):
    from resolver.pointsdb.writer import PointsWriter

    with PointsWriter(tmp_path / "e.db", keep_existing=False):
        pass
    dataset = tmp_path / "e.json"
    dataset.write_text(json.dumps({"name": "e", "db": "e.db", "cohorts": []}))
    proc = run_refused_start("leaderboard.py", dataset, "--port", str(free_port()))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "has no points" in proc.stderr


def _raw_reasons(dataset, model: str, task: str) -> Counter:
    """Invalid answers by reason, read from the fixture's own NDJSON files (not through the app)."""
    found = Counter()
    for path in (dataset.parent / "webtest" / model).glob("*/*.ndjson"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["base_task"] == task and not record["is_valid"] and not record["is_truncated"]:
                found[record["invalid_reason"]] += 1
    return found


def test_cell_hover_breaks_invalid_answers_down_by_reason(dataset):
    from resolver.analysis.leaderboard_scores import Board
    from resolver.pointsdb.reader import open_pointsdb
    from resolver.web import leaderboard_table
    from resolver.web.leaderboard import state_from_url

    with open_pointsdb(dataset.parent / "pointsdb-webtest.db") as db:
        board = Board(db)
    state = state_from_url(board, "", [])
    rows = leaderboard_table.selected_rows(board, state)
    view = board.view((), ())
    for model in ("Alpha-8B-Q4", "Alpha-8B"):
        row = next(r for r in rows if r["model"] == model)
        tips = leaderboard_table.table_content(board, [row], rows, view.columns["overall"], state, {})["data"][0]["_tip"]
        for task in ("arithmetic", "boolean", "brackets"):
            raw = _raw_reasons(dataset, model, task)
            hover = tips[task]
            if not raw:
                assert "invalid by reason" not in hover
                continue
            assert set(raw) <= {"no_marker", "placeholder"} and raw["no_marker"] > 0
            assert f"invalid by reason: format {sum(raw.values())} (no marker {raw['no_marker']}" in hover
            assert f"placeholder {raw['placeholder']}" in hover or not raw["placeholder"]


@needs_browser
def test_hovered_cell_shows_format_failures(page, dataset):
    _reset(page)
    raw = _raw_reasons(dataset, "Alpha-8B-Q4", "arithmetic")
    hover = _hover_text(page, _cell(_row_of(page, "Alpha-8B-Q4"), "arithmetic"))
    assert f"no marker {raw['no_marker']}" in hover and "invalid by reason: format" in hover
