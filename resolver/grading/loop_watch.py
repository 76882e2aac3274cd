"""The streaming loop detector: is the text streamed so far stuck in a loop that cannot end?

A pure rule (docs/loops.md). The tail of the text is a loop when it is *verbatim* periodic:
every character equals the one `period` characters before it, over at least
`LoopRule.need_chars(period)` characters: `min_span_chars` (`short_unit_span_chars` for a
unit of at most `short_unit_chars`), and at least `min_copies` whole copies of the unit.
Anything a model writes while it progresses (numbers that count, lines that differ) breaks
verbatim periodicity, so only a model that repeats itself exactly is stopped.

`LoopWatch` checks at fixed points of the stream, every `check_every_chars` characters
(the *grid*: at 256, 512, ... characters), whatever the sizes of the deltas, so the verdict
depends on the text alone: `find_loop(text)` checks the same grid points of the whole text
and finds the same loop. One check costs O(window) character comparisons done by C
string routines (`str.rfind`, slice equality), never a regex, and the watch keeps only the
last window of text, so feeding costs amortised O(new characters).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FoundLoop", "LoopRule", "LoopWatch", "find_loop", "longest_periodic_tail"]

#: Length of the text's last characters whose earlier occurrences propose candidate periods.
_PROBE_CHARS = 32


class LoopRule(BaseModel):
    """The thresholds of the loop rule; the sampler's "stop_loops" object (docs/loops.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    min_copies: int = Field(10, ge=3, le=10_000, description=(
        "Whole copies of the repeated unit the periodic tail must hold."))
    min_span_chars: int = Field(2_000, ge=256, le=1_000_000, description=(
        "Characters the verbatim-periodic tail must cover."))
    max_period_chars: int = Field(1_000, ge=1, le=100_000, description=(
        "Longest repeated unit searched, in characters."))
    short_unit_chars: int = Field(4, ge=0, le=16, description=(
        "Units this short or shorter (a character, a word: '!!!!', '> > > ', 'the the ') need only "
        "short_unit_span_chars; 0 turns this off."))
    short_unit_span_chars: int = Field(1_000, ge=64, le=1_000_000, description=(
        "Characters a periodic tail of a short unit must cover (never more than min_span_chars)."))
    check_every_chars: int = Field(256, ge=16, le=100_000, description=(
        "The rule is checked each time the stream passes a multiple of this many characters."))

    def need_chars(self, period: int) -> int:
        """Characters a periodic tail with this period must cover to be a loop."""
        return _Limits.need_of(self.min_copies, self.min_span_chars, self.short_unit_chars,
                               self.short_unit_span_chars, period)

    @property
    def window_chars(self) -> int:
        """Characters of the text's end a check looks at (and the longest span it reports)."""
        return 2 * self.need_chars(self.max_period_chars)


@dataclass(frozen=True)
class FoundLoop:
    """A loop the rule found."""

    period_chars: int     # length of the repeated unit (the smallest period of the tail)
    copies: int           # whole copies in the repeated tail
    span_chars: int       # characters covered by the repetition (the tail), within the window
    at_chars: int         # length of the text when the rule held (a multiple of check_every_chars)

    def to_json(self) -> dict:
        return asdict(self)


def _periodic_from(s: str, end: int, period: int, start: int, known: int) -> int:
    """Length of the longest tail of s[start:end] in which each character equals the one
    `period` before it (the first copy included), given that the last `known` characters are.

    s[a:end] == s[a - period:end - period] says the whole stretch is periodic at once, so the
    stretch grows by doubling and the break is found by bisection: O(log) comparisons,
    each done by C code.
    """
    good, limit = known, end - start            # periodic tails of these lengths: good yes, limit+1 no
    bad = limit + 1
    step = max(known, period)
    while good < limit:
        trial = min(limit, good + step)
        if s[end - trial + period:end] == s[end - trial:end - period]:
            good, step = trial, 2 * step
        else:
            bad = trial
            break
    while bad - good > 1:
        mid = (good + bad) // 2
        if s[end - mid + period:end] == s[end - mid:end - period]:
            good = mid
        else:
            bad = mid
    return good


def _periods(s: str, end: int, start: int, max_period: int) -> Iterator[int]:
    """Candidate periods of the tail of s[start:end], smallest first: the shifts back to the
    earlier occurrences of its last _PROBE_CHARS characters (a tail periodic with p over more
    than p + _PROBE_CHARS characters holds its last characters again p characters earlier)."""
    probe = s[end - _PROBE_CHARS:end]
    lo = max(start, end - _PROBE_CHARS - max_period)
    hi = end - 1
    while (pos := s.rfind(probe, lo, hi)) >= 0:
        yield end - _PROBE_CHARS - pos
        hi = pos + _PROBE_CHARS - 1


