"""Simulated model profiles and the text they write (used by resolver.sim.simulator).

A profile is a handful of numbers: how accurate it is on the easiest and on the
hardest points of a task, how often it answers in an unparseable way, how often
it falls into a repetition loop, how much it writes. `compose_answer` turns a
profile, a recognised problem and a seeded rng into a completion that the
runner grades like any model's: reasoning text, then `Final Answer: ...`; or a
loop of one of the six README.md kinds that runs into `max_tokens` and stops with
finish_reason "length".

Tokens are counted with a simple, deterministic rule — every run of word
characters is one token and so is every other non-space character — so `usage`
always agrees with the text the simulator returned.
"""
from __future__ import annotations

import hashlib
import math
import random
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from statistics import NormalDist
from typing import Callable, Iterable, Iterator

_TOKEN = re.compile(r"\w+|[^\w\s]")

LOOP_KINDS = ("1-LOOP-STATIC", "1-LOOP-GROWING", "1-LOOP-SHRINKING",
              "2-LOOP-STATIC", "3-LOOP-STATIC", "DEGENERATE")


def count_tokens(text: str | None) -> int:
    """The simulator's token count: words and single punctuation characters."""
    return len(_TOKEN.findall(text)) if text else 0


def token_pieces(text: str | None) -> list[str]:
    """`text` cut after each of its tokens (count_tokens of them): what a server streams one
    event per token. Spaces before a token go with it, spaces at the end with the last piece,
    so the pieces join back to exactly `text`."""
    if not text:
        return []
    ends = [m.end() for m in _TOKEN.finditer(text)]
    if not ends:
        return [text]
    ends[-1] = len(text)
    starts = [0] + ends[:-1]
    return [text[a:b] for a, b in zip(starts, ends)]


def cut_to_tokens(text: str, limit: int) -> str:
    """The prefix of `text` holding exactly its first `limit` tokens."""
    if limit <= 0:
        return ""
    last = next(islice(_TOKEN.finditer(text), limit - 1, None), None)
    return text if last is None else text[:last.end()]


@dataclass(frozen=True)
class Profile:
    """How one simulated model behaves; difficulty d runs from 0 (easy) to 1 (hard)."""

    name: str
    description: str
    accuracy_easy: float       # P(correct) at d = 0 (among non-loop, valid answers)
    accuracy_hard: float       # P(correct) at d = 1
    curve: float               # >1: holds up then drops late; <1: drops early
    invalid_rate: float        # P(unparseable answer)
    loop_easy: float           # P(repetition loop) at d = 0
    loop_hard: float           # P(repetition loop) at d = 1
    tokens: int                # typical completion length on an easy point
    token_growth: float        # length multiplier at d = 1 is 1 + token_growth
    thinks: bool = False       # writes its reasoning as a separate think block
    loop_weights: tuple = (3, 2, 1, 2, 1, 1)   # preference among LOOP_KINDS

    def accuracy(self, d: float) -> float:
        return self.accuracy_easy - (self.accuracy_easy - self.accuracy_hard) * d ** self.curve

    def loop_rate(self, d: float) -> float:
        return self.loop_easy + (self.loop_hard - self.loop_easy) * d


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("sim-strong", "accurate, concise, rarely loops", 0.97, 0.72, 1.6,
            0.01, 0.003, 0.02, 180, 2.0),
    Profile("sim-mid", "solid on easy points, fades with difficulty", 0.90, 0.38, 1.0,
            0.03, 0.01, 0.05, 260, 2.5),
    Profile("sim-weak", "guesses a lot, drops early", 0.68, 0.08, 0.6,
            0.08, 0.02, 0.08, 220, 1.5),
    Profile("sim-loopy", "decent reasoner that often gets stuck repeating itself",
            0.86, 0.32, 1.0, 0.03, 0.06, 0.45, 380, 3.0, loop_weights=(2, 3, 2, 2, 2, 1)),
    Profile("sim-thinker", "reasoning model: long think block, then a short answer",
            0.95, 0.55, 1.3, 0.02, 0.01, 0.06, 700, 3.0, thinks=True),
)}


