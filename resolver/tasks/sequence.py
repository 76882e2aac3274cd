"""sequence: continue a number sequence built by a base rule plus interfering rules.

The base rule adds a fixed step to the current number. `num_rules` extra rules of
the kinds enabled by `rule_enable` interfere with it:

* CONDITIONS (4): "if the current number is even / odd / a multiple of d, add s
  instead" - the first condition that applies replaces the base step;
* MODULO (2): "if the result is M or more, replace it by its remainder mod M";
* SKIP (1): "numbers that are multiples of d are not written down, but the
  sequence continues from them".

The first four written numbers are shown; the answer is the next `seq_length`
written numbers. More rules and longer continuations are harder.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, register

RULE_KINDS = {1: "SKIP", 2: "MODULO", 4: "CONDITIONS"}
SHOWN = 4
_STATES_PER_NUMBER = 4  # a rule set that skips more than 3 numbers in 4 is redrawn


@dataclass(frozen=True)
class Rule:
    kind: str
    a: int  # divisor (SKIP / CONDITIONS) or modulus (MODULO); 0 = "even", 1 = "odd" for CONDITIONS
    b: int = 0  # the replacement step of a CONDITIONS rule

    def text(self) -> str:
        if self.kind == "SKIP":
            return (f"A number that is a multiple of {self.a} is not written down, "
                    "but the next number is still computed from it.")
        if self.kind == "MODULO":
            return f"If a new number is {self.a} or more, replace it by its remainder when divided by {self.a}."
        test = {0: "even", 1: "odd"}.get(self.a, f"a multiple of {self.a}")
        return f"If the current number is {test}, add {self.b} instead of the usual step."

    def condition(self, x: int) -> bool:
        if self.a == 0:
            return x % 2 == 0
        if self.a == 1:
            return x % 2 == 1
        return x % self.a == 0


def _draw_rule(kind: str, rng: random.Random) -> Rule:
    if kind == "SKIP":
        return Rule(kind, rng.randint(3, 9))
    if kind == "MODULO":
        return Rule(kind, rng.randint(20, 99))
    return Rule(kind, rng.choice((0, 1, 3, 4, 5)), rng.randint(1, 15))


def run(start: int, step: int, rules: list[Rule], count: int) -> list[int] | None:
    """The first `count` written numbers, or None when the rules write too few."""
    conditions = [r for r in rules if r.kind == "CONDITIONS"]
    moduli = [r for r in rules if r.kind == "MODULO"]
    skips = [r for r in rules if r.kind == "SKIP"]
    x, written = start, []
    for _ in range(_STATES_PER_NUMBER * count + 8):
        if not any(x % r.a == 0 for r in skips):
            written.append(x)
            if len(written) == count:
                return written
        delta = next((r.b for r in conditions if r.condition(x)), step)
        x += delta
        for r in moduli:
            if x >= r.a:
                x %= r.a
    return None


def _draw_rules(kinds: list[str], count: int, rng: random.Random) -> list[Rule]:
    """`count` rules of the enabled kinds; at most one MODULO (a second one is idle)."""
    rules: list[Rule] = []
    for _ in range(count):
        allowed = [k for k in kinds if k != "MODULO" or all(r.kind != "MODULO" for r in rules)]
        rules.append(_draw_rule(rng.choice(allowed), rng))
    return rules


def _moves(numbers: list[int]) -> bool:
    """False for a sequence stuck on one value (a fixed point of the rules)."""
    return all(a != b for a, b in zip(numbers, numbers[1:]))


def _every_rule_matters(start: int, step: int, rules: list[Rule], total: int, numbers: list[int]) -> bool:
    return all(run(start, step, rules[:i] + rules[i + 1:], total) != numbers for i in range(len(rules)))


@dataclass(frozen=True, slots=True, kw_only=True)
class SequenceParams:
    seq_length: int = param(5, low=1, high=60, doc="numbers to continue with")
    num_rules: int = param(1, low=0, high=4, doc="interfering rules on top of the base step")
    rule_enable: int = param(7, low=1, high=7,
                             doc="bitmask of rule kinds: " + ", ".join(f"{k} {v}" for k, v in RULE_KINDS.items()))


@register
class Sequence(Task[SequenceParams]):
    name = "sequence"
    answer_kind = "numbers"
    description = ("A number sequence follows the rules given. Apply every rule exactly as stated and "
                   "continue the sequence.")
    answer_format = "Final Answer: followed by the numbers, separated by commas"
    Params = SequenceParams

    def check_consistency(self, p: SequenceParams) -> None:
        if p.rule_enable == 1 and p.num_rules > 3:
            raise UserError("task 'sequence': with rule_enable=1 (SKIP only) num_rules must be <= 3")
        if p.rule_enable == 2 and p.num_rules > 1:
            raise UserError("task 'sequence': with rule_enable=2 (MODULO only) num_rules must be <= 1")

    def generate(self, p: SequenceParams, rng: random.Random) -> TestCase:
        kinds = [name for bit, name in RULE_KINDS.items() if p.rule_enable & bit]
        total = SHOWN + p.seq_length
        for attempt in range(60):
            start, step = rng.randint(0, 30), rng.randint(2, 11)
            rules = list(dict.fromkeys(_draw_rules(kinds, p.num_rules, rng)))
            numbers = run(start, step, rules, total)
            # Redraw sets that write almost nothing, repeat a rule, or hold a rule that
            # never changes the answer (late attempts accept idle rules rather than loop).
            if numbers is not None and len(rules) == p.num_rules and _moves(numbers) and (
                    attempt >= 40 or _every_rule_matters(start, step, rules, total, numbers)):
                break
        assert numbers is not None, "60 rule sets in a row that write too few numbers"
        lines = [f"Start with {start}. Each next number is the current number plus {step}."]
        lines += [f"Rule {i}: {r.text()}" for i, r in enumerate(rules, 1)]
        shown = ", ".join(map(str, numbers[:SHOWN]))
        lines.append(f"Rules are applied in the order given. The sequence written down so far is: {shown}")
        lines.append(f"Write down the next {p.seq_length} numbers of the sequence.")
        return TestCase(
            input="\n".join(lines),
            target=", ".join(map(str, numbers[SHOWN:])),
            genresult={"rules": [r.kind for r in rules], "start": start, "step": step},
        )
