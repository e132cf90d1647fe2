"""Who holds a table lock, and whether that holder is known to be gone.

Our lock owners are Hudi's random UUID followed by ``@host:pid`` (``StorageBasedLockProvider`` and
``FileSystemBasedLockProvider`` read an owner as an opaque string): a holder that was a process of this
host and no longer runs is known dead at once, so a writer killed here is recovered by the next one
without waiting for the lock to expire. Used by both lock providers' locks
(``reference.transaction.lock``, ``reference.transaction.file_system_lock``).
"""

from __future__ import annotations

import os
import socket


def holder_is_dead(owner: str) -> bool:
    """Whether the lock's owner is known to be gone: a process of this host that no longer runs.

    Our owner ids are Hudi's random UUID followed by ``@host:pid`` (Hudi reads the owner as an opaque
    string). A holder elsewhere, or one of Apache Hudi's, is only ever known gone by its lock's expiry."""
    _, _, where = owner.rpartition("@")
    host, _, pid = where.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


__all__ = ["holder_is_dead"]
