"""Every public name of the specification and of the Python API states its rule in a docstring.

Public: module-level functions and classes, and the methods and properties of public classes,
whose names do not start with ``_``. Checked on the source, so nothing is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# every module of spec/, its sub-packages (spec/actions/, spec/model/...) included
MODULES = sorted([*(ROOT / "spec").rglob("*.py"), ROOT / "reference" / "api.py",
                  ROOT / "reference" / "engines" / "spark_reader.py"])


def undocumented(path: Path) -> list[str]:
    """The public names of a module without a docstring (``<module>`` for the module itself)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    missing = [] if ast.get_docstring(tree) else ["<module>"]

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if node.name.startswith("_"):
                continue
            if not ast.get_docstring(node):
                missing.append(f"{prefix}{node.name} (line {node.lineno})")
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return missing


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_public_name_has_a_docstring(path: Path) -> None:
    missing = undocumented(path)
    assert not missing, f"{path.relative_to(ROOT)}: add a docstring stating the rule to {', '.join(missing)}"


def test_the_check_sees_missing_docstrings(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Module."""\n\n\nclass A:\n    def rule(self):\n        return 1\n\n    def _private(self):\n'
                      '        return 2\n\n\ndef f():\n    """Documented."""\n\n\ndef _g():\n    pass\n')
    assert undocumented(sample) == ["A (line 4)", "A.rule (line 5)"]


# --- every rule names the Apache Hudi code it states -----------------------------------------------

SPEC_MODULES = sorted((ROOT / "spec").rglob("*.py"))
_HUDI_CLASS = re.compile(r"``(?:[\w.]+\.)?[A-Z][A-Za-z0-9]+(?:\.\w+)?``")
_RELEASES = ("0.15.x", "1.0.x", "1.1.x")


def source_paragraph(path: Path) -> str:
    """The paragraph of a module docstring that starts with "Source" ("" when there is none)."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return next((p for p in doc.split("\n\n") if p.startswith("Source")), "")


@pytest.mark.parametrize("path", SPEC_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_spec_module_names_its_apache_hudi_sources(path: Path) -> None:
    source = source_paragraph(path)
    if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text())):
        return  # an empty package marker states no rule
    assert source, f"{path.name}: end the module docstring with a 'Source' paragraph naming Hudi's classes"
    if source.startswith("Source: no Hudi class"):
        assert len(source.split()) >= 8, f"{path.name}: say why no Hudi class is the source"
        return
    assert _HUDI_CLASS.search(source), f"{path.name}: name the Hudi classes as ``ClassName``"
    assert all(r in source for r in _RELEASES), f"{path.name}: pin the Hudi releases ({', '.join(_RELEASES)})"


def test_the_source_check_sees_a_missing_source(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""A rule.\n\nSource (Apache Hudi 0.15.x, 1.0.x, 1.1.x): ``HoodieInstant``."""\n')
    assert _HUDI_CLASS.search(source_paragraph(sample))
    sample.write_text('"""A rule, with no source."""\n')
    assert source_paragraph(sample) == ""


def test_every_spec_module_shows_its_sources_on_a_spec_page() -> None:
    shown = set()
    for page in (ROOT / "docs" / "spec").glob("*.md"):
        for m in re.finditer(r"<!-- hudi-spec:sources ((?:spec/[\w/]+\.py ?)+) -->", page.read_text()):
            shown.update(m.group(1).split())
    hudi_sources = (ROOT / "docs" / "spec" / "hudi-sources.md").read_text()
    for path in SPEC_MODULES:
        if path.name == "__init__.py":
            continue
        name = path.relative_to(ROOT / "spec").as_posix()  # keys.py, actions/clean.py
        assert f"spec/{name}" in shown, f"show {name}'s sources on its spec page"
        listed = f"`{name}`" in hudi_sources or f"`{path.parent.name}/*.py`" in hudi_sources
        assert listed, f"list {name} on docs/spec/hudi-sources.md"


# the design notes and seed documents the project started from are not part of it: a citation names a
# page of ours (docs/...) or an Apache Hudi source file. The real tables' folder beside the project
# (../shared/external) is where the tests look for them, not a citation.
_OUTSIDE = ("hudi-" + "format", "ARCHITEC" + "TURE", "seed " + "00", "../" + "shared/design", "../" + "shared/seeds",
            "\u00a7", "format " + "reference", "format " + "page")


def test_nothing_cites_a_document_outside_the_repository() -> None:
    """No file of the project cites the design notes or the seed documents it started from (by name,
    or by a section sign): a reader cannot open them."""
    offenders = []
    files = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml", ROOT / "mkdocs.yml",
             *[p for d in ("spec", "reference", "conformance", "bench", "docs", "tests")
               for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md", ".yml", ".json", ".toml")]]
    for path in files:
        text = path.read_text(errors="replace")
        offenders += [f"{path.relative_to(ROOT)}: {s}" for s in _OUTSIDE if s in text]
    assert offenders == []
