"""Savepoint: which commit a savepoint may keep, and the savepoints a timeline holds.

A savepoint keeps a *completed* write (commit, deltacommit or replacecommit) of the active
timeline: the files of the latest slices as of it are then kept by every later clean, and the
table can be restored to it. It is refused when the commit is not such a write, when it is
savepointed already, and when it is older than the earliest commit the table's last clean retains:
that clean may have deleted, or may yet delete, files the savepoint would need (Hudi: "beyond the
lookup window"). The last clean is the newest clean instant in any state: a completed clean's
metadata records its earliest commit to retain, and a clean still requested or inflight counts too,
through its plan's earliest instant to retain. With no clean, or a clean that retains no commit in
particular, any completed write may be savepointed.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``SavepointActionExecutor`` (``hudi-client/hudi-client-common/…/hudi/table/action/savepoint/``),
``HoodieCleanMetadata.earliestCommitToRetain``, ``HoodieCleanerPlan.earliestInstantToRetain``.
"""

from __future__ import annotations

from spec.errors import InstantNotFound, InvalidOperation
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import DATA_WRITES, Action, Instant


def savepoint_times(timeline: Timeline) -> list[str]:
    """Requested times of the completed savepoints (each the time of the commit it keeps)."""
    return [i.requested for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed]


def last_clean(timeline: Timeline) -> Instant | None:
    """The newest clean of the active timeline in any state, or None: what it retains is read from
    its metadata when it completed, from its plan when it is still requested or inflight
    (``SavepointActionExecutor.execute``: ``getCleanTimeline().lastInstant()``)."""
    cleans = [i for i in timeline.instants if i.action == Action.CLEAN]
    return cleans[-1] if cleans else None


# --8<-- [start:savepoint_allowed]
def savepoint_instant(timeline: Timeline, instant_time: str | None, last_clean_retained: str | None) -> str:
    """The commit a savepoint keeps: ``instant_time``, or by default the latest completed write.

    ``last_clean_retained`` is the earliest commit to retain of ``last_clean`` (None or "" when
    there is no clean or it names none). Raises InstantNotFound when there is no
    such completed write, InvalidOperation when it is savepointed already or older than what the
    last clean retained.
    """
    writes = [i for i in timeline.instants if i.is_completed and i.action in DATA_WRITES]
    if instant_time is None:
        if not writes:
            raise InstantNotFound("there is no completed commit to savepoint", hint="write something first")
        instant_time = writes[-1].requested
    if not any(i.requested == instant_time for i in writes):
        raise InstantNotFound(f"no completed commit at {instant_time} to savepoint",
                              hint="savepoint a completed commit, deltacommit or replacecommit of the active "
                                   "timeline")
    if any(i.action == Action.SAVEPOINT and i.requested == instant_time for i in timeline.instants):
        raise InvalidOperation(f"{instant_time} is already savepointed", hint="savepoint another commit")
    if last_clean_retained and instant_time < last_clean_retained:
        raise InvalidOperation(f"cannot savepoint {instant_time}: the last clean retained only commits from "
                               f"{last_clean_retained} on", hint="savepoint a later commit")
    return instant_time
# --8<-- [end:savepoint_allowed]


__all__ = ["last_clean", "savepoint_instant", "savepoint_times"]
