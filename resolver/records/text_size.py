"""The size of a completion's text, plain and deflated: what the compression analysis reads.

A sample's text is its reasoning followed by its answer, as UTF-8. Its compressed size
is the size of a gzip file of that text, deflated by libdeflate (the pinned `deflate`
package, which bundles it) at level 1: its output depends on the bytes and the level
only, so the same text has the same size in every process on every machine. ISA-L,
used before, does not promise that (docs/evaluate.md, "Compressed size", has the
measurements and the rule).

The runner records both sizes in each record it writes (``text_size``), while the text
is in memory and the process mostly waits for the model; evaluate.py uses them when
they are present, name this method and match the text's byte length, and deflates the
text itself otherwise (older records, other tools, edited files). This module imports
nothing heavy: the runner loads it at start-up.
"""
from __future__ import annotations

from deflate import __version__ as _DEFLATE_VERSION, deflate_compress

GZIP_LEVEL = 1
GZIP_FRAMING = 18          # gzip's 10-byte header (no file name) and 8-byte trailer around the deflate stream
# The package version pins the libdeflate it bundles, hence the exact output: a record
# sized by another version is deflated again, and a PointsDB built with it is rebuilt.
TEXT_SIZE_METHOD = f"gzip-libdeflate{_DEFLATE_VERSION}-{GZIP_LEVEL}"


def gzip_size(data: bytes) -> int:
    """Size in bytes of ``gzip`` output for ``data`` (level GZIP_LEVEL, no file name)."""
    return len(deflate_compress(data, GZIP_LEVEL)) + GZIP_FRAMING


def completion_text(reasoning: str | None, answer: str | None) -> bytes:
    """The bytes both sizes measure: reasoning then answer, UTF-8 (a lone surrogate kept
    as its 3 bytes: such a record is refused by evaluate.py, not by the runner)."""
    return ((reasoning or "") + (answer or "")).encode("utf-8", "surrogatepass")


def text_size(reasoning: str | None, answer: str | None) -> dict:
    """The ``text_size`` field of a record: {"bytes", "gzip", "method"}."""
    data = completion_text(reasoning, answer)
    return {"bytes": len(data), "gzip": gzip_size(data), "method": TEXT_SIZE_METHOD}
