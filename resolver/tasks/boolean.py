"""boolean: evaluate a boolean expression of literals, NOT, AND, XOR, OR and parentheses.

Precedence (stated in the task description): NOT binds tightest, then AND, then
XOR, then OR; operators of equal rank group left to right. The literals and the
expected answer use one of five spellings (`format`). Difficulty grows with
`length` (literals to combine), `max_depth` (nesting) and `prob_not` (negations to
push through); `prob_dewhitespace` removes spaces next to parentheses.
"""
from __future__ import annotations

import random

from resolver.tasks import Param, Task, TestCase, register
from resolver.tasks.arithmetic import drop_redundant_groups

# format enum [fact]: 0 TRUE_FALSE, 1 T_F, 2 ON_OFF, 3 BINARY, 4 YES_NO -> (true, false)
FORMATS = {0: ("TRUE", "FALSE"), 1: ("T", "F"), 2: ("ON", "OFF"), 3: ("1", "0"), 4: ("YES", "NO")}
FORMAT_NAMES = {0: "TRUE_FALSE", 1: "T_F", 2: "ON_OFF", 3: "BINARY", 4: "YES_NO"}
BINARY_OPS = ("AND", "OR", "XOR")
_RANK = {"OR": 0, "XOR": 1, "AND": 2}


def _build_tokens(params: dict, rng: random.Random) -> list:
    """Tokens: True/False literals, "NOT", binary operators and parentheses."""
    length, max_depth = params["length"], params["max_depth"]
    tokens: list = []
    terms_in_group: list[int] = []
    for i in range(length):
        if i:
            tokens.append(rng.choice(BINARY_OPS))
        remaining = length - i
        while len(terms_in_group) < max_depth and remaining >= 2 and rng.random() < params["prob_open"]:
            if rng.random() < params["prob_not"] / 2:  # a negated group: "NOT ( ... )"
                tokens.append("NOT")
            tokens.append("(")
            terms_in_group.append(0)
        if rng.random() < params["prob_not"] / 2:
            tokens.append("NOT")
        tokens.append(rng.random() < 0.5)
        terms_in_group = [n + 1 for n in terms_in_group]
        while terms_in_group and terms_in_group[-1] >= 2 and rng.random() < params["prob_close"]:
            tokens.append(")")
            terms_in_group.pop()
    tokens.extend(")" * len(terms_in_group))
    return drop_redundant_groups(tokens)


class _Evaluator:
    """Precedence climbing over the token list: OR < XOR < AND < NOT."""

    def __init__(self, tokens: list):
        self.tokens, self.pos = tokens, 0

    def _peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expr(self, min_rank: int = 0) -> bool:
        value = self.unary()
        while self._peek() in _RANK and _RANK[self._peek()] >= min_rank:
            op = self.tokens[self.pos]
            self.pos += 1
            rhs = self.expr(_RANK[op] + 1)
            value = {"AND": value and rhs, "OR": value or rhs, "XOR": value != rhs}[op]
        return value

    def unary(self) -> bool:
        token = self.tokens[self.pos]
        self.pos += 1
        if token == "NOT":
            return not self.unary()
        if token == "(":
            value = self.expr()
            self.pos += 1  # ")"
            return value
        return token


def _render(tokens: list, words: tuple[str, str], prob_dewhitespace: float, rng) -> tuple[str, int]:
    parts = [(words[0] if t else words[1]) if isinstance(t, bool) else t for t in tokens]
    out, removed = [], 0
    for i, part in enumerate(parts):
        if i:
            touches_paren = parts[i - 1] == "(" or part == ")"
            if touches_paren and prob_dewhitespace and rng.random() < prob_dewhitespace:
                removed += 1
            else:
                out.append(" ")
        out.append(part)
    return "".join(out), removed


@register
class Boolean(Task):
    name = "boolean"
    answer_kind = "literal"
    description = ("Evaluate the boolean expression. NOT applies first, then AND, then XOR, then OR; "
                   "operators of equal rank go left to right, and parentheses come first.")
    answer_format = "Final Answer: TRUE or FALSE"  # per format: see answer_format_for
    params = (
        Param("length", int, 6, low=2, high=200, doc="number of literals"),
        Param("max_depth", int, 2, low=1, high=20, doc="deepest parenthesis nesting allowed"),
        Param("prob_open", float, 0.4, low=0.0, high=1.0, doc="chance to open a group before a literal"),
        Param("prob_close", float, 0.5, low=0.0, high=1.0, doc="chance to close a group after a literal"),
        Param("prob_not", float, 0.8, low=0.0, high=1.0,
              doc="negation pressure: each literal and each group is negated with probability prob_not/2"),
        Param("format", int, 0, choices=tuple(FORMATS),
              doc="literal spelling: 0 TRUE_FALSE, 1 T_F, 2 ON_OFF, 3 BINARY (1/0), 4 YES_NO"),
        Param("prob_dewhitespace", float, 0.0, low=0.0, high=1.0,
              doc="chance that each space next to a parenthesis is removed"),
    )

    def answer_format_for(self, params: dict) -> str:
        true_word, false_word = FORMATS[params["format"]]
        return f"Final Answer: {true_word} or {false_word}"

    def description_for(self, params: dict) -> str:
        true_word, false_word = FORMATS[params["format"]]
        return f"{self.description} {true_word} means true and {false_word} means false."

    def generate(self, params: dict, rng: random.Random) -> TestCase:
        tokens = _build_tokens(params, rng)
        value = _Evaluator(tokens).expr()
        words = FORMATS[params["format"]]
        text, removed = _render(tokens, words, params["prob_dewhitespace"], rng)
        return TestCase(
            input=text,
            target=words[0] if value else words[1],
            response_enum=list(words),
            guess_chance=0.5,
            genresult={"format": FORMAT_NAMES[params["format"]],
                       "operators": {op: tokens.count(op) for op in BINARY_OPS + ("NOT",)},
                       "groups": tokens.count("("), "spaces_removed": removed},
        )

    def example_overrides(self) -> dict:
        return {"length": 3, "max_depth": 1}
