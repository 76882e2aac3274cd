"""The one exception type that means "the user asked for something invalid".

Entry scripts turn a UserError into a single line on stderr and exit code 2
(see resolver.cli.run_main); anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

from collections.abc import Iterable
from os import PathLike


class UserError(Exception):
    """Bad input: a message that says what is wrong and what would be valid."""


def choices_text(valid: Iterable[object]) -> str:
    """Render a collection of valid choices for an error message."""
    return ", ".join(str(v) for v in sorted(valid, key=str)) or "(none)"


def file_not_found(what: str, path: str | PathLike[str], suffixes: tuple[str, ...] = (".json",)) -> UserError:
    """'<what> file X not found; did you mean Y? <what>s there: ...' listing the files that do exist.

    The files listed are those beside `path` (its folder) with one of `suffixes`; the
    closest name is offered first, so a typo such as samplers/greedymax.json points
    at samplers/greedy-max.json.
    """
    import difflib
    from pathlib import Path

    p = Path(path)
    folder = p.parent
    found = sorted(str(folder / f.name) if str(folder) != "." else f.name
                   for f in (folder.iterdir() if folder.is_dir() else ())
                   if f.is_file() and f.name.endswith(tuple(suffixes)))
    text = f"{what} file {str(path)!r} not found"
    if not found:
        return UserError(f"{text}; {folder}/ holds no {'/'.join(suffixes)} files")
    close = difflib.get_close_matches(str(path), found, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return UserError(f"{text}{hint} {what}s there: {', '.join(found)}")
