"""spiderweb.py in headless Chromium: radar numbers, radar/bar toggle, overlays, eval choice, archetype."""
from __future__ import annotations

import json

import pytest

from tests.support.browser import DashServer, free_port, needs_browser, serve_in_browser
from tests.support.in_process import run_refused_start
from tests.support.web_dataset import shared_web_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return shared_web_dataset(tmp_path_factory)


@pytest.fixture(scope="module")
def page(dataset):
    from resolver.web.spiderweb import build_app

    yield from serve_in_browser(dataset, build_app, "#sw-chart .js-plotly-plot")


def _traces(b):
    figure = b.wait_until(lambda d: b.figure("sw-chart"), message="chart drawn")
    return {t.get("name"): t for t in figure["data"]}


def _hand_counts(dataset_path, model):
    """Correct / truncated / total counts per task, counted straight from the NDJSON files."""
    import json
    from pathlib import Path

    counts = {}
    for path in (Path(dataset_path).parent / "webtest" / model).glob("*/*.ndjson"):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            c = counts.setdefault(r["base_task"], {"correct": 0, "truncated": 0, "n": 0, "tokens": 0})
            c["correct"] += r["is_correct"]
            c["truncated"] += r["is_truncated"]
            c["n"] += 1
            c["tokens"] += r["usage"]["completion_tokens"]
    return counts


def _wilson(s, n, z=1.96):
    """Continuity-corrected Wilson interval (Newcombe 1998), as (midpoint, half-width):
    what every mode maps (docs/statistics.md); written out here, not taken from resolver.stats."""
    p = s / n
    den = 2 * (n + z * z)
    low = 0.0 if s == 0 else (2 * n * p + z * z - 1 - z * (z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1)) ** 0.5) / den
    high = 1.0 if s == n else (2 * n * p + z * z + 1 + z * (z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1)) ** 0.5) / den
    return (low + high) / 2, (high - low) / 2


def _accuracy(b):
    figure = b.wait_until(lambda d: b.figure("sw-chart"), message="chart drawn")
    return {t["name"]: t for t in figure["data"] if (t.get("meta") or [None])[0] == "accuracy"}


def _ids(dataset):
    import json

    from tests.conftest import run_script

    ranked = json.loads(run_script("analyze.py", "scores", dataset, "--format", "json", check=True).stdout)
    return {e["label"]: e["eval_id"] for e in ranked}, [e["label"] for e in ranked]


@needs_browser
def test_radar_overlays_the_top_models_with_ci_band(page, dataset):
    _, order = _ids(dataset)
    accuracy = page.wait_until(lambda d: len(_accuracy(page)) == 3 and _accuracy(page), message="3 evals overlaid")
    assert list(accuracy) == order[:3]                        # the default selection: the top 3 by ReasonScore
    alpha = accuracy["Alpha-8B (test)"]
    assert alpha["type"] == "scatterpolar" and alpha["theta"][:3] == ["arithmetic", "boolean", "brackets"]
    # arithmetic has no guessing, so C_P is the CC-Wilson (z = 1.96) of correct / all samples, worked by hand.
    hand = _hand_counts(dataset, "Alpha-8B")["arithmetic"]
    center, margin = _wilson(hand["correct"], hand["n"])
    assert alpha["r"][0] == pytest.approx(center, abs=1e-9)
    band = _traces(page)["Alpha-8B (test): 95% CI band"]
    assert band["fill"] == "tonext" and band["r"][0] == pytest.approx(center + margin, abs=1e-9)
    assert "C_P" in page.figure("sw-chart")["layout"]["title"]["text"]        # the mode is named
    assert page.console_errors() == []


@needs_browser
def test_choose_evals_and_archetypes(page, dataset):
    ids, _ = _ids(dataset)
    page.open(page.driver.current_url.split("?")[0] + f"?evals={ids['Beta-30B-A3B (test)']}",
              ready_selector="#sw-chart .js-plotly-plot")
    page.wait_until(lambda d: list(_accuracy(page)) == ["Beta-30B-A3B (test)"], message="Beta alone")
    names = lambda: {e.get_attribute("data-eval"): e.text for e in page.find_all("#sw-archetype > div")}
    assert "truncation-limited" in names()[ids["Beta-30B-A3B (test)"]]
    traces = _traces(page)
    marks = traces["Beta-30B-A3B (test): truncation > 2%"]
    hand = _hand_counts(dataset, "Beta-30B-A3B")
    assert set(marks["theta"]) == {t for t, c in hand.items() if c["truncated"] / c["n"] > 0.02}
    row = page.find(f"#sw-numbers tr[data-group='arithmetic'][data-eval='{ids['Beta-30B-A3B (test)']}']")
    assert f"{hand['arithmetic']['truncated'] / hand['arithmetic']['n']:.1%}" in row.text
    for model, archetype in (("Zeta-32B", "collapse"), ("Eta-70B", "over-thinker"), ("Theta-7B", "specialist")):
        page.select_dropdown("sw-evals", f"{model} (test)")
        page.wait_until(lambda d: archetype in names().get(ids[f"{model} (test)"], ""), message=f"{model} archetype")
    assert len(_accuracy(page)) == 4
    assert "easy" in names()[ids["Zeta-32B (test)"]]


