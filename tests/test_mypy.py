"""mypy over resolver/ with pyproject.toml's [tool.mypy] settings finds no error.

The settings and why the stricter flags are not on yet: docs/decisions.md ("Type checking").
The run is `slow` (a cold cache takes about a minute of one core); its cache is the
repository's .mypy_cache, the place a hand-run `mypy` uses, so later runs take seconds.
Only this test writes it, so parallel pytest workers never share it.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MYPY = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _mypy_installed() -> bool:
    return importlib.util.find_spec("mypy") is not None


@pytest.mark.slow
def test_resolver_type_checks():
    if not _mypy_installed():
        pytest.skip("mypy is not installed (tests/requirements.txt pins it; bash tests/run.sh installs it)")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
         "--cache-dir", str(REPO / ".mypy_cache"), "--no-color-output", "--no-error-summary", "resolver"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"mypy exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    assert proc.stdout.strip() == "", proc.stdout


def test_settings_the_code_meets():
    """The baseline docs/decisions.md describes: untyped functions' bodies are checked too,
    and an ignore or cast that is no longer needed is an error."""
    for flag in ("check_untyped_defs", "warn_unused_ignores", "warn_redundant_casts"):
        assert MYPY.get(flag) is True, flag
    assert not MYPY.get("ignore_missing_imports"), "missing imports are ignored per library, never globally"
    assert not MYPY.get("ignore_errors")


def _overrides(key: str) -> list[str]:
    return [module for section in MYPY.get("overrides", []) if section.get(key)
            for module in ([section["module"]] if isinstance(section["module"], str) else section["module"])]


def _ships_types(top: str) -> bool:
    """Whether the installed library `top` has type information: a py.typed marker in the
    package, or a stub package (``<top>-stubs``, ``types-...``) on the path."""
    spec = importlib.util.find_spec(top)
    if spec is None:
        return False
    if spec.submodule_search_locations and any((Path(p) / "py.typed").exists() for p in spec.submodule_search_locations):
        return True
    return any((Path(p) / f"{top}-stubs").is_dir() for p in sys.path if p and Path(p).is_dir())


@pytest.mark.parametrize("module", sorted({m.split(".")[0] for m in _overrides("ignore_missing_imports")}))
def test_missing_imports_are_ignored_only_for_untyped_libraries(module):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed here")
    assert not _ships_types(module), (
        f"{module} now ships types (py.typed or a stub package): take it off the ignore_missing_imports "
        "list in pyproject.toml")


def test_mypy_is_pinned():
    """mypy's verdicts change between releases: the one CI runs is pinned, as ruff is."""
    pins = (REPO / "tests" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("mypy==") for line in pins)


@pytest.mark.parametrize("option", ["disallow_incomplete_defs", "disallow_untyped_defs"])
def test_unannotated_signatures_are_refused_everywhere(option):
    """Every function in resolver/ has a full signature (docs/decisions.md, "Typing depth"), so the
    options hold for the whole tree, and no override switches them off for a package."""
    assert MYPY.get(option) is True, f"{option} is off in pyproject.toml [tool.mypy]"
    relaxed = [module for section in MYPY.get("overrides", []) if section.get(option) is False
               for module in ([section["module"]] if isinstance(section["module"], str) else section["module"])]
    assert relaxed == [], f"{option} is switched off for {relaxed}"


def test_pandas_is_checked_against_its_stubs():
    """pandas-stubs is pinned, so pandas is not among the libraries whose missing types are ignored."""
    pins = (REPO / "tests" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("pandas-stubs==") for line in pins)
    assert not {"pandas", "pandas.*"} & set(_overrides("ignore_missing_imports"))
