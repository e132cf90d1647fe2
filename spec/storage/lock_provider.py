"""Which of Apache Hudi's lock providers (``hoodie.write.lock.provider``) a writer of ours can share a table with.

Two writers exclude each other only when they take the same lock. Ours takes the lock of two of
Hudi's providers, on the storage where Hudi itself runs them:

- ``StorageBasedLockProvider`` (``spec.storage.lock``): a conditional write of
  ``.hoodie/.locks/table_lock.json``. Hudi 1.2.0 runs it only where ``StorageSchemes`` names a
  ``StorageLockClient`` — S3 and S3A (``hudi-aws-bundle``), GCS (``hudi-gcp-bundle``), Azure; none is in
  the Spark bundle. On a local path it fails to start ("No implementation of StorageLock supports this
  scheme: file"): there our writers still
  exclude one another with it, but no Hudi writer can take it;
- ``FileSystemBasedLockProvider`` (``spec.storage.file_system_lock``): the file ``.hoodie/lock``, on
  a file system that creates files atomically (local files here). On S3 and GCS Hudi refuses it, and
  so do we.

Every other provider keeps its lock outside the table, where our writer cannot take it; it is refused
with what to do instead:

- ``InProcessLockProvider`` (the default Hudi picks for one writer with table services in its own
  JVM) and ``NoopLockProvider`` exclude nobody outside one JVM;
- ``ZookeeperBasedLockProvider``, ``ZookeeperBasedImplicitBasePathLockProvider``: a ZooKeeper lock node;
- ``HiveMetastoreBasedLockProvider``: a Hive metastore lock;
- ``DynamoDBBasedLockProvider``, ``DynamoDBBasedImplicitPartitionKeyLockProvider``: a DynamoDB item.

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x name the same providers; ``StorageBasedLockProvider`` is
1.0.2 and later; measured on the classes of 1.2.0's Spark 3.5 bundle): ``HoodieLockConfig``
(``LOCK_PROVIDER_CLASS_NAME``), ``StorageBasedLockProvider`` (``getLockServiceClassName``),
``FileSystemBasedLockProvider``, ``InProcessLockProvider``, ``NoopLockProvider``,
``ZookeeperBasedLockProvider``, ``HiveMetastoreBasedLockProvider``, ``StorageSchemes``; ``hudi-aws``'s
``DynamoDBBasedLockProvider``.
"""

from __future__ import annotations

from typing import Final

from spec.errors import LockProviderMismatch, UnsupportedOption
from spec.storage.schemes import StorageScheme

PROVIDER_KEY: Final = "hoodie.write.lock.provider"
"""``HoodieLockConfig.LOCK_PROVIDER_CLASS_NAME``."""
_PACKAGE = "org.apache.hudi.client.transaction.lock."
STORAGE_BASED: Final = _PACKAGE + "StorageBasedLockProvider"
FILE_SYSTEM_BASED: Final = _PACKAGE + "FileSystemBasedLockProvider"
SUPPORTED: Final = (STORAGE_BASED, FILE_SYSTEM_BASED)
"""The providers whose lock our writer takes; the first is the one it takes when none is named."""

_ONE_JVM = ("excludes only writers inside one Java process; hudi-spec's writer is another process, so the two "
            "would write at once unguarded")
_OUTSIDE = "keeps its lock in {where}, which hudi-spec's writer cannot take, so the two would not exclude each other"
# --8<-- [start:refused]
REFUSED_PROVIDERS: Final[dict[str, str]] = {
    _PACKAGE + "InProcessLockProvider": _ONE_JVM,
    _PACKAGE + "NoopLockProvider": "takes no lock at all",
    _PACKAGE + "ZookeeperBasedLockProvider": _OUTSIDE.format(where="ZooKeeper"),
    _PACKAGE + "ZookeeperBasedImplicitBasePathLockProvider": _OUTSIDE.format(where="ZooKeeper"),
    "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider": _OUTSIDE.format(where="the Hive metastore"),
    "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider": _OUTSIDE.format(where="DynamoDB"),
    "org.apache.hudi.aws.transaction.lock.DynamoDBBasedImplicitPartitionKeyLockProvider":
        _OUTSIDE.format(where="DynamoDB"),
}
"""Hudi's other lock providers and why a writer of ours cannot share a table with them."""
# --8<-- [end:refused]

_WHAT_TO_DO = (f"configure every writer of the table, the Hudi pipelines too, with {STORAGE_BASED} (on S3 and GCS; "
               f"Hudi needs hudi-aws-bundle or hudi-gcp-bundle for it) or {FILE_SYSTEM_BASED} (on local files and "
               "HDFS) — or do not write with both at once")


def parse_lock_provider(raw: str) -> str:
    """The lock provider class named by ``raw``; ``UnsupportedOption`` saying why and what to do when it
    is one whose lock our writer cannot take, or a class Hudi does not have."""
    name = raw.strip()
    if name in SUPPORTED:
        return name
    why = REFUSED_PROVIDERS.get(name, "is not one of Apache Hudi's lock providers whose lock hudi-spec takes")
    raise UnsupportedOption(f"{PROVIDER_KEY}={raw!r} is not supported by hudi-spec's writer (locking): it {why}",
                            hint=_WHAT_TO_DO)


# --8<-- [start:mismatch]
def other_provider_lock(provider: str) -> str:
    """The provider whose lock a writer of ``provider`` looks for beside its own: a table has one lock file
    per provider (``.hoodie/.locks/table_lock.json``, ``.hoodie/lock``), and one of them held live by
    another writer while this one takes the other means the table's writers name different providers and
    exclude nobody. Hudi does no such check (each provider sees only its own file)."""
    return FILE_SYSTEM_BASED if provider == STORAGE_BASED else STORAGE_BASED


def mismatch(provider: str, held: str, where: str, action: str) -> LockProviderMismatch:
    """The error of a writer taking ``provider``'s lock while another writer holds ``held``'s at ``where``."""
    return LockProviderMismatch(
        f"another writer of this table holds the lock of {held} ({where}) while this one takes the lock of "
        f"{provider}: the two exclude nobody; {action} did not start",
        hint=f"give every writer of the table, the Hudi pipelines too, the same {PROVIDER_KEY} "
             f"({FILE_SYSTEM_BASED} on local files, {STORAGE_BASED} on S3); if no writer holds {where} any more "
             "(one that died), delete it")
# --8<-- [end:mismatch]


def check_provider_on(provider: str, scheme: StorageScheme) -> None:
    """``UnsupportedOption`` when Hudi cannot run ``provider`` on ``scheme`` and the lock would exclude no
    Hudi writer: the file-system lock needs atomic file creation (``StorageSchemes.isAtomicCreationSupported``)."""
    if provider == FILE_SYSTEM_BASED and not scheme.atomic_creation:
        raise UnsupportedOption(
            f"{PROVIDER_KEY}={FILE_SYSTEM_BASED} cannot lock a table on {scheme.scheme}://: it needs a file system "
            "that creates files atomically, and Apache Hudi refuses it there too (Unsupported scheme)",
            hint=f"use {STORAGE_BASED}, the lock Hudi takes on {scheme.scheme}:// with conditional writes")


__all__ = ["FILE_SYSTEM_BASED", "PROVIDER_KEY", "REFUSED_PROVIDERS", "STORAGE_BASED", "SUPPORTED",
           "check_provider_on", "mismatch", "other_provider_lock", "parse_lock_provider"]
