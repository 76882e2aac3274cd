"""Issue 38: the generators' faster paths draw exactly what the slower ones drew.

Each helper is checked against what it replaces, written independently: the standard
library's own `random.Random` methods, the old "evaluate again after each change" loop of
arithmetic, and the movies rule of which films share a link, written here with sets.
The whole-r12 check (every case of configs/r12.yaml, hashed) is the slow test at the end.
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from resolver.tasks import draw_below, get_task, permutation
from resolver.tasks.arithmetic import _build_tokens, _evaluate
from resolver.tasks.movies import KIN, _links, catalogue

REPO = Path(__file__).resolve().parents[1]


class _Shifted(random.Random):
    """A subclass with its own `random()`: Random then draws integers from random(), not
    getrandbits, so the helpers must hand the work back to the instance's own methods."""

    def random(self):
        return (super().random() + 0.5) % 1.0


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 64, 65, 418, 1000])
def test_permutation_is_sample_of_everything(size):
    for seed in range(25):
        mine, stdlib = random.Random(seed), random.Random(seed)
        assert permutation(mine, range(size)) == stdlib.sample(range(size), size)
        assert mine.random() == stdlib.random()  # the stream goes on from the same place


def test_draw_below_is_randrange_choice_and_randint():
    mine, stdlib = random.Random(3), random.Random(3)
    below = draw_below(mine)
    for m in [1, 2, 3, 5, 19, 32, 33, 1000, 2**31, 2**40 + 7]:
        for _ in range(50):
            assert below(m) == stdlib.randrange(m)
    ops = ("+", "-", "*")
    for _ in range(200):
        assert ops[below(3)] == stdlib.choice(ops)
        assert -9 + below(19) == stdlib.randint(-9, 9)
    assert mine.random() == stdlib.random()


def test_subclasses_keep_their_own_draws():
    mine, theirs = _Shifted(5), _Shifted(5)
    assert permutation(mine, range(50)) == theirs.sample(range(50), 50)
    below = draw_below(mine)
    assert [below(7) for _ in range(30)] == [theirs.randrange(7) for _ in range(30)]


def _bound_by_reevaluating(tokens, bound, rng):
    """The v2 rule as first written: evaluate from the start, and at the first `*` (in
    evaluation order) whose product exceeds the bound, draw + or -, change it, start again."""
    while True:
        index = _first_too_big(tokens, bound)
        if index is None:
            return tokens
        tokens[index] = "+" if rng.random() < 0.5 else "-"


def _first_too_big(tokens, bound):
    """Index of the first overflowing `*`, by a recursive-descent walk (a different
    evaluator from the generator's one-pass loop)."""
    pos = 0

    def expr():
        nonlocal pos
        total = term()
        while pos < len(tokens) and tokens[pos] in ("+", "-"):
            op = tokens[pos]
            pos += 1
            total = total + term() if op == "+" else total - term()
        return total

    def term():
        nonlocal pos
        value = factor()
        while pos < len(tokens) and tokens[pos] == "*":
            star = pos
            pos += 1
            value *= factor()
            if abs(value) > bound:
                raise _Found(star)
        return value

    def factor():
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token == "(":
            value = expr()
            pos += 1  # ")"
            return value
        return int(token)

    try:
        expr()
    except _Found as found:
        return found.index
    return None


class _Found(Exception):
    def __init__(self, index):
        self.index = index


@pytest.mark.parametrize("raw", [{"length": 12, "max_depth": 2}, {"length": 40, "max_depth": 4, "max_magnitude": 50},
                                 {"length": 72, "max_depth": 6, "max_magnitude": 1000},
                                 {"length": 30, "max_depth": 3, "min_number": -40, "max_number": 40,
                                  "max_magnitude": 200}])
def test_one_pass_bounding_is_reevaluating_after_each_change(raw):
    task = get_task("arithmetic")
    params = task.validate(raw)
    unbounded = task.typed({**params, "max_magnitude": 0})
    changed = 0
    for seed in range(150):
        tokens, _ = _build_tokens(unbounded, random.Random(seed))
        mine, theirs = random.Random(seed + 1000), random.Random(seed + 1000)
        ours = list(tokens)
        value = _evaluate(ours, params["max_magnitude"], mine)
        expected = _bound_by_reevaluating(list(tokens), params["max_magnitude"], theirs)
        assert ours == expected
        text = "".join(str(t) for t in expected)
        assert value == eval(text, {"__builtins__": {}})  # noqa: S307 - digits, + - * and parentheses only
        assert mine.random() == theirs.random()
        changed += ours != tokens
    assert changed > 10  # the bound did bite


@pytest.mark.parametrize("kind", ["genres", "themes"])
@pytest.mark.parametrize("strict", [True, False])
def test_movies_sharers_are_the_films_that_share_the_link(kind, strict):
    films = catalogue()
    kin = [set(group) for group in KIN]
    for entries in list(_links((kind,), 3).values())[::7]:
        for link in entries:
            concepts = link[2]
            related = set(concepts).union(*(g for g in kin if g & concepts))
            shares = [i for i, f in enumerate(films)
                      if (related & f.concepts if strict
                          else concepts <= f.concepts or (related - concepts) & f.concepts)]
            mask = link[4 if strict else 5]
            assert [i for i in range(len(films)) if mask >> i & 1] == shares


# The hash of every case of configs/r12.yaml at normal density, 64 per point, as the tree
# before issue 38 generated them (tests/benchmarks/r12_hash.py run on that tree).
R12_CASES_SHA256 = "8dce552c94487fde64ad93224652b3a170fbfdcf58d76f647b73f6c34aaf5b5d"


@pytest.mark.slow
def test_every_r12_problem_is_the_one_generated_before():
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "benchmarks" / "r12_hash.py")],
                          capture_output=True, text=True, check=True, cwd=REPO)
    assert proc.stdout.splitlines()[-1] == f"cases sha256 {R12_CASES_SHA256}"
