"""Run a batch of top-level script command lines in one subprocess (the seed conformance test).

    python tests/support/conformance_driver.py BATCH.json RESULTS.json

BATCH.json is a list of argv lists whose first item is a top-level script (`analyze.py`,
`probe.py`, `cohort.py`, ...). Each is executed as `__main__` with runpy, exactly as
`python <script> ...` would run it, with its own sys.argv, stdout and stderr captured and
its exit code taken from SystemExit. Running a batch in one interpreter saves the second of
interpreter start-up and imports (pandas, DuckDB, matplotlib) each line would otherwise pay.
"""
from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_one(argv: list) -> dict:
    import time

    started = time.monotonic()
    out, err = io.StringIO(), io.StringIO()
    sys.argv = [argv[0], *argv[1:]]
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(str(REPO / argv[0]), run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # a crash is a result to report, not the end of the batch
            import traceback

            err.write(f"Traceback (most recent call last):\n{traceback.format_exc()}\n{exc!r}\n")
            code = 1
    try:
        import matplotlib.pyplot as plt

        plt.close("all")
    except ImportError:
        pass
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
            "seconds": round(time.monotonic() - started, 2)}


def main() -> None:
    batch = json.loads(Path(sys.argv[1]).read_text())
    results_path = Path(sys.argv[2])
    sys.path.insert(0, str(REPO))
    results = [run_one(argv) for argv in batch]
    results_path.write_text(json.dumps(results))


if __name__ == "__main__":
    main()
