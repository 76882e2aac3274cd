"""Honest guess rates for open answers that fall in a small range.

A count of 2..6 things is answered right by "4" a third of the time: `guess_chance`
0 would call that skill. Tasks whose integer answers cluster declare the rate of the
best constant answer (the most frequent answer's probability) instead, so the
excess-accuracy correction removes it. Where the answer's distribution has a closed
form the task computes it exactly (`mode_of_uniform_sum`); otherwise `mode_rate`
estimates it from draws of the task's own answer function under a private, fixed
random stream (it never touches the step's rng, so problems do not change).
This module registers no task.
"""
from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Callable, Hashable, Iterator, TypeVar

from resolver.tasks.guess_store import guess_rate_store

P = TypeVar("P")  # a task's parameter model (a frozen dataclass)

DRAWS = 1000
_SKIP: ContextVar[bool] = ContextVar("skip_guess_rates", default=False)


@contextmanager
def skipped() -> Iterator[None]:
    """Within the block `mode_rate` returns 0 without drawing: for callers that only
    measure the problems' text (calibration counts prompt tokens over many sizes and
    would otherwise pay for a guess-rate estimate at every size it tries)."""
    token = _SKIP.set(True)
    try:
        yield
    finally:
        _SKIP.reset(token)


@lru_cache(maxsize=None)
def mode_of_uniform_sum(terms: int, high: int) -> float:
    """Probability of the most likely total of `terms` independent uniform 1..high draws."""
    dist = {0: 1.0}
    for _ in range(terms):
        nxt: dict = {}
        for total, p in dist.items():
            for v in range(1, high + 1):
                nxt[total + v] = nxt.get(total + v, 0.0) + p / high
        dist = nxt
    return round(max(dist.values()), 4)


_CACHE: dict = {}


def mode_rate(task_name: str, params: P, answer_of: Callable[[P, random.Random], Hashable],
              draws: int = DRAWS) -> float:
    """Share of the most frequent answer over `draws` answers from `answer_of(params, rng)`.

    The private stream is seeded by the parameters' sorted-key JSON (the point's validated
    values). The cache is keyed by the model itself: validation gives each field one type,
    so two equal models have the same JSON. Rates drawn once are kept on disk for later
    processes (resolver/tasks/guess_store.py)."""
    if _SKIP.get():
        return 0.0
    key = (task_name, params, draws)
    if key not in _CACHE:
        identity = json.dumps(_fields(params), sort_keys=True)
        store = guess_rate_store()
        rate = store.get(task_name, identity, draws) if store else None
        if rate is None:
            rng = random.Random(f"guess:{task_name}:{identity}")
            counts = Counter(answer_of(params, rng) for _ in range(draws))
            rate = round(max(counts.values()) / draws, 4)
            if store:
                store.put(task_name, identity, draws, rate)
        _CACHE[key] = rate
    return _CACHE[key]


def _fields(params: Any) -> dict:
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
