"""The dependency rules of the packages, checked on the source (the import-linter contracts in
pyproject.toml check them too).

`spec` may import only the standard library, `fastavro`, `pyarrow` and itself: it is the
normative statement of the format and must run wherever Python runs, without Spark.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_ALLOWED = {"spec", "fastavro", "pyarrow"}


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", sorted(p.name for p in (ROOT / "spec").glob("*.py")))
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
