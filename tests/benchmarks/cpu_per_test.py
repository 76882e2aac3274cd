"""A pytest plugin that prints each test's CPU seconds, its subprocesses' included (docs/performance.md,
"The vLLM tier's cost"): the figure that stays put on a shared, loaded machine, where wall time does not.

    python -m pytest -p no:dash -p tests.benchmarks.cpu_per_test tests/test_real_vllm.py

A thread reads user+system CPU of the pytest process and of every descendant every 0.2 s
(psutil); a process's last reading is kept after it ends, so a server's engine processes,
which pytest never reaps, count too (`/usr/bin/time` misses them). A process that lives under
0.2 s is missed, and each loses at most its last 0.2 s. A test's figure runs from its setup to
its teardown, so the first test of a module carries its module-scoped fixtures (a server start).
At the end: one line per test (wall s, CPU s), the total, the load average, and the busiest processes.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Iterator

import psutil
import pytest

__all__ = ["pytest_runtest_protocol", "pytest_terminal_summary"]

_SAMPLE_EVERY = 0.2
_seen: dict[tuple[int, float], tuple[float, str]] = {}
_lock = threading.Lock()
_rows: list[tuple[str, float, float]] = []
_start = time.monotonic()


def _sample() -> None:
    me = psutil.Process()
    try:
        procs = [me, *me.children(recursive=True)]
    except psutil.Error:
        procs = [me]
    for proc in procs:
        try:
            times = proc.cpu_times()
            key = (proc.pid, proc.create_time())
            name = _seen[key][1] if key in _seen else (" ".join(proc.cmdline()[:3]) or proc.name())[:90]
        except psutil.Error:
            continue
        with _lock:
            _seen[key] = (times.user + times.system, name)


def _total() -> float:
    _sample()
    with _lock:
        return sum(cpu for cpu, _ in _seen.values())


def _watch() -> None:
    while True:
        _sample()
        time.sleep(_SAMPLE_EVERY)


threading.Thread(target=_watch, daemon=True, name="cpu_per_test").start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    cpu, wall = _total(), time.monotonic()
    yield
    _rows.append((item.nodeid, time.monotonic() - wall, _total() - cpu))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    write = terminalreporter.write_line
    write("")
    write("cpu_per_test: wall s, CPU s (user+system, subprocesses included)")
    for nodeid, wall, cpu in _rows:
        write(f"{wall:8.1f} {cpu:8.1f}  {nodeid}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    write(f"{time.monotonic() - _start:8.1f} {_total():8.1f}  total (load average {load})")
    with _lock:
        busiest = sorted(_seen.values(), reverse=True)[:8]
    for cpu, name in busiest:
        write(f"{'':8} {cpu:8.1f}  {name}")
