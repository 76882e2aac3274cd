"""Lines too long to be records: found and cut out without ever holding one whole.

A record line may hold at most ``RECORD_LIMIT`` bytes (its text without surrounding
whitespace; docs/evaluate.md, *Lines over 16 MB*). DuckDB refuses a whole query when
a line is much longer than its ``maximum_object_size`` (a valid 50 MB record, a
crash's garbage tail), and runs out of its memory limit on many long (allowed)
lines of one file. Then the scan's fallback (scan.py) reads the batch's files as
pieces of at most ``PIECE_BYTES`` of whole lines, in which every line over
``CUT_LIMIT`` bytes is replaced by a short placeholder line (line numbers kept); the
placeholder becomes one refused record with the message below. A long line is read
``READ_BYTES`` at a time and never held whole: memory stays bounded whatever the file holds.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import BinaryIO

RECORD_LIMIT = 16 * 2**20        # the longest record line (bytes, surrounding whitespace not counted)
# Lines longer than this are cut out of the fallback's copies. DuckDB, at a
# maximum_object_size of RECORD_LIMIT, reads some lines up to about twice that long
# and refuses all longer ones; the scan refuses every line over RECORD_LIMIT in SQL,
# so a line up to CUT_LIMIT gets the same verdict from the fast path and the fallback.
CUT_LIMIT = 2 * RECORD_LIMIT
READ_BYTES = 2**20               # bytes read at once from a long line
# The fallback also cuts large files into pieces of this size: DuckDB holds up to
# 2,048 rows of one file at once, which for long (but allowed) lines is more than
# its memory limit; rows of different files are never in one chunk.
PIECE_BYTES = 16 * 2**20


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


def bounded_lines(fh: BinaryIO, limit: int, sink: Callable[[bytes], object] | None = None) -> Iterator[bytes | LongLine]:
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


def _rest_of_long_line(fh: BinaryIO, head: bytes, sink: Callable[[bytes], object] | None) -> LongLine:
    """Stream the rest of a long line whose first bytes are ``head``; what it was."""
    length, last, newline = 0, b"", False
    part = head
    while part:
        if sink is not None:
            sink(part)
        if part.endswith(b"\n"):
            newline, part = True, part[:-1]
        length += len(part)
        content = part.rstrip()
        if content:
            last = content[-1:]
        if newline:
            break
        part = fh.readline(READ_BYTES)
    return LongLine(length, newline, last == b"}", last == b"")


@dataclass(frozen=True)
class Piece:
    """A slice of whole lines of one batch file, as the fallback scan reads it."""
    path: str            # the file DuckDB reads (the original itself when it needed no cutting)
    source: int          # index of the original file in the batch
    line_offset: int     # lines of the original before this piece
    record_offset: int   # non-blank lines (records) of the original before this piece
    size: int            # bytes DuckDB reads
    long_lines: dict     # {line number within the piece: LongLine} replaced by placeholders


def cut_into_pieces(path: str, source: int, folder: str, piece_bytes: int | None = None,
                    limit: int = CUT_LIMIT) -> list:
    """The file as Pieces of about ``piece_bytes`` (whole lines; a longer line alone), in
    order, written to ``folder``; each line over ``limit`` bytes becomes a placeholder
    DuckDB reads as an empty record (a blank line for a blank one). A file no larger
    than ``piece_bytes`` (default PIECE_BYTES) is its own single piece, not copied."""
    piece_bytes = piece_bytes or PIECE_BYTES
    whole = os.path.getsize(path)
    if whole <= piece_bytes:
        return [Piece(path, source, 0, 0, whole, {})]
    pieces: list[Piece] = []
    out, lines, records, size = None, 0, 0, 0
    try:
        with open(path, "rb") as src:
            for line in bounded_lines(src, limit):
                if isinstance(line, LongLine):
                    is_long, blank = True, line.blank
                    text = (b"" if blank else b"{}") + (b"\n" if line.newline else b"")
                else:
                    is_long, blank, text = False, not line.strip(), line
                if out is None or (size and size + len(text) > piece_bytes):
                    if out is not None:
                        out.close()
                        pieces[-1] = replace(pieces[-1], size=size)
                    pieces.append(Piece(os.path.join(folder, f"{source}-{len(pieces)}.ndjson"), source, lines,
                                        records, 0, {}))
                    out, size, first_line = open(pieces[-1].path, "wb"), 0, lines
                out.write(text)
                size += len(text)
                lines += 1
                records += not blank
                if is_long:
                    pieces[-1].long_lines[lines - first_line] = line
    finally:
        if out is not None:
            out.close()
    if not pieces:
        return [Piece(path, source, 0, 0, whole, {})]
    pieces[-1] = replace(pieces[-1], size=size)
    return pieces


def piece_groups(pieces: list[Piece], group_bytes: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of runs of consecutive pieces of at most ``group_bytes`` (default
    PIECE_BYTES) together, or one larger piece: one DuckDB query each, so no query's rows
    exceed that many bytes."""
    group_bytes = group_bytes or PIECE_BYTES
    start, total = 0, 0
    for i, piece in enumerate(pieces):
        if i > start and total + piece.size > group_bytes:
            yield start, i
            start, total = i, 0
        total += piece.size
    if pieces:
        yield start, len(pieces)
