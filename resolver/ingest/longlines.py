"""Lines too long to be records: found and cut out without ever holding one whole.

A record line may hold at most ``RECORD_LIMIT`` bytes (its text without surrounding
whitespace; docs/evaluate.md, *Lines over 16 MB*). DuckDB refuses a whole query when
a line is much longer than its ``maximum_object_size`` (a valid 50 MB record, a
crash's garbage tail), so the scan's fallback (scan.py) copies the batch's files
with every line over ``CUT_LIMIT`` bytes replaced by a short placeholder line (line
numbers unchanged) and reads the copies instead; the placeholder becomes one refused
record with the message below. Lines read in pieces of ``PIECE`` bytes: memory stays
bounded whatever the file holds.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

RECORD_LIMIT = 16 * 2**20        # the longest record line (bytes, surrounding whitespace not counted)
# Lines longer than this are cut out of the fallback's copies. DuckDB, at a
# maximum_object_size of RECORD_LIMIT, reads some lines up to about twice that long
# and refuses all longer ones; the scan refuses every line over RECORD_LIMIT in SQL,
# so a line up to CUT_LIMIT gets the same verdict from the fast path and the fallback.
CUT_LIMIT = 2 * RECORD_LIMIT
PIECE = 2**20                    # bytes read at once from a long line


@dataclass(frozen=True)
class LongLine:
    """What is known of a line over the limit, measured while streaming it."""
    length: int          # bytes before its newline
    newline: bool        # False: the file's last line, without a newline (cut by a crash?)
    closed: bool         # its last non-blank byte is '}' (it may be a whole JSON object)
    blank: bool          # only whitespace (not a record: DuckDB skips blank lines)


def long_line_problem(length: int, newline: bool, closed: bool) -> str:
    """The refused record's message for a line over RECORD_LIMIT."""
    if not newline and not closed:       # what a crash mid-write leaves, as for short cut lines
        return f"malformed JSON: the last line ({length:,} bytes) stops mid-record (truncated last line?)"
    return f"line of {length:,} bytes is over the {RECORD_LIMIT:,} bytes (16 MB) a record may have; skipped"


def raw_line_problem(raw: bytes) -> str | None:
    """long_line_problem for a line held in memory (up to CUT_LIMIT bytes), or None if it is short enough."""
    if len(raw) <= RECORD_LIMIT or len(raw.strip()) <= RECORD_LIMIT:
        return None
    newline = raw.endswith(b"\n")
    return long_line_problem(len(raw) - newline, newline, raw.rstrip()[-1:] == b"}")


def bounded_lines(fh, limit: int, sink=None):
    """Each line of a binary file: its bytes, or a LongLine when it has over ``limit``
    bytes before its newline; a long line's bytes go to ``sink`` piece by piece (or nowhere)."""
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        if raw.endswith(b"\n") or len(raw) <= limit:
            yield raw
        else:
            yield _rest_of_long_line(fh, raw, sink)


def _rest_of_long_line(fh, head: bytes, sink) -> LongLine:
    """Stream the rest of a long line whose first bytes are ``head``; what it was."""
    length, last, newline = 0, b"", False
    piece = head
    while piece:
        if sink is not None:
            sink(piece)
        if piece.endswith(b"\n"):
            newline, piece = True, piece[:-1]
        length += len(piece)
        content = piece.rstrip()
        if content:
            last = content[-1:]
        if newline:
            break
        piece = fh.readline(PIECE)
    return LongLine(length, newline, last == b"}", last == b"")


def find_long_lines(path: str, limit: int = CUT_LIMIT) -> dict:
    """{line number: LongLine} of a file's lines over ``limit`` bytes (one streaming read)."""
    found = {}
    with open(path, "rb") as fh:
        for line_no, line in enumerate(bounded_lines(fh, limit), 1):
            if isinstance(line, LongLine):
                found[line_no] = line
    return found


def copy_without_long_lines(path: str, folder: str, name: str, limit: int = CUT_LIMIT) -> str:
    """A copy of the file in ``folder`` with each line over ``limit`` bytes replaced by a
    placeholder DuckDB reads as an empty record (a blank line for a blank one)."""
    target = os.path.join(folder, name)
    with open(path, "rb") as src, open(target, "wb") as out:
        for line in bounded_lines(src, limit):
            if isinstance(line, LongLine):
                out.write((b"" if line.blank else b"{}") + (b"\n" if line.newline else b""))
            else:
                out.write(line)
    return target
