"""explorer.py in headless Chromium: surfaces per eval, view / eval selection, linked panels, point clicks."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import run_script
from tests.support.browser import free_port, needs_browser, serve_in_browser
from tests.support.in_process import run_refused_start
from tests.support.web_dataset import shared_web_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return shared_web_dataset(tmp_path_factory)


@pytest.fixture(scope="module")
def page(dataset):
    from resolver.probe.tokenizers import load_tokenizer
    from resolver.web.explorer import build_app

    def with_bytes_fft(ds, db):
        return build_app(ds, db, tokenizer=load_tokenizer("bytes"))

    for browser in serve_in_browser(dataset, with_bytes_fft, "#ex-main .js-plotly-plot"):
        browser.dataset_path = dataset
        yield browser


def _records(dataset, model, task):
    for path in (Path(dataset).parent / "webtest" / model).glob("*/*.ndjson"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["base_task"] == task:
                yield record


def _main_figures(b):
    return b.driver.execute_script(
        "return Array.from(document.querySelectorAll('#ex-main .js-plotly-plot')).map(g => "
        "({data: g.data.map(t => ({type: t.type, name: t.name, x: t.x, y: t.y, z: t.z})), "
        "title: g.layout.title.text}));")


def _wilson_cc(s, n, z=1.96):
    """Continuity-corrected Wilson interval (Newcombe 1998), as (midpoint, half-width):
    what every mode maps (docs/statistics.md); written out here, not taken from resolver.stats."""
    p = s / n
    den = 2 * (n + z * z)
    low = 0.0 if s == 0 else (2 * n * p + z * z - 1 - z * (z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1)) ** 0.5) / den
    high = 1.0 if s == n else (2 * n * p + z * z + 1 + z * (z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1)) ** 0.5) / den
    return (low + high) / 2, (high - low) / 2


def _wilson_center(s, n):
    return _wilson_cc(s, n)[0]


def _ranked(dataset):
    from tests.conftest import run_script as run

    return json.loads(run("analyze.py", "scores", dataset, "--format", "json", check=True).stdout)


def _url_state(b):
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(b.driver.current_url).query)


def _home(b):
    return b.driver.current_url.split("?")[0]


def _trace(figure, prefix):
    return next(t for t in figure["data"] if (t["name"] or "").startswith(prefix))


@needs_browser
def test_top_models_side_by_side_on_one_manifold_grid(page, dataset):
    ranked = _ranked(dataset)
    figures = page.wait_until(lambda d: len(_main_figures(page)) == 2 and _main_figures(page), message="2 surfaces")
    # Default evals: the two best by ReasonScore; default manifold: the task's entry with the most points (deep).
    assert [f["title"].split("<br>")[0] for f in figures] == [e["label"] for e in ranked[:2]]
    assert "arithmetic/depth_length · deep · C_P" in figures[0]["title"]
    surface, shadow = figures[0]["data"][0], figures[0]["data"][1]
    assert surface["type"] == "surface" and shadow["name"] == "lower 95% bound" and surface["name"] == "C_P accuracy"
    assert surface["x"] == [2, 3] and surface["y"] == [4, 8, 16]        # the deep grid only, not the union
    # Hand value: Alpha-8B at max_depth 2, length 8 (arithmetic has no guessing: plain Wilson).
    samples = [r for r in _records(dataset, "Alpha-8B", "arithmetic")
               if r["params"]["max_depth"] == 2 and r["params"]["length"] == 8]
    correct = sum(r["is_correct"] for r in samples)
    i, j = surface["y"].index(8), surface["x"].index(2)
    assert surface["z"][i][j] == pytest.approx(_wilson_center(correct, len(samples)), abs=1e-9)
    assert all(low is None or low <= high for lows, highs in zip(shadow["z"], surface["z"])
               for low, high in zip(lows, highs))
    assert page.console_errors() == []


@needs_browser
def test_real_mouse_click_inspects_a_point_and_browses_its_samples(page, dataset):
    from tests.support.browser import real_click

    top = _ranked(dataset)[0]["eval_id"]
    page.open(_home(page) + f"?evals={top}", ready_selector="#ex-main .js-plotly-plot")   # one surface: quicker
    page.wait_idle()
    real_click(page, page.find("#ex-main .js-plotly-plot"))
    page.wait_for("#ex-point-ids", timeout=30)
    state = _url_state(page)
    depth, length = int(state["p.params.max_depth"][0]), int(state["p.params.length"][0])
    label = _main_figures(page)[0]["title"].split("<br>")[0]
    model = label.replace(" (test)", "")
    assert page.text("#ex-point-heading") == (f"{label} · arithmetic / depth_length (deep) at max_depth = {depth}, "
                                              f"length = {length}")
    samples = [r for r in _records(dataset, model, "arithmetic")
               if r["params"]["max_depth"] == depth and r["params"]["length"] == length]
    correct = sum(r["is_correct"] for r in samples)
    truncated = sum(r["is_truncated"] for r in samples)
    wrong = len(samples) - correct - truncated
    assert page.text("#ex-point-counters") == f"correct {correct}, incorrect {wrong}, invalid 0, truncated {truncated}"
    assert page.text("#ex-point-interval").startswith(f"{_wilson_center(correct, len(samples)):.3f} ±")
    # The sample viewer: prompt, answer, every sample one after another.
    first = sorted(samples, key=lambda r: int(r["key"].rsplit("-", 1)[1]))[0]
    assert page.text("#ex-sample-prompt") == first["messages"][0]["content"]
    assert page.text("#ex-sample-answer") == (first["answer"] or "(no answer: cut off by the token limit)")
    assert page.text("#ex-sample-count") == f"{len(samples)} of {len(samples)} samples"
    page.mouse_click("#ex-point button:nth-of-type(2)")
    page.wait_until(lambda d: page.text("#ex-sample-head").startswith(f"sample 2 of {len(samples)}"), message="next")
    # The projections follow the inspected point: a dashed line at its max_depth and length.
    page.wait_until(lambda d: len((page.figure("ex-projection")["layout"].get("shapes") or [])) == 2,
                    message="projection markers")
    assert [s["x0"] for s in page.figure("ex-projection")["layout"]["shapes"]] == [depth, length]
    # A permalink brings the same point back after a reload.
    page.driver.refresh()
    page.wait_for("#ex-point-ids", timeout=20)
    assert page.text("#ex-point-heading").endswith(f"max_depth = {depth}, length = {length}")


@needs_browser
def test_answers_scroll_to_the_end_and_failed_filter(page, dataset):
    ranked = _ranked(dataset)
    beta = next(e["eval_id"] for e in ranked if e["label"] == "Beta-30B-A3B (test)")
    page.open(_home(page) + f"?evals={beta}&pe={beta}&p.params.max_depth=3&p.params.length=16",
              ready_selector="#ex-point-ids")
    page.wait_for("#ex-sample-answer")
    samples = [r for r in _records(dataset, "Beta-30B-A3B", "arithmetic")
               if r["params"]["max_depth"] == 3 and r["params"]["length"] == 16]
    failed = len(samples) - sum(r["is_correct"] for r in samples)
    page.mouse_click("#ex-point input[type='checkbox']")          # failed samples only
    page.wait_until(lambda d: page.text("#ex-sample-count") == f"{failed} of {len(samples)} samples",
                    message="only the failed samples")
    assert page.find("#ex-point .ex-sample").get_attribute("data-outcome") != "correct"
    top, height, visible = page.driver.execute_script(
        "const a = document.getElementById('ex-sample-answer'); return [a.scrollTop, a.scrollHeight, a.clientHeight];")
    assert top + visible >= height - 2                          # the end of the answer is what shows


@needs_browser
def test_truncation_markers_scale_with_the_rate(page, dataset):
    ranked = _ranked(dataset)
    alpha, beta = (next(e["eval_id"] for e in ranked if e["label"] == f"{m} (test)") for m in ("Alpha-8B", "Beta-30B-A3B"))
    page.open(_home(page) + f"?evals={alpha}&evals={beta}", ready_selector="#ex-main .js-plotly-plot")
    figures = page.wait_until(lambda d: len(_main_figures(page)) == 2 and _main_figures(page), message="2 surfaces")
    markers = _trace(figures[1], "truncated ≥ 10%")
    # Beta truncates a quarter of every deep point (max_depth 2 and 3): a marker on each, none for Alpha.
    assert sorted(set(markers["x"])) == [2, 3] and len(markers["x"]) == 6
    assert not _trace(figures[0], "truncated ≥ 10%")["x"]
    assert len(_trace(figures[1], "measured points")["x"]) == 6       # the 6 deep arithmetic cells


@needs_browser
def test_manifold_choice_tier_order_and_mode(page, dataset):
    top = _ranked(dataset)[0]["eval_id"]
    page.open(_home(page) + f"?view=arithmetic%2Fmanifold_length&evals={top}", ready_selector="#ex-main .js-plotly-plot")
    figure = page.wait_until(lambda d: _main_figures(page) and _main_figures(page)[0], message="surface")
    layout = page.figure_by_index(0)["layout"]
    assert layout["scene"]["xaxis"]["ticktext"] == ["shallow", "deep"]     # by manifold.degree, not a-z
    assert figure["data"][0]["x"] == [0, 1]
    page.open(_home(page) + f"?evals={top}", ready_selector="#ex-main .js-plotly-plot")
    page.select_dropdown("ex-manifold", "all entries (union of their grids)")
    page.wait_until(lambda d: _main_figures(page) and _main_figures(page)[0]["data"][0]["x"] == [1, 2, 3],
                    message="union of the shallow and deep grids")
    page.select_dropdown("ex-mode", "E_I")
    page.wait_until(lambda d: _main_figures(page)[0]["data"][0]["name"] == "E_I accuracy", message="E_I surface")
    assert "mode=E_I" in page.driver.current_url


@needs_browser
def test_cameras_move_together(page):
    from selenium.webdriver.common.action_chains import ActionChains

    page.open(_home(page), ready_selector="#ex-main .js-plotly-plot")
    page.wait_until(lambda d: len(_main_figures(page)) == 2, message="2 surfaces")
    page.wait_idle()
    time.sleep(1)                                  # both WebGL scenes drawn before the drag
    graph = page.find_all("#ex-main .js-plotly-plot")[0]
    ActionChains(page.driver).move_to_element_with_offset(graph, 0, 40).click_and_hold().pause(0.1) \
        .move_by_offset(60, 10).pause(0.1).move_by_offset(60, 10).pause(0.1).release().perform()
    cameras = lambda: page.driver.execute_script(
        "return Array.from(document.querySelectorAll('#ex-main .js-plotly-plot')).map(g => "
        "JSON.stringify(g._fullLayout.scene.camera.eye));")
    page.wait_until(lambda d: len(set(cameras())) == 1 and json.loads(cameras()[0])["x"] != 1.5,
                    timeout=40, message="the second surface follows the first camera")


@needs_browser
def test_shadow_one_legend_click_away_and_no_msaa_in_software(page):
    """The lower-bound surface starts hidden and a real click on its legend entry shows it; this
    headless Chromium renders WebGL in software, so the scenes are drawn without multisampling."""
    page.open(_home(page), ready_selector="#ex-main .js-plotly-plot")
    page.wait_until(lambda d: len(_main_figures(page)) == 2, message="2 surfaces")
    page.wait_idle()
    state = page.driver.execute_script(
        "return {software: window.rsSoftwareWebGL(), scenes: Array.from(document.querySelectorAll("
        "'#ex-main .js-plotly-plot')).map(g => ({shadow: g._fullData.find(t => t.name === 'lower 95% bound').visible, "
        "antialias: g._fullLayout.scene._scene.glplot.gl.getContextAttributes().antialias}))};")
    assert state["software"] is True
    assert state["scenes"] == [{"shadow": "legendonly", "antialias": False}] * 2
    entry = page.driver.execute_script(
        "const g = document.querySelector('#ex-main .js-plotly-plot');"
        "return Array.from(g.querySelectorAll('.legend .traces')).find(t => t.textContent.indexOf("
        "'lower 95% bound') >= 0).querySelector('.legendtoggle');")
    page.mouse_click(entry)
    page.wait_until(lambda d: d.execute_script(
        "const g = document.querySelector('#ex-main .js-plotly-plot');"
        "return g._fullData.find(t => t.name === 'lower 95% bound').visible === true;"),
        message="the shadow shown after a click on its legend entry")


@needs_browser
def test_empty_and_stale_states(page, dataset):
    ranked = _ranked(dataset)
    gamma = next(e["eval_id"] for e in ranked if e["label"] == "Gamma-2B (test)")
    alpha = next(e["eval_id"] for e in ranked if e["label"] == "Alpha-8B (test)")
    page.open(_home(page) + f"?evals={alpha}&pe={alpha}&p.params.max_depth=2&p.params.length=8",
              ready_selector="#ex-point-ids")
    page.select_dropdown("ex-task", "boolean")
    page.wait_for("#ex-point-hint")                      # the old point is gone with the task change
    page.open(_home(page) + f"?task=boolean&evals={gamma}&evals={alpha}", ready_selector="#ex-main")
    message = page.wait_until(lambda d: d.find_elements("css selector", ".ex-no-data")
                              and d.find_element("css selector", ".ex-no-data").text, message="no-data note")
    assert "Gamma-2B (test) has no points of boolean/length" in message
    page.open(_home(page) + "?evals=", ready_selector="#ex-main")
    page.open(_home(page) + "?evals=nonexistent", ready_selector="#ex-main")
    assert "Choose at least one eval" in page.wait_for("#ex-empty").text
    assert page.console_errors() == []


@needs_browser
def test_one_d_view_line_click_and_fft(page):
    from tests.support.browser import cartesian_point_offset, real_click

    page.open(_home(page), ready_selector="#ex-main .js-plotly-plot")
    page.select_dropdown("ex-view", "length (length)")
    page.wait_until(lambda d: _main_figures(page) and _main_figures(page)[0]["data"][0]["type"] == "scatter",
                    message="line chart for a 1-D view")
    lines = _main_figures(page)[0]["data"]
    assert lines[0]["x"] == [4, 8, 16] and len(lines) == 2
    graph = page.find("#ex-main .js-plotly-plot")
    real_click(page, graph, cartesian_point_offset(page, graph, trace=1, index=1))   # 2nd eval at length 8
    page.wait_for("#ex-point-ids", timeout=20)
    label = lines[1]["name"]
    # The manifold entry chosen for the 2-D view (deep) stays: the point is deep's length-8 cells.
    assert page.text("#ex-point-heading") == f"{label} · arithmetic / length (deep) at length = 8"
    samples = [r for r in _records(page.dataset_path, label.replace(" (test)", ""), "arithmetic")
               if r["params"]["length"] == 8 and r["manifold"]["id"] == "deep"]
    correct = sum(r["is_correct"] for r in samples)
    assert page.text("#ex-point-counters").startswith(f"correct {correct}, ")
    tokens = page.figure("ex-tokens")
    assert [t["type"] for t in tokens["data"]] == ["bar"] * 2
    for trace in tokens["data"]:
        answers = list(_records(page.dataset_path, trace["name"].replace(" (test)", ""), "arithmetic"))
        assert sum(trace["y"]) == len(answers)          # every answer lands in one bin
    # One prompt FFT per selected eval, in the order of the evals box, each titled with its eval.
    ffts = page.wait_until(lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll('#ex-fft .js-plotly-plot')).map(g => "
        "({title: g.layout.title.text, names: g.data.map(t => t.name)}));"), message="FFT graphs")
    assert [f["title"].split("<sub>")[1].split("</sub>")[0] for f in ffts] == [line["name"] for line in lines]
    for fft in ffts:
        assert fft["names"] == ["params.length = 4", "params.length = 8", "params.length = 16"]
        assert fft["title"].startswith("Prompt FFT (bytes) by length")     # --tokenizer bytes: no fallback said
    assert not page.find_all("#ex-fft .ex-fft-fallback")
    page.select_dropdown("ex-task", "boolean")
    page.wait_until(lambda d: "boolean" in page.figure("ex-tokens")["layout"]["title"]["text"], message="task switch")
    assert page.console_errors() == []


def test_unloadable_tokenizer_is_one_line_error(tmp_path, dataset):
    proc = run_refused_start("explorer.py", dataset, "--tokenizer", str(tmp_path / "no-such-tokenizer"),
                             "--port", str(free_port()))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "tokenizer" in proc.stderr


def test_views_inferred_without_a_config(dataset, tmp_path):
    """A dataset file without "config": per task a 2-D view of the first two varying numeric params + 1-D views."""
    from resolver.web.data import open_app_dataset
    from resolver.web.explorer_data import Landscape

    spec = json.loads(Path(dataset).read_text())
    spec.pop("config")
    spec["cohorts"] = []
    spec["db"] = str(Path(dataset).parent / spec["db"])
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(spec))
    ds, db = open_app_dataset(bare)
    with db:
        views = {v.ident: v.dims for v in Landscape(ds, db).views}
    assert views["arithmetic/length_max_depth"] == ("params.length", "params.max_depth")
    assert views["arithmetic/length"] == ("params.length",) and views["arithmetic/max_depth"] == ("params.max_depth",)
    assert views["boolean/length_max_depth"] == ("params.length", "params.max_depth")
    assert views["brackets/length_max_depth"] == ("params.length", "params.max_depth")   # 6 / 12 and 2 / 4


def test_base_pathname_normalisation():
    from resolver.core.errors import UserError
    from resolver.web.server import normalize_base_pathname

    assert normalize_base_pathname("/") == "/"
    assert normalize_base_pathname("rs") == normalize_base_pathname("/rs") == normalize_base_pathname("/rs/") == "/rs/"
    assert normalize_base_pathname("/a/b") == "/a/b/"
    for bad in ("/../x", "/a b/", "/a?b/"):
        with pytest.raises(UserError):
            normalize_base_pathname(bad)


def test_text_dimension_on_a_surface_axis(dataset):
    """A 2-D view over a text dimension (manifold.id) is drawn at 0, 1 ... with the values as tick labels,
    and a click at a position inspects the points of that value."""
    from resolver.web import explorer_figures as ex
    from resolver.web.data import open_app_dataset
    from resolver.web.explorer_data import Landscape

    ds, db = open_app_dataset(dataset)
    with db:
        land = Landscape(ds, db)
        alpha = next(e for e in land.eval_ids if land.labels[e] == "Alpha-8B (test)")
        figure = ex.surface_figure(land, "arithmetic/manifold_length", alpha)
        assert figure["layout"]["scene"]["xaxis"]["ticktext"] == ["shallow", "deep"]      # easy first
        assert figure["data"][0]["x"] == [0, 1] and figure["data"][0]["y"] == [4, 8, 16]
        shallow = ex.from_position(0, land.categories("arithmetic/manifold_length", "manifold.id"))
        rows = land.points_at("arithmetic/manifold_length", alpha, {"manifold.id": shallow, "params.length": 8})
    samples = [r for r in _records(dataset, "Alpha-8B", "arithmetic")
               if r["manifold"]["id"] == "shallow" and r["params"]["length"] == 8]
    assert int(rows["correct"].sum()) == sum(r["is_correct"] for r in samples) and len(rows) == 1


def test_each_eval_gets_its_own_tokenizer_or_bytes_said_on_the_panel(dataset, tmp_path):
    """Without --tokenizer an eval's FFT uses its hf_id tokenizer when cached, else bytes as probe.py fft
    does: the panel draws every eval given, says which ones fell back, and its numbers are probe.py fft's."""
    import pandas as pd

    from resolver.probe.tokenizers import ByteTokenizer, eval_tokenizers, fft_tokenizers
    from resolver.web import explorer_figures as ex
    from resolver.web.data import open_app_dataset
    from resolver.web.explorer_data import Landscape

    evals = pd.DataFrame({"eval_id": ["a1", "b2", "c3"],
                          "hf_id": [None, "no-such-org/no-such-model-xyz", "no-such-org/no-such-model-xyz"]})
    notes = []
    chosen = eval_tokenizers(evals, None, warn=notes.append)
    assert chosen == {"a1": None, "b2": None, "c3": None}
    assert len(notes) == 1 and "not in the local cache" in notes[0]   # looked up once per hf_id
    everyone = eval_tokenizers(evals, "bytes")
    assert {type(t) for t in everyone.values()} == {ByteTokenizer}
    fallen = fft_tokenizers(evals, None)
    assert all(t.name == "bytes" and t.fallback for t in fallen.values())
    assert not any(t.fallback for t in fft_tokenizers(evals, "bytes").values())    # asked for: not a fallback

    probe_dir = tmp_path / "probe"
    run_script("probe.py", "fft", dataset, "--format", "json", "--output-dir", probe_dir, check=True)
    spectra = json.loads((probe_dir / "fft.json").read_text())["spectra"]
    ds, db = open_app_dataset(dataset)
    with db:
        first = Landscape(ds, db).eval_ids[0]
        land = Landscape(ds, db, tokenizers={first: ByteTokenizer()})
        chosen_evals = land.eval_ids[:3]
        panel = ex.fft_panel(land, "arithmetic/length", chosen_evals)
    graphs = [c for c in panel.children if getattr(c, "figure", None)]
    fallbacks = [c for c in panel.children if "ex-fft-fallback" in (getattr(c, "className", "") or "")]
    assert [g.id["eval"] for g in graphs] == chosen_evals
    assert [f.to_plotly_json()["props"]["data-eval"] for f in fallbacks] == chosen_evals[1:]
    assert all("UTF-8 bytes, as probe.py fft does" in f.children for f in fallbacks)
    assert "(bytes)" in graphs[0].figure["layout"]["title"]["text"]
    assert all("(bytes, fallback)" in g.figure["layout"]["title"]["text"] for g in graphs[1:])
    for graph in graphs:      # the numbers probe.py fft printed for this eval, view and length
        for trace in graph.figure["data"]:
            length = int(trace["name"].split(" = ")[1])
            expected = next(r["spectrum"] for r in spectra if r["eval_id"] == graph.id["eval"]
                            and r["base_task"] == "arithmetic" and r["view"] == "length" and r["value"] == length)
            assert trace["y"] == pytest.approx(expected[1:], rel=1e-9, abs=1e-12)


