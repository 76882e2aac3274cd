"""Calibration: a tokenizer built here (nothing downloaded), bisection within 10%,
the cache, and the expand_steps hook with manifold.target_tokens."""
from __future__ import annotations

import json
import random
import textwrap

import pytest

from resolver.config.calibrate import TOLERANCE, count_prompt_tokens, load_tokenizer, resolve_calibration, search_parameter
from resolver.config.loader import ManifoldEntry, TaskConfig, expand_steps, load_config
from resolver.config.point_identity import step_seed
from resolver.config.prompts import load_template, render_messages
from resolver.core.errors import UserError
from resolver.tasks import get_task
from tests.support.progress import RecordingProgress


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    """A small byte-level BPE trained on table prompts, saved as a transformers tokenizer."""
    from resolver.config.hf_tokenizers import train_table_tokenizer

    path = tmp_path_factory.mktemp("tok")
    train_table_tokenizer(path, num_rows=15, repeats=4, vocab_size=400)
    return str(path)


def _entry(targets, grid):
    entry = ManifoldEntry(id="csv_tall", grid=grid, calibrate={"param": "num_rows", "target_tokens": targets})
    return TaskConfig(name="tables", label="Tables", generator="tables", mode="calibrate", manifolds=[entry]), entry


def test_calibrated_prompts_stay_within_their_target(tokenizer_dir, tmp_path, repo):
    """Every one of a step's first 128 prompts fits its target (a 16K target must fit a
    16K context), and the size is not wastefully small: the mean is within 35%."""
    template = load_template(repo / "templates" / "zeroshot-nosys.json")
    task_cfg, entry = _entry([300, 1200, 5000], {"num_cols": [4], "format": ["csv", "markdown"],
                                                 "operation": ["sum"]})
    resolved = resolve_calibration(task_cfg, entry, tokenizer_dir, template, tmp_path)
    assert len(resolved) == 6
    tok = load_tokenizer(tokenizer_dir)
    task = get_task("tables")
    rows = {}
    for target, params in resolved:
        valid = task.validate(params)
        cases = task.generate_cases(valid, random.Random(step_seed(params)), 128)
        lengths = [count_prompt_tokens(tok, render_messages(template, task, valid, c)) for c in cases]
        assert max(lengths) <= target, (target, params, max(lengths))
        assert sum(lengths) / len(lengths) >= 0.65 * target, (target, params)
        rows.setdefault(params["format"], []).append(params["num_rows"])
    for sizes in rows.values():
        assert sizes == sorted(sizes) and len(set(sizes)) == 3


