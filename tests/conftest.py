"""Shared test fixtures: the repository root, the interpreter, running real scripts."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def run_script(script: str, *args, cwd=None, timeout=300, env=None, check=False):
    """Run one of the top-level scripts as a real subprocess; returns CompletedProcess."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO)
    full_env.setdefault("TQDM_DISABLE", "1")
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, str(REPO / script), *map(str, args)],
        cwd=cwd or REPO, capture_output=True, text=True, timeout=timeout, env=full_env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{script} {args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def script():
    return run_script
