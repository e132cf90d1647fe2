"""The table lock, kept on storage as Apache Hudi 1.x keeps it (``StorageBasedLockProvider``).

The rules are ``spec.storage.lock``'s: the lock is ``.hoodie/.locks/table_lock.json``, holding
``{"expired", "validUntil", "owner"}``, and is only written conditionally (``Storage.put_if_absent``
and ``Storage.put_if_match``: ``If-None-Match``/``If-Match`` on S3, a hard link and a
compare-and-swap under ``flock`` on local files), so Apache Hudi's writers and ours exclude each other
on the same table. This module carries them out:

- ``StorageBasedLock.try_lock`` reads the lock, and takes it when it is absent, released or expired;
- while held, a daemon thread renews it every ``heartbeat.poll.secs`` (``LockProviderHeartbeatManager``);
  a renewal that fails means another writer took an expired lock: the holder learns it has lost the
  lock, and its commit refuses to go on (``holds``);
- ``unlock`` stops the renewals and writes ``expired: true``; a lock someone else has taken since is
  left to them (``tryExpireCurrentLock``: ACQUIRED_BY_OTHERS counts as released).

A holder that is killed stops renewing; its lock expires ``validity.timeout.secs`` after its last
renewal, and the next writer takes it. A holder on this host whose process is gone is known dead
at once (``holder_is_dead``: our owner ids end in ``@host:pid``), so a writer killed here is
recovered by the next write without waiting. Nothing is ever removed by hand.

Single-writer mode (the default) holds the lock for a whole write and does not wait for it: a second
writer gets ``WriteConflict`` at once. Optimistic concurrency control holds it only to start and to
commit, and waits for it up to ``hoodie.write.lock.wait_time_ms`` (``LockManager``).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from typing import Protocol

from reference.transaction.file_system_lock import FileSystemBasedLock
from reference.transaction.lock_owner import holder_is_dead
from spec.errors import InvalidTable, WriteConflict
from spec.storage.file_system_lock import lock_file
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import (
    LOCK_FILE,
    StorageLockConfig,
    StorageLockData,
    is_lock_valid,
    new_lock,
)
from spec.storage.lock_provider import FILE_SYSTEM_BASED, STORAGE_BASED, mismatch, other_provider_lock

SINGLE_WRITER_LOCK = StorageLockConfig(wait_ms=0)
"""The lock of single-writer mode when no option names a provider (``parse_options({}).lock``): the
default provider's, tried once."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


class StorageBasedLock:
    """One lock provider: a random owner id, the version of the lock file it last wrote, a renewal thread."""

    def __init__(self, storage: Storage, config: StorageLockConfig = SINGLE_WRITER_LOCK,
                 clock: Callable[[], int] = _now_ms) -> None:
        self.storage = storage
        self.config = config
        self.clock = clock
        self.owner = f"{uuid.uuid4()}@{socket.gethostname()}:{os.getpid()}"
        self._held: StorageLockData | None = None
        self._version: str | None = None
        self._lost = False
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def current(self) -> StorageLockData | None:
        """The lock file as it is now (None when there is none)."""
        got = self.storage.read_versioned(LOCK_FILE)
        return StorageLockData.from_json(got[0]) if got is not None else None

    def try_lock(self) -> bool:
        """One attempt (``tryLock()``): take the lock unless another owner holds a valid one."""
        with self._mutex:
            if self._held is not None and not self._lost and is_lock_valid(self._held, self.clock()):
                return True  # re-entrant
            got = self.storage.read_versioned(LOCK_FILE)
            if got is not None:
                current = StorageLockData.from_json(got[0])
                if is_lock_valid(current, self.clock()) and not holder_is_dead(current.owner):
                    return False
            data = new_lock(self.owner, self.clock(), self.config.validity_seconds)
            version = (self.storage.put_if_absent(LOCK_FILE, data.to_json()) if got is None
                       else self.storage.put_if_match(LOCK_FILE, data.to_json(), got[1]))
            if version is None:
                return False  # another writer's conditional write came first
            self._held, self._version, self._lost = data, version, False
        self._start_renewals()
        return True

    def lock(self, action: str) -> None:
        """Take the lock, trying every ``retry_wait_ms`` (``tryLock(time)``) for up to ``wait_ms``; else
        WriteConflict naming the holder. Taken while another writer holds the file-system lock:
        released again, and ``LockProviderMismatch`` (``check_same_provider``)."""
        deadline = time.monotonic() + self.config.wait_ms / 1000
        while True:
            if self.try_lock():
                check_same_provider(self.storage, self.config, action, self)
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(min(self.config.retry_wait_ms / 1000, max(0.0, deadline - time.monotonic())) or 0.01)
        holder = self.current()
        who = (f"owner {holder.owner}, valid until {_when(holder.valid_until)}" if holder is not None
               else "a writer that released it just now")
        raise WriteConflict(
            f"another writer holds the table lock {LOCK_FILE} ({who}); {action} did not start",
            hint="retry when it is done; a lock whose writer died expires by itself at its validUntil")

    def holds(self) -> bool:
        """Whether this provider still holds a valid lock (``actuallyHoldsLock``)."""
        with self._mutex:
            return self._held is not None and not self._lost and is_lock_valid(self._held, self.clock())

    def renew(self) -> bool:
        """Extend the lock (``renewLock``); False when it was lost to another writer."""
        with self._mutex:
            if self._held is None or self._version is None or self._lost:
                return False
            data = new_lock(self.owner, self.clock(), self.config.validity_seconds)
            version = self.storage.put_if_match(LOCK_FILE, data.to_json(), self._version)
            if version is None:
                self._lost = True
                return False
            self._held, self._version = data, version
            return True

    def unlock(self) -> None:
        """Stop renewing and release the lock (``unlock``): ``expired: true``, if it is still ours."""
        self._stop.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join()
        self._renewer = None
        with self._mutex:
            if self._held is not None and self._version is not None and not self._lost:
                released = StorageLockData(True, self._held.valid_until, self.owner)
                self.storage.put_if_match(LOCK_FILE, released.to_json(), self._version)
            self._held, self._version = None, None

    def _start_renewals(self) -> None:
        self._stop = threading.Event()
        stop = self._stop

        def run() -> None:
            while not stop.wait(self.config.heartbeat_poll_seconds):
                if not self.renew():
                    return

        self._renewer = threading.Thread(target=run, name=f"hudi-lock-{self.owner[:8]}", daemon=True)
        self._renewer.start()


