"""The spec's reader as a reader under test (``--impl spec_reader``): another adapter (``--writer``) writes the
table, and every L0 query is answered by the spec's reader, file system view and timeline on that table
directory (``conformance.interface.adapter.DirectoryReads``, ``spec.read.reader``).

On the tables the reference writes this is what the reference's own L0 observes. Its row in the matrix is
the other way round from Apache Hudi's reader row: on the tables Apache Hudi writes (``--writer hudi_spark``)
the spec reader is compared with Hudi's own datasource reading the same table (``own_reader``), since there
Hudi, not the spec model, says what the table holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from conformance.interface.adapter import DirectoryReads, Query, RawRows, ReaderOfWrittenTables


def _reference_writer() -> Any:
    from conformance.adapters.reference_spark import ReferenceLocalAdapter

    return ReferenceLocalAdapter()


def spec_rows(path: str, query: Query) -> RawRows:
    """The spec reader's answer to ``query`` on the table at ``path``."""
    reads = DirectoryReads()
    reads.path = path
    return reads.rows(query)


class SpecReaderAdapter(ReaderOfWrittenTables):
    """Writes with ``writer`` (an adapter that leaves a table directory at ``.path``), reads with the spec."""

    name: ClassVar[str] = "spec_reader"
    known_failures: ClassVar[Mapping[str, str]] = {}

    def __init__(self, writer: Callable[[], Any] = _reference_writer) -> None:
        super().__init__(writer(), {})

    @property
    def unavailable(self) -> str | None:  # type: ignore[override]  # the writer's
        why: str | None = getattr(self.writer, "unavailable", None)
        return why

    def rows(self, query: Query) -> RawRows:
        return spec_rows(self.path, query)


OWN_READERS: Final[dict[str, str]] = {
    "hudi_spark": "conformance.adapters.hudi_spark_reader:hudi_reads",
}
"""Writers whose own reader says what their tables hold (``--impl`` name → ``module:function`` taking a table
path and a query): Apache Hudi's tables are read by Apache Hudi's datasource."""

OWN_READERS_KNOWN_FAILURES: Final[dict[str, str]] = {
    "hudi_spark": "conformance.adapters.hudi_spark_reader:KNOWN_FAILURES_OF_HUDIS_TABLES",
}
"""Per writer of ``OWN_READERS``: the cases whose tables the spec reader reads otherwise than that writer's own
reader (case id → reason)."""


def _load(target: str) -> Any:
    import importlib

    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def own_reader(writer: str) -> tuple[Callable[[str, Query], RawRows], Mapping[str, str]] | None:
    """The reader of ``writer``'s own tables and the cases the spec reader is known to read otherwise, or None
    when the writer has no reader of its own (its tables are then compared with the spec model)."""
    key = writer.replace("-", "_")
    if key not in OWN_READERS:
        return None
    read: Callable[[str, Query], RawRows] = _load(OWN_READERS[key])
    known: Mapping[str, str] = _load(OWN_READERS_KNOWN_FAILURES[key])
    return read, known


__all__ = ["OWN_READERS", "SpecReaderAdapter", "own_reader", "spec_rows"]
