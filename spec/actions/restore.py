"""Restore: the instants a restore to a savepoint rolls back, newest first.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``RestorePlanActionExecutor`` (``hudi-client/hudi-client-common/…/hudi/table/action/restore/``),
the ``HoodieRestorePlan`` it writes.
"""

from __future__ import annotations

from spec.actions.savepoint import savepoint_times
from spec.errors import InstantNotFound
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import WRITE_ACTIONS, Action, Instant


def savepoint_to_restore(timeline: Timeline, savepoint_time: str | None = None) -> str:
    """The savepoint a restore goes back to: the one named, else the newest completed savepoint.
    InstantNotFound when none is named and there is none."""
    if savepoint_time is not None:
        return savepoint_time
    saved = savepoint_times(timeline)
    if not saved:
        raise InstantNotFound("there is no savepoint to restore to", hint="savepoint a commit first")
    return saved[-1]


# --8<-- [start:restore_plan]
def plan_restore(timeline: Timeline, savepoint_time: str) -> tuple[Instant, ...]:
    """Restoring to a savepoint rolls back every data-writing instant requested after it
    (completed or pending, compactions included), newest first (HoodieRestorePlan)."""
    if not any(i.action == Action.SAVEPOINT and i.is_completed and i.requested == savepoint_time
               for i in timeline.instants):
        raise InstantNotFound(f"no completed savepoint at {savepoint_time}",
                              hint="restore only to a savepoint that is on the timeline")
    later = [i for i in timeline.instants if i.action in WRITE_ACTIONS and i.requested > savepoint_time]
    return tuple(reversed(later))
# --8<-- [end:restore_plan]


__all__ = ["plan_restore", "savepoint_to_restore"]
