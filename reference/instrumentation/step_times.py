"""Where a write's time goes: the wall seconds of each step of the write path (``WriteResult.step_seconds``)."""

from __future__ import annotations

import time


class StepTimes:
    """Wall seconds per step of one write. Spark evaluates lazily, so a step's seconds are those of the
    Spark jobs it runs: on Spark the index lookup includes reading the batch and its key columns."""

    STEPS = ("prepare", "start", "index lookup", "workload profile", "handles", "commit", "table services")
    """prepare: options, table config, schema checks, key columns; start: the lock, rollback of failed
    writes, the requested and inflight instants; index lookup: tagging records with their file groups;
    workload profile: counts, small files and bucket assignment; handles: the data files; commit: the
    completed instant; table services: inline compaction, clean and archival."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def mark(self, step: str) -> None:
        """The time since the previous mark is ``step``'s."""
        now = time.perf_counter()
        self.seconds[step] = self.seconds.get(step, 0.0) + now - self._last
        self._last = now


__all__ = ["StepTimes"]
