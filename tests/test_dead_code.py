"""No dead code, and imports at the top (docs/decisions.md, "Dead code" and "Imports at the top").

vulture runs with pyproject.toml's [tool.vulture] settings over the library, the scripts and the
tests. It runs once without tests/vulture_whitelist.py: what it reports must be exactly the
whitelist's names, so a new unused name fails and so does a whitelist entry nothing needs any more.
ruff's PLC0415 (tests/test_packaging.py runs ruff) names the files that may import inside
functions; each must still do so.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
WHITELIST = REPO / "tests" / "vulture_whitelist.py"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
REPORT = re.compile(r"^(?P<where>\S+:\d+): unused \w+ '(?P<name>[^']+)' \(\d+% confidence")

needs_vulture = pytest.mark.skipif(importlib.util.find_spec("vulture") is None,
                                   reason="vulture is not installed (tests/requirements.txt pins it; bash tests/run.sh installs it)")


def vulture(*args: str, cwd: Path = REPO) -> list[tuple[str, str]]:
    """(file:line, name) of each unused name vulture reports."""
    proc = subprocess.run([sys.executable, "-m", "vulture", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 3), f"vulture exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    found = [REPORT.match(line) for line in proc.stdout.splitlines()]
    assert all(found), proc.stdout
    return [(m["where"], m["name"]) for m in found if m]


def whitelisted() -> set[str]:
    """The attribute names tests/vulture_whitelist.py reads (`_.name`)."""
    tree = ast.parse(WHITELIST.read_text(encoding="utf-8"))
    return {node.value.attr for node in tree.body if isinstance(node, ast.Expr) and isinstance(node.value, ast.Attribute)}


# The output models (docs/schemas/*-output.json): pydantic fills their fields from the computed
# values and writes them out by name, so a field nothing in our code reads is still the contract.
OUTPUT_MODEL_MODULES = ("resolver/analysis/outputs.py", "resolver/analysis/output_tables.py",
                        "resolver/probe/outputs.py", "resolver/audit/outputs.py")


def output_model_fields() -> set[str]:
    """file:line of each field declared in a class body of the output-model modules."""
    where = set()
    for module in OUTPUT_MODEL_MODULES:
        for node in ast.walk(ast.parse((REPO / module).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where |= {f"{module}:{field.lineno}" for field in node.body if isinstance(field, ast.AnnAssign)}
    return where


@needs_vulture
def test_no_dead_code_and_no_stale_whitelist_entry():
    excluded = ",".join([*PYPROJECT["tool"]["vulture"]["exclude"], str(WHITELIST.relative_to(REPO))])
    fields = output_model_fields()
    reported = [(where, name) for where, name in vulture("--exclude", excluded) if where not in fields]
    names = {name for _, name in reported}
    dead = [f"{where}: {name}" for where, name in reported if name not in whitelisted()]
    assert dead == [], "unused code (remove it, or whitelist it with its reason in tests/vulture_whitelist.py):\n" \
        + "\n".join(dead)
    assert whitelisted() - names == set(), "whitelist entries nothing needs any more"


@needs_vulture
def test_the_dead_code_check_sees_a_planted_function(tmp_path):
    (tmp_path / "module.py").write_text("def used():\n    return 1\n\n\ndef never_called():\n    return 2\n\n\nused()\n",
                                        encoding="utf-8")
    assert [name for _, name in vulture("module.py", cwd=tmp_path)] == ["never_called"]


def function_level_imports(path: Path) -> list[int]:
    """Line numbers of the import statements inside functions of one file."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines += [n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return lines


def test_every_import_exception_is_still_needed():
    """A file named in pyproject.toml as importing inside functions (PLC0415) still does."""
    ignores = PYPROJECT["tool"]["ruff"]["lint"]["per-file-ignores"]
    patterns = [pattern for pattern, rules in ignores.items() if "PLC0415" in rules and pattern.startswith("resolver/")]
    assert patterns, "no PLC0415 exception read: pyproject.toml's layout changed?"
    # ruff's "dir/**" is every file below dir; pathlib's is every directory
    stale = [pattern for pattern in patterns
             if not any(function_level_imports(path) for path in REPO.glob(pattern + "/*.py" if pattern.endswith("**") else pattern)
                        if path.suffix == ".py")]
    assert stale == [], f"these files no longer import inside a function: drop them from pyproject.toml: {stale}"


def test_the_import_rule_is_on():
    assert "PLC0415" in PYPROJECT["tool"]["ruff"]["lint"]["select"]
