"""What each storage scheme guarantees, as Apache Hudi states it (``org.apache.hudi.storage.StorageSchemes``).

A table's base path names its scheme (``s3://bucket/t``, ``gs://...``; a plain path is ``file``).
Hudi keeps one row per scheme; the writer's storage rules follow from it:

- ``supports_append`` (``StorageSchemes.supportsAppend``): a log file may be appended to. Where it
  may not (every object store), each log write creates a new log file: Hudi's
  ``HoodieLogFormatWriter`` rolls over to the next log version instead of appending, and our log
  file names already give every deltacommit (and every rollback command block) a new file, so a
  log write there is one whole-object write.
- ``write_transactional`` (``isWriteTransactional``): a single write is visible whole or not at
  all, so a file is written in place with one request; elsewhere a temporary name, then a rename.
- ``atomic_creation`` (``isAtomicCreationSupported``): creating a file fails if it exists.
- ``storage_lock`` (``implementsStorageLock``: Hudi names a ``StorageLockClient``): the store
  offers conditional writes (create only if absent, replace only if unchanged), on which both
  create-if-absent and the table lock (``StorageBasedLockProvider``) are built.
- ``list_status_friendly`` (``getListStatusFriendly``): listing is cheap.

One column is ours, not Hudi's: ``directories``. A hierarchical file system has folders that must
exist before files go in them; an object store has only keys, and a "folder" written to it is an
extra empty object (a directory marker) that no reader needs. Object stores get none.

Hudi leaves many entries unknown (``null``); an unknown entry counts as "no", as Hudi's accessors
read it. A scheme Hudi does not list is refused, as Hudi refuses it.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``StorageSchemes``
(``isAppendSupported``, ``isWriteTransactional``, ``isAtomicCreationSupported``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from spec.errors import InvalidConfig


class ObjectStore(Protocol):
    """Single-request and conditional operations on an object store. ``path`` is a full path as
    the store's ``pyarrow.fs`` file system names it (``bucket/key`` on S3); a version is what the
    store answers a write with (the ETag on S3) and what a conditional replace names."""

    def get(self, path: str) -> tuple[bytes, str] | None:
        """The object's bytes and version; None when absent."""

    def head(self, path: str) -> int | None:
        """The object's size; None when absent."""

    def put(self, path: str, data: bytes) -> str:
        """Write the whole object in one request; its new version."""

    def put_if_absent(self, path: str, data: bytes) -> str | None:
        """Create the object only if no object of that name exists; its version, or None if one did."""

    def put_if_match(self, path: str, data: bytes, version: str) -> str | None:
        """Replace the object only if its version is still ``version``; the new version, or None."""

    def delete(self, paths: Sequence[str]) -> None:
        """Delete the objects (absent ones are fine)."""


OBJECT_STORES: dict[str, Callable[[], ObjectStore]] = {}
"""A factory of the ``ObjectStore`` client per scheme (``register_object_store``): the client that
``spec.storage.hoodie_storage.Storage`` writes an object store's files with."""


def register_object_store(schemes: Sequence[str], factory: Callable[[], ObjectStore]) -> None:
    """Make ``factory`` the client of every scheme in ``schemes`` (called when ``reference`` is imported)."""
    for scheme in schemes:
        OBJECT_STORES[scheme] = factory


@dataclass(frozen=True)
class StorageScheme:
    """One row of ``StorageSchemes``, plus whether the store has real folders."""

    scheme: str
    supports_append: bool
    write_transactional: bool
    atomic_creation: bool
    list_status_friendly: bool
    storage_lock: bool
    directories: bool

    @property
    def object_store(self) -> bool:
        """An object store: keys without folders (no directory markers are written)."""
        return not self.directories


def _row(scheme: str, append: bool, transactional: bool | None, atomic: bool | None, friendly: bool | None,
         lock: bool, directories: bool) -> StorageScheme:
    return StorageScheme(scheme, append, bool(transactional), bool(atomic), bool(friendly), lock, directories)


# --8<-- [start:table]
# (scheme, supportsAppend, isWriteTransactional, supportAtomicCreation, listStatusFriendly, storage lock, folders)
STORAGE_SCHEMES: dict[str, StorageScheme] = {r.scheme: r for r in (
    _row("file", False, False, True, True, False, True),
    _row("hdfs", True, False, True, False, False, True),
    _row("afs", True, None, None, None, False, True),
    _row("maprfs", True, None, None, None, False, True),
    _row("igfs", True, None, None, None, False, True),
    _row("s3a", False, True, None, True, True, False),
    _row("s3", False, True, None, True, True, False),
    _row("gs", False, True, None, True, True, False),
    _row("wasb", False, None, None, None, False, False),
    _row("wasbs", False, None, None, None, False, False),
    _row("adl", False, None, None, None, False, True),
    _row("abfs", False, None, None, None, False, True),
    _row("abfss", False, None, None, None, False, True),
    _row("oss", False, None, None, None, False, False),
    _row("viewfs", True, None, True, None, False, True),
    _row("alluxio", False, None, None, None, False, True),
    _row("cosn", False, None, None, None, False, False),
    _row("ofs", True, None, None, None, False, True),
    _row("gfs", False, None, None, None, False, True),
    _row("dbfs", False, None, None, None, False, True),
    _row("cos", False, None, None, None, False, False),
    _row("obs", False, None, None, None, False, False),
    _row("ks3", False, None, None, None, False, False),
    _row("jfs", True, None, None, None, False, True),
    _row("bos", False, None, None, None, False, False),
    _row("oci", False, None, None, None, False, False),
    _row("tos", False, None, None, None, False, False),
    _row("cfs", True, None, None, None, False, True),
    _row("dfs", True, False, True, None, False, True),
    _row("hopsfs", False, False, True, None, False, True),
)}
# --8<-- [end:table]
"""Hudi's ``StorageSchemes`` enum, row for row (the last column is ours)."""


def scheme_of(uri: str) -> str:
    """The scheme of a base path: the part before ``://``, lower case; ``file`` for a plain path."""
    return uri.split("://", 1)[0].lower() if "://" in uri else "file"


def storage_scheme(uri: str) -> StorageScheme:
    """The guarantees of ``uri``'s scheme; InvalidConfig for a scheme Hudi does not know
    (``StorageSchemes.isSchemeSupported``)."""
    scheme = scheme_of(uri)
    row = STORAGE_SCHEMES.get(scheme)
    if row is None:
        raise InvalidConfig(f"storage scheme {scheme!r} of {uri} is not one Apache Hudi supports",
                            hint=f"use one of {', '.join(sorted(STORAGE_SCHEMES))} (a plain path is a local table)")
    return row


__all__ = ["STORAGE_SCHEMES", "StorageScheme", "scheme_of", "storage_scheme"]
