"""boolean: evaluate a boolean expression of literals, NOT, AND, XOR, OR and parentheses.

Precedence (stated in the task description): NOT binds tightest, then AND, then
XOR, then OR; operators of equal rank group left to right. The literals and the
expected answer use one of five spellings (`format`). Difficulty grows with
`length` (literals to combine), `max_depth` (nesting) and `prob_not` (negations to
push through, `prob_not_after_not` stacking them); `prob_dewhitespace` removes spaces
next to parentheses. Targets are balanced by construction: every pair of
consecutive cases holds one TRUE and one FALSE (a random expression whose literals
are then adjusted), so answering a constant scores exactly one half at every point.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator

from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.arithmetic import drop_redundant_groups
from resolver.tasks.base import TokenCursor, shuffled_rounds

# format enum [fact]: 0 TRUE_FALSE, 1 T_F, 2 ON_OFF, 3 BINARY, 4 YES_NO -> (true, false)
FORMATS = {0: ("TRUE", "FALSE"), 1: ("T", "F"), 2: ("ON", "OFF"), 3: ("1", "0"), 4: ("YES", "NO")}
FORMAT_NAMES = {0: "TRUE_FALSE", 1: "T_F", 2: "ON_OFF", 3: "BINARY", 4: "YES_NO"}
BINARY_OPS = ("AND", "OR", "XOR")
_MAX_NOTS = 3  # at most "NOT NOT NOT" in a row
_RANK = {"OR": 0, "XOR": 1, "AND": 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class BooleanParams:
    length: int = param(6, low=2, high=200, doc="number of literals")
    max_depth: int = param(2, low=1, high=20, doc="deepest parenthesis nesting allowed")
    prob_open: float = param(0.4, low=0.0, high=1.0, doc="chance to open a group before a literal")
    prob_close: float = param(0.5, low=0.0, high=1.0, doc="chance to close a group after a literal")
    prob_not: float = param(0.8, low=0.0, high=1.0,
                            doc="negation pressure: each literal and each group is negated with probability prob_not/2")
    prob_not_after_not: float = param(0.25, low=0.0, high=1.0,
                                      doc="chance that a NOT is followed by another NOT (double negation; at most 3 in a row)")
    format: int = param(0, choices=tuple(FORMATS),
                        doc="literal spelling: 0 TRUE_FALSE, 1 T_F, 2 ON_OFF, 3 BINARY (1/0), 4 YES_NO")
    prob_dewhitespace: float = param(0.0, low=0.0, high=1.0,
                                     doc="chance that each space next to a parenthesis is removed")


def _nots(p: BooleanParams, rng: random.Random) -> list[str]:
    """The NOTs in front of one literal or group: one with probability prob_not/2,
    each further one (double negation) with probability prob_not_after_not."""
    if rng.random() >= p.prob_not / 2:
        return []
    nots = ["NOT"]
    while len(nots) < _MAX_NOTS and rng.random() < p.prob_not_after_not:
        nots.append("NOT")
    return nots


def _build_tokens(p: BooleanParams, rng: random.Random) -> list:
    """Tokens: True/False literals, "NOT", binary operators and parentheses."""
    length, max_depth = p.length, p.max_depth
    tokens: list = []
    terms_in_group: list[int] = []
    for i in range(length):
        if i:
            tokens.append(rng.choice(BINARY_OPS))
        remaining = length - i
        while len(terms_in_group) < max_depth and remaining >= 2 and rng.random() < p.prob_open:
            tokens.extend(_nots(p, rng))  # a negated group: "NOT ( ... )"
            tokens.append("(")
            terms_in_group.append(0)
        tokens.extend(_nots(p, rng))
        tokens.append(rng.random() < 0.5)
        terms_in_group = [n + 1 for n in terms_in_group]
        while terms_in_group and terms_in_group[-1] >= 2 and rng.random() < p.prob_close:
            tokens.append(")")
            terms_in_group.pop()
    tokens.extend(")" * len(terms_in_group))
    return drop_redundant_groups(tokens)


class _Parser(TokenCursor):
    """Precedence climbing over the token list (OR < XOR < AND < NOT) into a tree:
    ("lit", token index), ("NOT", child) or (operator, left, right)."""

    def expr(self, min_rank: int = 0) -> tuple:
        node = self.unary()
        while self.peek() in _RANK and _RANK[self.peek()] >= min_rank:
            op = self.tokens[self.pos]
            self.pos += 1
            node = (op, node, self.expr(_RANK[op] + 1))
        return node

    def unary(self) -> tuple:
        token = self.tokens[self.pos]
        self.pos += 1
        if token == "NOT":
            return ("NOT", self.unary())
        if token == "(":
            node = self.expr()
            self.pos += 1  # ")"
            return node
        return ("lit", self.pos - 1)


def _value(node: tuple, tokens: list) -> bool:
    kind = node[0]
    if kind == "lit":
        return tokens[node[1]]
    if kind == "NOT":
        return not _value(node[1], tokens)
    left, right = _value(node[1], tokens), _value(node[2], tokens)
    return {"AND": left and right, "OR": left or right, "XOR": left != right}[kind]


def _force(node: tuple, want: bool, tokens: list, rng: random.Random) -> int:
    """Flip as few literals as this walk needs so that `node` evaluates to `want`;
    returns the number of literals flipped. The structure never changes."""
    if _value(node, tokens) == want:
        return 0
    kind = node[0]
    if kind == "lit":
        tokens[node[1]] = want
        return 1
    if kind == "NOT":
        return _force(node[1], not want, tokens, rng)
    children = [node[1], node[2]]
    if kind == "XOR":  # changing either side flips the result
        child = rng.choice(children)
        return _force(child, not _value(child, tokens), tokens, rng)
    # AND must become TRUE / OR must become FALSE: every side must change that is wrong;
    # AND must become FALSE / OR must become TRUE: one side suffices.
    every = want if kind == "AND" else not want
    if every:
        return sum(_force(c, want, tokens, rng) for c in children)
    return _force(rng.choice(children), want, tokens, rng)


def _render(tokens: list, words: tuple[str, str], prob_dewhitespace: float, rng: random.Random) -> tuple[str, int]:
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
class Boolean(Task[BooleanParams]):
    name = "boolean"
    version = 2  # targets balanced per point; prob_not_after_not
    answer_kind = "literal"
    description = ("Evaluate the boolean expression. NOT applies first, then AND, then XOR, then OR; "
                   "operators of equal rank go left to right, and parentheses come first.")
    answer_format = "Final Answer: TRUE or FALSE"  # per format: see answer_format_for
    Params = BooleanParams

    def answer_format_for(self, params: dict) -> str:
        true_word, false_word = FORMATS[self.typed(params).format]
        return f"Final Answer: {true_word} or {false_word}"

    def description_for(self, params: dict) -> str:
        true_word, false_word = FORMATS[self.typed(params).format]
        return f"{self.description} {true_word} means true and {false_word} means false."

    def cases(self, p: BooleanParams, rng: random.Random, count: int) -> Iterator[TestCase]:
        """Balanced by construction: each consecutive pair of cases has one TRUE and one
        FALSE target, in random order, so every prefix is within one case of half TRUE."""
        wants = shuffled_rounds((True, False), rng)
        for _ in range(count):
            yield self._case(p, rng, next(wants))

    def generate(self, p: BooleanParams, rng: random.Random) -> TestCase:
        return self._case(p, rng, rng.random() < 0.5)

    def _case(self, p: BooleanParams, rng: random.Random, want: bool) -> TestCase:
        """A random expression whose literals are then adjusted (fewest flips along one
        walk of its tree) so that it evaluates to `want`."""
        tokens = _build_tokens(p, rng)
        tree = _Parser(tokens).expr()
        flipped = _force(tree, want, tokens, rng)
        words = FORMATS[p.format]
        text, removed = _render(tokens, words, p.prob_dewhitespace, rng)
        return TestCase(
            input=text,
            target=words[0] if want else words[1],
            response_enum=list(words),
            guess_chance=0.5,
            genresult={"format": FORMAT_NAMES[p.format],
                       "operators": {op: tokens.count(op) for op in BINARY_OPS + ("NOT",)},
                       "groups": tokens.count("("), "spaces_removed": removed,
                       "literals_flipped": flipped},
        )

    def example_overrides(self) -> dict:
        return {"length": 3, "max_depth": 1}
