"""The table lock as Apache Hudi 1.x keeps it on storage (``StorageBasedLockProvider``, RFC-91).

One JSON file, ``.hoodie/.locks/table_lock.json`` (``StorageBasedLockProvider.DEFAULT_TABLE_LOCK_FILE_NAME``
under ``HoodieTableMetaClient.LOCKS_FOLDER_NAME``), holds ``StorageLockData``::

    {"expired": false, "validUntil": 1732520000000, "owner": "<uuid>"}

and is only ever written conditionally (``StorageLockClient.tryUpsertLockFile``):

- **acquire** (``tryLock``): read the file and its version; when it exists and is still valid, someone
  holds the lock. Otherwise write ``{expired: false, validUntil: now + validity, owner: me}``: created
  only if absent when there was no file, else replaced only if its version is unchanged. Of any
  number of writers racing, exactly one such write succeeds;
- **renew** (``renewLock``, by a heartbeat every ``heartbeat.poll.secs``): the same, conditioned on
  the version this holder wrote last; a failed condition means the lock was lost;
- **release** (``unlock`` → ``tryExpireCurrentLock``): replace it, conditioned on our version, with
  ``expired: true``; when the condition fails another writer has taken it since — the lock is no
  longer ours either way, and releasing succeeds.

A lock is valid (``isLockStillValid``) while it is not marked expired and the clock has not passed
``validUntil`` by more than ``CLOCK_DRIFT_BUFFER_MS``. A holder that dies stops renewing, so its lock
expires at ``validUntil`` and the next writer takes it: nobody removes a lock by hand.

The settings and their checks are ``StorageBasedLockConfig``'s.

Source (Apache Hudi 1.1.x; the same lock for tables of version 6 and 8 written by Hudi 0.15.x and
1.0.x, which have no storage-based lock of their own): ``StorageBasedLockProvider``,
``StorageLockData``, ``StorageBasedLockConfig``, ``LockProviderHeartbeatManager``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from spec.errors import InvalidConfig, InvalidTable
from spec.storage.file_system_lock import FileSystemLockConfig
from spec.storage.lock_provider import STORAGE_BASED

LOCKS_FOLDER = ".hoodie/.locks"
"""``HoodieTableMetaClient.LOCKS_FOLDER_NAME`` under the meta folder."""
LOCK_FILE = f"{LOCKS_FOLDER}/table_lock.json"
"""``StorageBasedLockProvider.DEFAULT_TABLE_LOCK_FILE_NAME`` in the locks folder."""
CLOCK_DRIFT_BUFFER_MS = 500
"""``StorageBasedLockProvider.CLOCK_DRIFT_BUFFER_MS``: a lock is dangling only this long after ``validUntil``."""
VALIDITY_TIMEOUT_KEY = "hoodie.write.lock.storage.validity.timeout.secs"
DEFAULT_VALIDITY_SECONDS = 300
"""``StorageBasedLockConfig.VALIDITY_TIMEOUT_SECONDS``: five minutes."""
HEARTBEAT_POLL_KEY = "hoodie.write.lock.storage.renew.interval.secs"
"""``StorageBasedLockConfig.RENEW_INTERVAL_SECS`` (1.2.0; ``hoodie.write.lock.storage.heartbeat.poll.secs``, its
name in 1.0.x and 1.1.x, is its alternative)."""
HEARTBEAT_POLL_ALIAS = "hoodie.write.lock.storage.heartbeat.poll.secs"
DEFAULT_HEARTBEAT_POLL_SECONDS = 30
"""The lock is renewed this often."""
WAIT_TIME_KEY = "hoodie.write.lock.wait_time_ms"
DEFAULT_WAIT_TIME_MS = 60_000
"""``LockConfiguration.DEFAULT_ACQUIRE_LOCK_WAIT_TIMEOUT_MS``: how long ``tryLock(time)`` keeps trying."""
RETRY_WAIT_KEY = "hoodie.write.lock.wait_time_ms_between_retry"
RETRY_WAIT_MS = 1000
"""``LockConfiguration.DEFAULT_LOCK_ACQUIRE_RETRY_WAIT_TIME_IN_MILLIS``: the pause between two tries."""


# --8<-- [start:lock]
@dataclass(frozen=True)
class StorageLockData:
    """Hudi's ``StorageLockData``: whether the lock is released, until when (epoch ms) it is valid, and
    the owner's id (a UUID per lock provider)."""

    expired: bool
    valid_until: int
    owner: str

    def to_json(self) -> bytes:
        """The lock file's content, fields in the order Hudi's ``StorageLockFile.toByteArray`` writes them."""
        return json.dumps({"expired": self.expired, "validUntil": self.valid_until, "owner": self.owner},
                          separators=(",", ":")).encode()

    @staticmethod
    def from_json(data: bytes) -> StorageLockData:
        """Parse a lock file; InvalidTable when it is not Hudi's lock JSON (all three fields are required)."""
        try:
            raw = json.loads(data)
            expired, valid_until, owner = raw["expired"], raw["validUntil"], raw["owner"]
        except (ValueError, KeyError, TypeError) as err:
            raise InvalidTable(f"{LOCK_FILE} is not a lock file of Hudi's StorageBasedLockProvider: {data[:80]!r}",
                               hint="it must hold expired, validUntil and owner") from err
        if not isinstance(expired, bool) or not isinstance(valid_until, int) or not isinstance(owner, str):
            raise InvalidTable(f"{LOCK_FILE} has fields of the wrong type: {data[:80]!r}",
                               hint="expired is a boolean, validUntil a number of ms, owner a string")
        return StorageLockData(expired, valid_until, owner)


