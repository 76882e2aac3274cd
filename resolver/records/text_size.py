"""The size of a completion's text, plain and deflated: what the compression analysis reads.

A sample's text is its reasoning followed by its answer, as UTF-8. Its compressed size
is the size of a gzip file of that text, deflated by ISA-L (python-isal) at level 1.
Level 0 is 2.7x faster but leaves growing and degenerate loops above the compression
analysis' loop threshold (measurements and the choice: docs/evaluate.md, "Compressed
size").

The runner records both sizes in each record it writes (``text_size``), while the text
is in memory and the process mostly waits for the model; evaluate.py uses them when
they are present, name this method and match the text's byte length, and deflates the
text itself otherwise (older records, other tools, edited files). This module imports
nothing heavy: the runner loads it at start-up.
"""
from __future__ import annotations

from isal import isal_zlib

GZIP_LEVEL = 1
GZIP_FRAMING = 18 - 6      # gzip header+trailer minus zlib header+trailer
TEXT_SIZE_METHOD = f"gzip-isal-{GZIP_LEVEL}"


def gzip_size(data) -> int:
    """Size in bytes of ``gzip`` output for ``data`` (level GZIP_LEVEL, no file name)."""
    return len(isal_zlib.compress(data, GZIP_LEVEL)) + GZIP_FRAMING


def completion_text(reasoning: str | None, answer: str | None) -> bytes:
    """The bytes both sizes measure: reasoning then answer, UTF-8 (a lone surrogate kept
    as its 3 bytes: such a record is refused by evaluate.py, not by the runner)."""
    return ((reasoning or "") + (answer or "")).encode("utf-8", "surrogatepass")


def text_size(reasoning: str | None, answer: str | None) -> dict:
    """The ``text_size`` field of a record: {"bytes", "gzip", "method"}."""
    data = completion_text(reasoning, answer)
    return {"bytes": len(data), "gzip": gzip_size(data), "method": TEXT_SIZE_METHOD}
