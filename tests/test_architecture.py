"""The shape of the code base (docs/architecture.md), checked on the source: the dependency rules of
the packages (the import-linter contracts in pyproject.toml check them too), no import cycle between
modules nor between package folders, no long module, every module on the map.

`spec` may import only the standard library, `fastavro`, `pyarrow` and itself: it is the
normative statement of the format and must run wherever Python runs, without Spark.

Imports are read from the source with ``ast``, nothing is imported. Every ``import`` statement of a
module counts wherever it stands — at module level, inside a function or method, under
``if TYPE_CHECKING:`` — because each one ties the two modules' designs together even when Python
would survive the loop at run time. ``from package import name`` counts as an import of the
submodule ``package.name`` when there is such a module, else of ``package`` itself; relative imports
are resolved against the importing module's package.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_ALLOWED = {"spec", "fastavro", "pyarrow"}
PACKAGES = ("spec", "reference", "conformance", "bench")
"""The first-party packages: the rules, the engines, the conformance kit and the benchmarks."""
MAX_LINES = 500
"""The longest a module may be: one concept per module, small enough to read in one sitting."""


# --- the dependency rules ------------------------------------------------------------------------

def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", sorted(p.relative_to(ROOT / "spec").as_posix()
                                           for p in (ROOT / "spec").rglob("*.py")))
def test_spec_imports_only_stdlib_fastavro_pyarrow(module: str) -> None:
    imported = _top_level_imports(ROOT / "spec" / module)
    foreign = {m for m in imported if m not in SPEC_ALLOWED and m not in sys.stdlib_module_names}
    assert not foreign, f"spec/{module} imports {sorted(foreign)}; spec may use only stdlib, fastavro, pyarrow"


def test_reference_never_imports_conformance() -> None:
    for path in (ROOT / "reference").rglob("*.py"):
        assert "conformance" not in _top_level_imports(path), f"{path.relative_to(ROOT)} imports conformance"


def test_only_conformance_adapters_import_implementations() -> None:
    for path in (ROOT / "conformance").rglob("*.py"):
        if "adapters" in path.relative_to(ROOT / "conformance").parts:
            continue
        bad = _top_level_imports(path) & {"reference", "pyspark", "hudi"}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}; only conformance/adapters may"


# --- no import cycle ------------------------------------------------------------------------------


def module_files(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Every first-party module by dotted name (a package by its ``__init__.py``)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_modules(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The first-party modules ``name`` imports anywhere in its source."""
    found: set[str] = set()

    def add(target: str) -> None:
        # the longest known prefix: ``import spec.model.state`` is the module spec.model.state
        parts = target.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in known:
                found.add(candidate)
                return

    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(name, path.name == "__init__.py", node)
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                add(submodule if submodule in known else module)
    found.discard(name)
    return found


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """First-party module → the first-party modules it imports."""
    known = module_files(root, packages)
    return {name: imported_modules(name, path, known) for name, path in known.items()}


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative),
    each sorted, sorted by first module: every one is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def one_cycle(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """One closed import path through a component (``a → b → a``), to show in a failure."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    raise AssertionError(f"{component} is not strongly connected")  # pragma: no cover


def test_no_import_cycle_among_first_party_modules() -> None:
    graph = import_graph()
    cycles = import_cycles(graph)
    shown = [" → ".join(one_cycle(c, graph)) + f"  (component: {', '.join(c)})" for c in cycles]
    assert not cycles, "import cycles (move the shared rule into a module both import):\n" + "\n".join(shown)


def test_the_cycle_check_sees_cycles(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub.c import g\n    return g\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import x\n")
    (pkg / "d.py").write_text("import pkg.a\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.sub.c"} and graph["pkg.sub.c"] == {"pkg.a"}
    assert import_cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert one_cycle(["pkg.a", "pkg.b", "pkg.sub.c"], graph) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
    (pkg / "sub" / "c.py").write_text("")
    assert import_cycles(import_graph(tmp_path, ["pkg"])) == []


def folder_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Package folder → the package folders its modules import: a module's node is the folder it is in (a
    package's ``__init__.py`` is in the package's own folder), an edge any import between modules of two
    folders."""
    known = module_files(root, packages)
    folder = {name: path.parent.relative_to(root).as_posix().replace("/", ".") for name, path in known.items()}
    graph: dict[str, set[str]] = {f: set() for f in folder.values()}
    for name, imported in import_graph(root, packages).items():
        graph[folder[name]].update(folder[m] for m in imported if folder[m] != folder[name])
    return graph


def test_no_import_cycle_among_package_folders() -> None:
    """Folders in layers: no two package folders import each other, directly or around a loop, even where no
    two modules do (``ls`` then shows the layers: a folder depends only on folders below it)."""
    graph = folder_graph()
    cycles = import_cycles(graph)
    shown = [" → ".join(one_cycle(c, graph)) + f"  (component: {', '.join(c)})" for c in cycles]
    assert not cycles, "folder import cycles (move the module to the layer it belongs in):\n" + "\n".join(shown)


def test_the_folder_check_sees_cycles_no_module_cycle_shows(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "a.py").write_text("from pkg.sub import c\n")
    (pkg / "b.py").write_text("")
    (pkg / "sub" / "c.py").write_text("")
    (pkg / "sub" / "d.py").write_text("import pkg.b\n")
    assert import_cycles(import_graph(tmp_path, ["pkg"])) == []
    graph = folder_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": {"pkg.sub"}, "pkg.sub": {"pkg"}}
    assert import_cycles(graph) == [["pkg", "pkg.sub"]]
    (pkg / "sub" / "d.py").write_text("")
    assert import_cycles(folder_graph(tmp_path, ["pkg"])) == []


def test_no_two_first_party_classes_share_a_name() -> None:
    """One name, one concept: a class name means one thing across the packages (rename one of two same-named
    classes to what it is, e.g. the model's ``ModelFileGroup`` beside the file-system view's ``FileGroup``)."""
    where: dict[str, list[str]] = {}
    for name, path in module_files().items():
        for node in ast.parse(path.read_text(), filename=str(path)).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(name)
    shared = {cls: modules for cls, modules in where.items() if len(modules) > 1}
    assert not shared, f"classes of one name in several modules: {shared}"


def line_count(path: Path) -> int:
    """Lines of a source file."""
    return len(path.read_text().splitlines())


def test_no_first_party_module_is_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in module_files().values() if (n := line_count(p)) > MAX_LINES}
    assert not long, f"split by concept (at most {MAX_LINES} lines a module): {long}"


# --- the module map -------------------------------------------------------------------------------

MODULE_MAP_PAGE = ROOT / "docs" / "architecture.md"


def test_every_first_party_module_is_on_the_architecture_page() -> None:
    page = MODULE_MAP_PAGE.read_text()
    named = set(re.findall(r"`((?:spec|reference|conformance|bench)/[\w/]*\.py)`", page))
    missing = sorted(p.relative_to(ROOT).as_posix() for p in module_files().values()
                     if p.name != "__init__.py" and p.relative_to(ROOT).as_posix() not in named)
    assert not missing, f"name each module with one line on docs/architecture.md: {missing}"
    gone = sorted(n for n in named if not (ROOT / n).exists())
    assert not gone, f"docs/architecture.md names modules that do not exist: {gone}"
