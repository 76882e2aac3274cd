"""The generator pattern every task follows.

A task is one module in `resolver/tasks/` defining a subclass of `Task` decorated
with `@register`. It declares:

* `Params`: its typed parameter model, a frozen dataclass whose fields are declared with
  `param(default, low=, high=, choices=, doc=)`; `Task.params` (a tuple of `Param`, the
  self-validating schema that configs are checked against) is derived from it;
* `generate(p, rng)`: a pure function of the parameters (a `Params` instance, read as
  `p.length`) and an injected `random.Random`, returning one `TestCase`. Cases are drawn
  one after another from the same rng, so a smaller count is always a prefix of a larger one;
* `description_for(params)` / `answer_format_for(params)`: the task text that
  templates put around the problem;
* `answer_kind`: how answers are canonicalised (see resolver.grading.answers).

Configs, point identity and records keep parameters as plain dicts (validated once per
point by `validate`); `generate_cases` / `iter_cases` build the model once per call
(docs/decisions.md, typed task parameters). `count` is not a generator parameter: the
runner decides how many cases to draw.
"""
from __future__ import annotations

import dataclasses
import random
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Callable, Generic, Iterator, Mapping, Sequence, TypeVar

from pydantic import BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

from resolver.core import UserError, choices_text
from resolver.grading import canonical_target, extract_by_kind

_REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """One generator parameter: its type, default, allowed range or choices."""

    name: str
    kind: type = int
    default: Any = _REQUIRED
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def allowed(self) -> str:
        """Human description of the valid values, for error messages and docs."""
        if self.choices is not None:
            return "one of " + choices_text(self.choices)
        kind = self.kind.__name__
        if self.low is not None and self.high is not None:
            return f"{kind} from {self.low} to {self.high}"
        if self.low is not None:
            return f"{kind} >= {self.low}"
        if self.high is not None:
            return f"{kind} <= {self.high}"
        return kind

    @cached_property
    def _adapter(self) -> TypeAdapter:
        """The parameter's type and range as a pydantic validator (strict: no "3" for 3, no true
        for 1; a whole float such as 3.0 is taken as the int 3, never truncated). A parameter
        whose default is None takes None too: `validate` of its own output must pass."""
        kind: Any = Annotated[int, BeforeValidator(_whole_number)] if self.kind is int else self.kind
        bounds: dict[str, Any] = {k: v for k, v in (("ge", self.low), ("le", self.high)) if v is not None}
        checked: Any = Annotated[kind, Field(**bounds)]
        return TypeAdapter(checked | None if self.default is None else checked, config=ConfigDict(strict=True))

    def check(self, value: Any, task: str) -> Any:
        """Return `value` as this parameter's type, or raise UserError."""
        where = f"task {task!r} parameter {self.name!r}"
        try:
            checked = self._adapter.validate_python(value)
        except ValidationError as exc:
            problem = "is out of range" if exc.errors()[0]["type"] in _BOUND_ERRORS else "is not valid"
            raise UserError(f"{where}: {value!r} {problem}; expected {self.allowed()}")
        if self.choices is not None and checked not in self.choices:
            raise UserError(f"{where}: {value!r} is not valid; expected {self.allowed()}")
        return checked


_BOUND_ERRORS = {"greater_than_equal", "less_than_equal"}
_PARAM = "resolver.param"  # the metadata key of a field declared with `param`


def param(default: Any = _REQUIRED, *, low: float | None = None, high: float | None = None,
          choices: tuple | None = None, doc: str = "", kind: type | None = None) -> Any:
    """A field of a task's parameter model: its default, range or choices and doc. The
    field's annotation gives the `Param` kind (int, float, str or bool); a field of another type
    names its config-side kind (`kind=list` for a list written in a config)."""
    spec = {"low": low, "high": high, "choices": choices, "doc": doc, "kind": kind}
    if default is _REQUIRED:
        return field(metadata={_PARAM: spec})
    return field(default=default, metadata={_PARAM: spec})


def params_of(model: type) -> tuple[Param, ...]:
    """The `Param` schema of a parameter model, one per field in declaration order."""
    hints = typing.get_type_hints(model)
    out = []
    for f in dataclasses.fields(model):
        spec = f.metadata.get(_PARAM)
        if spec is None:
            raise TypeError(f"{model.__name__}.{f.name} is not declared with param(...)")
        kind = spec["kind"] or hints[f.name]
        if kind not in (int, float, str, bool, list):
            raise TypeError(f"{model.__name__}.{f.name}: give kind= for a field of type {kind}")
        default = _REQUIRED if f.default is dataclasses.MISSING else f.default
        out.append(Param(f.name, kind, default, low=spec["low"], high=spec["high"],
                         choices=spec["choices"], doc=spec["doc"]))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class NoParams:
    """The parameter model of a task without parameters."""


