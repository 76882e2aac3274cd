"""probe.py fft: a view's facet_by gives one spectrum panel per facet value, and the
figure is a readable grid (columns from the panel count, size from the grid, legends
outside the curves, title above every panel)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import evaluate_hand_dataset, run_script
from PIL import Image
from test_analyze_forensics_fixture import CONFIG, MIDPOINT, SAMPLES, model_eval_id, write_cohort

from resolver.analysis.surface import TaskView
from resolver.plots.fft import TITLE_PX, fft_figure
from resolver.plots.layout import grid_shape, wrap

pytestmark = pytest.mark.slow

FACETED = CONFIG.replace("group_by: [params.length]\n",
                         "group_by: [params.length]\n        facet_by: [params.max_depth]\n")


@pytest.fixture(scope="module")
def faceted(tmp_path_factory):
    assert FACETED != CONFIG
    root = tmp_path_factory.mktemp("fft-facets")
    for model in MIDPOINT:
        write_cohort(root / "data", model)
    return evaluate_hand_dataset(root, "forensics", FACETED, MIDPOINT)


def probe(*args):
    proc = run_script("probe.py", "fft", *args, "--quiet")
    assert proc.returncode == 0, proc.stderr
    return proc


def byte_spectrum_by_hand(prompts, bins=256):
    """Mean over prompts of |rfft(bytes - mean)| / n, read off at `bins` frequencies in
    [0, 0.5] by linear interpolation (these prompts are short: fewer transform bins than grid points)."""
    grid = np.linspace(0.0, 0.5, bins)
    spectra = []
    for prompt in prompts:
        x = np.frombuffer(prompt.encode(), dtype=np.uint8).astype(float)
        spectra.append(np.interp(grid, np.fft.rfftfreq(x.size), np.abs(np.fft.rfft(x - x.mean())) / x.size))
    return np.mean(spectra, axis=0)


def test_facet_by_splits_the_view_into_one_spectrum_set_per_value(faceted):
    data = json.loads(probe(faceted, "--view", "length", "--tokenizer", "bytes", "--format", "json").stdout)
    rows = data["spectra"]
    keys = sorted((r["eval_id"], r["facet"], r["value"]) for r in rows)
    assert keys == sorted((model_eval_id(m), f"params.max_depth={d}", length)
                          for m in MIDPOINT for d in (1, 2) for length in (4, 8, 16))
    assert all(r["points"] == 1 and r["samples"] == SAMPLES for r in rows)
    # the fixture's arithmetic prompt for sample i: an instruction line, then "Evaluate: " and
    # the digits (i + j) % 9 + 1 joined by " + "
    for length in (4, 8, 16):
        prompts = ["Answer with Final Answer: <integer>\nEvaluate: "
                   + " + ".join(str((i + j) % 9 + 1) for j in range(length)) for i in range(SAMPLES)]
        expected = byte_spectrum_by_hand(prompts)
        for row in (r for r in rows if r["value"] == length):
            np.testing.assert_allclose(row["spectrum"], expected, rtol=1e-9, atol=1e-12)


def test_facet_panels_in_the_png(faceted, tmp_path):
    one = model_eval_id("Loopy-3B")
    probe(faceted, "--view", "length", "--split-by", "none", "--filters", json.dumps({"eval_id": [one]}),
          "--output-dir", tmp_path)
    # 2 facets x 1 eval = 2 panels: one row of two 640 x 360 px cells under a 70 px title band
    with Image.open(tmp_path / "fft.png") as image:
        assert image.size == (2 * 640, 360 + 70)
    probe(faceted, "--view", "length", "--split-by", "none", "--output-dir", tmp_path / "both")
    # 2 facets x 2 evals: the evals are the columns, the facets the rows
    with Image.open(tmp_path / "both" / "fft.png") as image:
        assert image.size == (2 * 640, 2 * 360 + 70)


@pytest.mark.parametrize("panels, evals, shape", [
    (1, 1, (1, 1)), (2, 1, (1, 2)), (3, 1, (2, 2)), (12, 1, (3, 4)), (14, 1, (4, 4)), (30, 1, (8, 4)),
    (2, 2, (1, 2)), (6, 2, (3, 2)), (24, 2, (6, 4)), (12, 3, (4, 3)), (8, 4, (2, 4)), (10, 5, (3, 4)),
])
def test_grid_shape_by_hand(panels, evals, shape):
    assert grid_shape(panels, evals) == shape


def test_wrap_keeps_lines_short():
    text = wrap("arithmetic/length [params.max_depth=2] — Simulated strong model (qwen3 stand-in, r12)", 30)
    assert text.splitlines() == ["arithmetic/length", "[params.max_depth=2] —", "Simulated strong model (qwen3",
                                 "stand-in, r12)"]
    assert wrap("short\nlines", 30) == "short\nlines"


def synthetic_table(views, evals, values=(10, 20, 40, 80, 160)):
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"base_task": v.base_task, "view": v.view, "dimension": v.dims[0], "facet": "",
                          "eval_id": e, "value": x, "points": 1, "samples": 16, "spectrum": rng.random(256) + 0.1}
                         for v in views for e in evals for x in values])


def boxes_overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("n_views, evals, shape", [(14, ["a1b2c3"], (4, 4)), (2, ["a1", "b2", "c3"], (2, 3)),
                                                   (12, ["a1", "b2"], (6, 4))])
def test_figure_layout_is_a_readable_grid(n_views, evals, shape):
    views = [TaskView(f"task{i}", f"a_rather_long_view_name_{i}", (f"params.dimension_{i}",)) for i in range(n_views)]
    labels = {e: f"Simulated strong model number {e} (qwen3 stand-in, r12)" for e in evals}
    fig = fft_figure(synthetic_table(views, evals), views, evals, labels, "Prompt token spectra", {})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    rows, cols = shape
    assert tuple(fig.get_size_inches() * fig.dpi) == pytest.approx((cols * 640, rows * 360 + TITLE_PX))
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == n_views * len(evals)
    assert len({round(ax.get_position().x0, 3) for ax in shown}) == cols
    assert len({round(ax.get_position().y0, 3) for ax in shown}) == rows
    # row by row, every eval keeps its column: panel i shows eval i mod (number of evals)
    for i, ax in enumerate(shown):
        assert f"number {evals[i % len(evals)]} " in " ".join(ax.get_title().split())
    title = fig._suptitle.get_window_extent(renderer)
    legends = [ax.get_legend().get_window_extent(renderer) for ax in shown]
    for ax in shown:
        # the title is above every panel, its heading included
        assert not boxes_overlap(title, ax.get_tightbbox(renderer))
        assert title.y0 >= ax.get_tightbbox(renderer).y1 - 1
        # no legend covers any plotting area
        assert not any(boxes_overlap(legend, ax.get_window_extent(renderer)) for legend in legends)
    # everything is inside the canvas
    width, height = fig.canvas.get_width_height()
    for ax in shown:
        box = ax.get_tightbbox(renderer)
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1
