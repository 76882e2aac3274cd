"""arithmetic: evaluate an integer expression with + - * and nested parentheses.

Difficulty grows with `length` (more terms to combine), `max_depth` (deeper
parenthesis nesting to keep track of) and `prob_dewhitespace` (spaces removed, which
breaks the usual tokenisation of numbers and operators). Multiplication binds
tighter than addition and subtraction, which are left-associative.

Magnitudes are bounded so that difficulty comes from the structure, not from long
multiplication: a `*` whose product would exceed `max_magnitude` in absolute value
becomes `+` or `-` (v2). Terms stay in the original's documented range (-9..9 by
default).
"""
from __future__ import annotations

import random

from resolver.core import UserError
from resolver.tasks import Param, Task, TestCase, register
from resolver.tasks.guess import mode_rate

OPERATORS = ("+", "-", "*")


def _build_tokens(params: dict, rng: random.Random) -> list[str]:
    """Tokens of a random expression: numbers, operators and balanced parentheses.

    A group opens before a term (while nesting is allowed and at least two terms
    remain to fill it) and may close after any term once it holds two terms, so no
    group is ever a redundant "(5)".
    """
    length, max_depth = params["length"], params["max_depth"]
    tokens: list[str] = []
    terms_in_group: list[int] = []  # one counter per open group, innermost last
    for i in range(length):
        if i:
            tokens.append(rng.choice(OPERATORS))
        remaining = length - i
        while len(terms_in_group) < max_depth and remaining >= 2 and rng.random() < params["prob_open"]:
            tokens.append("(")
            terms_in_group.append(0)
        tokens.append(str(rng.randint(params["min_number"], params["max_number"])))
        terms_in_group = [n + 1 for n in terms_in_group]
        while terms_in_group and terms_in_group[-1] >= 2 and rng.random() < params["prob_close"]:
            tokens.append(")")
            terms_in_group.pop()
    tokens.extend(")" * len(terms_in_group))
    tokens = drop_redundant_groups(tokens)
    if params["max_magnitude"]:
        _bound_products(tokens, params["max_magnitude"], rng)
    return tokens


class _TooBig(Exception):
    def __init__(self, index: int):
        self.index = index


def _bound_products(tokens: list[str], bound: int, rng: random.Random) -> None:
    """Turn every `*` whose product exceeds `bound` into `+` or `-`, first in
    evaluation order, until every product is within the bound (in place)."""
    while True:
        try:
            _evaluate(tokens, bound)
            return
        except _TooBig as big:
            tokens[big.index] = "+" if rng.random() < 0.5 else "-"


def drop_redundant_groups(tokens: list[str]) -> list[str]:
    """Remove parentheses that wrap exactly one other group, e.g. "((1 + 2))"."""
    match, stack = {}, []
    for i, token in enumerate(tokens):
        if token == "(":
            stack.append(i)
        elif token == ")":
            match[stack.pop()] = i
    drop: set[int] = set()
    for start, end in match.items():
        inner = start + 1
        if tokens[inner] == "(" and match[inner] == end - 1:
            drop.update((start, end))
    return [t for i, t in enumerate(tokens) if i not in drop]


def _evaluate(tokens: list[str], bound: int | None = None) -> int:
    """The value of the token list: `*` before `+` and `-`, all left-associative (no eval()).

    One pass left to right with a frame per open parenthesis, so each product is checked
    the moment its right operand is known: the first `*` whose product exceeds `bound`
    in evaluation order raises _TooBig with its index (a parenthesised operand is
    evaluated, and checked, before the product it belongs to).
    """
    total, sign, product, times = 0, 1, 0, -1     # times: index of a pending `*`, else -1
    outer: list[tuple[int, int, int, int]] = []   # the enclosing frames
    for i, token in enumerate(tokens):
        if token == "(":
            outer.append((total, sign, product, times))
            total, sign, product, times = 0, 1, 0, -1
            continue
        if token == "+" or token == "-":
            total += sign * product
            sign = 1 if token == "+" else -1
            continue
        if token == "*":
            times = i
            continue
        if token == ")":
            value = total + sign * product
            total, sign, product, times = outer.pop()
        else:
            value = int(token)
        if times < 0:
            product = value
            continue
        product *= value
        if bound is not None and abs(product) > bound:
            raise _TooBig(times)
        times = -1
    return total + sign * product


def _render(tokens: list[str], prob_dewhitespace: float, rng: random.Random) -> tuple[str, int]:
    """Expression text: spaces around operators, each space dropped with probability p."""
    pieces: list[str] = []
    for token in tokens:
        if token in OPERATORS:
            pieces.extend([" ", token, " "])
        else:
            pieces.append(token)
    removed = 0
    out = []
    for piece in pieces:
        if piece == " " and prob_dewhitespace and rng.random() < prob_dewhitespace:
            removed += 1
            continue
        out.append(piece)
    return "".join(out), removed


def _max_nesting(tokens: list[str]) -> int:
    depth = deepest = 0
    for token in tokens:
        depth += (token == "(") - (token == ")")
        deepest = max(deepest, depth)
    return deepest


@register
class Arithmetic(Task):
    name = "arithmetic"
    answer_kind = "integer"
    description = ("Evaluate the arithmetic expression. Multiplication is done before addition and "
                   "subtraction, parentheses first, and operations of equal rank from left to right.")
    answer_format = "Final Answer: <integer>"
    version = 2  # v2: products bounded by max_magnitude; honest guess_chance
    params = (
        Param("length", int, 8, low=3, high=200, doc="number of terms in the expression"),
        Param("max_depth", int, 2, low=1, high=20, doc="deepest parenthesis nesting allowed"),
        Param("min_number", int, -9, low=-10**6, high=10**6, doc="smallest term value"),
        Param("max_number", int, 9, low=-10**6, high=10**6, doc="largest term value"),
        Param("prob_open", float, 0.4, low=0.0, high=1.0, doc="chance to open a group before a term"),
        Param("prob_close", float, 0.5, low=0.0, high=1.0, doc="chance to close a group after a term"),
        Param("prob_dewhitespace", float, 0.0, low=0.0, high=1.0,
              doc="chance that each space around an operator is removed"),
        Param("max_magnitude", int, 1000, low=0, high=10**12,
              doc="largest absolute value of any product; a * that would exceed it becomes + or - (0: no bound)"),
    )

    def check_consistency(self, params: dict) -> None:
        if params["min_number"] > params["max_number"]:
            raise UserError(f"task 'arithmetic': min_number ({params['min_number']}) must not exceed "
                            f"max_number ({params['max_number']})")

    def generate(self, params: dict, rng: random.Random) -> TestCase:
        tokens = _build_tokens(params, rng)
        value = _evaluate(tokens)
        text, removed = _render(tokens, params["prob_dewhitespace"], rng)
        ops = {op: tokens.count(op) for op in OPERATORS}
        return TestCase(
            input=text,
            target=str(value),
            response_enum=None,
            guess_chance=mode_rate("arithmetic", params, lambda p, r: _evaluate(_build_tokens(p, r))),
            genresult={"depth": _max_nesting(tokens), "groups": tokens.count("("),
                       "operators": ops, "spaces_removed": removed},
        )

    def example_overrides(self) -> dict:
        return {"length": 4, "max_depth": 1}
