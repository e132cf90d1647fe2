"""The table lock of Apache Hudi's ``FileSystemBasedLockProvider``, taken on local files; the rules are
``spec.storage.file_system_lock``'s.

Held by one of Hudi's writers configured with that provider, it keeps ours out, and ours keeps
Hudi's out: both take the lock by creating ``.hoodie/lock`` (or ``lock`` in
``hoodie.write.lock.filesystem.path``) only if it does not exist, and release it by deleting it.

- ``try_lock``: a lock file older than ``hoodie.write.lock.filesystem.expire`` minutes (when that is
  not 0) is deleted, as Hudi deletes it; a lock file of a writer of ours on this host whose process
  is gone is deleted too (``holder_is_dead``: Hudi's lock files carry no owner and are never taken
  that way). Then the file is created with ``O_CREAT | O_EXCL``, holding our ``LockInfo`` and
  followed by its Hadoop checksum sibling;
- ``holds``: the lock file is still there and still ours. Hadoop's local ``create`` checks that the
  name is free, then opens it truncating, so a Hudi writer racing ours can empty our file and
  believe it holds the lock too; our commit then finds the lock no longer ours and refuses to go on;
- ``unlock``: delete the lock file and its checksum — only when they are still ours (Hudi's
  ``unlock`` deletes whatever is there; ours never removes another writer's lock).

There is no renewal (Hudi has none for this provider): with an expiry set, a write that holds the
lock longer than it is no longer excluded.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from collections.abc import Callable
from datetime import datetime

from reference.transaction.lock_owner import holder_is_dead
from spec.errors import UnsupportedOption, WriteConflict
from spec.storage.file_system_lock import (
    PATH_KEY,
    TIME_FORMAT,
    crc_content,
    crc_file,
    is_expired,
    lock_file,
    lock_info,
    lock_owner,
)
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.storage.lock_provider import FILE_SYSTEM_BASED, check_provider_on

AfterAcquire = Callable[[Storage, StorageLockConfig, str, "FileSystemBasedLock"], None]
"""A check run just after the lock is taken (it may release the lock and raise)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


class FileSystemBasedLock:
    """One lock provider (as ``reference.transaction.lock.StorageBasedLock``): an owner id and the lock
    file it creates."""

    def __init__(self, storage: Storage, config: StorageLockConfig, clock: Callable[[], int] = _now_ms,
                 after_acquire: AfterAcquire | None = None) -> None:
        """``after_acquire``: called with the storage, the config, the action and this lock once it is
        taken (``reference.transaction.lock.make_lock`` passes ``check_same_provider``)."""
        check_provider_on(FILE_SYSTEM_BASED, storage.scheme)
        self.after_acquire = after_acquire
        self.storage = storage
        self.config = config
        self.clock = clock
        folder = config.file_system.path
        if folder:
            self.path = os.path.join(_local(folder), "lock")
        else:
            storage.check_writable()
            self.path = storage.full(lock_file(None))
        self.crc = os.path.join(os.path.dirname(self.path), os.path.basename(crc_file(self.path)))
        self.owner = f"{uuid.uuid4()}@{socket.gethostname()}:{os.getpid()}"
        self._content: bytes | None = None

    def current(self) -> bytes | None:
        """The lock file's content (None when there is none)."""
        try:
            with open(self.path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def _stale(self) -> bool:
        """Whether an existing lock file may be taken over: expired, or left by a dead writer of ours."""
        try:
            modified = int(os.stat(self.path).st_mtime * 1000)
        except FileNotFoundError:
            return True
        if is_expired(modified, self.clock(), self.config.file_system.expire_minutes):
            return True
        owner = lock_owner(self.current() or b"")
        return owner is not None and holder_is_dead(owner)

    def try_lock(self) -> bool:
        """One attempt (``tryLock``): take the lock unless a lock file is there and not stale."""
        if self.holds():
            return True
        if os.path.exists(self.path):
            if not self._stale():
                return False
            self._delete()
        now = self.clock()
        local_time = datetime.fromtimestamp(now / 1000).strftime(TIME_FORMAT)  # SimpleDateFormat: the local zone
        content = lock_info(f"{local_time}.{now % 1000:03d}", self.owner)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        tmp = f"{self.crc}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as f:
            f.write(crc_content(content))
        os.replace(tmp, self.crc)
        self._content = content
        return True

    def held_by_another(self) -> bool:
        """Whether another writer holds the lock file: there, not ours, and not stale."""
        return self.current() is not None and not self.holds() and not self._stale()

    def lock(self, action: str) -> None:
        """Take the lock, trying every ``retry_wait_ms`` for up to ``wait_ms``; else WriteConflict. Taken
        while another writer holds the storage-based lock: released again, and ``LockProviderMismatch``
        (``reference.transaction.lock.check_same_provider``)."""
        deadline = time.monotonic() + self.config.wait_ms / 1000
        while not self.try_lock():
            if time.monotonic() >= deadline:
                holder = self.current()
                who = lock_owner(holder) if holder else None
                raise WriteConflict(
                    f"another writer holds the table lock {self.path} ({FILE_SYSTEM_BASED}"
                    f"{', owner ' + who if who else ', taken by Apache Hudi or a writer that wrote no owner'}); "
                    f"{action} did not start",
                    hint="retry when it is done; a lock file whose writer died stays until it expires "
                         "(hoodie.write.lock.filesystem.expire minutes; 0: never) or is deleted")
            time.sleep(min(self.config.retry_wait_ms / 1000, max(0.0, deadline - time.monotonic())) or 0.01)
        if self.after_acquire is not None:
            self.after_acquire(self.storage, self.config, action, self)

    def holds(self) -> bool:
        """Whether the lock file is still ours (``actuallyHoldsLock``)."""
        return self._content is not None and self.current() == self._content

    def unlock(self) -> None:
        """Release the lock: delete the lock file and its checksum, if they are still ours."""
        if self.holds():
            self._delete()
        self._content = None

    def _delete(self) -> None:
        for path in (self.crc, self.path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def _local(folder: str) -> str:
    """The local folder ``hoodie.write.lock.filesystem.path`` names (a plain path or a ``file:`` URI)."""
    if folder.startswith("file://"):
        return folder[len("file://"):]
    if folder.startswith("file:"):
        return folder[len("file:"):]
    if "://" in folder:
        raise UnsupportedOption(f"{PATH_KEY}={folder!r}: hudi-spec takes {FILE_SYSTEM_BASED}'s lock in a local "
                                "folder only",
                                hint="leave it unset (the table's .hoodie folder) or name a local folder")
    return folder


__all__ = ["FileSystemBasedLock"]
