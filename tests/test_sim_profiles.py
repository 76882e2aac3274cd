"""resolver.sim.profiles: token counts, loops, accuracy curves, answers the graders agree with."""
from __future__ import annotations

import random
import unicodedata

import pytest

from resolver.grading.answers import grade
from resolver.probe import loops as loops
from resolver.sim.problems import ExperimentProblems
from resolver.sim.profiles import (
    LOOP_KINDS,
    PROFILES,
    Problem,
    compose_answer,
    count_tokens,
    cut_to_tokens,
    format_final,
    invalid_final,
    loop_text,
    reasoning_prose,
    sentence_pool,
    wrong_answer,
)
from resolver.tasks import get_task
from tests.support.runner import TINY

WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "melon", "peach"]


class _Kinds(dict):
    """Code point -> "w" (letters, digits, _ and combining marks: a run of them is one token),
    " " (space: no token) or "p" (any other visible character: one token each), worked out once per character."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        if ch.isspace():
            kind = " "
        else:
            kind = "w" if ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M") else "p"
        self[code] = kind
        return kind


_KINDS = _Kinds()


def tokens_by_hand(text: str) -> int:
    """Independent count: runs of letters/digits/_ are one token, any other visible char is one
    (each character's kind by str.translate; the words are what is left between spaces and the rest)."""
    kinds = text.translate(_KINDS)
    return kinds.count("p") + len(kinds.replace("p", " ").split())


@pytest.mark.parametrize("text", ["", "Final Answer: (C)", "a,b;;c  d\n\n!!!", "x_1 <think> 12.5"])
def test_token_count_matches_a_hand_count(text):
    assert count_tokens(text) == tokens_by_hand(text)


def test_cut_to_tokens_keeps_exactly_n_tokens():
    text = "one, two; three four!!"
    for n in range(0, 9):
        assert count_tokens(cut_to_tokens(text, n)) == min(n, count_tokens(text))
        assert text.startswith(cut_to_tokens(text, n))


def test_prose_counts_are_exact_and_the_limit_is_met():
    pool = sentence_pool(WORDS)
    for seed in range(20):
        text, n, complete = reasoning_prose(random.Random(seed), pool, 200)
        assert complete and n == tokens_by_hand(text) and n >= 200
        cut, m, complete = reasoning_prose(random.Random(seed), pool, 200, limit=150)
        assert not complete and m == 150 == tokens_by_hand(cut)


@pytest.mark.parametrize("kind", LOOP_KINDS)
def test_each_loop_kind_is_what_the_loop_detector_sees(kind):
    for budget in (400, 2000):
        text = loop_text(kind, random.Random(budget), WORDS, budget)
        assert tokens_by_hand(text) == budget
        lead = "Let me work through this. I read the problem and list the facts.\n"
        report = loops.detect_loop(lead + text)
        assert report.classification == kind and report.coverage > 0.8


def _problem(d, target="42", enum=None):
    task = get_task("arithmetic")
    fields = {"target": target, "response_enum": enum}

    def check(ending):
        verdict = grade(task, fields, ending, "stop")
        return "invalid" if not verdict["is_valid"] else ("correct" if verdict["is_correct"] else "wrong")
    return Problem(target=target, response_enum=enum, difficulty=d, words=WORDS, check=check)


def _outcomes(profile, d, n=400, max_tokens=4096, style="inline"):
    task = get_task("arithmetic")
    counts = {"correct": 0, "wrong": 0, "invalid": 0, "truncated": 0}
    tokens = []
    for seed in range(n):
        answer = compose_answer(profile, _problem(d), random.Random(seed), max_tokens, style)
        used = tokens_by_hand(answer.content) + tokens_by_hand(answer.reasoning or "")
        assert answer.completion_tokens == used <= max_tokens       # usage agrees with the text
        assert (answer.finish_reason == "length") == (used == max_tokens) or answer.finish_reason == "stop"
        verdict = grade(task, {"target": "42", "response_enum": None}, answer.content, answer.finish_reason)
        key = ("truncated" if verdict["is_truncated"] else "correct" if verdict["is_correct"]
               else "wrong" if verdict["is_valid"] else "invalid")
        counts[key] += 1
        tokens.append(used)
    return counts, sum(tokens) / len(tokens)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_accuracy_falls_and_length_grows_with_difficulty(name):
    easy, easy_tokens = _outcomes(PROFILES[name], 0.0)
    hard, hard_tokens = _outcomes(PROFILES[name], 1.0)
    assert easy["correct"] > hard["correct"] + 30
    assert hard_tokens > easy_tokens
    assert easy["invalid"] + hard["invalid"] > 0          # some unparseable answers exist


def test_profiles_differ_the_way_their_names_say():
    mid = {name: _outcomes(PROFILES[name], 0.5)[0] for name in ("sim-strong", "sim-weak", "sim-loopy")}
    assert mid["sim-strong"]["correct"] > mid["sim-weak"]["correct"] + 80
    assert mid["sim-loopy"]["truncated"] > 3 * max(1, mid["sim-strong"]["truncated"])
    assert len([p for p in PROFILES if p.startswith("sim-")]) >= 4


@pytest.mark.parametrize("style", ["inline", "reasoning_content"])
def test_thinker_reasoning_is_stripped_before_grading(style):
    counts, _ = _outcomes(PROFILES["sim-thinker"], 0.0, n=100, max_tokens=8192, style=style)
    assert counts["correct"] > 80


def test_answers_are_deterministic_per_seed():
    a = compose_answer(PROFILES["sim-mid"], _problem(0.4), random.Random(7), 2048)
    b = compose_answer(PROFILES["sim-mid"], _problem(0.4), random.Random(7), 2048)
    assert a == b


def test_every_tiny_problem_grades_its_own_target_correct_and_the_wrong_answer_wrong():
    problems = ExperimentProblems(str(TINY))
    seen = 0
    for problem in problems.index.problems():
        assert problem.check(format_final(problem.target)) == "correct"
        assert problem.check(format_final(wrong_answer(problem, random.Random(seen)))) == "wrong"
        assert problem.check(invalid_final(problem, random.Random(seen))) == "invalid"
        seen += 1
    assert seen == problems.index.size >= 40
