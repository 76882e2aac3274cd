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


def ensure_requirements(requirements: Path) -> None:
    """Create the venv and install `requirements` unless already installed as-is."""
    if not venv_python().exists():
        print(f"creating virtualenv {VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, **child_options())
    files = [requirements]
    if requirements.parent != REPO:  # tests/requirements.txt includes ../requirements.txt
        files.append(REPO / "requirements.txt")
    stamp = VENV / f".installed-{requirements.parent.name or 'root'}"
    digest = _requirements_digest(files)
    if stamp.exists() and stamp.read_text() == digest:
        return
    print(f"installing {requirements.relative_to(REPO)} into {VENV} (first run takes a few minutes) ...", flush=True)
    subprocess.run(
        [str(venv_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(requirements)],
        check=True, **child_options(),
    )
    stamp.write_text(digest)


def reexec_in_venv(module: str, requirements: Path = REPO / "requirements.txt") -> None:
    """Install if needed, then replace this process with `venv/python -m module args`."""
    if inside_venv():
        return
    ensure_requirements(requirements)
    args = [str(venv_python()), "-m", module, *sys.argv[1:]]
    os.chdir(REPO)
    os.execv(args[0], args)
