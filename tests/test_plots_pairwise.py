"""analyze.py pairwise --format png with long labels: wrapped, nothing cut off or
overlapping, width as asked, height grown with the labels."""
from __future__ import annotations

import json

import pytest
import test_analyze_fixture as fixture
from conftest import run_script
from PIL import Image

from resolver.plots.pairwise import pairwise_figure

LONG = {"Alpha": "Simulated strong model (qwen3 stand-in, r12) with a long descriptive label",
        "Beta": "Simulated mid-size model (llama stand-in, r12)", "Gamma": "Gamma",
        "Delta": "Simulated loop-prone model (zerocot-nosys, greedy-4k sampler, 32k context)"}


def build(root, labels):
    original = fixture.write_eval_entry

    def labelled(cohort, model, *args, **kwargs):
        return original(cohort, model, *args, **dict(kwargs, label=labels[model]))
    fixture.write_eval_entry = labelled
    try:
        return fixture.build_dataset(root)
    finally:
        fixture.write_eval_entry = original


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    """The long labels' dataset, and the hand dataset as it is built once per test run, whose
    labels ("Alpha model" ...) are short."""
    short = fixture.hand_dataset(tmp_path_factory, "short")
    assert max(len(entry["label"]) for cohort in short.parent.glob("hand/*/evals.json")
               for entry in json.loads(cohort.read_text())) < 20
    return build(tmp_path_factory.mktemp("long"), LONG), short


def test_png_width_is_the_flag_and_long_labels_make_it_taller(datasets, tmp_path):
    sizes = []
    for dataset, name in zip(datasets, ("long", "short")):
        out = tmp_path / f"{name}.png"
        proc = run_script("analyze.py", "pairwise", dataset, "--format", "png", "--width", "1000", "--output", out)
        assert proc.returncode == 0, proc.stderr
        with Image.open(out) as image:
            sizes.append(image.size)
    (long_w, long_h), (short_w, short_h) = sizes
    assert long_w == short_w == 1000
    assert long_h > short_h


def overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("k", [4, 12])
def test_labels_fit_without_overlap(k):
    names = [LONG[m] for m in LONG] * (k // 4)
    result = {"win_probability": [[None if i == j else 0.5 for j in range(k)] for i in range(k)],
              "expected_wins": [1.0] * k, "bt_log_strength": [0.0] * k, "mode": "C_P", "sort": "expected-wins"}
    fig = pairwise_figure(result, names, width=1200, group="base_task")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    width, height = fig.canvas.get_width_height()
    assert width == 1200
    ticks = [t.get_window_extent(renderer) for t in ax.get_yticklabels() + ax.get_xticklabels() if t.get_text()]
    assert len(ticks) == 2 * k
    for i, a in enumerate(ticks):
        assert a.x0 >= 0 and a.y0 >= 0 and a.x1 <= width and a.y1 <= height      # nothing cut off
        assert not any(overlap(a, b) for b in ticks[i + 1:])                      # no label over another
    assert all(len(line) <= 45 for t in ax.get_yticklabels() for line in t.get_text().splitlines())
    title = fig._suptitle.get_window_extent(renderer)
    assert title.y0 >= ax.get_tightbbox(renderer).y1 - 1 and title.x0 >= 0 and title.x1 <= width
    colorbar = fig.axes[1].get_tightbbox(renderer)
    assert colorbar.x1 <= width + 1 and not overlap(colorbar, ax.get_window_extent(renderer))
