"""Run the project's scripts in this one process, many times each, and report how each run ended.

``python -m tests.support.hang_driver CASES.json`` (tests/test_hang_sweep.py). CASES.json is a
list of ``{"name", "script", "args", "cwd", "repeat"}``; each script is run as ``python SCRIPT
ARGS`` would run it (``runpy.run_path`` as ``__main__``, ``sys.argv`` set, in ``cwd``), ``repeat``
times, with its stdout and stderr captured. One JSON line per run is printed: name, exit code and
the stderr lines. In-process so that a repeat costs the command's work, not another interpreter
start-up: the hang this looks for is in the command's own exit path (issue 46). A run that has
not ended within ``LIMIT`` seconds is a hang: faulthandler prints every thread's stack to the real
stderr and the process exits with status 1.
"""
from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import runpy
import sys
import time

from tests.support.in_process import drop_new_import_hooks

LIMIT = float(os.environ.get("REASONSCAPE_HANG_LIMIT", "30"))    # a hang detector, not a timing test


def run_once(script: str, args: list[str], cwd: str) -> tuple[int, str]:
    """(exit code, stderr) of one in-process run of ``script``."""
    saved_argv, saved_cwd, saved_meta_path = sys.argv, os.getcwd(), list(sys.meta_path)
    err = io.StringIO()
    code: int | str | None = 0
    try:
        os.chdir(cwd)
        sys.argv = [script, *args]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as exc:
                code = exc.code
    finally:
        # evaluate.py keeps pandas out of its process with an import hook: not out of the next command's
        sys.argv = saved_argv
        drop_new_import_hooks(saved_meta_path)
        os.chdir(saved_cwd)
    return (code if isinstance(code, int) else 1), err.getvalue()


def main(argv: list[str]) -> int:
    with open(argv[0]) as handle:
        cases = json.load(handle)
    for case in cases:
        for number in range(case.get("repeat", 1)):
            faulthandler.dump_traceback_later(LIMIT, exit=True, file=sys.__stderr__)
            print(f"# {case['name']} run {number}", file=sys.__stderr__, flush=True)   # who hung, if one does
            start = time.monotonic()
            code, err = run_once(case["script"], case["args"], case["cwd"])
            faulthandler.cancel_dump_traceback_later()
            print(json.dumps({"name": case["name"], "code": code, "stderr": err.splitlines(),
                              "seconds": round(time.monotonic() - start, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