@dataclass
class Problem:
    """What the simulator knows about a recognised prompt."""

    target: str | None     # None: an unrecognised prompt
    response_enum: list | None
    difficulty: float
    words: list            # vocabulary drawn from the problem text, for realistic prose
    # Grades an answer ending ("Final Answer: ...") as "correct" | "wrong" | "invalid";
    # used to make sure a wrong answer is wrong and an invalid one is invalid.
    check: Callable[[str], str] | None = None
    input_text: str = ""   # the problem text as generated (prompt token counting)
    # The problem's shared latent difficulty z ~ N(0, 1), the same for every profile
    # (problem_latent); None: no shared latent, each answer is drawn on its own.
    latent: float | None = None
    _pool: list | None = None
    _input_tokens: int | None = None

    @property
    def input_tokens(self) -> int:
        if self._input_tokens is None:
            self._input_tokens = count_tokens(self.input_text)
        return self._input_tokens

    @property
    def pool(self) -> list:
        if self._pool is None:
            self._pool = sentence_pool(self.words)
        return self._pool


@dataclass
class Answer:
    """A composed completion."""

    content: str
    reasoning: str | None
    finish_reason: str
    completion_tokens: int
    outcome: str           # correct | wrong | invalid | loop:<kind> | truncated


# ---------------------------------------------------------------- prose
_OPENERS = (
    "Let me work through this carefully.",
    "I will go through the problem step by step.",
    "First, I restate what is being asked.",
    "Let me read the input again and organise it.",
)
_STEPS = (
    "Looking at {a} and {b}, the relation between them matters here.",
    "In the next step I consider {a} and keep track of the result so far.",
    "Now {a} changes the picture, so I update my notes.",
    "The part about {a} is a distraction; it does not change {b}.",
    "Checking {a} against {b} again to be sure nothing was missed.",
    "So far the intermediate result holds after handling {a}.",
    "Next comes {a}; I apply the rule and carry on.",
)
_CLOSERS = (
    "Putting everything together gives the answer.",
    "That settles it.",
    "After checking each part, I am confident in the result.",
)


def _word(rng: random.Random, words: list) -> str:
    return rng.choice(words) if words else rng.choice(("the list", "the value", "the item"))


_POOL_SIZE = 16
_DEFAULT_WORDS = ("the list", "the value", "the item")


@lru_cache(maxsize=65536)
def _word_tokens(word: str) -> int:
    return count_tokens(word)


# Tokens of each step sentence without its words: placeholders always sit
# between spaces or punctuation, so the parts count separately and add up.
_STEP_FIXED = tuple(count_tokens(t.format(a="", b="")) for t in _STEPS)
_STEP_SLOTS = tuple((("{a}" in t), ("{b}" in t)) for t in _STEPS)


def sentence_pool(words: Iterable[str]) -> list[tuple[str, int]]:
    """Sentences about a problem's own words, with their token counts.

    Built once per problem (deterministically from its words) so that writing
    an answer is mostly picking sentences: the simulator must be fast.
    """
    words = list(words) or list(_DEFAULT_WORDS)
    rng = random.Random(zlib.crc32("\x1f".join(words).encode("utf-8")))
    n_words = len(words)
    pool = []
    for i in range(_POOL_SIZE):
        r = rng.getrandbits(40)
        a, b = words[r % n_words], words[(r >> 20) % n_words]
        pick = i % len(_STEPS)
        has_a, has_b = _STEP_SLOTS[pick]
        tokens = _STEP_FIXED[pick] + has_a * _word_tokens(a) + has_b * _word_tokens(b)
        pool.append((_STEPS[pick].format(a=a, b=b), tokens))
    return pool


_OPENER_TOKENS = tuple(count_tokens(t) for t in _OPENERS)
_CLOSER_TOKENS = tuple(count_tokens(t) for t in _CLOSERS)


