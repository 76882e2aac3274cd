"""Where a completion's answer is: reasoning removed, the last final-answer marker found,
and the LaTeX / markdown around an answer line taken off.

Nothing here knows about answer kinds or tasks; `resolver.grading.answer_kinds` reads the
located text, and `resolver.grading.answers` ties the two together.
"""
from __future__ import annotations

import re

# `<think>` / `</think>`, case-insensitive; some servers write `<Think>`.
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)

# Final-answer markers, any of which may come last:
#  "Final Answer:" with markdown between the words and the colon ("**Final Answer**:"),
#  or a dash instead of the colon ("Final answer — 12"),
#  "The final answer is", "My final answer is", "Final answer is",
#  a line holding only "Final Answer" (a markdown header or a bold line; the answer
#  follows on the next lines), bold "**Final Answer**" followed by the answer,
#  and "Answer:" at the start of a line ("**Answer:** 4").
# Runs of one character class are possessive (`*+`): no neighbouring class can take their
# characters back, so the matches are the same, and a long run of spaces after "final answer"
# costs linear time instead of the cubic backtracking of three adjacent `[ \t]*` (docs/grading.md).
_MARKERS = (
    re.compile(r"final[\s_]*+answer\s*+[*_`]*+\s*+[:\u2014\u2013]", re.IGNORECASE),
    re.compile(r"final\s+answer\s+(?:is|would\s+be|will\s+be)\b\s*:?", re.IGNORECASE),
    re.compile(r"^[ \t>]*+(?:#{1,6}[ \t]*+)?[*_]*+[ \t]*+final[ \t_]*+answer[ \t]*+[*_]*+[ \t]*+:?[ \t]*+[*_]*+[ \t]*+$",
               re.IGNORECASE | re.MULTILINE),
    re.compile(r"[*_]{1,3}final\s+answer[*_]{1,3}", re.IGNORECASE),
    re.compile(r"^[ \t>]*(?:#{1,6}[ \t]*)?[*_]*answer[*_]*[ \t]*:", re.IGNORECASE | re.MULTILINE),
)
_BOXED_OPEN = re.compile(r"\\boxed\s*\{")
# Lines that only open or close display math or a fence: never the answer itself.
_DELIMITER_LINE = re.compile(r"^\s*(?:\\\[|\\\]|\\\(|\\\)|\$\$|```\S*|---+)\s*$")
_LATEX_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|texttt|emph)\s*\{([^{}]*)\}")
_MATH_DELIMITERS = re.compile(r"\\\[|\\\]|\\\(|\\\)|\$\$?")

# Decoration that models put around an answer and that never belongs to it.
WRAPPERS = "*_`\"' \t"
TRAILING_PUNCT = ".,;:!。"


class Hedge(str):
    """An answer line holding two different boxed answers: no single answer was given."""


def strip_reasoning(text: str | None) -> str | None:
    """The visible answer: text after the last `</think>`; None if a `<think>` stays open.

    A lone `</think>` (servers that swallow the opening tag) also ends the reasoning.
    """
    if text is None:
        return None
    closes = list(_THINK_CLOSE.finditer(text))
    rest = text[closes[-1].end():] if closes else text
    if _THINK_OPEN.search(rest):
        return None  # reasoning started and never finished: no answer was given
    return rest


# Characters no marker match can contain: none is matched, even case-insensitively, by a
# marker's letters (f i n a l s w e r o u d b; under re.IGNORECASE only "i" and "s" also
# match non-ASCII letters) nor by its classes (whitespace, [*_`>#], the colon and dashes).
_BARRIERS = frozenset("0123456789.,;!?()[]{}=+-/\\'\"$%&@^|~<cghjkmpqtvxyzCGHJKMPQTVXYZ")
_MARKER_REACH = 96      # the tail search starts this far before the last "answer" (or earlier)


def _all_marker_ends(text: str, pos: int = 0) -> list[int]:
    """Ends of the markers' matches, each pattern scanned left to right from `pos`."""
    return [m.end() for pattern in _MARKERS for m in pattern.finditer(text, pos)]