def test_mapping_is_cached_and_reused(tokenizer_dir, tmp_path, monkeypatch):
    task_cfg, entry = _entry([800], {"num_cols": [3], "format": ["json"], "operation": ["count"]})
    first = resolve_calibration(task_cfg, entry, tokenizer_dir, None, tmp_path)
    files = list(tmp_path.glob("calibration_tables_*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())

    def refuse(*args, **kwargs):
        raise AssertionError("calibration ran again despite the cache")

    monkeypatch.setattr("resolver.config.calibrate.search_parameter", refuse)
    assert resolve_calibration(task_cfg, entry, tokenizer_dir, None, tmp_path) == first


def test_the_bar_handed_in_counts_every_target_and_grid_point_and_none_shows_nothing(tokenizer_dir, tmp_path, capfd):
    task_cfg, entry = _entry([700, 900], {"num_cols": [3], "format": ["json"], "operation": ["count", "max"]})
    first = resolve_calibration(task_cfg, entry, tokenizer_dir, None, tmp_path)
    assert capfd.readouterr().err == ""                # no factory: no bar
    bars = RecordingProgress()
    assert resolve_calibration(task_cfg, entry, tokenizer_dir, None, tmp_path, progress=bars) == first
    (bar,) = bars.bars                                 # 2 targets x 2 grid points, one bar over them
    assert (bar.kwargs["desc"], bar.kwargs["unit"], bar.kwargs["total"], bar.counted) == ("calibrating tables", "point", 4, 4)
    assert bar.kwargs["leave"] is False and bar.closed


def test_search_parameter_finds_the_closest_integer_and_handles_limits():
    assert search_parameter(lambda v: 10 * v, 1, 1000, 4321, True) == 432
    assert search_parameter(lambda v: 10 * v, 1, 1000, 4326, True) == 433
    assert search_parameter(lambda v: 10 * v, 1, 50, 4321, True) == 50        # ceiling
    assert search_parameter(lambda v: 10 * v, 5, 50, 3, True) == 5            # floor
    assert search_parameter(lambda v: v * v, 0.0, 100.0, 2.0, False) == pytest.approx(2 ** 0.5, abs=1e-3)


def test_search_at_most_never_overshoots_the_target():
    assert search_parameter(lambda v: 10 * v, 1, 1000, 4326, True, at_most=True) == 432   # 4320 <= 4326 < 4330
    assert search_parameter(lambda v: 10 * v, 1, 1000, 4320, True, at_most=True) == 432
    assert search_parameter(lambda v: 10 * v, 1, 1000, 4319, True, at_most=True) == 431
    assert search_parameter(lambda v: 10 * v, 5, 50, 3, True, at_most=True) == 5          # nothing fits: the floor
    assert search_parameter(lambda v: 1000 * v, 1, 100, 4900, True, at_most=True) == 4


def test_search_needs_few_measurements_when_length_is_near_linear():
    calls = []

    def measure(v):
        calls.append(v)
        return 300 + 24.5 * v + (v % 3)  # a prompt header plus ~24 tokens per row, a little jitter

    best = search_parameter(measure, 1, 3000, 16000, True)
    assert abs(measure(best) - 16000) <= 24.5 + 3
    assert len(set(calls)) <= 10


def test_search_converges_on_a_far_from_linear_measure():
    best = search_parameter(lambda v: v ** 3, 1, 3000, 8e9, True)
    assert abs(best ** 3 - 8e9) <= TOLERANCE * 8e9
    assert search_parameter(lambda v: 2 ** min(v, 60), 1, 200, 2 ** 40, True) == 40
    # with no value inside the tolerance, the closest one is returned
    assert search_parameter(lambda v: 1000 * v, 1, 100, 4400, True) == 4


def test_prompt_tokens_follow_the_tokenizers_chat_template(tokenizer_dir, tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    tok.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
    tok.save_pretrained(tmp_path)
    chat = load_tokenizer(str(tmp_path))
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "| a | b |"}]
    by_hand = "<|system|>\nBe brief.\n<|user|>\n| a | b |\n<|assistant|>\n"
    assert count_prompt_tokens(chat, messages) == len(chat(by_hand, add_special_tokens=False)["input_ids"])
    plain = load_tokenizer(tokenizer_dir)
    assert count_prompt_tokens(plain, messages) == len(plain("Be brief.\n| a | b |")["input_ids"])


def test_unloadable_tokenizer_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot load tokenizer"):
        load_tokenizer(str(tmp_path))


def test_expand_steps_records_target_tokens(tokenizer_dir, tmp_path):
    config = tmp_path / "cal.yaml"
    config.write_text(textwrap.dedent("""
        name: cal
        precision:
          low: {count: 4, maxrounds: 1, target_margin: 0.2}
        tasks:
          - name: tables
            label: Tables
            generator: tables
            mode: calibrate
            manifolds:
              - id: csv_tall
                calibrate: {param: num_rows, target_tokens: [400, 1600]}
                grid: {num_cols: 4, format: csv, operation: [count, max]}
            views:
              - {view: tokens, group_by: [manifold.target_tokens]}
        """))
    cfg = load_config(config)
    with pytest.raises(UserError, match="--tokenizer"):
        expand_steps(cfg, cache_dir=str(tmp_path))
    bars = RecordingProgress()
    steps = expand_steps(cfg, tokenizer=tokenizer_dir, cache_dir=str(tmp_path), progress=bars)
    assert sorted(s.manifold["target_tokens"] for s in steps) == [400, 400, 1600, 1600]
    assert all(s.manifold["id"] == "csv_tall" and s.params["num_rows"] >= 1 for s in steps)
    assert [(b.kwargs["desc"], b.counted) for b in bars.bars] == [("calibrating tables", 4)]   # handed through


def test_tables_16k_config_is_a_calibrated_single_task(repo):
    cfg = load_config(repo / "configs" / "tables-16k.yaml")
    assert [t.name for t in cfg.tasks] == ["tables"] and cfg.tasks[0].mode == "calibrate"
    targets = {t for e in cfg.tasks[0].manifolds for t in e.calibrate.target_tokens}
    assert max(targets) == 16000
