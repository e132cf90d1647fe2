"""Restore: the instants a restore to a savepoint rolls back, newest first, and what a table with a restore
still pending means.

A restore writes its plan (``R.restore.requested``: the savepoint and the instants to roll back) before it
changes anything, then undoes those instants one by one. From the moment the plan is on the timeline, the
table means what the restore will leave: the savepoint's state. A reader of a table whose restore is
pending (requested or inflight, e.g. its process was killed) reads the active timeline without the instants
the plan rolls back (``timeline_as_restored``), so it never sees a state half way between the table before
the restore and the savepoint; and the next writer finishes the restore from the same plan before it writes.

Apache Hudi's readers give no such guarantee — ``BaseHoodieWriteClient.restoreToSavepoint`` warns that
queries of the files it deletes "will mostly fail" while it runs — and Hudi's next writer refuses to start
while a restore is pending (``startCommit``: "Found pending restore in active timeline"); running the restore
to the same savepoint again finishes that restore instant from its plan (``scheduleAndGetRestorePlan``),
which is what this writer does before any write.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``RestorePlanActionExecutor`` (``hudi-client/hudi-client-common/…/hudi/table/action/restore/``),
the ``HoodieRestorePlan`` it writes, ``BaseRestoreActionExecutor``, ``BaseHoodieWriteClient``
(``restoreToSavepoint``, ``scheduleAndGetRestorePlan``, ``startCommit``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from spec.actions.savepoint import savepoint_times
from spec.errors import HudiSpecError, InstantNotFound, InvalidTable
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import WRITE_ACTIONS, Action, Instant, State
from spec.timeline.layout import read_instant_content

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage
    from spec.timeline.avro_model import HoodieRestorePlan


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


# --8<-- [start:pending_restore]
def pending_restores(storage: Storage, timeline: Timeline) -> list[tuple[Instant, HoodieRestorePlan]]:
    """The restores on the timeline that did not complete, oldest first, each with the plan its requested file
    holds. InvalidTable when a pending restore has no readable plan (nothing then says what the table means)."""
    out = []
    for inst in timeline.instants:
        if inst.action != Action.RESTORE or inst.is_completed:
            continue
        from spec.timeline.avro_model import HoodieRestorePlan, parse_avro_metadata  # Hudi's Avro model, loaded here

        requested = Instant(inst.requested, Action.RESTORE, State.REQUESTED)
        try:
            plan = parse_avro_metadata(read_instant_content(storage, requested, timeline.layout), HoodieRestorePlan)
        except (HudiSpecError, OSError) as err:  # no plan: nothing says what the table means
            raise InvalidTable(f"the pending restore {inst.requested} has no readable plan: {err}",
                               hint="put its requested file back from a backup") from err
        out.append((inst, plan))
    return out


def restored_instants(plans: Iterable[HoodieRestorePlan]) -> frozenset[str]:
    """The requested times of the instants the restore plans roll back."""
    return frozenset(i.commit_time for plan in plans for i in plan.instants_to_rollback)


def timeline_as_restored(timeline: Timeline, plans: Iterable[HoodieRestorePlan]) -> Timeline:
    """What a table with pending restores means: its timeline without the instants their plans roll back
    (every data-writing instant after the savepoint), so a reader reads the savepoint's state whatever part
    of the restore is done."""
    undone = restored_instants(plans)
    if not undone:
        return timeline
    return timeline.filter(lambda i: not (i.requested in undone and i.action in WRITE_ACTIONS))


def readable_timeline(storage: Storage, timeline: Timeline) -> Timeline:
    """The timeline a reader reads a table by: the active timeline as its pending restores will leave it."""
    pending = pending_restores(storage, timeline)
    return timeline_as_restored(timeline, (plan for _, plan in pending)) if pending else timeline
# --8<-- [end:pending_restore]


__all__ = ["pending_restores", "plan_restore", "readable_timeline", "restored_instants", "savepoint_to_restore",
           "timeline_as_restored"]
