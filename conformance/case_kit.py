"""What the corpus's case builders share (``conformance.generate``, ``conformance.cases_ledger``): the
table types and versions, a corpus record, a write, a table configuration, a case id from a builder's
name, table type and version."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from conformance.interface.ops import Case, CreateTable, Op
from spec.model.operations import Write

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
BOTH_TYPES: Final = (COW, MOR)
BOTH_VERSIONS: Final = (6, 8)


def rec(i: int, ts: int, p: str = "a", v: str | None = None, **extra: Any) -> dict[str, Any]:
    """A record of the corpus: key ``id``, ordering ``ts``, partition ``p``, value ``v``."""
    return {"id": i, "ts": ts, "p": p, "v": v if v is not None else f"v{i}@{ts}", **extra}


def w(operation: str, *records: dict[str, Any]) -> Write:
    """A write of ``records`` with ``operation``."""
    return Write(operation, tuple(records))


def short(table_type: str) -> str:
    """``cow`` or ``mor``: the table type as case ids name it."""
    return "cow" if table_type == COW else "mor"


def config(table_type: str, version: int, **kw: Any) -> CreateTable:
    """A table partitioned by ``p`` of the given type and version, ``kw`` overriding the defaults."""
    base: dict[str, Any] = {"table_type": table_type, "table_version": version, "partition_fields": ("p",)}
    base.update(kw)
    return CreateTable(**base)


def clean_config(table_type: str, version: int, **kw: Any) -> CreateTable:
    """The services cases' table: one commit retained by the cleaner, archival keeping 2 to 3 commits."""
    return config(table_type, version, clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3, **kw)


Builder = Callable[[str, int], Case]
"""A case builder: (table type, table version) to a case."""


def make_case(name: str, table_type: str, version: int, description: str, tags: Sequence[str],
              table: CreateTable, ops: Sequence[Op], provenance: str = "handwritten") -> Case:
    """A case with the id ``<name>-<cow|mor>-v<version>``."""
    return Case(f"{name}-{short(table_type)}-v{version}", description, tuple(tags), provenance, table, tuple(ops))