def check_same_provider(storage: Storage, config: StorageLockConfig, action: str, taken: TableLock) -> None:
    """Just after ``taken`` (the lock of ``config.provider``) was acquired: when the other provider's lock of
    this table (``spec.storage.lock_provider.other_provider_lock``) is held live by another writer, release
    ``taken`` and raise ``LockProviderMismatch`` — the table's writers name different providers.

    Live means: ``.hoodie/.locks/table_lock.json`` valid (``is_lock_valid``) and its holder not known dead;
    ``.hoodie/lock`` (or ``lock`` in ``hoodie.write.lock.filesystem.path``) present, not expired by this
    writer's ``hoodie.write.lock.filesystem.expire`` and not left by a dead writer of ours — looked for only
    where Hudi runs that provider (a file system that creates atomically). It is seen only when the other
    writer holds its lock at the moment ours is taken (at the start of a write, and at its commit under
    optimistic concurrency control); a lock folder set elsewhere for the other writer alone is not seen."""
    other = other_provider_lock(config.provider)
    where: str | None = None
    if other == STORAGE_BASED:
        got = storage.read_versioned(LOCK_FILE)
        if got is not None:
            try:
                data: StorageLockData | None = StorageLockData.from_json(got[0])
            except InvalidTable:
                data = None  # not a lock anyone holds
            if data is not None and is_lock_valid(data, _now_ms()) and not holder_is_dead(data.owner):
                where = LOCK_FILE
    elif storage.scheme.atomic_creation:
        fs = FileSystemBasedLock(storage, replace(config, provider=FILE_SYSTEM_BASED))
        if fs.held_by_another():
            where = fs.path if config.file_system.path else lock_file(None)
    if where is not None:
        taken.unlock()
        raise mismatch(config.provider, other, where, action)


class TableLock(Protocol):
    """A lock provider's lock, as the writers use it (``StorageBasedLock``, ``FileSystemBasedLock``)."""

    def lock(self, action: str) -> None: ...

    def try_lock(self) -> bool: ...

    def holds(self) -> bool: ...

    def unlock(self) -> None: ...


def make_lock(storage: Storage, config: StorageLockConfig) -> TableLock:
    """The lock of the provider ``config`` names (``hoodie.write.lock.provider``), on ``storage``.

    This is the one place that turns the configured provider into a lock: every action that takes the
    table lock — a write, and each service run alone or beside writers — comes here (through
    ``table_lock`` or ``maybe_locked``) with the ``StorageLockConfig`` its options resolved to
    (``WriteConfig.lock``). None of the three has a default, so no action can fall back to another
    provider's lock than the one its options name."""
    if config.provider == FILE_SYSTEM_BASED:
        return FileSystemBasedLock(storage, config, after_acquire=check_same_provider)
    return StorageBasedLock(storage, config)


@contextmanager
def table_lock(storage: Storage, action: str, config: StorageLockConfig) -> Iterator[TableLock]:
    """Hold the table lock for ``action`` (e.g. ``"upsert"``) for the block."""
    lock = make_lock(storage, config)
    lock.lock(action)
    try:
        yield lock
    finally:
        lock.unlock()


def maybe_locked(storage: Storage, held: bool, action: str, config: StorageLockConfig
                 ) -> AbstractContextManager[object]:
    """The table lock for ``action`` (of the provider ``config`` names), unless the caller holds it already
    (``held``): a service that runs inside a write (inline compaction, automatic clean and archival) runs
    under the writer's lock."""
    return nullcontext() if held else table_lock(storage, action, config)


__all__ = ["LOCK_FILE", "SINGLE_WRITER_LOCK", "StorageBasedLock", "TableLock", "check_same_provider",
           "holder_is_dead", "make_lock",
           "maybe_locked", "table_lock"]
