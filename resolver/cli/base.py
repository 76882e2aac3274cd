"""Shared plumbing of the commands: argparse with one-line errors, exit codes, `run_main`."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, NoReturn, Sequence

from resolver.core import UserError, watch_parent_from_env

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (`expected a positive integer, got '0'` otherwise)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


class ArgParser(argparse.ArgumentParser):
    """argparse with one-line errors: `prog: error: message` and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(EXIT_USAGE)


def refuse_file_parents(path_text: str, what: str) -> None:
    """UserError when a folder on the way to a path the command will write is a file (`what` names the flag)."""
    from pathlib import Path

    for parent in Path(path_text).parents:
        if parent.exists() and not parent.is_dir():
            raise UserError(f"{what} {path_text}: {parent} is a file, not a directory")


def user_message(exc: UserError) -> str:
    """The one line a command prints for a UserError. A missing PointsDB is where the command
    layer adds what only `sim` knows: the command that fills a shipped dataset with simulated
    data (resolver.sim.r12study.missing_data_hint; the library's message names the pull and
    evaluate.py only)."""
    from resolver.analysis import PointsDBMissing

    if isinstance(exc, PointsDBMissing):
        from resolver.sim.r12study import missing_data_hint

        return f"PointsDB {exc.db_path} does not exist yet; {missing_data_hint(exc.dataset_path)}"
    return str(exc)


def run_main(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str] | None = None, fast_exit: bool = False) -> None:
    """Run an entry point: UserError -> one line + exit 2, Ctrl-C -> exit 130.

    Started by another process of ours, it ends when that one does (docs/architecture.md,
    *Child processes end with their parent*).

    ``fast_exit``: after a successful ``main`` (everything written, closed and flushed),
    leave without the interpreter's teardown. For scripts whose work ends with large
    in-memory tables and native libraries loaded (evaluate.py: ~50 ms of freeing that
    nobody waits for a result of).
    """
    prog = sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "reasonscape"
    watch_parent_from_env()
    try:
        code = main(argv)
    except UserError as exc:
        sys.stderr.write(f"{prog}: error: {user_message(exc)}\n")
        raise SystemExit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED)
    except BrokenPipeError:  # `analyze.py ... | head` is not an error
        raise SystemExit(0)
    if fast_exit:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            code = 0
        os._exit(code or 0)
    raise SystemExit(code or 0)
