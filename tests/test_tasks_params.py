"""Issue 37: each task's typed parameter model (`Task.Params`) and the schema derived from it.

References are written by hand here: the documented defaults of arithmetic (docs/tasks.md),
the guess-rate seeding rule of resolver.tasks.guess re-implemented with the standard library,
and a multishot prompt for brackets, whose default `weights: None` the schema once refused.
"""
from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter

import pytest

from resolver.config.prompts import load_template, render_messages
from resolver.tasks import Param, TestCase, get_task, param, params_of, task_names
from resolver.tasks.guess import mode_rate


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Demo:
    size: int = param(3, low=1, high=9, doc="how many")
    rate: float = param(0.5, low=0.0, high=1.0, doc="a chance")
    style: str = param("a", choices=("a", "b"), doc="a spelling")
    extra: tuple[int, ...] | None = param(None, kind=list, doc="a list in configs")


def test_the_schema_is_derived_field_by_field_in_declaration_order():
    assert params_of(_Demo) == (
        Param("size", int, 3, low=1, high=9, doc="how many"),
        Param("rate", float, 0.5, low=0.0, high=1.0, doc="a chance"),
        Param("style", str, "a", choices=("a", "b"), doc="a spelling"),
        Param("extra", list, None, doc="a list in configs"),
    )


def test_a_field_without_param_or_of_an_unnamed_kind_is_refused():
    @dataclasses.dataclass(frozen=True)
    class Bare:
        size: int = 3

    @dataclasses.dataclass(frozen=True)
    class NoKind:
        extra: tuple[int, ...] | None = param(None)

    with pytest.raises(TypeError, match="Bare.size is not declared with param"):
        params_of(Bare)
    with pytest.raises(TypeError, match="NoKind.extra: give kind="):
        params_of(NoKind)


def test_a_generator_reads_attributes_of_a_frozen_hashable_model():
    task = get_task("arithmetic")
    p = task.typed(task.validate({"length": 5, "prob_open": 1}))
    # docs/tasks.md: arithmetic defaults max_depth 2, terms -9..9, max_magnitude 1000
    assert (p.length, p.max_depth, p.min_number, p.max_number, p.max_magnitude) == (5, 2, -9, 9, 1000)
    assert p.prob_open == 1.0 and type(p.prob_open) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.length = 6  # type: ignore[misc]
    assert hash(p) == hash(task.typed(task.validate({"length": 5, "prob_open": 1.0})))
    brackets = get_task("brackets")
    assert brackets.typed(brackets.validate({"weights": [1, 0, 2, 1]})).weights == (1, 0, 2, 1)


@pytest.mark.parametrize("name", task_names())
def test_validate_accepts_its_own_output(name):
    task = get_task(name)
    filled = task.validate({})
    assert task.validate(filled) == filled
    assert [f.name for f in dataclasses.fields(task.Params)] == list(filled)


def test_brackets_multishot_examples_render_with_the_default_weights(repo):
    task = get_task("brackets")
    messages = render_messages(load_template(repo / "templates" / "multishot.json"), task, task.validate({}),
                               TestCase(input="( [", target="] )"))
    shown = [m["content"] for m in messages[1:-1:2]]
    assert len(shown) == 3 and all(set(text) <= set("()[]{}<> ") for text in shown)


def test_guess_rates_are_seeded_by_the_points_json_as_before():
    @dataclasses.dataclass(frozen=True)
    class Tiny:
        high: int = param(3)

    def answer(p, rng):
        return rng.randint(1, p.high) + rng.randint(1, p.high)

    # the rule of resolver.tasks.guess, with the standard library: a Random seeded by
    # "guess:<task>:<sorted-key JSON of the parameters>", the most frequent of 1000 answers
    rng = random.Random("guess:tiny_test_only:" + json.dumps({"high": 3}, sort_keys=True))
    counts = Counter(rng.randint(1, 3) + rng.randint(1, 3) for _ in range(1000))
    assert mode_rate("tiny_test_only", Tiny(high=3), answer) == round(max(counts.values()) / 1000, 4)
