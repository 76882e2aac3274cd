"""The shape of resolver/ (docs/architecture.md): packages by concern, public names in __all__,
no oversized module, no import circle between packages, cheap package imports."""
from __future__ import annotations

import ast
import functools
import importlib
import json
import re
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


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def parsed(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once per text: most checks here walk every module of resolver/."""
    return _parse(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _walk(text: str) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_parse(text)))


def walked(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a file's tree in ast.walk's order, listed once per text: the checks below
    walk each module of resolver/ several times."""
    return _walk(path.read_text(encoding="utf-8"))


def packages() -> list[Path]:
    return sorted(p.parent for p in RESOLVER.rglob("__init__.py") if p.parent != RESOLVER)


def top_packages() -> list[str]:
    return sorted(p.name for p in RESOLVER.iterdir() if (p / "__init__.py").exists())


def dotted(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def declared_all(init: Path) -> list[str] | None:
    stub = init.with_suffix(".pyi")
    if stub.exists():  # lazy_loader.attach_stub: the stub's imports are the public names
        return [a.name for node in parsed(stub).body
                if isinstance(node, ast.ImportFrom) for a in node.names]
    for node in parsed(init).body:
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
    doc = ast.get_docstring(parsed(init))
    assert doc, f"{dotted(package)} has no docstring saying what it is for"


def test_all_public_names_resolve():
    """Every name of every package's __all__ is there (a lazily exported one loads its module).
    In this process: what the names load (pandas, Dash, scipy ...) the test process loads anyway,
    where a fresh interpreter paid seconds of imports for this one check; the cheap-import checks
    below are the ones that need a fresh interpreter."""
    bad = []
    for name in [dotted(p) for p in packages()]:
        package = importlib.import_module(name)
        bad += [f"{name}.{n}" for n in package.__all__ if not hasattr(package, n)]
    assert bad == []


def test_no_module_over_the_size_limit():
    sizes = {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines()) for p in RESOLVER.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def import_time_imports(path: Path):
    """Modules imported when `path` is loaded: its top-level imports, also inside if / try blocks.
    Only the bootstrap check below wants this (what a bare python3 runs while loading); the
    package graph counts every import, wherever it is written (resolver_imports)."""
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
    return walk(parsed(path).body)


# ---------------------------------------------------------------- every import, counted
# An import inside a function is still a dependency: it runs the first time the function does.
# So the package graph counts every resolver import wherever it is written, dynamic imports with
# a literal name, and the lazy-export tables of package __init__ files (docs/architecture.md, "Layers").

DYNAMIC_IMPORTERS = {"import_module", "__import__"}
# Dynamic imports whose module name is computed, so no count can see them, each with its reason.
UNCOUNTED_DYNAMIC_IMPORTS: dict[str, str] = {}


def module_files(root: Path = REPO) -> dict[str, Path]:
    """Dotted module name -> file, for every module under root/resolver."""
    return {".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
            for p in sorted((root / "resolver").rglob("*.py"))}


def _known(name: str, known) -> str | None:
    """The longest prefix of a dotted name that is a module we have (an imported name's module)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


def _literal_prefix(node, module: str, package: str) -> str | None:
    """The module name a dynamic import asks for, as far as it is written literally:
    "resolver.x.y", or f"{__name__}.{...}" (the importer's own name, then anything)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        text = ""
        for value in node.values:
            if isinstance(value, ast.Constant):
                text += str(value.value)
            elif not text and isinstance(value.value, ast.Name) and value.value.id in ("__name__", "__package__"):
                text = module if value.value.id == "__name__" else package
            else:
                break
        return text or None
    return None


def _lazy_exports(nodes, package: str, known):
    """A package __init__'s exports of submodules: every string in it (tables, __all__) that names
    one of the package's modules, or a resolver module by its full name. Docstrings are prose."""
    prose = {id(n.body[0].value) for n in nodes
             if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
             and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            text = node.value.split(":")[0]
            for name in (text, f"{package}.{text}"):
                found = _known(name, known) if name.startswith("resolver.") else None
                if found and found != package:
                    yield found, node.lineno
                    break


def resolver_imports(path: Path, module: str, known, submodules: bool = False) -> list[tuple[str, int]]:
    """(resolver module imported, line) for every import in `path`, wherever it is written:
    top level, if / try blocks, `if TYPE_CHECKING:`, functions, methods and classes; relative
    imports; `importlib.import_module` / `__import__` with a literal name; and, in a package
    __init__, its lazy-export tables. `module` is the file's dotted name, `known` every module.
    `submodules`: `from pkg import mod` counts as an import of pkg.mod alone, not of pkg's
    __init__ (which Python runs first for any pkg.x; the module graph below wants what the code
    itself reads)."""
    nodes = walked(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in nodes:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            subs = [f"{base}.{alias.name}" for alias in node.names]
            names = [n if n in known else base for n in subs] if submodules else [base] + subs
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in DYNAMIC_IMPORTERS:
                text = _literal_prefix(node.args[0], module, package)
                if text and text.startswith("."):
                    text = package + text
                names = [text] if text else []
        for name in names:
            target = _known(name, known) if name.startswith("resolver") else None
            if target:
                found.append((target, node.lineno))
    if path.name == "__init__.py":
        found += _lazy_exports(nodes, package, known)
    return sorted(set(found), key=lambda item: (item[1], item[0]))


def dynamic_imports_not_counted(path: Path, module: str) -> list[int]:
    """Lines of dynamic imports whose module name is computed (not even a literal prefix)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    lines = []
    for node in walked(path):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in DYNAMIC_IMPORTERS and not _literal_prefix(node.args[0], module, package):
                lines.append(node.lineno)
    return lines


def import_edges(root: Path = REPO) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """(importing package, imported package) -> [(file, line), ...] between resolver's top packages.
    The repository's own are read once per test process (five tests read them; nothing changes
    resolver/ meanwhile); a hand-made tree elsewhere is read each time."""
    return _repo_import_edges() if root == REPO else _import_edges(root)


@functools.lru_cache(maxsize=None)
def _repo_import_edges() -> dict[tuple[str, str], list[tuple[str, int]]]:
    return _import_edges(REPO)


def _import_edges(root: Path) -> dict[tuple[str, str], list[tuple[str, int]]]:
    files = module_files(root)
    tops = {name.split(".")[1] for name, path in files.items() if path.name == "__init__.py" and name.count(".") == 1}
    edges: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for module, path in files.items():
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in tops:      # the root package and the flat entry shims
            continue
        # a package's type stub (lazy_loader's attach_stub reads its exports from it) counts as its __init__
        for source in (path, path.with_suffix(".pyi")) if path.name == "__init__.py" else (path,):
            for target, line in resolver_imports(source, module, files) if source.exists() else ():
                other = target.split(".")
                if len(other) > 1 and other[1] in tops and other[1] != parts[1]:
                    edges.setdefault((parts[1], other[1]), []).append((source.relative_to(root).as_posix(), line))
    return {edge: sorted(set(where)) for edge, where in edges.items()}


# ---------------------------------------------------------------- the exceptions, each with its reason
# Allowed for good: an import against the layer order that is right as it is. Aim for none.
ALLOWED_IMPORTS: dict[tuple[str, str], str] = {}



def _excepted(file: str, target: str) -> bool:
    return (file, target) in ALLOWED_IMPORTS


def package_graph(root: Path = REPO, exceptions: bool = False) -> nx.DiGraph:
    """Packages and what they import (every import, edge attribute `where`: [(file, line)]);
    the named exceptions are left out unless `exceptions`."""
    graph = nx.DiGraph()
    graph.add_nodes_from(top_packages())
    for (source, target), where in import_edges(root).items():
        kept = where if exceptions else [(f, n) for f, n in where if not _excepted(f, target)]
        if kept:
            graph.add_edge(source, target, where=kept)
    return graph


def _edge_text(graph: nx.DiGraph, source: str, target: str) -> str:
    return f"{source} -> {target} at " + ", ".join(f"{f}:{n}" for f, n in graph.edges[source, target]["where"])


def circles(graph: nx.DiGraph) -> list[str]:
    """Each circle between packages, as its import edges with file:line."""
    found = []
    for cycle in nx.simple_cycles(graph):
        found.append("; ".join(_edge_text(graph, a, b) for a, b in zip(cycle, cycle[1:] + cycle[:1])))
    return sorted(found)


def test_no_import_circle_between_packages():
    found = circles(package_graph())
    assert found == [], "import circles between packages:\n" + "\n".join(found)


def test_the_cycle_check_sees_a_planted_circle():
    """The check itself can fail: plant grading -> run (run imports grading)."""
    graph = package_graph()
    graph.add_edge("grading", "run", where=[("resolver/grading/planted.py", 1)])
    found = circles(graph)
    assert any("grading -> run at resolver/grading/planted.py:1" in c and "run -> grading at resolver/run/" in c
               for c in found), found


def test_the_count_sees_imports_wherever_they_are_written(tmp_path):
    """A hand-made tree with one import of each kind; the expected list is written by hand."""
    low, high = tmp_path / "resolver" / "low", tmp_path / "resolver" / "high"
    for folder in (low, high):
        folder.mkdir(parents=True)
    (tmp_path / "resolver" / "__init__.py").write_text('"""root."""\n')
    for name in ("things", "more", "other", "deep", "unused"):
        (low / f"{name}.py").write_text("X = 1\n")
    (low / "__init__.py").write_text(
        '"""Not an export: other."""\n'                           # 1 a docstring is prose
        '_HOMES = {"X": "things"}\n'                                # 2 a name's home
        '_MODULES = {"more"}\n'                                     # 3 an exported submodule
        'HINT = "resolver.low.deep:X"\n')                           # 4 a full name (module:attr)
    (high / "__init__.py").write_text("")
    (high / "b.py").write_text("")
    (high / "a.py").write_text(
        "import importlib\n"                                        # 1
        "from typing import TYPE_CHECKING\n"                        # 2
        "if TYPE_CHECKING:\n"                                       # 3
        "    from resolver.low.things import X\n"                   # 4
        "def f():\n"                                                # 5
        "    from resolver.low import X\n"                          # 6
        "class C:\n"                                                # 7
        "    def m(self):\n"                                        # 8
        "        import resolver.low.other\n"                       # 9
        "        return importlib.import_module('resolver.low.more')\n"   # 10
        "from . import b\n"                                         # 11
        "name = 'resolver.low.unused'\n"                            # 12 a string, not an import
        "g = __import__(f'resolver.low.{name}')\n")                 # 13 a literal prefix
    known = module_files(tmp_path)
    assert resolver_imports(high / "a.py", "resolver.high.a", known) == [
        ("resolver.low.things", 4), ("resolver.low", 6), ("resolver.low.other", 9), ("resolver.low.more", 10),
        ("resolver.high", 11), ("resolver.high.b", 11), ("resolver.low", 13)]
    assert resolver_imports(low / "__init__.py", "resolver.low", known) == [
        ("resolver.low.things", 2), ("resolver.low.more", 3), ("resolver.low.deep", 4)]
    edges = import_edges(tmp_path)
    assert sorted(edges) == [("high", "low")]
    assert edges["high", "low"] == [("resolver/high/a.py", n) for n in (4, 6, 9, 10, 13)]
    (high / "__init__.pyi").write_text("from resolver.low import more\n")      # a lazy package's stub
    assert ("resolver/high/__init__.pyi", 1) in import_edges(tmp_path)["high", "low"]


def test_every_dynamic_import_is_counted():
    """An import_module call with a computed name would hide an edge; each one left is named above."""
    hidden = {f"{path.relative_to(REPO).as_posix()}:{line}" for module, path in module_files().items()
              for line in dynamic_imports_not_counted(path, module)}
    assert {h.split(":")[0] for h in hidden} == set(UNCOUNTED_DYNAMIC_IMPORTS), sorted(hidden)


# ---------------------------------------------------------------- no circle between modules either
# Inside a package too, two modules may not import each other, however the imports are written
# (in functions, under `if TYPE_CHECKING:`, lazily): a circle means neither can be read, tested
# or changed alone (docs/architecture.md, "Layers").

# Circles known today, each (sorted modules) with where it goes. Aim for none.
# resolver.client.chat <-> retries: chat imports retries' schedule, retries names chat's
# ClientStats under TYPE_CHECKING; the vLLM-client work (issue 45) removes it, and this entry with it.
EXPECTED_MODULE_CIRCLES: dict[tuple[str, ...], str] = {}   # none left: a new circle fails the test


def module_graph(root: Path = REPO) -> nx.DiGraph:
    """Every resolver module and the resolver modules it imports (edge attribute `where`:
    [(file, line)]); a package's type stub counts as its __init__."""
    files = module_files(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        for source in (path, path.with_suffix(".pyi")) if path.name == "__init__.py" else (path,):
            for target, line in resolver_imports(source, module, files, submodules=True) if source.exists() else ():
                if target != module:
                    graph.add_edge(module, target)
                    graph.edges[module, target].setdefault("where", []).append((source.relative_to(root).as_posix(), line))
    return graph


def module_circles(graph: nx.DiGraph) -> dict[tuple[str, ...], str]:
    """Each group of modules that import each other round (a strongly connected component),
    with one circle through it as import edges with file:line."""
    found = {}
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            cycle = nx.find_cycle(graph.subgraph(group), source=min(group))
            found[tuple(sorted(group))] = "; ".join(_edge_text(graph, a, b) for a, b in cycle)
    return found


def test_no_import_circle_between_modules():
    found = module_circles(module_graph())
    unexpected = {group: text for group, text in found.items() if group not in EXPECTED_MODULE_CIRCLES}
    assert unexpected == {}, "import circles between modules:\n" + "\n".join(unexpected.values())
    gone = set(EXPECTED_MODULE_CIRCLES) - set(found)
    assert gone == set(), f"circles no longer there: remove them from EXPECTED_MODULE_CIRCLES: {sorted(gone)}"


def test_the_module_circle_check_sees_a_planted_circle(tmp_path):
    """A hand-made package: a imports b at the top, b imports a only for a type hint, c imports
    its sibling through `from . import`, and the package __init__ exports them lazily (no circle)."""
    pkg = tmp_path / "resolver" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "resolver" / "__init__.py").write_text('"""root."""\n')
    (pkg / "__init__.py").write_text('_LAZY = {"A": "a", "C": "c"}\n')
    (pkg / "a.py").write_text("from resolver.pkg.b import B\nA = B\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from resolver.pkg.a import A\nB = 1\n")
    (pkg / "c.py").write_text("from resolver.pkg import a\nfrom . import b\n")
    found = module_circles(module_graph(tmp_path))
    assert found == {("resolver.pkg.a", "resolver.pkg.b"): "resolver.pkg.a -> resolver.pkg.b at resolver/pkg/a.py:1; "
                                                           "resolver.pkg.b -> resolver.pkg.a at resolver/pkg/b.py:3"}
    (pkg / "b.py").write_text("B = 1\n")             # the type hint gone: no circle
    assert module_circles(module_graph(tmp_path)) == {}


# ---------------------------------------------------------------- the layers of docs/architecture.md

def documented_layers(text: str | None = None) -> list[list[str]]:
    """The numbered list under "### Layers" in docs/architecture.md, bottom layer first:
    "1. `core`, `llamacpp` -- what they are" -> [["core", "llamacpp"], ...]."""
    text = text if text is not None else (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n### Layers\n", 1)[1].split("\n#", 1)[0]
    layers = []
    for line in section.splitlines():
        match = re.match(r"(\d+)\. (.*)", line)
        if match:
            assert int(match.group(1)) == len(layers) + 1, f"layer numbers out of order: {line}"
            layers.append(re.findall(r"`(\w+)`", match.group(2).split(" — ")[0]))
    return layers


def upward_imports(graph: nx.DiGraph, layers: list[list[str]]) -> list[str]:
    level = {package: n for n, names in enumerate(layers) for package in names}
    return sorted(_edge_text(graph, a, b) for a, b in graph.edges if level[b] >= level[a])


def test_the_layers_name_every_package_once():
    listed = [p for layer in documented_layers() for p in layer]
    assert len(listed) == len(set(listed)), f"a package is on two layers: {listed}"
    assert sorted(set(top_packages()) - set(listed)) == [], "docs/architecture.md's Layers misses a package"
    assert sorted(set(listed) - set(top_packages())) == [], "docs/architecture.md's Layers names a package that is gone"
    assert documented_layers()[0][0] == "core" and documented_layers()[-1] == ["cli"]


def test_no_package_imports_one_above_it():
    """Imports point down the documented layers: never up, never sideways within a layer."""
    found = upward_imports(package_graph(), documented_layers())
    assert found == [], "imports against docs/architecture.md's Layers:\n" + "\n".join(found)


def test_the_layer_check_sees_a_planted_upward_import():
    graph = package_graph()
    graph.add_edge("core", "cli", where=[("resolver/core/planted.py", 3)])
    graph.add_edge("tasks", "client", where=[("resolver/tasks/planted.py", 5)])
    assert upward_imports(graph, documented_layers()) == [
        "core -> cli at resolver/core/planted.py:3", "tasks -> client at resolver/tasks/planted.py:5"]
    assert documented_layers("x\n### Layers\n\n1. `a` — bottom\n2. `b`, `c` — top, `d` prose\n## Next") == \
        [["a"], ["b", "c"]]


def test_every_exception_is_still_needed():
    """An exception whose import is gone must go too, so the list only ever shrinks."""
    where = {(file, target) for (source, target), places in import_edges().items() for file, _ in places}
    assert [e for e in sorted(ALLOWED_IMPORTS) if e not in where] == []


def outside_imports():
    """(file, package, imported names or submodule) for imports of a package from outside it."""
    tops = set(top_packages())
    files = [REPO / f"{s}.py" for s in SCRIPTS] + list(RESOLVER.rglob("*.py"))
    for path in files:
        rel = path.relative_to(REPO).parts
        own = rel[1] if rel[0] == "resolver" and len(rel) > 2 else None
        for node in walked(path):
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
    # first use): each is checked here too. The quick start runs resolver/cli/demo.py (through
    # resolver/cli/__init__.py and base.py, and cli/llamacpp.py for a help text), `python -m resolver.r12sim` runs resolver/cli/r12sim.py
    # and sim/r12study.py, both before the bootstrap; the demo names llamacpp's ServerDied.
    loaded = ("atomic", "bootstrap", "errors", "inputs", "lifeline", "progress", "text_tables")
    also = ["core/__init__.py", "sim/__init__.py", "sim/r12study.py", "__init__.py", "cli/__init__.py", "cli/base.py",
            "cli/demo.py", "cli/llamacpp.py", "cli/r12sim.py", "llamacpp/__init__.py", "llamacpp/build.py", "llamacpp/server.py"]
    allowed = {"resolver.core", "resolver.cli", "resolver.cli.base", "resolver.cli.demo", "resolver.cli.llamacpp",
               "resolver.sim",
               "resolver.sim.r12study", "resolver.llamacpp", "resolver.llamacpp.build", "resolver.llamacpp.server",
               *(f"resolver.core.{m}" for m in loaded)}
    for path in [RESOLVER / "core" / f"{m}.py" for m in loaded] + [RESOLVER / name for name in also]:
        for module in import_time_imports(path):
            # `from resolver.core import UserError` reads as resolver.core.UserError: a name of an allowed module
            ok = module.split(".")[0] in stdlib or module == "resolver" or module in allowed \
                or module.rsplit(".", 1)[0] in allowed
            assert ok, f"{path.relative_to(RESOLVER)} imports {module}"


# ---------------------------------------------------------------- command-line code lives in resolver/cli/
COMMAND_PACKAGE = "resolver/cli/"
_STREAM_WRITE = re.compile(r"sys\.(stdout|stderr)(\.buffer)?\.write(lines)?$")
_PARSING = {"add_argument", "parse_args", "parse_known_args", "add_subparsers"}


def command_code(path: Path) -> list[tuple[str, int]]:
    """(what, line) for each piece of command-line code in a module, read from its syntax tree
    (strings and comments do not count): "argparse" (imported, or a parser built or run),
    "print", "input", "sys.exit" (also `raise SystemExit`), "sys.stdout.write" / "sys.stderr.write",
    "tqdm" (imported: a progress bar is the command's, handed to the library as a factory)."""
    nodes = walked(path)
    sys_names, from_sys = set(), {}
    for node in nodes:
        if isinstance(node, ast.Import):
            sys_names |= {a.asname or a.name for a in node.names if a.name == "sys"}
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            from_sys |= {a.asname or a.name: f"sys.{a.name}" for a in node.names}
    found = []
    for node in nodes:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "argparse" for a in node.names) \
                or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            found.append(("argparse", node.lineno))
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tqdm" for a in node.names) \
                or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tqdm":
            found.append(("tqdm", node.lineno))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "SystemExit":
                found.append(("sys.exit", node.lineno))
        elif isinstance(node, ast.Call):
            func = node.func
            chain = ast.unparse(func)
            head, _, rest = chain.partition(".")
            if head in sys_names:
                chain = "sys" + ("." + rest if rest else "")
            elif head in from_sys:
                chain = from_sys[head] + ("." + rest if rest else "")
            if isinstance(func, ast.Name) and func.id in ("print", "input"):
                found.append((func.id, node.lineno))
            elif chain == "sys.exit":
                found.append(("sys.exit", node.lineno))
            elif _STREAM_WRITE.match(chain):
                found.append((f"sys.{_STREAM_WRITE.match(chain).group(1)}.write", node.lineno))
            elif isinstance(func, ast.Attribute) and func.attr in _PARSING:
                found.append(("argparse", node.lineno))
    return sorted(set(found), key=lambda item: (item[1], item[0]))


def library_command_code() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(RESOLVER.rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        if not name.startswith(COMMAND_PACKAGE):
            for what, line in command_code(path):
                found.setdefault((name, what), []).append(line)
    return found


def test_commands_live_in_the_command_package():
    """No argparse, print, input, sys.exit, writes to sys.stdout / sys.stderr or tqdm in resolver/
    outside resolver/cli/: the library returns data or writes to a reporter (or a progress-bar
    factory) it is given."""
    found = library_command_code()
    bad = [f"{file}:{','.join(map(str, lines))}: {what}" for (file, what), lines in sorted(found.items())]
    assert bad == [], "command-line code outside resolver/cli/:\n" + "\n".join(bad)


def test_the_command_code_check_sees_each_kind_and_ignores_text(tmp_path):
    path = tmp_path / "planted.py"
    path.write_text(
        "import argparse\n"                                        # 1
        "import sys as system\n"                                   # 2
        "from sys import stderr\n"                                 # 3
        "'''print(1); sys.exit(2)'''\n"                            # 4 a string
        "def f(parser, out):\n"                                    # 5
        "    # print('in a comment'); input()\n"                   # 6 a comment
        "    print('x', file=out)\n"                               # 7
        "    parser.add_argument('--n')\n"                         # 8
        "    system.stdout.write('y')\n"                           # 9
        "    stderr.write('z')\n"                                  # 10
        "    system.exit(2)\n"                                     # 11
        "    raise SystemExit(3)\n"                                # 12
        "    from tqdm.auto import tqdm as bar\n"                   # 13
        "    import tqdm\n"                                         # 14
        "    return input('? '), out.write('ok'), 'sys.stderr.write', 'from tqdm import tqdm', bar\n")   # 15
    assert command_code(path) == [("argparse", 1), ("print", 7), ("argparse", 8), ("sys.stdout.write", 9),
                                  ("sys.stderr.write", 10), ("sys.exit", 11), ("sys.exit", 12), ("tqdm", 13),
                                  ("tqdm", 14), ("input", 15)]

