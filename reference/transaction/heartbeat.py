"""A pending write's heartbeat (Hudi's ``HoodieHeartbeatClient``); the rules are ``spec.storage.heartbeat``'s.

A writer under optimistic concurrency control starts a heartbeat right after it creates its requested
instant (under the table lock, so no other writer ever sees the instant without it): the file
``.hoodie/.heartbeat/<instant>`` is written, then rewritten by a daemon thread every interval. The
heartbeat stops and its file is deleted when the write commits or is given up. A writer that is
killed leaves a heartbeat that stops changing; once it has expired, the next writer rolls the write
back (``live_heartbeats`` is what the rollback of failed writes consults).
"""

from __future__ import annotations

import threading
import time

from spec.storage.heartbeat import HEARTBEAT_FOLDER, heartbeat_file, is_heartbeat_expired
from spec.storage.hoodie_storage import Storage


class Heartbeat:
    """The heartbeat of one pending instant."""

    def __init__(self, storage: Storage, instant: str, interval_ms: int) -> None:
        self.storage, self.instant, self.interval_ms = storage, instant, interval_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self) -> None:
        """Write the heartbeat file (its modification time is the heartbeat)."""
        self.storage.write_atomic(heartbeat_file(self.instant), b"")

    def start(self) -> Heartbeat:
        self.beat()

        def run() -> None:
            while not self._stop.wait(self.interval_ms / 1000):
                self.beat()

        self._thread = threading.Thread(target=run, name=f"hudi-heartbeat-{self.instant}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop beating and delete the heartbeat file."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.storage.delete(heartbeat_file(self.instant))


def live_heartbeats(storage: Storage, interval_ms: int, tolerable_misses: int) -> set[str]:
    """The instants whose heartbeat has not expired (one listing of the heartbeat folder)."""
    now = int(time.time() * 1000)
    return {f.name for f in storage.list(HEARTBEAT_FOLDER) if not f.is_dir
            and not is_heartbeat_expired(f.mtime_ms, now, interval_ms, tolerable_misses)}


__all__ = ["Heartbeat", "live_heartbeats"]