def reasoning_prose(rng: random.Random, pool: list, tokens: int,
                    limit: int | None = None) -> tuple[str, int, bool]:
    """Step-by-step prose of about `tokens` tokens from a sentence pool.

    Returns (text, its token count, complete). With `limit`, the prose stops at
    exactly `limit` tokens when it would run longer (complete = False): this is
    how a completion meets max_tokens without recounting a long text.
    """
    limit = tokens * 4 + 64 if limit is None else limit
    i = rng.randrange(len(_OPENERS))
    lines, total = [_OPENERS[i]], _OPENER_TOKENS[i]
    size = len(pool)
    while total < tokens:
        bits = rng.getrandbits(60)
        for _ in range(6):               # six picks per random draw: this loop is hot
            sentence, count = pool[(bits & 1023) % size]
            bits >>= 10
            lines.append(sentence)
            total += count
            if total >= tokens:
                break
    i = rng.randrange(len(_CLOSERS))
    lines.append(_CLOSERS[i])
    total += _CLOSER_TOKENS[i]
    if total <= limit:
        return "\n".join(lines), total, True
    return _take_tokens(lines, limit, "\n"), limit, False


# ---------------------------------------------------------------- loops
def _repeat_to(unit: str, tokens: int) -> str:
    """`unit` repeated until exactly `tokens` tokens (the last copy cut short)."""
    size = max(1, count_tokens(unit))
    whole, rest = divmod(tokens, size)
    return unit * whole + cut_to_tokens(unit, rest)


def _take_tokens(lines: Iterable[str], tokens: int, sep: str = "") -> str:
    """Lines (any iterable) joined by `sep` until exactly `tokens` tokens, the last line cut short."""
    parts, total = [], 0
    for line in lines:
        count = count_tokens(line)
        if total + count >= tokens:
            parts.append(cut_to_tokens(line, tokens - total))
            break
        parts.append(line)
        total += count
    return sep.join(parts)


def _growing(a: str) -> Iterator[str]:
    i = 1
    while True:
        seen = ", ".join(str(k) for k in range(1, i + 1))
        yield f"Step {i + 4}: checking {a} at positions {seen} again.\n"
        i += 1


def _shrinking(a: str, length: int) -> Iterator[str]:
    while True:
        left = ", ".join(str(k) for k in range(length, 0, -1))
        yield f"Trying {a} again with the remaining positions {left}.\n"
        length = max(1, length - 1)


def loop_text(kind: str, rng: random.Random, words: list, tokens: int) -> str:
    """Exactly `tokens` tokens of a repetition loop of `kind` (see LOOP_KINDS)."""
    a, b, c = (_word(rng, words) for _ in range(3))
    if kind == "1-LOOP-STATIC":
        return _repeat_to(f"Wait, let me recount {a} once more from the beginning.\n", tokens)
    if kind == "1-LOOP-GROWING":
        return _take_tokens(_growing(a), tokens)
    if kind == "1-LOOP-SHRINKING":
        return _take_tokens(_shrinking(a, int(math.sqrt(tokens)) + 2), tokens)
    if kind == "2-LOOP-STATIC":
        return _repeat_to(f"So the answer must involve {a}.\n"
                          f"But wait, that contradicts what I found for {b}.\n", tokens)
    if kind == "3-LOOP-STATIC":
        return _repeat_to(f"First I check {a}.\nThen I compare it with {b}.\n"
                          f"Hmm, {c} does not fit, so I start over.\n", tokens)
    if kind == "DEGENERATE":
        lead = f"The answer is {a} "
        return cut_to_tokens(lead, tokens) + rng.choice("!*-=.") * max(0, tokens - count_tokens(lead))
    raise ValueError(f"unknown loop kind {kind!r}")


