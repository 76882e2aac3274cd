"""Calibration: turn prompt-length targets into generator parameters.

A `mode: calibrate` manifold entry names one size parameter and a list of
`target_tokens`. For each target (and each point of the entry's grid) we search the
largest parameter value whose prompts, rendered by the run's template and counted
by the `--tokenizer` tokenizer, stay within the target: their *ceiling* (the larger
of the longest measured prompt and mean + TAIL_SDS standard deviations over
CEILING_SAMPLES cases) must not exceed it, so a 16K target fits a 16K context even
for the step's longest case. Prompts of one size vary (a table of wide numeric
columns is longer than one of ratings), so the mean sits below the target by that
spread; docs/tasks.md gives the measured numbers. The
prompt length grows with the size parameter (close to linearly), so the search
extrapolates to bracket the target and then alternates interpolation and bisection. Measurements use the very cases the step will generate
(the seed rule of resolver.config.point_identity, which resolver.config.loader uses too), so a cached mapping stays true.

The mapping is cached per (tokenizer, template, task) as JSON under the cache
directory: calibrating r12-style configs again costs nothing.
"""
from __future__ import annotations

import hashlib
import json
import random
import statistics
from contextlib import nullcontext
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from resolver.config.hf_tokenizers import load_hf_tokenizer
from resolver.config.point_identity import canonical_params, step_seed
from resolver.config.prompts import render_messages
from resolver.core import write_text_atomic
from resolver.records import safe_name
from resolver.tasks import get_task, skipped_guess_rates

if TYPE_CHECKING:
    from resolver.config.config_file import ManifoldEntry, TaskConfig
    from resolver.config.prompts import Template
    from resolver.tasks import Task, TestCase
CEILING_SAMPLES = 16    # cases per ceiling measurement (what calibration searches on)
TAIL_SDS = 3.5          # the longest of ~500 cases sits about 3 standard deviations above the mean
CACHE_VERSION = 2       # bump when the measurement changes meaning (2: ceiling, not mean)
_BISECT_STEPS = 24      # for float parameters
# Close enough: prompts of neighbouring sizes differ by more than this through the
# sampling noise of 8 cases, so searching further only chases noise.
TOLERANCE = 0.015


# ---------------------------------------------------------------- tokenizer
@lru_cache(maxsize=8)
def load_tokenizer(name_or_path: str) -> Any:
    """A HuggingFace tokenizer from a local directory or a hub id (local cache first)."""
    return load_hf_tokenizer(name_or_path)


def count_prompt_tokens(tokenizer: Any, messages: list[dict]) -> int:
    """Tokens of a chat prompt: the tokenizer's chat template when it has one."""
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return len(ids)
    text = "\n".join(m["content"] for m in messages)
    return len(tokenizer(text, add_special_tokens=True)["input_ids"])


# ---------------------------------------------------------------- measuring
def _messages(task: Task, params: dict, case: TestCase, template: Template | None) -> list[dict]:
    if template is None:
        text = f"{task.description_for(params)} Respond with {task.answer_format_for(params)}\n{case.input}"
        return [{"role": "user", "content": text}]

    return render_messages(template, task, params, case)


def prompt_tokens(task: Task, params: dict, tokenizer: Any, template: Template | None, samples: int) -> list[int]:
    """Prompt lengths of the first `samples` cases of the step with these params."""
    params = canonical_params(task, params)
    valid = task.validate(params)
    with skipped_guess_rates():  # lengths only: guess_chance does not change the prompt
        cases = task.generate_cases(valid, random.Random(step_seed(params)), samples)
    return [count_prompt_tokens(tokenizer, _messages(task, valid, c, template)) for c in cases]


def ceiling_prompt_tokens(task: Task, params: dict, tokenizer: Any, template: Template | None,
                          samples: int = CEILING_SAMPLES) -> float:
    """A length the step's prompts stay within: the longest measured prompt or
    mean + TAIL_SDS standard deviations, whichever is larger."""
    counts = prompt_tokens(task, params, tokenizer, template, samples)
    return max(max(counts), statistics.fmean(counts) + TAIL_SDS * statistics.pstdev(counts))


def search_parameter(measure: Callable[[float], float], low: float, high: float, target: float, is_int: bool,
                     at_most: bool = False) -> float:
    """The value in [low, high] whose measure(value) is closest to target; with
    `at_most`, the one closest from below (measure <= target; `low` if none is).

    measure grows with the value (more rows -> longer prompt), close to linearly, so
    each guess interpolates between the two nearest measurements; every other step is
    a plain bisection, so a measure far from linear still converges. The search stops
    at the first measurement within TOLERANCE of the target. A 16K-token table takes
    ~4 measurements instead of ~20 for doubling + bisection.
    """
    seen: dict = {}

    class Close(Exception):
        """A measurement within TOLERANCE of the target: stop searching."""

    def m(v: float) -> float:
        if v not in seen:
            seen[v] = measure(v)
            if abs(seen[v] - target) <= TOLERANCE * target and not (at_most and seen[v] > target):
                raise Close
        return seen[v]

    try:
        best = _search(m, low, high, target, is_int)
    except Close:
        best = min(seen, key=lambda v: abs(seen[v] - target))
    if at_most and seen.get(best, measure(best)) > target:
        below = [v for v in seen if seen[v] <= target]
        return max(below, key=lambda v: seen[v]) if below else low
    return best