def _whole_number(value: Any) -> Any:
    """3.0 is the integer 3 (YAML and JSON write some integers that way); 3.5 stays and is refused."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def shuffled_rounds(values: Sequence, rng: random.Random) -> Iterator:
    """`values` over and over, each round in a fresh random order drawn from `rng` when
    the round starts. A task that takes one value per case (a target to aim for) gets
    every value equally often at any count, within one round, and stays count-invariant."""
    while True:
        round_ = list(values)
        rng.shuffle(round_)
        yield from round_


def permutation(rng: random.Random, population: Sequence) -> list:
    """`rng.sample(population, len(population))`, the same list from the same draws, about
    twice as fast: for a whole permutation `sample` swaps from a pool with one
    `randrange(n - i)` per item, and `randrange(m)` takes `getrandbits(m.bit_length())`
    until it is below m; here those draws are inlined (docs/decisions.md, issue 38).
    Subclasses of Random may draw differently, so they get `sample` itself."""
    if type(rng) is not random.Random:
        return rng.sample(population, len(population))
    getrandbits = rng.getrandbits
    pool = list(population)
    out: list = []
    append = out.append
    for m in range(len(pool), 0, -1):
        bits = m.bit_length()
        j = getrandbits(bits)
        while j >= m:
            j = getrandbits(bits)
        append(pool[j])
        pool[j] = pool[m - 1]
    return out


def draw_below(rng: random.Random) -> Callable[[int], int]:
    """A function m -> `rng.randrange(m)` drawing the same numbers, with `rng.choice(seq)`
    being `seq[below(len(seq))]` and `rng.randint(a, b)` being `a + below(b - a + 1)`: the
    draws of `permutation`, as one call instead of three (docs/decisions.md, issue 38)."""
    if type(rng) is not random.Random:
        return rng.randrange
    getrandbits = rng.getrandbits

    def below(m: int) -> int:
        bits = m.bit_length()
        j = getrandbits(bits)
        while j >= m:
            j = getrandbits(bits)
        return j
    return below


@dataclass
class TestCase:
    """One generated problem, with the fields the runner record carries."""

    __test__ = False  # not a pytest test class

    input: str
    target: str
    response_enum: list[str] | None = None
    guess_chance: float = 0.0
    genresult: dict = field(default_factory=dict)


P = TypeVar("P")  # a task's parameter model


class Task(ABC, Generic[P]):
    """Base class of every generator; subclasses set the class attributes and `Params`."""

    name: str = ""
    # The typed parameter model (a frozen dataclass of `param` fields); `params` is derived.
    Params: type[P]
    params: tuple[Param, ...] = ()
    description: str = ""
    answer_format: str = ""
    answer_kind: str = "text"
    # Bumped whenever the problems this task generates change for the same params
    # and seed; records carry it as `task_version`, and points of different
    # versions are never pooled.
    version: int = 1

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Params" in cls.__dict__:
            cls.params = params_of(cls.Params)
        elif not hasattr(cls, "Params"):  # a task without parameters (test doubles of grading)
            cls.Params = typing.cast(Any, NoParams)

    # ---- schema -------------------------------------------------------
    def typed(self, params: Mapping[str, Any]) -> P:
        """The parameter model of validated `params` (`validate`'s output): no checks
        again; lists become tuples, so the model is immutable and hashable."""
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        return self.Params(**values)

    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def validate(self, params: dict) -> dict:
        """Check names, types and ranges; fill defaults. Raises UserError."""
        known = {p.name: p for p in self.params}
        unknown = set(params) - set(known) - {"count"}
        if unknown:
            raise UserError(
                f"task {self.name!r}: unknown parameter {sorted(unknown)[0]!r}; "
                f"valid parameters: {choices_text(known)}"
            )
        out = {}
        for p in self.params:
            if p.name in params:
                out[p.name] = p.check(params[p.name], self.name)
            elif p.required:
                raise UserError(
                    f"task {self.name!r}: parameter {p.name!r} is required ({p.allowed()})"
                )
            else:
                out[p.name] = p.default
        self.check_consistency(self.typed(out))
        return out

    def check_consistency(self, p: P) -> None:
        """Cross-parameter rules (e.g. min <= max); raise UserError. Override."""
        return None

    # ---- generation ---------------------------------------------------
    @abstractmethod
    def generate(self, p: P, rng: random.Random) -> TestCase:
        """One case from the parameters, drawing only from `rng` (pure otherwise)."""

    def generate_cases(self, params: Mapping[str, Any], rng: random.Random, count: int) -> list[TestCase]:
        """`count` cases drawn in sequence (count-invariant by construction) from validated
        `params`."""
        return list(self.iter_cases(params, rng, count))

    def iter_cases(self, params: Mapping[str, Any], rng: random.Random, count: int) -> Iterator[TestCase]:
        """The cases of validated `params`, one after another (the model is built once)."""
        return self.cases(self.typed(params), rng, count)

    def cases(self, p: P, rng: random.Random, count: int) -> Iterator[TestCase]:
        """`count` cases in sequence. Override for a per-point schedule (balanced targets)."""
        for _ in range(count):
            yield self.generate(p, rng)

    # ---- text around the problem ------------------------------------------
    def description_for(self, params: dict) -> str:
        return self.description

    def answer_format_for(self, params: dict) -> str:
        return self.answer_format

    def example_params(self) -> dict:
        """Parameters for the worked examples of multishot templates (defaults)."""
        return self.validate({p.name: p.default for p in self.params if not p.required}
                             | self.example_overrides())

    def example_overrides(self) -> dict:
        """Values for required parameters when building worked examples. Override."""
        return {}

    # ---- grading hooks (rules live in resolver.grading.answer_kinds) ----------------
    def extract(self, text: str, response_enum: Sequence[str] | None,
                options: dict[str, str] | None = None) -> str | None:
        """Canonical answer from the text after the final-answer marker, or None.

        `options` ({"(A)": "option text", ...}) is passed for choice tasks only, so an
        override that never grades choices may keep the two-argument signature.
        """
        return extract_by_kind(self.answer_kind, text, response_enum, options)

    def matches(self, extracted: str, target: str) -> bool:
        """Is a canonical answer equal to the target? Override for tolerant tasks."""
        return extracted == canonical_target(self.answer_kind, target)


class TokenCursor:
    """A position in a token list, for the generators' recursive-descent solvers."""

    def __init__(self, tokens: list):
        self.tokens, self.pos = tokens, 0

    def peek(self) -> Any:
        """The next token, or None at the end."""
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Any:
        """The next token, consumed."""
        self.pos += 1
        return self.tokens[self.pos - 1]
