"""tests/support/cpu_profile.py, the suite's CPU recorder: each test's figures against what the
test measured of itself, under pytest-xdist (rows sent by the workers) and in one process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# Each burns about 0.4 CPU-s: one in the test process, one in a child it waits for, and each
# writes what it measured of itself (time.process_time, user + system) beside the test file.
BURNERS = '''
import pathlib, subprocess, sys, time

HERE = pathlib.Path(__file__).parent
BURN = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: sum(range(1000))\\nprint(time.process_time())"


def test_in_process():
    started = time.process_time()
    while time.process_time() - started < 0.4:
        sum(range(1000))
    (HERE / "in_process.txt").write_text(str(time.process_time() - started))


def test_child():
    out = subprocess.run([sys.executable, "-c", BURN], capture_output=True, text=True, check=True).stdout
    (HERE / "child.txt").write_text(out.strip())


def test_idle():
    time.sleep(0.3)
'''


def profile(tmp_path: Path, *workers: str) -> tuple[dict, str]:
    (tmp_path / "test_burners.py").write_text(BURNERS)
    target = tmp_path / "cpu.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:dash", "-p", "no:cacheprovider",
                           "-p", "tests.support.cpu_profile", "--cpu-profile", str(target), *workers,
                           "--basetemp", str(tmp_path / "basetemp"),      # inside this test's own folder
                           str(tmp_path / "test_burners.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(target.read_text()), proc.stdout


def cpu(row: dict, *fields: str) -> float:
    return sum(row[f] for f in fields)


@pytest.mark.parametrize("workers", [("-n", "2"), ("-p", "no:xdist")], ids=["xdist", "one-process-without-xdist"])
def test_each_test_gets_the_cpu_it_measured_of_itself(tmp_path, workers):
    summary, stdout = profile(tmp_path, *workers)
    rows = {row["nodeid"].rsplit("::", 1)[1]: row for row in summary["tests"]}
    assert set(rows) == {"test_in_process", "test_child", "test_idle"}
    own = float((tmp_path / "in_process.txt").read_text())
    child = float((tmp_path / "child.txt").read_text())
    assert own >= 0.4 and child >= 0.4
    # the recorder's figures bracket the test's own: the start-up of the child and pytest's
    # bookkeeping come on top, never much
    assert own - 0.02 <= cpu(rows["test_in_process"], "user", "system") <= own + 0.3
    assert child - 0.02 <= cpu(rows["test_child"], "children_user", "children_system") <= child + 0.5
    assert cpu(rows["test_idle"], "user", "system", "children_user", "children_system") < 0.2
    assert rows["test_idle"]["wall"] >= 0.3
    if "-n" in workers:
        assert {row["worker"] for row in summary["tests"]} <= {"gw0", "gw1"}
        assert len(summary["processes"]) == 3          # the controller and its two workers
    # the totals hold every test's figures and the processes' start-up and collection besides
    recorded = sum(cpu(row, "user", "system", "children_user", "children_system") for row in summary["tests"])
    total = summary["total"]["user"] + summary["total"]["system"]
    assert total >= recorded + 0.2
    assert "CPU of pytest's processes" in stdout and "test_burners.py" in stdout
