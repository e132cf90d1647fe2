"""Test vectors ported from Apache Hudi's own Java unit tests: where each one comes from.

A vector is one asserted fact of a Hudi unit test — an input and the value (or the error) Hudi's
test expects — restated as data and driven through this project's ``spec`` functions. Only the
facts and expected values are taken, never code. ``Source`` names the test class and method, the
file in ``apache/hudi`` and the version of that file that was read (its commit: the Hudi test
sources were read on the master branch, so the commit, not a release tag, pins what was read).
Where a fact changed between Hudi releases, the vector says which release it holds for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Source:
    """A Hudi test method: class, method, file path in apache/hudi and the commit read."""

    test_class: str
    method: str
    path: str
    commit: str

    def at(self, method: str) -> Source:
        """The same test class, another method."""
        return Source(self.test_class, method, self.path, self.commit)


@dataclass(frozen=True)
class Vector:
    """One ported fact: its source, a short label, and the case data the driving test reads."""

    source: Source
    label: str
    case: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """A pytest id: ``Class.method: label``."""
        return f"{self.source.test_class}.{self.source.method}: {self.label}"


def ids(vectors: list[Vector]) -> list[str]:
    """The pytest ids of ``vectors``."""
    return [v.id for v in vectors]
