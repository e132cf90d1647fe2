"""pytest plugin of the conformance suite (entry point ``pytest11``).

Dormant unless ``--hudi-impl`` is given: then the conformance cases are collected and run
against that implementation (``spec``, ``reference`` or ``module:Class``).
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hudi-conformance")
    group.addoption(
        "--hudi-impl",
        default=None,
        help="run the Hudi conformance cases against this implementation: spec, reference or module:Class",
    )
    group.addoption("--hudi-suite", default=None, help="only the cases of this suite (folder under fixtures/cases)")