# ---------------------------------------------------------------- answers
def wrong_answer(problem: Problem, rng: random.Random) -> str:
    """A plausible answer that the task's grader marks wrong (best effort)."""
    if problem.target is None:  # unrecognised prompt: an option letter or a number
        return str(rng.choice(problem.response_enum)) if problem.response_enum else str(rng.randint(0, 20))
    for _ in range(6):
        candidate = _perturb(problem, rng)
        if problem.check is None or problem.check(format_final(candidate)) == "wrong":
            return candidate
    return candidate


def _perturb(problem: Problem, rng: random.Random) -> str:
    target = str(problem.target)
    enum = problem.response_enum
    if enum and len(enum) > 1:
        return str(rng.choice([o for o in enum if str(o) != target] or enum))
    try:
        value = int(target.replace(",", ""))
        return str(value + rng.choice((-3, -2, -1, 1, 2, 3, 10)))
    except ValueError:
        pass
    try:
        number = float(target)
        return f"{number * rng.uniform(1.05, 1.5) + 1:g}"
    except ValueError:
        pass
    lines = target.splitlines()
    if len(lines) > 1:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        if lines == target.splitlines():
            lines.pop(rng.randrange(len(lines)))
        return "\n".join(lines)
    if len(target) > 1:
        cut = rng.randrange(len(target))
        return target[:cut] + target[cut + 1:]
    return target + target if target else "none"


def format_final(answer: str) -> str:
    """The answer line; multi-line answers (lists) start on the next line."""
    return f"Final Answer:\n{answer}" if "\n" in answer else f"Final Answer: {answer}"


_NO_MARKER = "I am not able to settle on a single answer here."


def invalid_final(problem: Problem, rng: random.Random) -> str:
    """An ending the grader cannot use: no marker, or a marker with no usable answer."""
    if rng.random() < 0.5:
        return _NO_MARKER
    text = "Final Answer: I cannot determine this from the information given."
    # Open-text tasks accept any words as an answer; then only "no marker" is invalid.
    if problem.check is not None and problem.check(text) != "invalid":
        return _NO_MARKER
    return text


def completion_length(profile: Profile, d: float, rng: random.Random) -> int:
    """Tokens of reasoning before the answer: grows with difficulty, log-normal noise."""
    typical = profile.tokens * (1.0 + profile.token_growth * d)
    return max(12, int(typical * math.exp(rng.gauss(0.0, 0.35))))


# Correlation of the normal scores behind two profiles' answers to one problem (a
# Gaussian copula, docs/simulator.md "Problems are hard for everyone"): with it the
# phi coefficient of right/wrong between two profiles on the same problems is about
# 0.3-0.47, the range reported for real models, for all pairs but the most unequal.
LATENT_CORRELATION = 0.7
_SHARED = math.sqrt(LATENT_CORRELATION)
_OWN = math.sqrt(1.0 - LATENT_CORRELATION)
_NORMAL = NormalDist()


def problem_latent(text: str) -> float:
    """A problem's latent difficulty z ~ N(0, 1), from its own text alone.

    The text is what makes it the same problem for every model (and every template,
    sampler and seed that generate it), so every profile sees the same z.
    """
    digest = hashlib.sha256(b"sim-latent|" + text.rstrip().encode("utf-8")).digest()
    u = (int.from_bytes(digest[:8], "big") + 0.5) / 2.0 ** 64     # uniform on (0, 1), never 0 or 1
    return _NORMAL.inv_cdf(u)


def p_correct(profile: Profile, d: float) -> float:
    """P(correct) at difficulty d: neither a loop nor invalid, then accurate."""
    return max(0.0, 1.0 - profile.loop_rate(d) - profile.invalid_rate) * profile.accuracy(d)


