"""Reading user-supplied JSON/YAML files so that every bad file is one clear UserError.

Bad files arrive in many forms: missing, a directory, unreadable, not UTF-8,
not JSON/YAML, nested deeper than the parser's recursion limit, or with a key
that is misspelt. Each becomes a UserError naming the file; an unknown key also
names the closest valid one ("did you mean tags?"), because a silently ignored
typo (``"tag"`` for ``"tags"``) changes results without a word.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from os import PathLike
from typing import Any

# json, pathlib and difflib are imported in the functions that use them: every script's --help
# imports resolver.core (docs/performance.md)
from resolver.core.errors import UserError

MAX_INPUT_BYTES = 256 << 20     # a config, dataset or manifest larger than this is not one


def compile_search(text: str | None, flag: str = "--search") -> re.Pattern[str] | None:
    """Case-insensitive regex of a --search value (None when not given); a bad one is a UserError."""
    if not text:
        return None
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise UserError(f"{flag} {text!r} is not a valid regular expression: {exc}") from None


def display_path(path: str | PathLike[str]) -> str:
    """Relative to the current directory when under it (shorter, clickable in editors)."""
    from pathlib import Path

    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def did_you_mean(key: object, valid: Iterable[object]) -> str:
    """' (did you mean tags?)' for the closest valid key, or ''."""
    import difflib

    close = difflib.get_close_matches(str(key), [str(v) for v in valid], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def read_text_file(path: str | PathLike[str], what: str) -> str:
    """A file's UTF-8 text; UserError when missing, a directory, unreadable, huge or not UTF-8."""
    from pathlib import Path

    path = Path(path)
    try:
        if path.is_dir():
            raise UserError(f"{what} {path} is a directory; expected a file")
        if not path.exists():
            raise UserError(f"{what} not found: {path}")
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise UserError(f"{what} {path} is larger than {MAX_INPUT_BYTES >> 20} MiB; not a {what}")
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{what} {path} is not UTF-8 text (bad byte at offset {exc.start})") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def parse_json_text(text: str, where: str) -> Any:
    """json.loads with one-line errors for syntax and for nesting deeper than Python can follow."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise UserError(f"{where} is nested too deeply to be read") from None
    except ValueError as exc:          # e.g. an integer of more than 4300 digits
        raise UserError(f"{where} holds a value that cannot be read ({str(exc)[:80]})") from None


def read_json_file(path: str | PathLike[str], what: str, hint: str = "") -> Any:
    """Parse a JSON file (see read_text_file for the errors); `hint` ends a syntax error line."""
    text = read_text_file(path, what)
    try:
        return parse_json_text(text, f"{what} {path}")
    except UserError as exc:
        raise UserError(f"{exc}{'; ' + hint if hint else ''}") from None


def read_yaml_file(path: str | PathLike[str], what: str) -> Any:
    """Parse a YAML file with yaml.safe_load (see read_text_file for the errors)."""
    import yaml

    text = read_text_file(path, what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{path}: malformed YAML{at}: {problem}") from None
    except RecursionError:
        raise UserError(f"{what} {path} is nested too deeply to be read") from None
