"""Our writer's table lock is Apache Hudi's: held by one, it excludes the other, both ways.

Measured on Apache Hudi 1.2.0 (its Spark bundle in the test run's Spark session, its lock classes
called through py4j, its Spark datasource writing):

- ``FileSystemBasedLockProvider`` takes ``.hoodie/lock`` (empty, with Hadoop's 8-byte ``.lock.crc``);
  while it holds it ours cannot take the lock, and while ours holds it Hudi's ``tryLock`` fails and
  reads our ``LockInfo`` (checksum verified) as the owner; an expired lock file is taken by either;
- ``StorageBasedLockProvider`` does not start on a local path ("No implementation of StorageLock supports
  this scheme: file"): its lock needs
  a ``StorageLockClient`` (``hudi-aws-bundle`` for S3), which the Spark bundle lacks;
- lock providers whose lock our writer cannot take are refused, saying what to do; so is the
  file-system lock on S3, where Hudi refuses it too.

The slow tests run Hudi's Spark writer beside ours (``tests/test_hudi_mixed_writers.py``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import reference  # noqa: F401  (registers the S3 client)
from reference.api import HudiTable
from reference.config.options import parse_options
from reference.transaction.file_system_lock import FileSystemBasedLock
from reference.transaction.lock import make_lock
from spec.errors import LockProviderMismatch, UnsupportedOption, WriteConflict
from spec.storage.file_system_lock import FileSystemLockConfig, crc_content, lock_owner
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCK_FILE, StorageLockConfig
from spec.storage.lock_provider import FILE_SYSTEM_BASED, REFUSED_PROVIDERS, STORAGE_BASED, check_provider_on
from spec.storage.schemes import storage_scheme

FS_LOCK = StorageLockConfig(wait_ms=0, provider=FILE_SYSTEM_BASED)


def hudi_fs_lock(spark: Any, base: Path, expire_minutes: int = 0) -> Any:
    """Apache Hudi's own ``FileSystemBasedLockProvider`` for the table at ``base``, as its ``LockManager``
    makes it (``hoodie.base.path`` and the provider's settings)."""
    jvm = spark._jvm
    props = jvm.org.apache.hudi.common.config.TypedProperties()
    props.setProperty("hoodie.base.path", str(base))
    props.setProperty("hoodie.write.lock.filesystem.expire", str(expire_minutes))
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    return jvm.org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider(
        jvm.org.apache.hudi.common.config.LockConfiguration(props), conf)


def _try(spark: Any, provider: Any) -> bool:
    return bool(provider.tryLock(0, spark._jvm.java.util.concurrent.TimeUnit.MILLISECONDS))


@pytest.mark.spark
def test_hudis_file_system_lock_and_ours_exclude_each_other(apache_hudi: Any, tmp_path: Path) -> None:
    base = tmp_path / "t"
    (base / ".hoodie").mkdir(parents=True)
    hudi, ours = hudi_fs_lock(apache_hudi, base), FileSystemBasedLock(Storage(str(base)), FS_LOCK)
    assert hudi.getLock() == f"{base}/.hoodie/lock"

    assert _try(apache_hudi, hudi)  # Hudi holds it: an empty lock file and Hadoop's checksum of nothing
    assert (base / ".hoodie/lock").read_bytes() == b""
    assert (base / ".hoodie/.lock.crc").read_bytes() == crc_content(b"") == b"crc\x00\x00\x00\x02\x00"
    assert not ours.try_lock()
    with pytest.raises(WriteConflict, match=r"\.hoodie/lock .*taken by Apache Hudi"):
        ours.lock("upsert")
    storage_lock = make_lock(Storage(str(base)), StorageLockConfig(wait_ms=0))  # ours on the default provider
    with pytest.raises(LockProviderMismatch, match=r"\.hoodie/lock") as err:
        storage_lock.lock("upsert")
    assert FILE_SYSTEM_BASED in (err.value.hint or "")
    assert not storage_lock.holds() and (base / ".hoodie/lock").exists()  # ours released; Hudi's untouched
    hudi.unlock()
    (base / LOCK_FILE).unlink()  # the released storage lock ours left (expired: true)
    (base / ".hoodie/.locks").rmdir()
    assert sorted(os.listdir(base / ".hoodie")) == []

    assert ours.try_lock()  # ours holds it: Hudi cannot take it, and reads (checksum verified) who holds it
    assert not _try(apache_hudi, hudi)
    owner = lock_owner(str(hudi.getCurrentOwnerLockInfo()).encode())
    assert owner == ours.owner
    ours.unlock()
    assert sorted(os.listdir(base / ".hoodie")) == []
    assert _try(apache_hudi, hudi)
    hudi.unlock()


@pytest.mark.spark
@pytest.mark.slow
def test_an_expired_lock_file_is_taken_by_either(apache_hudi: Any, tmp_path: Path) -> None:
    base = tmp_path / "t"
    (base / ".hoodie").mkdir(parents=True)
    expiring = StorageLockConfig(wait_ms=0, provider=FILE_SYSTEM_BASED, file_system=FileSystemLockConfig(None, 1))
    hudi = hudi_fs_lock(apache_hudi, base, expire_minutes=1)
    assert _try(apache_hudi, hudi)
    ours = FileSystemBasedLock(Storage(str(base)), expiring)
    assert not ours.try_lock()  # a fresh lock of Hudi's
    old = time.time() - 61
    os.utime(base / ".hoodie/lock", (old, old))  # now more than a minute old
    assert ours.try_lock() and ours.holds()
    assert not _try(apache_hudi, hudi_fs_lock(apache_hudi, base, expire_minutes=1))
    os.utime(base / ".hoodie/lock", (old, old))
    assert _try(apache_hudi, hudi_fs_lock(apache_hudi, base, expire_minutes=1))  # Hudi deletes ours, takes it
    assert not ours.holds()
    ours.unlock()  # no longer ours: left alone
    assert (base / ".hoodie/lock").exists()


@pytest.mark.spark
@pytest.mark.slow
def test_hudis_storage_based_lock_does_not_start_on_a_local_path(apache_hudi: Any, tmp_path: Path) -> None:
    jvm = apache_hudi._jvm
    props = jvm.org.apache.hudi.common.config.TypedProperties()
    props.setProperty("hoodie.base.path", f"file://{tmp_path}")
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(apache_hudi._jsc.hadoopConfiguration())
    with pytest.raises(Exception, match="Failed to load and initialize StorageLock") as err:
        jvm.org.apache.hudi.client.transaction.lock.StorageBasedLockProvider(
            jvm.org.apache.hudi.common.config.LockConfiguration(props), conf)
    assert "No implementation of StorageLock supports this scheme: file" in str(err.value)


@pytest.mark.parametrize("provider", sorted(REFUSED_PROVIDERS))
def test_a_lock_provider_our_writer_cannot_share_is_refused(provider: str) -> None:
    with pytest.raises(UnsupportedOption, match="locking") as err:
        parse_options({"hoodie.write.lock.provider": provider})
    assert provider in err.value.message
    assert STORAGE_BASED in (err.value.hint or "") and FILE_SYSTEM_BASED in (err.value.hint or "")


def test_the_file_system_lock_is_taken_on_local_files_and_refused_on_s3(tmp_path: Path) -> None:
    """Our writers take it (a write, a compaction run alone), exclude each other with it, and never remove
    a lock file that is no longer theirs; S3 is refused."""
    cfg = parse_options({"hoodie.write.lock.provider": FILE_SYSTEM_BASED, "hoodie.write.lock.filesystem.expire": "5",
                         "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                         "hoodie.write.lock.storage.heartbeat.poll.secs": "30"})
    assert cfg.lock.provider == FILE_SYSTEM_BASED and cfg.lock.file_system == FileSystemLockConfig(None, 5)
    (tmp_path / ".hoodie").mkdir()
    first, second = make_lock(Storage(str(tmp_path)), cfg.lock), make_lock(Storage(str(tmp_path)), FS_LOCK)
    assert isinstance(first, FileSystemBasedLock) and first.try_lock() and not second.try_lock()
    first.unlock()
    assert second.try_lock()
    (tmp_path / ".hoodie/lock").write_bytes(b"")  # a racing Hudi create truncated it: no longer ours, left alone
    assert not second.holds()
    second.unlock()
    assert (tmp_path / ".hoodie/lock").exists()
    elsewhere = StorageLockConfig(wait_ms=0, provider=FILE_SYSTEM_BASED,
                                  file_system=FileSystemLockConfig(f"file://{tmp_path}/locks", 0))
    third = make_lock(Storage(str(tmp_path)), elsewhere)
    assert third.try_lock() and (tmp_path / "locks/lock").exists() and (tmp_path / "locks/.lock.crc").exists()
    third.unlock()
    with pytest.raises(UnsupportedOption, match="local folder"):
        make_lock(Storage(str(tmp_path)), StorageLockConfig(provider=FILE_SYSTEM_BASED,
                                                            file_system=FileSystemLockConfig("hdfs://nn/locks")))
    table = tmp_path / "mor"
    options = {"hoodie.table.name": "mor", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.write.lock.provider": FILE_SYSTEM_BASED}
    for ts in (1, 2):  # a base file, then a log file: something to compact
        HudiTable(str(table), engine="local").write(pa.table({"id": ["k"], "ts": [ts]}), "upsert", options)
    held = make_lock(Storage(str(table)), FS_LOCK)
    assert held.try_lock()
    with pytest.raises(WriteConflict, match=r"\.hoodie/lock"):  # a compaction run alone takes the same lock
        HudiTable(str(table), engine="local").compact(options)
    held.unlock()
    assert HudiTable(str(table), engine="local").compact(options) is not None
    with pytest.raises(UnsupportedOption, match="atomically") as err:
        check_provider_on(FILE_SYSTEM_BASED, storage_scheme("s3://bucket/t"))
    assert STORAGE_BASED in (err.value.hint or "")
