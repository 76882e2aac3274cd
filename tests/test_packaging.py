"""pyproject.toml against requirements.txt and the tree; the `reasonscape` command; ruff.

`pip install .` itself needs the network and minutes, so it is not run here: docs/architecture.md
("Installing") gives the command that checks it by hand.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SCRIPTS = ["runner", "evaluate", "analyze", "probe", "leaderboard", "explorer", "spiderweb", "cohort", "data"]


def pins(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith(("#", "-r"))]


def test_runtime_dependencies_are_requirements_txt():
    assert PYPROJECT["project"]["dependencies"] == pins(REPO / "requirements.txt")
    assert all("==" in pin for pin in PYPROJECT["project"]["dependencies"])


def test_test_extra_is_tests_requirements_txt():
    assert PYPROJECT["project"]["optional-dependencies"]["test"] == pins(REPO / "tests" / "requirements.txt")
    assert any(pin.startswith("ruff==") for pin in pins(REPO / "tests" / "requirements.txt"))


def test_real_extra_is_the_llamacpp_requirements():
    assert PYPROJECT["project"]["optional-dependencies"]["real"] == pins(REPO / "resolver" / "llamacpp" / "requirements.txt")


def test_every_package_is_installed():
    packages = sorted(".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "resolver").rglob("__init__.py"))
    assert sorted(PYPROJECT["tool"]["setuptools"]["packages"]) == sorted(packages + ["reasonscape_scripts"])


def test_every_data_file_is_installed():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]
    for path in (REPO / "resolver").rglob("*"):
        if not path.is_file() or path.suffix in (".py", ".pyc") or path.name == "README.md":
            continue
        package = ".".join(path.parent.relative_to(REPO).parts)
        # a "*" key holds patterns for every package (each relative to its own directory)
        owners = [pkg for pkg in patterns if pkg == "*" or package == pkg or package.startswith(pkg + ".")]
        assert owners, f"{path.relative_to(REPO)} would be left out of an install"
        assert any(path.relative_to(REPO / Path(*(package if owner == "*" else owner).split("."))).match(pattern)
                   for owner in owners for pattern in patterns[owner]), f"{path.relative_to(REPO)} would be left out"


@pytest.mark.parametrize("name", SCRIPTS)
def test_reasonscape_command_is_the_script(name, tmp_path, monkeypatch):
    """From another directory, `reasonscape <script> --help` prints what `python <script>.py --help` does."""
    from conftest import run_script

    from tests.support.in_process import IN_PROCESS_SCRIPTS

    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "COLUMNS": "100"}
    command = [sys.executable, "-m", "resolver.cli.commands", name, "--help"]
    via = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
    # The command is the real process here; the script's own --help, the reference, runs in this
    # process where it can (argparse reads COLUMNS when it formats), as its own process would.
    if f"{name}.py" in IN_PROCESS_SCRIPTS:
        monkeypatch.setenv("COLUMNS", "100")
        direct = run_script(f"{name}.py", "--help", cwd=tmp_path)
    else:
        direct = subprocess.run([sys.executable, str(REPO / f"{name}.py"), "--help"], cwd=tmp_path,
                                capture_output=True, text=True, env=env)
    assert (via.returncode, via.stdout, via.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert direct.returncode == 0 and f"usage: {name}.py" in direct.stdout


def test_reasonscape_command_refuses_an_unknown_script(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "resolver.cli.commands", "runnr"], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "runnr" in proc.stderr and "runner" in proc.stderr


def test_the_tree_is_ruff_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (tests/requirements.txt pins it; bash tests/run.sh installs it)")
    proc = subprocess.run([ruff, "check", "--no-cache", "."], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