def is_lock_valid(lock: StorageLockData, now_ms: int) -> bool:
    """``StorageBasedLockProvider.isLockStillValid``: not released, and ``now`` not certainly past
    ``validUntil`` (more than ``CLOCK_DRIFT_BUFFER_MS`` after it)."""
    return not lock.expired and not now_ms > lock.valid_until + CLOCK_DRIFT_BUFFER_MS


def new_lock(owner: str, now_ms: int, validity_seconds: int) -> StorageLockData:
    """The lock ``owner`` writes to acquire or renew it: valid for ``validity_seconds`` from now."""
    return StorageLockData(False, now_ms + validity_seconds * 1000, owner)
# --8<-- [end:lock]


@dataclass(frozen=True)
class StorageLockConfig:
    """The table lock a writer takes: ``StorageBasedLockConfig`` with its checks, how long an acquisition
    waits and how long it pauses between attempts (``HoodieLockConfig``), which provider's lock it is
    (``spec.storage.lock_provider``) and, for ``FileSystemBasedLockProvider``, its settings."""

    validity_seconds: int = DEFAULT_VALIDITY_SECONDS
    heartbeat_poll_seconds: int = DEFAULT_HEARTBEAT_POLL_SECONDS
    wait_ms: int = DEFAULT_WAIT_TIME_MS
    retry_wait_ms: int = RETRY_WAIT_MS
    provider: str = STORAGE_BASED
    file_system: FileSystemLockConfig = field(default_factory=FileSystemLockConfig)

    def __post_init__(self) -> None:
        if self.validity_seconds < self.heartbeat_poll_seconds * 10:
            raise InvalidConfig(f"{VALIDITY_TIMEOUT_KEY}={self.validity_seconds} must be at least 10 times "
                                f"{HEARTBEAT_POLL_KEY}={self.heartbeat_poll_seconds}",
                                hint="the lock must survive several missed renewals")
        if self.validity_seconds < 10:
            raise InvalidConfig(f"{VALIDITY_TIMEOUT_KEY}={self.validity_seconds} must be at least 10 seconds",
                                hint="raise the validity timeout")
        if self.heartbeat_poll_seconds < 1:
            raise InvalidConfig(f"{HEARTBEAT_POLL_KEY}={self.heartbeat_poll_seconds} must be at least 1 second",
                                hint="renew the lock at most once a second")
        if self.retry_wait_ms <= 0:
            raise InvalidConfig(f"{RETRY_WAIT_KEY}={self.retry_wait_ms} must be positive",
                                hint="the pause between two attempts to take the lock, in ms")
        if self.wait_ms < 0:
            raise InvalidConfig(f"{WAIT_TIME_KEY}={self.wait_ms} must not be negative", hint="use 0 to try once")


__all__ = [
    "CLOCK_DRIFT_BUFFER_MS",
    "LOCKS_FOLDER",
    "LOCK_FILE",
    "StorageLockConfig",
    "StorageLockData",
    "is_lock_valid",
    "new_lock",
]
