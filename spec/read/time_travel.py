"""Which instants a time-travel query may name: Apache Hudi refuses one its timeline cannot answer whole.

A time-travel query (``as.of.instant``) is refused (``TimeTravelRefused``) when:

- a data write (commit, deltacommit, or a replacecommit that is no clustering) requested at or before ``as_of``
  has not completed: the table as of then is not known yet;
- the latest completed clean's earliest commit to retain (``HoodieCleanMetadata.earliestCommitToRetain``) is
  after ``as_of``: the cleaner may have deleted files that query needs. A clean that names none (the
  KEEP_LATEST_FILE_VERSIONS policy) refuses an ``as_of`` before the first completed write of the active
  timeline instead.

A table never cleaned answers every ``as_of`` (files a clean has not deleted are all there). This is
``TimelineUtils.validateTimestampAsOf``, which Hudi's Spark datasource runs on a time-travel query
(``HoodieBaseRelation``; the file index ``BaseHoodieTableFileIndex`` skips it only when asked to include
pending commits, and no read option of Spark's time travel was found to ask that); its refusals are a
``HoodieTimeTravelException`` and an ``IllegalArgumentException`` ("Cleaner cleaned up the timestamp of
interest").

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``TimelineUtils``
(``validateTimestampAsOf``), ``HoodieCleanMetadata``, ``HoodieBaseRelation``, ``BaseHoodieTableFileIndex``.
"""

from __future__ import annotations

from spec.errors import TimeTravelRefused
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action

_COMMITS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
_WRITES = (*_COMMITS, Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING)


# --8<-- [start:time_travel]
def time_travel_refusal(timeline: Timeline, as_of: str, clean_retained: str | None) -> str | None:
    """Why a time-travel query as of ``as_of`` is refused, or None when it is answered. ``clean_retained``: the
    latest completed clean's earliest commit to retain ("" when it names none; None when no clean completed)."""
    pending = [i.requested for i in timeline.instants if not i.is_completed and i.action in _COMMITS]
    if pending and as_of >= pending[0]:
        return f"{pending[0]}, requested at or before {as_of}, has not completed"
    if clean_retained is None:
        return None
    if clean_retained:
        return None if clean_retained <= as_of else (
            f"the latest clean retains the commits from {clean_retained} on; files {as_of} needs may be cleaned")
    first = next((i.requested for i in timeline.instants if i.is_completed and i.action in _WRITES), None)
    if first is not None and as_of < first:
        return f"{as_of} is before the first write of the active timeline ({first}) and the table was cleaned"
    return None


def check_time_travel(timeline: Timeline, as_of: str, clean_retained: str | None) -> None:
    """Raise ``TimeTravelRefused`` when ``time_travel_refusal`` gives a reason."""
    reason = time_travel_refusal(timeline, as_of, clean_retained)
    if reason is not None:
        raise TimeTravelRefused(f"time travel to {as_of} is refused: {reason}",
                                hint="query an instant from the latest clean's earliest retained commit on, before "
                                     "the first pending write (retain more commits with hoodie.cleaner.commits."
                                     "retained to travel further back)")
# --8<-- [end:time_travel]


__all__ = ["check_time_travel", "time_travel_refusal"]
