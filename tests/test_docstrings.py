"""Every public name of the specification and of the Python API states its rule in a docstring.

Public: module-level functions and classes, and the methods and properties of public classes,
whose names do not start with ``_``. Checked on the source, so nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted([*(ROOT / "spec").glob("*.py"), ROOT / "reference" / "api.py", ROOT / "reference" / "read.py"])


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