def last_marker_end(text: str) -> int | None:
    """Where the text after the last final-answer marker starts (the largest end of any
    marker's matches, each pattern scanned from the start); None without a marker.

    The same as ``max(_all_marker_ends(text))``, found without scanning the whole text in
    the usual case of a marker near the end:

    * every marker's match contains "answer" (its six letters matched case-insensitively:
      "s" also matches U+017F); a text whose lower case has no "answer" has no marker;
    * the scan can start at a position q just after a barrier character (`_BARRIERS`),
      before the last "answer". No match contains a barrier, so none spans q: a pattern
      scanned from the start reaches q without being inside a match, and from there finds
      what a scan started at q finds (``^`` and ``\\b`` look at the real text before q, as
      re's `pos` promises). Every match starting at or after q ends after q and every
      earlier one ends before q, so if the scan from q finds any match, its largest end
      is the largest of all. If it finds none (or no barrier is near), the whole text is
      scanned as before.
    """
    low = text.lower()
    if "\u017f" in low:
        low = low.replace("\u017f", "s")
    last = low.rfind("answer")
    if last < 0:
        return None
    # `low` may be longer than `text` (a few letters lower-case to two); `last` only places
    # the window, the result does not depend on it.
    start = min(last, len(text)) - _MARKER_REACH
    for q in range(start, max(start - _MARKER_REACH, 0), -1):
        if text[q - 1] in _BARRIERS:
            ends = _all_marker_ends(text, q)
            if ends:
                return max(ends)
            break
    ends = _all_marker_ends(text)
    return max(ends) if ends else None


def final_answer_text(text: str | None) -> str | None:
    """Text after the last final-answer marker, trimmed; None when there is none.

    Without any marker, a `\\boxed{}` answer counts: the text from the first box on
    the line of the last box (so two boxes on one line are read together).
    """
    if text is None:
        return None
    end = last_marker_end(text)
    if end is not None:
        rest = text[end:]
    else:
        boxes = list(_BOXED_OPEN.finditer(text))
        if not boxes:
            return None
        line_start = text.rfind("\n", 0, boxes[-1].start()) + 1
        first_on_line = next(b for b in boxes if b.start() >= line_start)
        rest = text[first_on_line.start():]
    # Emphasis that closed around the marker ("**Final Answer:** (C)") or wraps the
    # whole answer is decoration; keep inner text as written.
    return rest.strip().strip("*_").strip()


def answer_lines(text: str) -> list[str]:
    """The non-blank lines of an answer, display-math and fence delimiter lines dropped."""
    return [ln for ln in text.splitlines() if ln.strip(WRAPPERS) and not _DELIMITER_LINE.match(ln)]


def first_line(text: str) -> str:
    lines = answer_lines(text)
    return lines[0] if lines else ""


def boxed_contents(line: str) -> list[str]:
    """The contents of every `\\boxed{...}` on the line, braces matched."""
    found = []
    for opening in _BOXED_OPEN.finditer(line):
        depth, start = 1, opening.end()
        for index in range(start, len(line)):
            char = line[index]
            if char == "{" and line[index - 1] != "\\":
                depth += 1
            elif char == "}" and line[index - 1] != "\\":
                depth -= 1
                if depth == 0:
                    found.append(line[start:index])
                    break
    return found


def unlatex(text: str) -> str:
    """`\\text{x}` -> x and math delimiters removed."""
    previous = None
    while previous != text:
        previous, text = text, _LATEX_WRAPPERS.sub(r"\1", text)
    return _MATH_DELIMITERS.sub(" ", text)


def clean_line(line: str) -> str:
    """One answer line without boxes, LaTeX, markdown, quotes or trailing punctuation.

    Returns a `Hedge` when the line holds two boxes that differ.
    """
    boxes = boxed_contents(line)
    if boxes:
        if len({" ".join(b.split()) for b in boxes}) > 1:
            return Hedge(line)
        line = boxes[0]
    line = unlatex(line).replace("**", "").replace("__", "").replace("`", "")
    line = line.strip().lstrip(">#").strip(WRAPPERS)
    return line.rstrip(TRAILING_PUNCT).strip(WRAPPERS).strip()


def unbox_spread(text: str) -> str:
    """The answer with a `\\boxed{...}` spread over several lines unwrapped to its lines.

    Lists are often boxed one item per line (`$\\boxed{carpet` newline `house}$`, or inside
    `\\[ ... \\]` with `\\\\` line breaks). The box must open on the first answer line;
    text before it there is an intro, text after it is dropped. A later box holding a
    different answer makes two answers: a `Hedge`. Other text comes back unchanged.
    """
    lines = answer_lines(text)
    opening = _BOXED_OPEN.search(lines[0]) if lines else None
    if not opening:
        return text
    start = text.index(lines[0]) + opening.start()
    boxes = boxed_contents(text[start:])
    if not boxes or "\n" not in boxes[0]:
        return text
    if len({_box_key(b) for b in boxes}) > 1:
        return Hedge(text)
    items = (re.sub(r"\\\\\s*$", "", ln).strip() for ln in boxes[0].splitlines())
    return "\n".join(item for item in items if item)


def _box_key(contents: str) -> str:
    """A box's answer for comparing two boxes: LaTeX line breaks and whitespace ignored."""
    return " ".join(contents.replace("\\\\", " ").split())


def later_boxed_lines(text: str) -> list[str]:
    """Lines after the first answer line that hold a `\\boxed{}` (a second stated answer)."""
    lines = answer_lines(text)
    return [ln for ln in lines[1:] if _BOXED_OPEN.search(ln)]