def test_fft_reads_a_point_run_twice(tmp_path):
    """A point whose samples come from two run folders (the demo run twice) has its sources as an
    array in the PointsDB's frame: the FFT (explorer panel and probe.py fft) reads both files."""
    import numpy as np

    from resolver.ingest.raw_records import point_records

    def record(key):
        return {"key": key, "model": "m", "template": "t", "sampler": "s", "base_task": "a", "task_version": 1,
                "params": {"length": 3}, "messages": [{"role": "user", "content": "2+2"}], "answer": "4",
                "is_correct": True, "usage": {"completion_tokens": 5}}

    for folder, key in (("run1", "x-1"), ("run2", "x-2")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "f.ndjson").write_text(json.dumps(record(key)) + "\n")
    point = {"id": 1, "model": "m", "template": "t", "sampler": "s", "base_task": "a", "task_version": 1,
             "params": {"length": 3}, "sources": np.array(["run1/f.ndjson", "run2/f.ndjson"], dtype=object)}
    assert [r["key"] for r in point_records(point, tmp_path)] == ["x-1", "x-2"]
    assert list(point_records({**point, "sources": None}, tmp_path)) == []


def test_default_view_is_drawn_at_start_up(dataset, tmp_path):
    """build_app computes the default page's figures: its first visit reads no raw NDJSON (the prompt FFT
    shows with the run folders gone), while a view that was not warmed reports them unavailable."""
    import shutil

    from resolver.probe.tokenizers import load_tokenizer
    from resolver.web import explorer as ex
    from resolver.web.data import open_app_dataset
    from resolver.web.explorer_data import Landscape

    copy = tmp_path / "data"
    shutil.copytree(Path(dataset).parent, copy)
    ds, db = open_app_dataset(copy / Path(dataset).name)
    with db:
        land = Landscape(ds, db, load_tokenizer("bytes"))
        ex.warm(land)
        shutil.rmtree(copy / "webtest")          # the raw NDJSON the FFT reads
        current = ex.state_update(land, None, [], "", None, None, None, None, None, None)[7]
        assert len(current["evals"]) == ex.DEFAULT_EVALS
        main, _tokens = ex.surfaces_update(land, current["view"], current["evals"], current["manifold"],
                                           current["mode"])
        assert len(main) == ex.DEFAULT_EVALS
        panel = str(ex.fft_update(land, current["view"], current["evals"]))
        assert "ex-fft-graph" in panel and "unavailable" not in panel
        other = next(v.ident for v in land.views if v.base_task != land.view(current["view"]).base_task)
        assert "prompt FFT unavailable" in str(ex.fft_update(land, other, current["evals"]))
