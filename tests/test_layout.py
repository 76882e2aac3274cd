"""The shape of resolver/ (docs/architecture.md): packages by concern, public names in __all__,
no oversized module, no import circle between packages, cheap package imports."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parent.parent
RESOLVER = REPO / "resolver"
# The documented `python -m resolver.X` commands (README, docs/simulator.md) keep a flat shim.
ENTRY_SHIMS = {"demo", "simulator", "r12sim"}
SCRIPTS = ["runner", "evaluate", "analyze", "probe", "leaderboard", "explorer", "spiderweb", "cohort", "data"]
MAX_LINES = 500
HEAVY = ["pandas", "duckdb", "aiohttp", "matplotlib", "numpy", "scipy", "dash", "plotly", "pyarrow", "transformers"]


def packages() -> list[Path]:
    return sorted(p.parent for p in RESOLVER.rglob("__init__.py") if p.parent != RESOLVER)


def top_packages() -> list[str]:
    return sorted(p.name for p in RESOLVER.iterdir() if (p / "__init__.py").exists())


def dotted(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def declared_all(init: Path) -> list[str] | None:
    stub = init.with_suffix(".pyi")
    if stub.exists():  # lazy_loader.attach_stub: the stub's imports are the public names
        return [a.name for node in ast.parse(stub.read_text(encoding="utf-8")).body
                if isinstance(node, ast.ImportFrom) for a in node.names]
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(getattr(t, "id", None) == "__all__" for t in targets):
                return list(ast.literal_eval(node.value))
    return None


def test_no_flat_module_but_the_documented_entry_shims():
    flat = {p.stem for p in RESOLVER.glob("*.py")} - {"__init__"}
    assert flat == ENTRY_SHIMS
    docs = (REPO / "README.md").read_text() + "".join(p.read_text() for p in (REPO / "docs").glob("*.md"))
    for shim in ENTRY_SHIMS:
        assert f"-m resolver.{shim}" in docs, f"resolver/{shim}.py is a shim for an undocumented command"


@pytest.mark.parametrize("package", packages(), ids=lambda p: dotted(p))
def test_every_package_declares_its_public_names(package):
    init = package / "__init__.py"
    names = declared_all(init)
    assert names, f"{dotted(package)} has no __all__"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc, f"{dotted(package)} has no docstring saying what it is for"


def test_all_public_names_resolve():
    code = ("import importlib, json, sys\nbad = []\n"
            "for name in sys.argv[1:]:\n    pkg = importlib.import_module(name)\n"
            "    bad += [f'{name}.{n}' for n in pkg.__all__ if not hasattr(pkg, n)]\nprint(json.dumps(bad))")
    proc = subprocess.run([sys.executable, "-c", code, *[dotted(p) for p in packages()]], cwd=REPO,
                          capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == []


def test_no_module_over_the_size_limit():
    sizes = {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines()) for p in RESOLVER.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def import_time_imports(path: Path):
    """Modules imported when `path` is imported: its top-level imports, also inside if / try blocks
    (imports inside functions are deferred on purpose and run later)."""
    def walk(statements):
        for node in statements:
            if isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                yield node.module
                if node.module == "resolver" or node.module.startswith("resolver."):
                    yield from (f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If) and not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from walk(node.body + node.orelse)
            elif isinstance(node, ast.Try):
                yield from walk(node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body])
    return walk(ast.parse(path.read_text(encoding="utf-8")).body)


def package_graph() -> nx.DiGraph:
    tops = set(top_packages())
    graph = nx.DiGraph()
    graph.add_nodes_from(tops)
    for path in RESOLVER.rglob("*.py"):
        parts = path.relative_to(RESOLVER).parts
        if len(parts) < 2:
            continue
        for module in import_time_imports(path):
            target = module.split(".")
            if target[0] == "resolver" and len(target) > 1 and target[1] in tops and target[1] != parts[0]:
                graph.add_edge(parts[0], target[1])
    return graph


def test_no_import_circle_between_packages():
    cycles = list(nx.simple_cycles(package_graph()))
    assert cycles == []


def test_the_cycle_check_sees_a_planted_circle(tmp_path, monkeypatch):
    """The check itself can fail: plant grading -> run and run -> grading."""
    graph = package_graph()
    graph.add_edge("grading", "run")
    assert ["grading", "run"] in [sorted(c) for c in nx.simple_cycles(graph)]


def outside_imports():
    """(file, package, imported names or submodule) for imports of a package from outside it."""
    tops = set(top_packages())
    files = [REPO / f"{s}.py" for s in SCRIPTS] + list(RESOLVER.rglob("*.py"))
    for path in files:
        rel = path.relative_to(REPO).parts
        own = rel[1] if rel[0] == "resolver" and len(rel) > 2 else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("resolver."):
                parts = node.module.split(".")
                if parts[1] in tops and parts[1] != own:
                    yield path, parts, [a.name for a in node.names]


def test_code_outside_a_package_imports_only_its_public_names():
    public = {name: set(declared_all(RESOLVER / name / "__init__.py") or ()) for name in top_packages()}
    bad = []
    for path, parts, names in outside_imports():
        package = parts[1]
        if len(parts) == 2:
            bad += [f"{path.name}: {n} from {package}" for n in names if n not in public[package]]
        elif parts[2] not in public[package]:
            bad.append(f"{path.name}: {'.'.join(parts)} (a private module of {package})")
    assert bad == []


@pytest.mark.parametrize("package", top_packages())
def test_importing_a_package_is_cheap(package):
    code = (f"import sys, json\nimport resolver.{package}\n"
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == [], f"import resolver.{package} loads heavy libraries"


def test_bootstrap_stays_standard_library_only():
    """It runs under a bare python3, before any requirement is installed."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    # core/__init__.py imports these core modules plainly (not core/typed.py, which loads on
    # first use): each is checked here too; the quick start's resolver.sim.demo loads sim/__init__.py
    loaded = ("atomic", "bootstrap", "cli", "errors", "inputs", "lifeline", "text_tables")
    for path in [RESOLVER / "core" / f"{m}.py" for m in loaded] + [RESOLVER / "core" / "__init__.py",
                                                                   RESOLVER / "sim" / "__init__.py", RESOLVER / "__init__.py"]:
        for module in import_time_imports(path):
            top = module.split(".")[0]
            assert top in stdlib or module in ("resolver", "resolver.core") \
                or any((module + ".").startswith(f"resolver.core.{m}.") for m in loaded), \
                f"{path.name} imports {module}"
