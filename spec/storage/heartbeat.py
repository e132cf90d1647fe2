"""Writer heartbeats: how a pending write tells other writers it is alive (``HoodieHeartbeatClient``).

Under optimistic concurrency control several writers have pending instants at once, so a pending
instant no longer means a failed write. Hudi then cleans failed writes lazily
(``hoodie.cleaner.policy.failed.writes=LAZY``, which OCC requires): each writer keeps a heartbeat
file, ``.hoodie/.heartbeat/<instant time>`` (``HoodieTableMetaClient.getHeartbeatFolderPath``),
rewritten every ``hoodie.client.heartbeat.interval_in_ms``; its modification time is the writer's
last sign of life. A pending write is failed, and may be rolled back, only when its heartbeat has
expired: no heartbeat for longer than the interval times ``hoodie.client.heartbeat.tolerable.misses``
(``HoodieHeartbeatUtils.isHeartbeatExpired``; a missing heartbeat file counts as time 0, so a write
without one is expired). The writer deletes its heartbeat when it commits or gives up.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieHeartbeatClient``,
``HoodieHeartbeatUtils.isHeartbeatExpired``, ``HoodieWriteConfig`` (``hoodie.client.heartbeat.*``).
"""

from __future__ import annotations

HEARTBEAT_FOLDER = ".hoodie/.heartbeat"
"""``HoodieTableMetaClient.HEARTBEAT_FOLDER_NAME`` under the meta folder."""
INTERVAL_KEY = "hoodie.client.heartbeat.interval_in_ms"
DEFAULT_INTERVAL_MS = 60_000
"""``HoodieWriteConfig.CLIENT_HEARTBEAT_INTERVAL_IN_MS``: one minute."""
TOLERABLE_MISSES_KEY = "hoodie.client.heartbeat.tolerable.misses"
DEFAULT_TOLERABLE_MISSES = 2
"""``HoodieWriteConfig.CLIENT_HEARTBEAT_NUM_TOLERABLE_MISSES``."""


def heartbeat_file(instant: str) -> str:
    """The heartbeat file of the write at ``instant``, relative to the base path."""
    return f"{HEARTBEAT_FOLDER}/{instant}"


# --8<-- [start:heartbeat]
def is_heartbeat_expired(last_heartbeat_ms: int | None, now_ms: int, interval_ms: int = DEFAULT_INTERVAL_MS,
                         tolerable_misses: int = DEFAULT_TOLERABLE_MISSES) -> bool:
    """``isHeartbeatExpired``: more than ``interval × tolerable misses`` since the last heartbeat
    (``None``: no heartbeat file, time 0)."""
    return now_ms - (last_heartbeat_ms or 0) > interval_ms * tolerable_misses
# --8<-- [end:heartbeat]


__all__ = ["HEARTBEAT_FOLDER", "heartbeat_file", "is_heartbeat_expired"]
