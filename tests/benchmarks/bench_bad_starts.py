"""The web apps' failing starts under load (issue 46, item 3): seconds to the one error line.

    python tests/benchmarks/bench_bad_starts.py [--starts 20]

Each web app is started on each of its bad inputs (tests/test_hang_sweep.py's ``web_cases``:
a missing or deeply nested dataset file, a garbage PointsDB, a missing PointsDB, an SQL-looking
--group-by...) ``--starts`` times, one at a time, beside two CPU-bound busy loops (one per
core). For each case it prints the slowest and the median time from the start of the process
to its error line, and, as the baseline measured in the same run under the same load, the
slowest start of a bare ``python -c pass``. The last line is the slowest failing start as a
ratio of that baseline. A run that has not printed its line after 120 s counts as a hang.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from benchlib import write_result  # noqa: E402

from tests.conftest import run_script  # noqa: E402
from tests.test_hang_sweep import ENV, busy_cores, busy_dataset, web_cases  # noqa: E402

HANG = 120.0


def time_to_error_line(args: list[str], cwd: Path) -> float:
    """Seconds from the start of ``args`` to its first stderr line (HANG when none came)."""
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        seconds = time.monotonic() - start
        proc.wait(HANG)
    except subprocess.TimeoutExpired:
        proc.kill()
        return HANG
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return seconds if line else HANG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        dataset = busy_dataset(root)
        run_script("evaluate.py", "--dataset", dataset, "--parallel", "2", "--quiet", check=True)
        cases = web_cases(root, dataset)
        load = busy_cores(3600)              # killed below, or with this process (child_options)
        try:
            bare = [time_to_error_line([sys.executable, "-c", "import sys; sys.stderr.write('x\\n')"], root)
                    for _ in range(args.starts)]
            # printed now: a run stopped part-way still has its baseline (a loaded machine takes 30+ min)
            print(f"bare python: slowest {max(bare):.2f} s, median {statistics.median(bare):.2f} s", flush=True)
            rows = {}
            for name, app, app_args, _ in cases:
                times = [time_to_error_line([sys.executable, str(REPO / app), *app_args], root)
                         for _ in range(args.starts)]
                rows[name] = {"slowest": max(times), "median": statistics.median(times)}
                print(f"{name:28s} slowest {max(times):6.2f} s  median {statistics.median(times):6.2f} s", flush=True)
        finally:
            for proc in load:
                proc.kill()
    slowest = max(r["slowest"] for r in rows.values())
    write_result("bad_starts", {"starts": args.starts, "cases": rows, "bare_python_slowest": max(bare),
                                "bare_python_median": statistics.median(bare), "slowest": slowest})
    print(f"slowest failing start {slowest:.2f} s = {slowest / max(bare):.1f} x the slowest bare python start "
          f"(both beside two busy cores)")


if __name__ == "__main__":
    main()