@dataclass(frozen=True)
class _Limits:
    """A rule's numbers as plain ints (a pydantic model's attributes cost more to read, and
    a check reads them several times)."""

    copies: int
    span: int
    short: int
    short_span: int
    period: int
    every: int
    window: int

    @classmethod
    def of(cls, rule: LoopRule) -> _Limits:
        return cls(rule.min_copies, rule.min_span_chars, rule.short_unit_chars, rule.short_unit_span_chars,
                   rule.max_period_chars, rule.check_every_chars, rule.window_chars)

    def need(self, period: int) -> int:
        return self.need_of(self.copies, self.span, self.short, self.short_span, period)

    @staticmethod
    def need_of(copies: int, span: int, short: int, short_span: int, period: int) -> int:
        # a short unit never needs more than a long one: a check tries periods smallest first
        # and stops at the first that needs more than it can see, so need must not shrink
        return max(min(short_span, span) if period <= short else span, copies * period)


def _check(s: str, end: int, lim: _Limits, at: int) -> FoundLoop | None:
    """The rule on s[:end] (`at`: the text length that `end` stands for)."""
    start = max(0, end - lim.window)
    if end - start < min(lim.span, lim.short_span):
        return None
    for period in _periods(s, end, start, lim.period):
        need = lim.need(period)
        if need > end - start:           # larger periods need more still
            return None
        if s[end - need + period:end] == s[end - need:end - period]:
            span = _periodic_from(s, end, period, start, need)
            return FoundLoop(period, span // period, span, at)
    return None


def longest_periodic_tail(text: str, end: int, rule: LoopRule) -> tuple[int, int]:
    """(span, copies) of the longest verbatim-periodic tail of text[:end] with at least two
    copies, among the periods `rule` searches; (0, 0) when none. How close a text comes to
    the rule (the no-false-stop margins of docs/loops.md)."""
    start = max(0, end - rule.window_chars)
    best = (0, 0)
    if end - start < _PROBE_CHARS:
        return best
    for period in _periods(text, end, start, rule.max_period_chars):
        if 2 * period <= end - start and text[end - period:end] == text[end - 2 * period:end - period]:
            span = _periodic_from(text, end, period, start, 2 * period)
            best = max(best, (span, span // period))
    return best


class LoopWatch:
    """Feed a stream's text deltas; `feed` returns the loop once the rule holds (docs/loops.md)."""

    def __init__(self, rule: LoopRule | None = None):
        self.rule = rule or LoopRule()
        self._limits = _Limits.of(self.rule)
        self._kept = ""          # the text from character `_offset` on (the window the next check needs)
        self._offset = 0
        self._parts: list[str] = []
        self._seen = 0
        self._next_check = self._limits.every
        self._found: FoundLoop | None = None

    @property
    def found(self) -> FoundLoop | None:
        return self._found

    def feed(self, text: str) -> FoundLoop | None:
        """Append streamed text (content and reasoning deltas, in arrival order); check each
        time the stream passes a multiple of rule.check_every_chars; return the loop once
        found (and on every later call)."""
        if self._found is not None or not text:
            return self._found
        self._parts.append(text)
        self._seen += len(text)
        if self._seen < self._next_check:
            return None
        # CPython appends in place to a string nothing else refers to: let go of
        # self._kept first, so this costs O(new characters), not a copy of the window
        kept, self._kept = self._kept, ""
        kept += "".join(self._parts)
        self._parts = []
        lim = self._limits
        while self._next_check <= self._seen:
            at = self._next_check
            found = _check(kept, at - self._offset, lim, at)
            if found is not None:
                self._found = found
                self._kept = ""
                return found
            self._next_check += lim.every
        # keep what the next check can look at; cut only when that frees a window's worth
        drop = self._next_check - lim.window - self._offset
        if drop > lim.window:
            kept = kept[drop:]
            self._offset += drop
        self._kept = kept
        return None


def find_loop(text: str, rule: LoopRule | None = None) -> FoundLoop | None:
    """The same rule on a whole text: the loop LoopWatch stops on, fed this text in any pieces."""
    limits = _Limits.of(rule or LoopRule())
    for at in range(limits.every, len(text) + 1, limits.every):
        found = _check(text, at, limits, at)
        if found is not None:
            return found
    return None