def choose_outcome(profile: Profile, problem: Problem, rng: random.Random) -> str:
    """correct | wrong | invalid | loop:<kind>, with the profile's marginal rates at the point.

    Correct when u < p_correct, where u = Phi(sqrt(rho) z + sqrt(1 - rho) e): z is the
    problem's shared latent, e this answer's own normal draw, so u is uniform for each
    profile (its rate unchanged) and two profiles' u are correlated through z. An answer
    that is not correct is a loop, invalid or wrong in proportion to their rates, which
    keeps those marginal rates too.
    """
    d = problem.difficulty
    loop, invalid = profile.loop_rate(d), profile.invalid_rate
    right = 0.0 if problem.target is None else p_correct(profile, d)
    own = rng.gauss(0.0, 1.0)
    if problem.latent is None:
        u = _NORMAL.cdf(own)
    else:
        u = _NORMAL.cdf(_SHARED * problem.latent + _OWN * own)
    if u < right:
        return "correct"
    roll = rng.random() * (1.0 - right)
    if roll < loop:
        return "loop:" + rng.choices(LOOP_KINDS, weights=profile.loop_weights)[0]
    if roll < loop + invalid:
        return "invalid"
    return "wrong"


def compose_answer(profile: Profile, problem: Problem, rng: random.Random,
                   max_tokens: int, think_style: str = "inline") -> Answer:
    """The whole completion for one request.

    think_style (reasoning profiles only): "inline" puts `<think>...</think>` in
    the content; "reasoning_content" / "reasoning" return it in that separate field.
    """
    outcome = choose_outcome(profile, problem, rng)
    body_tokens = completion_length(profile, problem.difficulty, rng)
    if outcome.startswith("loop:"):
        return _looping(profile, problem, rng, outcome, body_tokens, max_tokens, think_style)
    separate = profile.thinks and think_style != "inline"
    prefix = "<think>\n" if profile.thinks and not separate else ""
    used = count_tokens(prefix)
    body, tokens, complete = reasoning_prose(rng, problem.pool, body_tokens, max_tokens - used)
    used += tokens
    if not complete:                     # reasoning alone hit max_tokens
        if separate:
            return Answer("", body, "length", max_tokens, "truncated")
        return Answer(prefix + body, None, "length", max_tokens, "truncated")
    if outcome == "correct":
        ending = format_final(str(problem.target))
    elif outcome == "wrong":
        ending = format_final(wrong_answer(problem, rng))
    else:
        ending = invalid_final(problem, rng)
    if not profile.thinks:
        tail = "\n\n" + ending
    else:
        tail = ("" if separate else "\n</think>\n\n") + "I have worked it out above.\n\n" + ending
    tail_tokens = count_tokens(tail)
    finish = "stop"
    if used + tail_tokens > max_tokens:  # the answer itself ran past max_tokens
        tail, tail_tokens, finish, outcome = cut_to_tokens(tail, max_tokens - used), max_tokens - used, \
            "length", "truncated"
    if separate:
        return Answer(tail, body, finish, used + tail_tokens, outcome)
    return Answer(prefix + body + tail, None, finish, used + tail_tokens, outcome)


def _looping(profile: Profile, problem: Problem, rng: random.Random, outcome: str,
             body_tokens: int, max_tokens: int, think_style: str) -> Answer:
    """Some healthy reasoning, then a loop that runs into max_tokens."""
    opener = "<think>\n" if profile.thinks and think_style == "inline" else ""
    budget = max_tokens - count_tokens(opener)
    lead, lead_tokens, _ = reasoning_prose(rng, problem.pool, max(8, body_tokens // 3))
    if lead_tokens >= budget:
        text = cut_to_tokens(opener + lead, max_tokens)
    else:
        text = opener + lead + "\n" + loop_text(outcome[5:], rng, problem.words, budget - lead_tokens)
    if profile.thinks and think_style != "inline":
        return Answer("", text, "length", max_tokens, outcome)
    return Answer(text, None, "length", max_tokens, outcome)


@lru_cache(maxsize=1024)
def unknown_problem(prompt: str) -> Problem:
    """For prompts the simulator does not recognise: answer something plausible and wrong."""
    words = re.findall(r"[A-Za-z]{4,}", prompt[-2000:])[-40:]
    options = sorted(set(re.findall(r"\([A-Z]\)", prompt[-2000:]))) or None
    return Problem(target=None, response_enum=options, difficulty=0.5, words=words)