def _search(m: Callable[[float], float], low: float, high: float, target: float, is_int: bool) -> float:
    lo = low
    if m(lo) >= target:
        return lo
    hi = _bracket(m, lo, high, target, is_int)
    if m(hi) < target:
        return hi  # even the largest value is too short: the best we can do
    step = 0
    while (hi - lo > 1) if is_int else (step < _BISECT_STEPS):
        mid = _interpolate(lo, hi, m(lo), m(hi), target) if step % 2 == 0 else (lo + hi) / 2
        mid = min(max(int(round(mid)) if is_int else mid, lo + 1 if is_int else lo), hi - 1 if is_int else hi)
        lo, hi = (mid, hi) if m(mid) < target else (lo, mid)
        step += 1
    return min((lo, hi), key=lambda v: abs(m(v) - target))


def _interpolate(x0: float, x1: float, y0: float, y1: float, target: float) -> float:
    return x0 + (target - y0) * (x1 - x0) / (y1 - y0) if y1 != y0 else (x0 + x1) / 2


def _bracket(m: Callable[[float], float], lo: float, high: float, target: float, is_int: bool) -> float:
    """A value above the target: extrapolate from `lo` (aiming 10% high), else double."""
    x = min(high, lo + 1 if is_int else (lo * 2 or 1.0))
    while m(x) < target and x < high:
        guess = _interpolate(lo, x, m(lo), m(x), target * 1.1)
        nxt = max(guess, x * 2 if m(x) <= m(lo) else x + 1)
        lo, x = x, min(high, int(round(nxt)) if is_int else nxt)
    return x


# ---------------------------------------------------------------- cache
def _cache_path(cache_dir: str | Path, tokenizer_id: str, template: Template | None, generator: str) -> Path:
    template_name = getattr(template, "name", "plain")
    template_body = json.dumps(getattr(template, "messages", None), sort_keys=True, default=str)
    digest = hashlib.sha256(f"{tokenizer_id}|{template_body}|{CACHE_VERSION}".encode()).hexdigest()[:10]
    name = f"calibration_{generator}_{safe_name(tokenizer_id)[-60:]}_{template_name}_{digest}.json"
    return Path(cache_dir) / name


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}  # missing or damaged: recalibrate and rewrite


def _write_cache(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True))


# ---------------------------------------------------------------- entry point
def _grid_points(grid: dict) -> list[dict]:
    names = sorted(grid)
    return [dict(zip(names, values)) for values in product(*(grid[n] for n in names))]


def resolve_calibration(task_config: TaskConfig, manifold_entry: ManifoldEntry, tokenizer: Any, template: Template | None,
                        cache_dir: str | Path, progress: Callable[..., Any] | None = None) -> list[tuple[int, dict]]:
    """[(target_tokens, params)] for a calibrate entry: one per target and grid point.

    `tokenizer` is a tokenizer id / directory (loaded with load_tokenizer) or an
    already loaded tokenizer object. `progress`: a tqdm-like factory the command hands
    in for a bar over the points (none: no bar).
    """
    task = get_task(task_config.generator)
    spec = manifold_entry.calibrate
    assert spec is not None  # only `mode: calibrate` entries come here (loader._entry_points)
    param = next(p for p in task.params if p.name == spec.param)
    tokenizer_id = tokenizer if isinstance(tokenizer, str) else getattr(tokenizer, "name_or_path", "tokenizer")
    loaded = load_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
    path = _cache_path(cache_dir, tokenizer_id, template, task.name)
    cache, dirty, out = _read_cache(path), False, []
    jobs = [(t, g) for t in spec.target_tokens for g in _grid_points(manifold_entry.grid)]
    bar = (progress(total=len(jobs), desc=f"calibrating {task_config.name}", unit="point", disable=None, leave=False)
           if progress is not None else None)
    with bar if bar is not None else nullcontext():
        for target, point in jobs:
            key = json.dumps({"param": param.name, "target": target, "grid": point}, sort_keys=True)
            if key not in cache:
                def measure(value: float, point: dict = point) -> float:
                    return ceiling_prompt_tokens(task, {**point, param.name: value}, loaded, template)

                low = param.low if param.low is not None else (1 if param.kind is int else 0.0)
                high = param.high if param.high is not None else low + 10_000
                cache[key] = search_parameter(measure, low, high, target, param.kind is int, at_most=True)
                dirty = True
            out.append((int(target), canonical_params(task, {**point, param.name: cache[key]})))
            if bar is not None:
                bar.update()
    if dirty:
        _write_cache(path, cache)
    return out
