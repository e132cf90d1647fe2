"""The table lock of Apache Hudi's ``FileSystemBasedLockProvider``: a file whose existence is the lock.

Measured on Apache Hudi 1.2.0 (the Spark 3.5 bundle, local file system):

- **where**: ``<hoodie.write.lock.filesystem.path>/lock``, or ``<base path>/.hoodie/lock`` when the
  path is unset (``FileSystemBasedLockProvider``: ``LOCK_FILE_NAME`` in the lock directory, which
  defaults to the meta folder);
- **acquire** (``tryLock``, one attempt whatever time it is given): when the file exists and has
  not expired, someone holds the lock. An expired file is deleted, then the file is created with
  ``create(path, overwrite=false)`` — it fails when the name exists. Hadoop's local file system
  writes a checksum sibling with it, ``.hoodie/.lock.crc`` (``ChecksumFileSystem``: ``crc\\0``, the
  bytes per checksum as a big-endian int, 512, then one big-endian CRC-32 per 512 bytes of data);
- **content**: none. Hudi means to write its ``LockInfo`` as JSON (``lockCreateTime``,
  ``lockThreadName``, ``lockStacksInfo``), but ``acquireLock`` writes it only when the file does
  not exist just after creating it, so Hudi 1.2.0's lock file is always empty (0 bytes, with an
  8-byte ``.lock.crc``). Nothing ever reads the content to decide: it is shown only in the message
  of a writer that could not take the lock (``getCurrentOwnerLockInfo``);
- **expiry** (``checkIfExpired``): ``hoodie.write.lock.filesystem.expire`` minutes (default 0:
  never) after the file's modification time. There is no renewal: a lock held longer than that is
  expired for the next writer, and a holder that dies leaves a lock nobody takes until it expires —
  by default, until someone deletes the file;
- **release** (``unlock``): delete the file (Hadoop deletes its checksum with it).

The file system must create files atomically (``StorageSchemes.isAtomicCreationSupported``: local
files, HDFS; not S3 or GCS, where Hudi refuses the provider: "Unsupported scheme ..., since this fs
can not support atomic creation").

What we write (``lock_info``) is the ``LockInfo`` JSON Hudi means to write, in Jackson's layout, with
the owner's id as ``lockThreadName``: Hudi's writers show who holds the lock, and a holder can tell
its own lock from one a racing writer put in its place. It is created with ``O_EXCL`` (atomic), and
its checksum sibling written as Hadoop writes it (``crc_file``), so Hadoop reads it back verified.

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x have the provider with this path and expiry; the bytes
are measured on 1.2.0): ``FileSystemBasedLockProvider``, ``LockInfo``, ``HoodieLockConfig``
(``FILESYSTEM_LOCK_PATH``, ``FILESYSTEM_LOCK_EXPIRE``), ``StorageSchemes``; Hadoop's ``ChecksumFileSystem``.
"""

from __future__ import annotations

import json
import posixpath
import struct
import zlib
from dataclasses import dataclass

from spec.errors import InvalidConfig

LOCK_FILE_NAME = "lock"
"""``FileSystemBasedLockProvider.LOCK_FILE_NAME``."""
DEFAULT_LOCK_DIR = ".hoodie"
"""The lock directory when ``hoodie.write.lock.filesystem.path`` is unset: the meta folder."""
PATH_KEY = "hoodie.write.lock.filesystem.path"
"""``HoodieLockConfig.FILESYSTEM_LOCK_PATH`` (no default)."""
EXPIRE_KEY = "hoodie.write.lock.filesystem.expire"
"""``HoodieLockConfig.FILESYSTEM_LOCK_EXPIRE``: minutes; 0 (the default) never expires."""
BYTES_PER_CHECKSUM = 512
"""``io.bytes.per.checksum``, Hadoop's default."""
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
"""``LockInfo.lockCreateTime``: ``yyyy-MM-dd HH:mm:ss.SSS`` (``SimpleDateFormat``), milliseconds appended."""


# --8<-- [start:fslock]
@dataclass(frozen=True)
class FileSystemLockConfig:
    """``hoodie.write.lock.filesystem.*``: the lock directory (None: the meta folder) and the expiry in minutes."""

    path: str | None = None
    expire_minutes: int = 0

    def __post_init__(self) -> None:
        if self.expire_minutes < 0:
            raise InvalidConfig(f"{EXPIRE_KEY}={self.expire_minutes} must not be negative",
                                hint="minutes after which a lock file is stale; 0 never expires it")


def lock_file(lock_dir: str | None) -> str:
    """The lock file relative to the base path when the directory is unset (``.hoodie/lock``), else
    ``lock`` in ``lock_dir``."""
    return posixpath.join(lock_dir if lock_dir else DEFAULT_LOCK_DIR, LOCK_FILE_NAME)


def crc_file(path: str) -> str:
    """Hadoop's checksum sibling of ``path``: ``.<name>.crc`` in the same folder."""
    folder, name = posixpath.split(path)
    return posixpath.join(folder, f".{name}.crc")


def crc_content(data: bytes) -> bytes:
    """The ``.crc`` file Hadoop's ``ChecksumFileSystem`` writes beside ``data``."""
    sums = b"".join(struct.pack(">I", zlib.crc32(data[i:i + BYTES_PER_CHECKSUM]))
                    for i in range(0, len(data), BYTES_PER_CHECKSUM))
    return b"crc\x00" + struct.pack(">i", BYTES_PER_CHECKSUM) + sums


def is_expired(modified_ms: int, now_ms: int, expire_minutes: int) -> bool:
    """``checkIfExpired``: never when the expiry is 0, else more than that many minutes since the
    lock file was last modified."""
    return expire_minutes != 0 and now_ms - modified_ms > expire_minutes * 60 * 1000


def lock_info(create_time: str, owner: str) -> bytes:
    """``LockInfo.toString`` (Jackson's default pretty printer) for a lock taken at ``create_time`` by
    ``owner`` (as ``lockThreadName``), with no stack."""
    body = ",\n".join(f"  {json.dumps(k)} : {json.dumps(v)}" for k, v in
                      (("lockCreateTime", create_time), ("lockThreadName", owner)))
    return ("{\n" + body + ',\n  "lockStacksInfo" : [ ]\n}').encode()


def lock_owner(data: bytes) -> str | None:
    """The ``lockThreadName`` of a lock file's content; None when it has none (Hudi's empty lock file)."""
    try:
        owner = json.loads(data).get("lockThreadName")
    except (ValueError, AttributeError):
        return None
    return owner if isinstance(owner, str) else None
# --8<-- [end:fslock]


__all__ = ["DEFAULT_LOCK_DIR", "EXPIRE_KEY", "LOCK_FILE_NAME", "PATH_KEY", "FileSystemLockConfig", "crc_content",
           "crc_file", "is_expired", "lock_file", "lock_info", "lock_owner"]
