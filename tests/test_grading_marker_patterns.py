"""The final-answer markers find the same matches as their backtracking form, in linear time.

Two markers had adjacent runs that could share characters (`\\s*[*_`]*\\s*` and three
`[ \\t]*` around optional pieces): a long run of spaces after "final answer" that did not
end the line made re backtrack cubically (300 spaces took 3 s, a few thousand hours).
The shipped patterns make those runs possessive. The reference below is each pattern as it
was before, written out here: on every short text built from the markers' own pieces, and
on random longer ones, both find the same spans.
"""
from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys

from resolver.grading.answer_text import _MARKERS

# The markers as they were before the runs were made possessive (the rule they must keep).
REFERENCE = {
    0: re.compile(r"final[\s_]*answer\s*[*_`]*\s*[:\u2014\u2013]", re.IGNORECASE),
    2: re.compile(r"^[ \t>]*(?:#{1,6}[ \t]*)?[*_]*[ \t]*final[ \t_]*answer[ \t]*[*_]*[ \t]*:?[ \t]*[*_]*[ \t]*$",
                  re.IGNORECASE | re.MULTILINE),
}
# Every character class of those two patterns, the words, and characters in none of them.
PIECES = ("final", "answer", " ", "\t", "\n", ">", "#", "*", "_", "`", ":", "\u2014", "x", "Final ", "ANSWER")


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def test_every_short_text_of_marker_pieces_matches_as_before():
    checked = 0
    for length in range(1, 6):
        for parts in itertools.product(PIECES, repeat=length):
            text = "".join(parts)
            for index, reference in REFERENCE.items():
                assert spans(_MARKERS[index], text) == spans(reference, text), (index, text)
            checked += 1
    assert checked == sum(len(PIECES) ** n for n in range(1, 6))


def test_random_longer_texts_match_as_before():
    rng = random.Random(20261129)
    runs = (" ", "\t", "*", "_", "#", ">", "`")
    for _ in range(20_000):
        parts = []
        for _ in range(rng.randint(1, 12)):
            piece = rng.choice(PIECES)
            # runs of one class, the shape that backtracking feeds on, kept short for the reference
            parts.append(piece * rng.randint(1, 6) if piece in runs else piece)
        text = "".join(parts)
        for index, reference in REFERENCE.items():
            assert spans(_MARKERS[index], text) == spans(reference, text), (index, text)


def test_long_whitespace_after_a_marker_is_graded_at_once():
    # The backtracking form needs hours for these (cubic in the run's length); a child process
    # with a generous limit turns a regression into a failure instead of a hung suite.
    code = (
        "from resolver.grading.answer_text import final_answer_text\n"
        "for text in ('Final answer' + ' ' * 200_000 + 'x', '**Final Answer**' + ' \\t' * 100_000 + ':42',\n"
        "             'final answer' + ' ' * 200_000 + '\\n12'):\n"
        "    print(repr(final_answer_text(text)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # no marker ends the first; the colon after the run ends the second; the third's marker is the
    # whole first line (a line holding only "final answer" and spaces), so the answer is the next line
    assert proc.stdout.splitlines() == ["None", "'42'", "'12'"]
