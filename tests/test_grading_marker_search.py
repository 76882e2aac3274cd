"""The final-answer marker search: the tail-first search gives exactly what scanning the
whole text with every marker gives (resolver.grading.answer_text.last_marker_end).

The reference below is the rule as written before the fast path (every pattern scanned
over the whole text, the largest end wins); the search must agree with it on the
labelled corpus, on the runner's simulated answers and on generated texts built from
marker pieces, barrier characters and long whitespace runs.
"""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given, settings, strategies as st

from resolver.grading.answer_text import _MARKERS, final_answer_text, last_marker_end
from resolver.grading.replies import split_message

CORPUS = Path(__file__).resolve().parent / "grading_corpus"


def full_search(text: str) -> int | None:
    ends = [m.end() for pattern in _MARKERS for m in pattern.finditer(text)]
    return max(ends) if ends else None


def corpus_texts() -> list[str]:
    texts = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            message = json.loads(line).get("message")
            content, reasoning = split_message(message) if isinstance(message, dict) else (None, None)
            texts += [t for t in (content, reasoning) if isinstance(t, str)]
    return texts


def test_worked_examples():
    # Hand-counted: "Final Answer:" ends at 13 + 4 characters of "abc ".
    assert last_marker_end("abc Final Answer: 12") == 17
    assert final_answer_text("abc Final Answer: 12") == "12"
    # The later of two markers wins, even when the earlier pattern appears later in _MARKERS.
    text = "**Final Answer** 3\nnumbers 1, 2.\nAnswer: 4"
    assert last_marker_end(text) == len(text) - 2
    # No "answer" at all: no marker, however much text.
    assert last_marker_end("The result is 12. " * 500) is None
    # "final" far before "answer" (a long whitespace run): found by the fallback scan.
    far = "steps 1, 2.\nfinal" + " " * 300 + "answer: 7"
    assert last_marker_end(far) == len(far) - 2
    # U+017F (long s) matches "s" case-insensitively, as the patterns read it.
    assert last_marker_end("x 1.\nANſWER: 9") == len("x 1.\nANſWER:")
    # "Answer:" that does not start a line is no marker, wherever the search starts.
    assert last_marker_end("x." + " " * 120 + "Answer: 5") is None
    assert last_marker_end("x.\n" + " " * 120 + "Answer: 5") == len("x.\n" + " " * 120 + "Answer:")


def test_corpus_agrees_with_the_full_search():
    texts = corpus_texts()
    assert len(texts) > 1000
    filler = "\nWe check it once more: 4 + 5 = 9, then 2 * 3 = 6." * 40
    for text in texts:
        for variant in (text, filler + text, text + filler, filler + text + "\n\n" + filler):
            assert last_marker_end(variant) == full_search(variant), variant[-200:]


PIECES = ["final", "Final", "FINAL", "fınal", "answer", "Answer", "ANSWER", "anſwer", " ", "  ", "\n", "\t", "_",
          "*", "**", "***", "`", ":", "\u2014", "\u2013", "#", "## ", "> ", "is", " is ", "would be", "will be",
          "The final answer is ", "Final Answer:", "**Final Answer**", "Answer:", "\\boxed{3}", "12", "-7", ".",
          ",", "x", "the", "so", "\u00a0", "\u2003", "İ"]


@settings(max_examples=600, deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4),
                                st.integers(1, 300).map(lambda n: " " * n),
                                st.integers(1, 200).map(lambda n: "\n" * (n % 3) + "so we go on. " * (n // 3))),
                      max_size=40))
@example(parts=["**final answer***", "final answer**"])
@example(parts=["steps 1, 2.", " " * 150, "**Answer**: 5"])
@example(parts=["final answer is", "   \n\n ", "final answer: 5"])
def test_generated_texts_agree_with_the_full_search(parts):
    text = "".join(parts)
    assert last_marker_end(text) == full_search(text)
