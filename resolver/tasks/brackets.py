"""brackets: close an unfinished bracket sequence (last opened, first closed).

The prompt is B0 o1 B1 o2 B2 ... ok Bk: o1..ok are the k brackets left open and
each Bi is a balanced (possibly empty) run; the answer is the k closers, innermost
(ok) first. `length` counts the brackets of the balanced runs B0..Bk together (the
pairs closed inside the prompt), so the prompt shows length + k brackets and the
whole sequence has length + 2k. k, the number left open, is drawn on its own: every
value from 1 to max_depth equally often at every point (a shuffled schedule, so any
count of cases is within one schedule of uniform), whatever the length.

The open brackets are neither a trailing nor a leading run of openers: Bk is
non-empty (the prompt ends with a closed pair inside the innermost open bracket)
whenever k < max_depth (at k = max_depth Bk cannot hold anything, so B(k-1) is
non-empty instead), B0 is non-empty whenever length >= 4, and every other pair goes
to a run B0..Bk drawn uniformly. So "close the openers after the last closer", "close
the last k openers" and "close the first k openers" give the answer only when the
kinds happen to coincide (at max_depth 1 the one open bracket is necessarily the last
one shown). Difficulty grows with `length` (brackets to read),
`max_depth` (how many can be open at once, so how much the model must remember) and
`bracket_types` (more kinds to keep apart). `weights` sets how often each kind opens;
at every step where both are possible, a close is `close_weight_multiplier` times as
likely as an open inside each run (above 1 the runs stay shallow, below 1 they nest
deep), each run a walk conditioned to come back to its own depth.

The answer is open, but its range is small (one closer of one kind is a likely
answer), so `guess_chance` is the rate of the best constant answer, computed
exactly: P(k = 1) = 1 / max_depth times the most frequent kind's share.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.base import shuffled_rounds

# bracket_types bitmask [fact]: 1 (), 2 [], 4 {}, 8 <>
PAIRS = {1: ("(", ")"), 2: ("[", "]"), 4: ("{", "}"), 8: ("<", ">")}


@dataclass(frozen=True, slots=True, kw_only=True)
class BracketsParams:
    length: int = param(12, low=2, high=400,
                        doc="brackets in the closed pairs of the prompt (even); it shows length + k, k left open")
    max_depth: int = param(4, low=1, high=100, doc="most brackets open at once")
    bracket_types: int = param(15, low=1, high=15, doc="bitmask of kinds used: 1 (), 2 [], 4 {}, 8 <>")
    weights: tuple[float, ...] | None = param(
        None, kind=list, doc="relative opening weights of (), [], {}, <> (4 numbers >= 0; default all equal)")
    close_weight_multiplier: float = param(
        1.0, low=0.01, high=100.0, doc="odds of a close against an open where both are possible (above 1: shallower)")


def _kinds(p: BracketsParams) -> tuple[list[tuple[str, str]], list[float]]:
    """The enabled kinds and their opening weights."""
    weights = p.weights or [1.0] * len(PAIRS)
    chosen = [(pair, float(w)) for (bit, pair), w in zip(PAIRS.items(), weights) if p.bracket_types & bit]
    return [pair for pair, _ in chosen], [w for _, w in chosen]


def max_open(p: BracketsParams) -> int:
    """The largest number of brackets a problem can leave open."""
    return p.max_depth


@lru_cache(maxsize=512)
def _reach(steps: int, end: int, max_depth: int, close_odds: float) -> tuple[tuple[float, ...], ...]:
    """reach[i][d]: probability that the walk, at depth d after i steps, is at depth
    `end` after `steps` steps (opens and closes at odds 1 : close_odds where both are
    possible; depth 0 must open, depth max_depth must close)."""
    p_open = [1.0] + [1.0 / (1.0 + close_odds)] * (max_depth - 1) + [0.0]
    row = [1.0 if d == end else 0.0 for d in range(max_depth + 1)]
    rows = [tuple(row)]
    for _ in range(steps):
        row = [(p_open[d] * row[d + 1] if d < max_depth else 0.0)
               + ((1 - p_open[d]) * row[d - 1] if d > 0 else 0.0) for d in range(max_depth + 1)]
        rows.append(tuple(row))
    return tuple(reversed(rows))


def _balanced(p: BracketsParams, pairs: int, cap: int, rng: random.Random) -> list[str]:
    """A balanced run of `pairs` pairs nesting at most `cap` deep: a walk from depth 0
    back to 0, each step drawn with its odds times the chance to still end at 0."""
    kinds, weights = _kinds(p)
    odds = p.close_weight_multiplier
    reach = _reach(2 * pairs, 0, cap, odds)
    shown: list[str] = []
    stack: list[tuple[str, str]] = []
    for i in range(2 * pairs):
        d = len(stack)
        p_open = 1.0 if d == 0 else 0.0 if d == cap else 1.0 / (1.0 + odds)
        w_open = p_open * reach[i + 1][d + 1] if d < cap else 0.0
        w_close = (1 - p_open) * reach[i + 1][d - 1] if d > 0 else 0.0
        if rng.random() * (w_open + w_close) < w_open:
            stack.append(rng.choices(kinds, weights)[0])
            shown.append(stack[-1][0])
        else:
            shown.append(stack.pop()[1])
    return shown


def _sequence(p: BracketsParams, k: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """(brackets shown, closers of the answer): B0 o1 B1 ... ok Bk with length / 2
    pairs in the runs. Bi sits i deep, so it can hold pairs only while i < max_depth;
    the last run that can (Bk, or B(k-1) at k = max_depth) gets at least one pair, B0
    one more when there are two, and every other pair goes to a run drawn uniformly."""
    kinds, weights = _kinds(p)
    max_depth, pairs = p.max_depth, p.length // 2
    last = min(k, max_depth - 1)
    sizes = [0] * (k + 1)
    sizes[last] += 1
    if last > 0 and pairs >= 2:
        sizes[0] += 1
    for _ in range(pairs - sum(sizes)):
        sizes[rng.randint(0, last)] += 1
    shown: list[str] = []
    opened: list[tuple[str, str]] = []
    for i, size in enumerate(sizes):
        if i:
            opened.append(rng.choices(kinds, weights)[0])
            shown.append(opened[-1][0])
        shown += _balanced(p, size, max_depth - i, rng)
    return shown, [close for _, close in reversed(opened)]


@register
class Brackets(Task[BracketsParams]):
    name = "brackets"
    version = 3  # open brackets spread among closed runs (not a trailing run); length = closed-pair brackets
    answer_kind = "brackets"
    description = ("Complete the bracket sequence: give the closing brackets that close every bracket "
                   "still open, the most recently opened first.")
    # No "<...>" placeholder here: angle brackets are one of the bracket kinds.
    answer_format = "Final Answer: followed by the closing brackets, separated by spaces"
    Params = BracketsParams

    def check_consistency(self, p: BracketsParams) -> None:
        if p.length % 2:
            raise UserError(f"task 'brackets': length must be even (brackets in closed pairs), got {p.length}")
        weights = p.weights
        if weights is not None:
            if (len(weights) != len(PAIRS) or
                    not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights)):
                # shown as the config wrote it (a list; the model holds a tuple)
                raise UserError(f"task 'brackets': weights must be 4 numbers >= 0 for (), [], {{}}, <>; "
                                f"got {list(weights)!r}")
            if sum(_kinds(p)[1]) <= 0:
                raise UserError("task 'brackets': weights give every kind in bracket_types weight 0")

    def cases(self, p: BracketsParams, rng: random.Random, count: int) -> Iterator[TestCase]:
        """Open counts come from shuffled rounds of 1..max_depth, so each is equally frequent."""
        opens = shuffled_rounds(range(1, max_open(p) + 1), rng)
        for _ in range(count):
            yield self._case(p, next(opens), rng)

    def generate(self, p: BracketsParams, rng: random.Random) -> TestCase:
        return self._case(p, rng.randint(1, max_open(p)), rng)

    def _case(self, p: BracketsParams, k: int, rng: random.Random) -> TestCase:
        shown, closing = _sequence(p, k, rng)
        _, weights = _kinds(p)
        return TestCase(
            input=" ".join(shown),
            target=" ".join(closing),
            response_enum=None,
            guess_chance=round(max(weights) / sum(weights) / max_open(p), 6),
            genresult={"open_at_end": len(closing), "deepest": _deepest(shown),
                       "kinds": "".join(sorted({b for b in shown if b in "([{<"}))},
        )

    def example_overrides(self) -> dict:
        return {"length": 6, "max_depth": 3}


def _deepest(shown: list[str]) -> int:
    depth = deepest = 0
    for b in shown:
        depth += 1 if b in "([{<" else -1
        deepest = max(deepest, depth)
    return deepest
