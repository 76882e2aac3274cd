"""The loop detector: does a (truncated) answer end in a repetition loop, and what kind?

A model that runs out of tokens has usually either reasoned at length (healthy) or got
stuck repeating itself. This module tells the two apart and names the kind of loop:

=================  ===========================================================
class              pattern
=================  ===========================================================
1-LOOP-STATIC      one segment repeated at a fixed length (Δtok ≈ 0)
1-LOOP-GROWING     one segment repeated while it grows (Δtok > 0), or a counter
                   loop: the same sentence with an increasing number in it
1-LOOP-SHRINKING   one segment repeated while it shrinks (Δtok < 0)
2-LOOP-STATIC      two segments alternating: ABAB...
3-LOOP-STATIC      three segments cycling: ABCABC...
DEGENERATE         a few characters repeated with no line/sentence structure
None               no loop: healthy text
=================  ===========================================================

How it works
------------
1. The text is split into *segments*: lines (blank lines glued to the line before),
   and sentences inside lines that are long.
2. Each segment becomes a *signature* that ignores numbers, case, punctuation and
   immediate word repetitions ("step 5: 1, 2, 3" and "Step 6: 1, 2, 3, 4" share one
   signature), so counters and growing lists still match. Segments with almost no
   words ("| 3 | 4 |", "= 57") keep their numbers, so numeric tables are not loops.
3. For each period P from 1 to MAX_BLOCK_SEGMENTS the detector finds the longest
   tail of the signature sequence in which segment i equals segment i + P (a few
   isolated mismatches are tolerated). The period with the longest tail wins, the
   smaller period on ties, and it must repeat at least MIN_REPEATS times.
4. P = 2 and P = 3 are the two- and three-state loops. P = 1 loops are classified by
   the trend of their unit token lengths; a flat trend whose numbers count upwards is
   a counter loop (GROWING). A block of more than three segments repeating (a whole
   paragraph said again, the usual shape of a real model's loop) is one repeated
   unit too: it is reported as a 1-LOOP-* of that block, with ``period`` = the
   block's segment count.
5. Unless a severe segment loop was found, the character-level tail is checked for
   an exactly repeated unit: a tiny one ("!!!!", "the the the") is DEGENERATE; a
   phrase repeated inside one line with nothing to segment on ("and then the answer
   is 5 and then the answer is 5 ...") is a 1-LOOP-STATIC. It wins when it covers
   more than the segment loop.

Tokens are counted with the tokenizer when one is given (anything with ``encode``)
and otherwise with a word/punctuation regex that approximates a BPE tokenizer
(numbers split in groups of three digits, punctuation separate).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

# --- thresholds (all our design; see the module docstring for the pipeline) -------

#: A loop must repeat its unit (P segments) at least this many times. Three
#: repeats happen in healthy text ("Let me check." x3); four in a row rarely do.
MIN_REPEATS = 4
#: ...except blocks of more than three segments, where three repeats of a whole
#: paragraph are already well beyond chance.
MIN_BLOCK_REPEATS = 3
#: Longest repeated block searched, in segments (lines / sentences).
MAX_BLOCK_SEGMENTS = 64
#: ...and cover at least this many tokens, so four repeated one-word lines in a
#: long answer are not reported as a loop.
MIN_LOOP_TOKENS = 24
#: Largest fraction of mismatched comparisons tolerated inside a loop region. Greedy
#: loops are verbatim, but sampling at temperature rewords a sentence of the
#: repeated paragraph now and then (one in six still has to be found).
MAX_MISMATCH_FRACTION = 0.25
#: A run of more than this many mismatches per unit of period ends the loop region
#: (one varied segment causes up to 2*P mismatched comparisons).
MAX_MISMATCH_RUN_PER_PERIOD = 2
#: The first START_WINDOW_UNITS repeats of a loop (at least START_WINDOW_MIN
#: comparisons) must keep within the mismatch budget on their own.
START_WINDOW_UNITS = 2
START_WINDOW_MIN = 6
#: A smaller period wins when its loop region is at least this share of the longest.
SMALLER_PERIOD_SHARE = 0.8
#: Lines longer than this many characters are split into sentences, so run-on
#: paragraphs still show their repeating structure.
LONG_LINE_CHARS = 300
#: A segment whose signature has fewer words than this (numbers not counted) keeps
#: its numbers in the signature: "| 3 | 4 |" rows of a table must not match.
MIN_SIGNATURE_WORDS = 2
#: Δtok trend (least-squares slope of unit token length per repeat) below this in
#: absolute value is "static"; above it growing / shrinking.
STATIC_SLOPE_TOKENS = 0.5
#: Share of successive unit-length changes that must agree with the trend's sign
#: before a loop is called growing / shrinking (guards against noisy lengths).
TREND_AGREEMENT = 0.6
#: Share of successive repeats whose numbers increase for a flat loop to count as a
#: counter loop (1-LOOP-GROWING).
COUNTER_AGREEMENT = 0.8
#: DEGENERATE: a unit of at most this many characters...
DEGENERATE_MAX_UNIT_CHARS = 8
#: ...repeated at least this many times...
DEGENERATE_MIN_REPEATS = 16
#: ...over at least this many characters at the end of the text.
DEGENERATE_MIN_CHARS = 100
#: A longer unit (a phrase) repeated exactly inside one line, with no line or
#: sentence breaks to segment on, is a 1-LOOP-STATIC; units up to this length are
#: searched...
PHRASE_MAX_UNIT_CHARS = 300
#: ...in this many characters at the end of the text.
CHAR_WINDOW = 6000
#: A 1-loop whose unit is at most this many tokens, inside a line, is a collapse:
#: DEGENERATE wins when it covers nearly as much (within TINY_COVERAGE_SLACK).
TINY_UNIT_TOKENS = 3
TINY_COVERAGE_SLACK = 0.05
#: Characters of the repeated unit kept in a report (for people, not for matching).
UNIT_TEXT_CHARS = 120
#: Loop coverage above this is a severe failure (README.md).
SEVERE_COVERAGE = 0.90

CLASSES = ("1-LOOP-STATIC", "1-LOOP-GROWING", "1-LOOP-SHRINKING",
           "2-LOOP-STATIC", "3-LOOP-STATIC", "DEGENERATE")
NO_LOOP = "none"

_TOKEN_RE = re.compile(r"\d{1,3}|[^\W\d_]{1,6}|[^\w\s]|_")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_WORD_RE = re.compile(r"[^\W_]+")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])")  # CJK stops need no space


@dataclass
class LoopReport:
    """What the detector found in one answer.

    classification: one of CLASSES or None. period: segments per repeated unit
    (characters per unit for DEGENERATE). repeats: full units in the loop.
    delta_tokens: mean change in unit token length between successive repeats.
    coverage: fraction of the answer's tokens inside the loop. start_token /
    start_fraction: where the loop begins. total_tokens: tokens in the answer.
    """

    classification: str | None
    coverage: float = 0.0
    period: int = 0
    repeats: int = 0
    delta_tokens: float = 0.0
    start_token: int = 0
    start_fraction: float = 1.0
    total_tokens: int = 0
    unit_tokens: float = 0.0
    unit_text: str = ""

    @property
    def severe(self) -> bool:
        return self.classification is not None and self.coverage > SEVERE_COVERAGE

    @property
    def label(self) -> str:
        return self.classification or NO_LOOP


# --- tokens and segments -------------------------------------------------------------

def _token_counter(tokenizer: Any) -> Callable[[Iterable[str]], list[int]]:
    """Return texts -> token counts for a tokenizer object, or the regex fallback."""
    if tokenizer is None:
        return _memoised(lambda t: len(_TOKEN_RE.findall(t)))

    def encode_len(text: str) -> int:
        try:
            ids = tokenizer.encode(text, add_special_tokens=False)
        except TypeError:  # tokenizers.Tokenizer has no add_special_tokens keyword
            ids = tokenizer.encode(text)
        return len(getattr(ids, "ids", ids))

    return _memoised(lambda t: encode_len(t) if t else 0)


def _memoised(count_one: Callable[[str], int]) -> Callable[[Iterable[str]], list[int]]:
    """texts -> counts, counting each distinct text once (loop segments repeat)."""
    def count(texts: Iterable[str]) -> list[int]:
        memo: dict[str, int] = {}
        return [memo[t] if t in memo else memo.setdefault(t, count_one(t)) for t in texts]
    return count


def segment_text(text: str) -> list[str]:
    """Lines (newline kept on each), long lines further split into sentences.

    Blank lines are glued to the segment before them: "A\n\nB\n\nA\n\nB" must be a
    two-state loop, not a four-segment block.
    """
    segments: list[str] = []
    for line in text.splitlines(keepends=True):
        if not line.strip() and segments:
            segments[-1] += line
        elif len(line) > LONG_LINE_CHARS:
            segments.extend(_split_sentences(line))
        else:
            segments.append(line)
    return segments


def _split_sentences(line: str) -> list[str]:
    pieces, last = [], 0
    for match in _SENTENCE_END_RE.finditer(line):
        pieces.append(line[last:match.end()])
        last = match.end()
    if last < len(line):
        pieces.append(line[last:])
    return pieces


def signature(segment: str) -> str:
    """Normalise a segment so repeats with changing numbers or lengths still match."""
    raw_words = _WORD_RE.findall(segment.lower())
    words = ["0" if w[0].isdigit() else w for w in raw_words]
    if len(words) - words.count("0") < MIN_SIGNATURE_WORDS:
        return " ".join(raw_words) or segment.strip()
    return " ".join(_collapse_repeats(words))


def _collapse_repeats(words: list[str]) -> list[str]:
    """Drop immediate repeats of a word, then of a word pair: "0 0 0 0" and "a b a b" collapse."""
    singles: list[str] = []
    for word in words:
        if not singles or singles[-1] != word:
            singles.append(word)
    out: list[str] = []
    for word in singles:
        out.append(word)
        if len(out) >= 4 and out[-1] == out[-3] and out[-2] == out[-4]:
            del out[-2:]
    return out


def _signatures(segments: Sequence[str]) -> list[str]:
    """Signatures of all segments; loops repeat verbatim, so memoise per text."""
    memo: dict[str, str] = {}
    out = []
    for seg in segments:
        sig = memo.get(seg)
        if sig is None:
            sig = memo[seg] = signature(seg)
        out.append(sig)
    return out


# --- periodic tail --------------------------------------------------------------------

def _tail_region(codes: np.ndarray, period: int) -> int:
    """Index where the periodic tail with this period starts (len(codes) when none).

    `codes` are the segment signatures as integers (equal signature, equal code).
    """
    n = len(codes)
    if n < 2 * period:
        return n
    match = codes[:-period] == codes[period:]
    floor = _after_last_long_run(match, MAX_MISMATCH_RUN_PER_PERIOD * period)
    bad = np.concatenate([[0], np.cumsum(~match)])
    starts = np.arange(n - period)
    # mismatches from candidate start i to the end must stay within the budget...
    ok = match & (bad[-1] - bad[starts] <= MAX_MISMATCH_FRACTION * (n - period - starts))
    # ...and the loop must begin cleanly: its first repeats nearly all match, so a
    # long clean loop cannot drag a region of chance matches into its start
    window = max(START_WINDOW_UNITS * period, START_WINDOW_MIN)
    ends = np.minimum(starts + window, n - period)
    ok &= bad[ends] - bad[starts] <= MAX_MISMATCH_FRACTION * (ends - starts)
    ok[:floor] = False
    hits = np.flatnonzero(ok)
    return int(hits[0]) if hits.size else n


def _after_last_long_run(match: np.ndarray, limit: int) -> int:
    """First index after the last run of more than `limit` consecutive mismatches."""
    bounds = np.concatenate([[-1], np.flatnonzero(match), [len(match)]])
    runs = np.diff(bounds) - 1                 # mismatches between successive matches
    long_runs = np.flatnonzero(runs > limit)
    return int(bounds[long_runs[-1] + 1]) if long_runs.size else 0


def _best_period(sigs: Sequence[str]) -> tuple[int, int]:
    """(period, region start) of the tail loop: the smallest period whose periodic tail
    is nearly as long as the longest one found (a P-loop also repeats with period 2P,
    3P ..., and chance matches can stretch those a little further)."""
    lookup: dict[str, int] = {}
    codes = np.fromiter((lookup.setdefault(sig, len(lookup)) for sig in sigs), dtype=np.int64, count=len(sigs))
    n = len(sigs)
    starts = {}
    for period in range(1, MAX_BLOCK_SEGMENTS + 1):
        if 2 * period > n:
            break
        start = _tail_region(codes, period)
        # a long period needs as many whole repeats as a short one: with few
        # comparisons to fail, its tail would otherwise look longer than it is
        if (n - start) // period >= (MIN_REPEATS if period <= 3 else MIN_BLOCK_REPEATS):
            starts[period] = start
    if not starts:
        return 0, n
    longest = n - min(starts.values())
    if longest == 0:
        return 0, n
    for period, start in starts.items():
        if n - start >= SMALLER_PERIOD_SHARE * longest:
            return period, start
    return 0, n


# --- classification -------------------------------------------------------------------

def _unit_lengths(tokens: Sequence[int], start: int, period: int) -> np.ndarray:
    units = (len(tokens) - start) // period
    usable = np.asarray(tokens[start:start + units * period], dtype=float)
    return usable.reshape(units, period).sum(axis=1)


def _trend(lengths: np.ndarray) -> tuple[float, float]:
    """(least-squares slope per repeat, share of changes agreeing with its sign)."""
    if len(lengths) < 2:
        return 0.0, 0.0
    slope = float(np.polyfit(np.arange(len(lengths)), lengths, 1)[0])
    diffs = np.diff(lengths)
    moving = diffs[diffs != 0]
    agree = float(np.mean(np.sign(moving) == np.sign(slope))) if moving.size else 0.0
    return slope, agree


def _counts_upward(units: list[str]) -> bool:
    """True when successive repeats differ by an increasing number (a counter)."""
    ups = 0
    for before, after in zip(units, units[1:]):
        a = [float(x.replace(",", "")) for x in _NUMBER_RE.findall(before)]
        b = [float(x.replace(",", "")) for x in _NUMBER_RE.findall(after)]
        first_diff = next(((x, y) for x, y in zip(a, b) if x != y), None)
        if first_diff and first_diff[1] > first_diff[0]:
            ups += 1
    return len(units) > 1 and ups >= COUNTER_AGREEMENT * (len(units) - 1)


def _one_loop_class(lengths: np.ndarray, unit_texts: list[str]) -> str:
    slope, agree = _trend(lengths)
    if abs(slope) >= STATIC_SLOPE_TOKENS and agree >= TREND_AGREEMENT:
        return "1-LOOP-GROWING" if slope > 0 else "1-LOOP-SHRINKING"
    if _counts_upward(unit_texts):
        return "1-LOOP-GROWING"
    return "1-LOOP-STATIC"


def _segment_loop(segments: list[str], tokens: list[int], total: int) -> LoopReport | None:
    sigs = _signatures(segments)
    period, start = _best_period(sigs)
    if period == 0:
        return None
    lengths = _unit_lengths(tokens, start, period)
    loop_tokens = int(sum(tokens[start:]))
    needed = MIN_REPEATS if period <= 3 else MIN_BLOCK_REPEATS
    if len(lengths) < needed or loop_tokens < MIN_LOOP_TOKENS:
        return None
    if period in (2, 3):
        kind = f"{period}-LOOP-STATIC"
    else:
        units = ["".join(segments[start + k * period:start + (k + 1) * period]) for k in range(len(lengths))]
        kind = _one_loop_class(lengths, units)
    start_token = int(sum(tokens[:start]))
    return LoopReport(
        classification=kind, coverage=loop_tokens / total, period=period,
        repeats=len(lengths), delta_tokens=float(np.mean(np.diff(lengths))) if len(lengths) > 1 else 0.0,
        start_token=start_token, start_fraction=start_token / total, total_tokens=total,
        unit_tokens=float(np.mean(lengths)), unit_text="".join(segments[start:start + period])[:UNIT_TEXT_CHARS])


def _char_tail(text: str) -> tuple[int, int]:
    """(unit length, tail length in chars) of the longest exact character repetition at the end.

    Units up to PHRASE_MAX_UNIT_CHARS are tried on the last CHAR_WINDOW characters;
    the winner's run is then measured over the whole text.
    """
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    window = codes[-CHAR_WINDOW:]
    best_unit, best_len = 0, 0
    for unit in range(1, min(PHRASE_MAX_UNIT_CHARS, len(window) // 2) + 1):
        if window[-1] != window[-1 - unit]:
            continue  # cheap reject: the last character does not repeat at this distance
        differs = np.flatnonzero(window[:-unit] != window[unit:])
        tail = len(window) - (int(differs[-1]) + 1 if differs.size else 0)
        if tail > best_len:
            best_unit, best_len = unit, tail
    if best_unit and best_len == len(window) and len(codes) > len(window):
        differs = np.flatnonzero(codes[:-best_unit] != codes[best_unit:])  # run may start before the window
        best_len = len(codes) - (int(differs[-1]) + 1 if differs.size else 0)
    return best_unit, best_len


def _char_loop(text: str, count_tokens: Callable[[Iterable[str]], list[int]], total: int) -> LoopReport | None:
    """DEGENERATE (tiny unit) or a phrase loop inside one line (1-LOOP-STATIC), else None."""
    unit, tail = _char_tail(text)
    if unit == 0 or tail < DEGENERATE_MIN_CHARS:
        return None
    pattern = text[-unit:]
    if unit <= DEGENERATE_MAX_UNIT_CHARS:
        if tail < DEGENERATE_MIN_REPEATS * unit or ("\n" in pattern and re.search(r"\w", pattern)):
            return None  # a short line repeated: the segment detector names that loop
        kind = "DEGENERATE"
    elif "\n" in pattern or tail < MIN_REPEATS * unit:
        return None      # multi-line units are segment loops; too few repeats is no loop
    else:
        kind = "1-LOOP-STATIC"  # a phrase said again and again without line breaks
    loop_tokens = min(total, count_tokens([text[-tail:]])[0])
    start_token = total - loop_tokens
    return LoopReport(
        classification=kind, coverage=loop_tokens / total, period=unit if kind == "DEGENERATE" else 1,
        repeats=tail // unit, delta_tokens=0.0, start_token=start_token,
        start_fraction=start_token / total, total_tokens=total,
        unit_tokens=loop_tokens / max(1, tail // unit), unit_text=pattern[:UNIT_TEXT_CHARS])


def detect_loop(text: str | None, tokenizer: Any = None) -> LoopReport:
    """Classify the repetition loop at the end of `text` (see the module docstring).

    `tokenizer`: None (regex tokens) or an object with ``encode(text)`` such as a
    transformers tokenizer or a ``tokenizers.Tokenizer``.
    """
    if not text or not text.strip():
        return LoopReport(classification=None)
    count_tokens = _token_counter(tokenizer)
    segments = segment_text(text)
    tokens = count_tokens(segments)
    total = max(1, int(sum(tokens)))
    found = _segment_loop(segments, tokens, total)
    # one word said again and again ("Other; Other; ...") splits into tiny sentence
    # segments; the character check names that collapse better, so it runs then too
    tiny = found is not None and found.period == 1 and found.unit_tokens <= TINY_UNIT_TOKENS
    if found is None or found.coverage < SEVERE_COVERAGE or tiny:
        in_line = _char_loop(text, count_tokens, total)
        if in_line and (found is None or in_line.coverage > found.coverage
                        or (tiny and in_line.classification == "DEGENERATE"
                            and in_line.coverage >= found.coverage - TINY_COVERAGE_SLACK)):
            found = in_line
    return found or LoopReport(classification=None, total_tokens=total)


def class_distribution(reports: Sequence[LoopReport]) -> dict[str, int]:
    """Count of each class (and 'none'), in CLASSES order, zero counts included."""
    counts = {name: 0 for name in (*CLASSES, NO_LOOP)}
    for report in reports:
        counts[report.label] += 1
    return counts
