"""The completion times of archived instants (table versions 8 and 9), the archived half of
``Timeline.completion_time``: asked of the LSM timeline (``spec.timeline.lsm_timeline``) on the first
question that needs them, so that a timeline that is never asked about an archived instant never reads
or imports the LSM timeline.

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; 0.15.x, for table version 6, has no LSM timeline):
``CompletionTimeQueryViewV2`` (completion times of archived instants, loaded on first use).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage


# --8<-- [start:archived_completions]
class ArchivedCompletions:
    """The completion times of archived instants, read once, on the first question that needs them.

    ``CompletionTimeQueryViewV2`` keeps one map of requested → completion times: the completed instants
    of the active timeline, then every instant of the archived timeline — the recent ones loaded at once
    (from its cursor, three days back or the active timeline's first instant, whichever is earlier), older
    ones on the first question about them. Together that is the whole archived timeline, which is what
    this answers from: ``source`` is the map itself or what loads it (``read_completion_times`` of a
    table's storage). An archived instant is not always older than every active one (a clean left pending
    stays on the active timeline while later commits are archived), so no instant is ruled out by its time.
    """

    def __init__(self, source: Mapping[str, str] | Callable[[], Mapping[str, str]]) -> None:
        self._source = source
        self._loaded: Mapping[str, str] | None = source if isinstance(source, Mapping) else None
        self._lock = threading.Lock()

    @staticmethod
    def of_storage(storage: Storage) -> ArchivedCompletions:
        """The history of the table at ``storage``, read on first use (``spec.timeline.lsm_timeline``
        is imported then too)."""
        def load() -> Mapping[str, str]:
            from spec.timeline.lsm_timeline import read_completion_times

            return read_completion_times(storage)
        return ArchivedCompletions(load)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a reader shipped to Spark tasks) without its lock."""
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def completion_time(self, t: str) -> str | None:
        """When archived instant ``t`` completed; None when ``t`` is not archived."""
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    source = self._source
                    self._loaded = dict(source() if callable(source) else source)
        return self._loaded.get(t)


NO_ARCHIVE = ArchivedCompletions({})
"""No archived timeline (layout 1, or a timeline built from names alone)."""
# --8<-- [end:archived_completions]
