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
from dataclasses import dataclass

from resolver.core import UserError
from resolver.tasks import Task, TestCase, draw_below, param, register
from resolver.tasks.guess import mode_rate

OPERATORS = ("+", "-", "*")


Token = str | int  # an operator or parenthesis, or a number


@dataclass(frozen=True, slots=True, kw_only=True)
class ArithmeticParams:
    length: int = param(8, low=3, high=200, doc="number of terms in the expression")
    max_depth: int = param(2, low=1, high=20, doc="deepest parenthesis nesting allowed")
    min_number: int = param(-9, low=-10**6, high=10**6, doc="smallest term value")
    max_number: int = param(9, low=-10**6, high=10**6, doc="largest term value")
    prob_open: float = param(0.4, low=0.0, high=1.0, doc="chance to open a group before a term")
    prob_close: float = param(0.5, low=0.0, high=1.0, doc="chance to close a group after a term")
    prob_dewhitespace: float = param(0.0, low=0.0, high=1.0,
                                     doc="chance that each space around an operator is removed")
    max_magnitude: int = param(1000, low=0, high=10**12,
                               doc="largest absolute value of any product; a * that would exceed it "
                                   "becomes + or - (0: no bound)")


def _build_tokens(p: ArithmeticParams, rng: random.Random) -> tuple[list[Token], int]:
    """Tokens of a random expression (numbers, operators and balanced parentheses) and its value.

    A group opens before a term (while nesting is allowed and at least two terms
    remain to fill it) and may close after any term once it holds two terms, so no
    group is ever a redundant "(5)". The draws are `rng.choice(OPERATORS)`,
    `rng.randint(min_number, max_number)` and `rng.random()`, made by `draw_below`
    (the honest guess rate builds a thousand of these per point; docs/decisions.md).
    """
    length, max_depth = p.length, p.max_depth
    prob_open, prob_close, rand = p.prob_open, p.prob_close, rng.random
    low, span = p.min_number, p.max_number - p.min_number + 1
    below = draw_below(rng)
    tokens: list[Token] = []
    opened: list[int] = []  # the first term of each open group, innermost last
    nested = False  # did two groups open before one term ("(("), which may make one redundant
    for i in range(length):
        if i:
            tokens.append(OPERATORS[below(3)])
        remaining = length - i
        before = len(opened)
        while len(opened) < max_depth and remaining >= 2 and rand() < prob_open:
            tokens.append("(")
            opened.append(i)
        nested = nested or len(opened) - before > 1
        tokens.append(low + below(span))
        while opened and i - opened[-1] >= 1 and rand() < prob_close:
            tokens.append(")")
            opened.pop()
    tokens.extend(")" * len(opened))
    if nested:
        tokens = drop_redundant_groups(tokens)
    return tokens, _evaluate(tokens, p.max_magnitude, rng)


def drop_redundant_groups(tokens: list[Token]) -> list[Token]:
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


def _evaluate(tokens: list[Token], bound: int = 0, rng: random.Random | None = None) -> int:
    """The value of the token list: `*` before `+` and `-`, all left-associative (no eval()).

    One pass left to right with a frame per open parenthesis, so each product is checked
    the moment its right operand is known. With a `bound` (and `rng`), a `*` whose product
    would exceed it in absolute value becomes `+` or `-` in place (one `rng.random()`,
    in evaluation order; a parenthesised operand is evaluated, and bounded, before the
    product it belongs to) and the pass goes on as if it had been written so: what
    evaluating again from the start after each change would give, in one pass.
    """
    total, sign, product, times = 0, 1, 0, -1     # times: index of a pending `*`, else -1
    outer: list[tuple[int, int, int, int]] = []   # the enclosing frames
    for i, token in enumerate(tokens):
        if type(token) is int:
            value = token
        elif token == "(":
            outer.append((total, sign, product, times))
            total, sign, product, times = 0, 1, 0, -1
            continue
        elif token == "+" or token == "-":
            total += sign * product
            sign = 1 if token == "+" else -1
            continue
        elif token == "*":
            times = i
            continue
        else:  # ")"
            value = total + sign * product
            total, sign, product, times = outer.pop()
        if times < 0:
            product = value
            continue
        if bound and abs(product * value) > bound:
            op = tokens[times] = "+" if rng.random() < 0.5 else "-"  # type: ignore[union-attr]
            total += sign * product
            sign = 1 if op == "+" else -1
            product = value
        else:
            product *= value
        times = -1
    return total + sign * product


def _render(tokens: list[Token], prob_dewhitespace: float, rng: random.Random) -> tuple[str, int]:
    """Expression text: spaces around operators, each space dropped with probability p."""
    pieces: list[str] = []
    for token in tokens:
        if token in OPERATORS:
            pieces.extend([" ", token, " "])
        else:
            pieces.append(str(token))
    removed = 0
    out = []
    for piece in pieces:
        if piece == " " and prob_dewhitespace and rng.random() < prob_dewhitespace:
            removed += 1
            continue
        out.append(piece)
    return "".join(out), removed


def _max_nesting(tokens: list[Token]) -> int:
    depth = deepest = 0
    for token in tokens:
        depth += (token == "(") - (token == ")")
        deepest = max(deepest, depth)
    return deepest


@register
class Arithmetic(Task[ArithmeticParams]):
    name = "arithmetic"
    answer_kind = "integer"
    description = ("Evaluate the arithmetic expression. Multiplication is done before addition and "
                   "subtraction, parentheses first, and operations of equal rank from left to right.")
    answer_format = "Final Answer: <integer>"
    version = 2  # v2: products bounded by max_magnitude; honest guess_chance
    Params = ArithmeticParams

    def check_consistency(self, p: ArithmeticParams) -> None:
        if p.min_number > p.max_number:
            raise UserError(f"task 'arithmetic': min_number ({p.min_number}) must not exceed "
                            f"max_number ({p.max_number})")

    def generate(self, p: ArithmeticParams, rng: random.Random) -> TestCase:
        tokens, value = _build_tokens(p, rng)
        text, removed = _render(tokens, p.prob_dewhitespace, rng)
        ops = {op: tokens.count(op) for op in OPERATORS}
        return TestCase(
            input=text,
            target=str(value),
            response_enum=None,
            guess_chance=mode_rate("arithmetic", p, lambda q, r: _build_tokens(q, r)[1]),
            genresult={"depth": _max_nesting(tokens), "groups": tokens.count("("),
                       "operators": ops, "spaces_removed": removed},
        )

    def example_overrides(self) -> dict:
        return {"length": 4, "max_depth": 1}
