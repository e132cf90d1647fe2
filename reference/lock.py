"""The table lock: one writer at a time.

Hudi's single-writer mode rolls back every pending write before it starts a new one
(``HoodieFailedWritesCleaningPolicy.EAGER``);
that is only safe when no other writer is in flight. A writer therefore takes the table lock
first: ``.hoodie/.aux/lock``, created atomically (``Storage.create_if_absent``), holding who took
it (a random owner id, the process id and the host name). A second writer finds the file and gets
``WriteConflict`` before it changes anything.

A writer killed while holding the lock leaves the file behind. The next writer breaks it when it
is stale: taken on this host by a process that no longer runs. A lock taken on another host is
never broken automatically — the error says how to remove it by hand once that writer is known
to be gone.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from spec.errors import WriteConflict
from spec.storage import Storage

LOCK_FILE = ".hoodie/.aux/lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(storage: Storage) -> dict[str, object] | None:
    try:
        data = json.loads(storage.read(LOCK_FILE) or b"{}")
    except FileNotFoundError:
        return None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def is_stale(holder: dict[str, object]) -> bool:
    """A lock is stale when it was taken on this host by a process that is gone."""
    pid = holder.get("pid")
    return holder.get("host") == socket.gethostname() and isinstance(pid, int) and not _alive(pid)


@contextmanager
def table_lock(storage: Storage, action: str) -> Iterator[str]:
    """Hold the table lock for ``action`` (e.g. ``"upsert"``); yields the owner id."""
    owner = uuid.uuid4().hex
    record = json.dumps({"owner": owner, "pid": os.getpid(), "host": socket.gethostname(), "action": action,
                         "acquired_ms": int(time.time() * 1000)}).encode()
    for attempt in (1, 2):
        try:
            storage.create_if_absent(LOCK_FILE, record)
            break
        except WriteConflict:
            holder = _holder(storage)
            if holder is None and attempt == 1:
                continue  # released in between
            if holder is not None and is_stale(holder) and attempt == 1:
                storage.delete(LOCK_FILE)
                continue
            who = (f"{holder.get('action', '?')} by process {holder.get('pid', '?')} on {holder.get('host', '?')}"
                   if holder else "an unknown writer")
            raise WriteConflict(f"another writer holds the table lock ({who})",
                                hint=f"wait for it to finish; if it is known to be gone, delete {LOCK_FILE}") from None
    try:
        yield owner
    finally:
        held = _holder(storage)
        if held is not None and held.get("owner") == owner:
            storage.delete(LOCK_FILE)


def maybe_locked(storage: Storage, held: bool, action: str) -> AbstractContextManager[object]:
    """The table lock for ``action``, unless the caller holds it already (``held``): a service that
    runs inside a write (inline compaction, automatic clean and archival) runs under the writer's lock."""
    return nullcontext() if held else table_lock(storage, action)


__all__ = ["LOCK_FILE", "is_stale", "maybe_locked", "table_lock"]