@needs_browser
def test_csv_download_of_the_radar_numbers(page, dataset, tmp_path):
    import csv

    ids, _ = _ids(dataset)
    page.open(page.driver.current_url.split("?")[0] + f"?evals={ids['Alpha-8B (test)']}&evals={ids['Gamma-2B (test)']}",
              ready_selector="#sw-chart .js-plotly-plot")
    page.wait_until(lambda d: len(_accuracy(page)) == 2, message="two evals")
    page.enable_downloads(tmp_path)
    page.mouse_click("#sw-csv")
    with open(page.wait_download(tmp_path, "spiderweb.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["eval_id"] for r in rows} == {ids["Alpha-8B (test)"], ids["Gamma-2B (test)"]}
    gamma = {r["group"]: r for r in rows if r["eval_id"] == ids["Gamma-2B (test)"]}
    assert set(gamma) == {"arithmetic", "brackets"}          # Gamma never ran boolean
    hand = _hand_counts(dataset, "Gamma-2B")["arithmetic"]
    assert float(gamma["arithmetic"]["center"]) == pytest.approx(_wilson(hand["correct"], hand["n"])[0], abs=1e-9)
    assert float(gamma["arithmetic"]["truncated_ratio"]) == 0 and gamma["arithmetic"]["mode"] == "C_P"
    # the JSON download holds the same rows (docs/schemas/spiderweb-export.json)
    page.mouse_click("#sw-json")
    data = json.loads(page.wait_download(tmp_path, "spiderweb.json").read_text())
    assert (data["mode"], data["group_by"]) == ("C_P", "base_task")
    assert [(r["eval_id"], r["group"]) for r in data["rows"]] == [(r["eval_id"], r["group"]) for r in rows]
    assert [r["center"] for r in data["rows"]] == pytest.approx([float(r["center"]) for r in rows], abs=1e-9)


@needs_browser
def test_bar_toggle_overlays_and_permalink(page):
    page.open(page.driver.current_url.split("?")[0], ready_selector="#sw-chart .js-plotly-plot")
    page.choose("bars", "#sw-kind")
    page.wait_until(lambda d: next(iter(_accuracy(page).values()))["type"] == "bar", message="bar chart")
    traces = _traces(page)
    first = next(iter(_accuracy(page).values()))
    assert first["error_y"]["visible"] is True
    assert any(n.endswith(": mean tokens") for n in traces) and any(n.endswith(": truncated share") for n in traces)
    page.choose("token use", "#sw-overlays")           # switch the token overlay off
    page.wait_until(lambda d: not any(n.endswith(": mean tokens") for n in _traces(page)), message="no tokens")
    page.choose("95% CI band", "#sw-overlays")
    page.wait_until(lambda d: next(iter(_accuracy(page).values()))["error_y"]["visible"] is False,
                    message="no error bars")
    link = page.driver.current_url
    assert "kind=bar" in link and "overlay=truncation" in link
    page.driver.refresh()
    page.wait_for("#sw-chart .js-plotly-plot")
    page.wait_until(lambda d: next(iter(_accuracy(page).values()))["type"] == "bar", message="bars after reload")
    assert not any(n.endswith(": mean tokens") for n in _traces(page))
    page.choose("radar", "#sw-kind")
    page.wait_until(lambda d: next(iter(_accuracy(page).values()))["type"] == "scatterpolar", message="radar again")
    assert not any(n.endswith("95% CI band") for n in _traces(page))
    assert page.console_errors() == []


def test_group_by_without_values_is_one_line_error(dataset):
    proc = run_refused_start("spiderweb.py", dataset, "--group-by", "params.bogus", "--port", str(free_port()))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "params.bogus" in proc.stderr


@needs_browser
def test_group_by_param_spokes(page, dataset):
    """--group-by params.length: integer spokes (4, not 4.0), in numeric order, no nan spoke; runs last."""
    from resolver.web.data import open_app_dataset
    from resolver.web.spiderweb import build_app

    ds, db = open_app_dataset(dataset)
    try:
        with DashServer(build_app(ds, db, group_by="params.length")) as server:
            page.open(server.url("/"), ready_selector="#sw-chart .js-plotly-plot")
            theta = next(iter(_accuracy(page).values()))["theta"]
            assert theta[:-1] == ["4", "6", "8", "12", "16"] and "nan" not in theta
            assert page.console_errors() == []
    finally:
        db.close()


def test_points_without_a_group_value_make_no_nan_spoke(dataset):
    """--group-by facets.quant: only Alpha-8B-Q4 has a quant facet; everyone else's points are left
    out and counted, never drawn as a 'nan' spoke."""
    from resolver.web.data import open_app_dataset
    from resolver.web.spiderweb import Profiles

    ds, db = open_app_dataset(dataset)
    with db:
        profiles = Profiles(db, "facets.quant")
        total = int(db.query("SELECT count(*) AS n FROM points")["n"].iloc[0])
        q4 = int(db.query("SELECT count(*) AS n FROM points WHERE model = 'Alpha-8B-Q4'")["n"].iloc[0])
    assert profiles.groups == ["q4"] and set(profiles.table["group"]) == {"q4"}
    assert profiles.dropped_points == total - q4 > 0
    assert [profiles.labels[e] for e in profiles.eval_ids] == ["Alpha-8B-Q4 (test)"]
