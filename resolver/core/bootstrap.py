"""Standard-library-only bootstrap: make sure we run inside the project's virtualenv.

Quick-start commands start from a bare `python3`, so this module must not import
anything outside the standard library. It creates `.venv` when missing, installs the
pinned requirements when they changed, and re-executes the caller inside the venv.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from resolver.core.lifeline import child_options

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("REASONSCAPE_VENV", REPO / ".venv"))
if not VENV.is_absolute():
    VENV = REPO / VENV


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def inside_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def _requirements_digest(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.read_bytes())
    return digest.hexdigest()


def _silent(line: str) -> None:
    pass


def ensure_requirements(requirements: Path, say: Callable[[str], None] = _silent) -> None:
    """Create the venv and install `requirements` unless already installed as-is.

    ``say`` gets the lines worth showing while it works (the command layer prints them).
    """
    if not venv_python().exists():
        say(f"creating virtualenv {VENV} ...")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, **child_options())
    files = [requirements]
    if requirements.parent != REPO:  # tests/requirements.txt includes ../requirements.txt
        files.append(REPO / "requirements.txt")
    stamp = VENV / f".installed-{requirements.parent.name or 'root'}"
    digest = _requirements_digest(files)
    if stamp.exists() and stamp.read_text() == digest:
        return
    say(f"installing {requirements.relative_to(REPO)} into {VENV} (first run takes a few minutes) ...")
    subprocess.run(
        [str(venv_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(requirements)],
        check=True, **child_options(),
    )
    stamp.write_text(digest)


def reexec_in_venv(module: str, requirements: Path = REPO / "requirements.txt",
                   say: Callable[[str], None] = _silent) -> None:
    """Install if needed (``say`` as for ensure_requirements), then replace this process
    with `venv/python -m module args`."""
    if inside_venv():
        return
    ensure_requirements(requirements, say)
    args = [str(venv_python()), "-m", module, *sys.argv[1:]]
    os.chdir(REPO)
    os.execv(args[0], args)
