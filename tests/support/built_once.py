"""Test data built once per test run, shared by the pytest-xdist workers.

`built_once(tmp_path_factory, name, build)` runs `build(root)` the first time any worker asks
for `name` and hands every later caller the same folder: it lives beside the workers' own
temporary folders, and a lock makes a second worker wait for the first's build (as the
simulated r12 study does, tests/support/r12_study.py). `copy_of` gives a caller its own copy,
for tests that might write beside the data.
"""
from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import Callable

_DONE = ".built"


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / name
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / _DONE).exists():
            if root.exists():
                shutil.rmtree(root)          # a build that failed part-way
            root.mkdir(parents=True)
            build(root)
            (root / _DONE).write_text("ok\n")
    return root


def copy_of(tmp_path_factory, name: str, build: Callable[[Path], object], prefix: str) -> Path:
    """A fresh folder (tmp_path_factory.mktemp(prefix)) holding a copy of built_once's."""
    target = tmp_path_factory.mktemp(prefix)
    shutil.copytree(built_once(tmp_path_factory, name, build), target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(_DONE))
    return target
