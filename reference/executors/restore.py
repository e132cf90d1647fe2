"""Restore executed on a real table (Hudi's ``RestorePlanActionExecutor`` and ``BaseRestoreActionExecutor``).

``spec.actions.restore`` lists the instants to undo and says what a table with a pending restore means;
here, in an order that leaves every moment of the restore readable and a killed restore finishable:

1. ``R.restore.requested`` (HoodieRestorePlan: the savepoint, the instants newest first), then
   ``R.restore.inflight``. From here on the spec reader reads the savepoint's state
   (``spec.actions.restore.readable_timeline``).
2. The metadata table, if the table has one, is marked as being rebuilt: ``files`` moves from
   ``hoodie.table.metadata.partitions`` to ``hoodie.table.metadata.partitions.inflight`` (readers then
   list storage, Hudi's and hudi-rs's included), then its folder is deleted.
3. Every instant to undo is un-published — its completed file removed — newest first, before any data
   file is deleted: a reader that knows nothing of restores (hudi-rs) sees the table as of an earlier
   write at every moment, and the savepoint's state once all are un-published.
4. Each instant is undone as a rollback would, newest first, but without rollback instants of its own
   (command blocks carry ``R``); later savepoints are removed.
5. The metadata table is listed anew from storage (``reference.metadata.writer.initialize``, which
   marks ``files`` complete last), then ``R.restore`` / ``R_C.restore`` (HoodieRestoreMetadata) completes.

A restore killed at any step is finished from its plan — same instant, same plan — by the next writer
before it writes (``finish_pending_restores``, called where failed writes are rolled back), or by running
the restore again. Hudi's own writer refuses to start while a restore is pending, and re-running the
restore to the same savepoint finishes it (``BaseHoodieWriteClient.scheduleAndGetRestorePlan``).

A restore refused by what is on storage (no such savepoint) is refused before the table lock is taken:
the refusal changes nothing.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from reference.executors.common import (
    Clock,
    complete_instant,
    now_millis,
    remove_instant,
    timeline_of,
    write_instant,
)
from reference.executors.rollback import plan_table_rollback, rollback_plan_record, undo
from reference.instrumentation.faults import fault_point
from reference.metadata import writer as metadata_writer
from reference.metadata.writer import check_service_keeps_it
from reference.transaction.lock import SINGLE_WRITER_LOCK, maybe_locked
from spec.actions.restore import pending_restores, plan_restore
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import list_data_files
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.timeline.active_timeline import instant_times
from spec.timeline.avro_model import (
    HoodieInstantInfo,
    HoodieRestoreMetadata,
    HoodieRestorePlan,
    HoodieRollbackMetadata,
    format_avro_metadata,
)
from spec.timeline.instant import WRITE_ACTIONS, Action, Instant, State
from spec.timeline.layout import parse_instant_file_name, timeline_dir


@dataclass(frozen=True)
class RestoreResult:
    """A restore: its instant, the savepoint restored to, the instants undone (newest first)."""

    instant: str
    savepoint: str
    rolled_back: tuple[Instant, ...]
    metadata: HoodieRestoreMetadata
    resumed: bool = False


def restore(storage: Storage, table: TableConfig, savepoint_time: str, *,
            clock: Clock | None = None, locked: bool = False,
            lock: StorageLockConfig = SINGLE_WRITER_LOCK) -> RestoreResult:
    """Restore the table to a savepoint: every data-writing instant after it (completed or pending,
    compactions included) is undone newest first under one restore instant; savepoints after it go
    too. The table then reads exactly as it read at the savepoint. A restore a crash left pending is
    finished first; when it restored to the same savepoint, it is the result (Hudi reuses it). ``lock``: the
    table lock of the configured provider (``WriteConfig.lock``), unless ``locked``."""
    check_service_keeps_it(table, "restore")
    if not locked and not pending_restores(storage, timeline_of(storage, table)):
        plan_restore(timeline_of(storage, table), savepoint_time)  # refused before the lock: nothing changes
    with maybe_locked(storage, locked, "restore", lock):
        finished = finish_pending_restores(storage, table, clock=clock)
        same = [r for r in finished if r.savepoint == savepoint_time]
        if same:
            return same[-1]
        timeline = timeline_of(storage, table)
        targets = plan_restore(timeline, savepoint_time)
        r = instant_times(timeline, clock).next()
        plan = HoodieRestorePlan(instants_to_rollback=tuple(
            HoodieInstantInfo(commit_time=t.requested, action=t.action) for t in targets),
            version=2, savepoint_to_restore_timestamp=savepoint_time)
        requested = Instant(r, Action.RESTORE, State.REQUESTED)
        write_instant(storage, requested, table.timeline_layout, format_avro_metadata(plan, table.table_version))
        return _execute(storage, table, requested, plan, clock)


def finish_pending_restores(storage: Storage, table: TableConfig, *, clock: Clock | None = None) -> list[RestoreResult]:
    """Finish every restore a crash left requested or inflight, oldest first, from the plan in its requested
    file. The caller holds the table lock."""
    return [_execute(storage, table, inst, plan, clock, resumed=True)
            for inst, plan in pending_restores(storage, timeline_of(storage, table))]


def _execute(storage: Storage, table: TableConfig, inst: Instant, plan: HoodieRestorePlan, clock: Clock | None,
             resumed: bool = False) -> RestoreResult:
    """Steps 1 to 5 of the module docstring for the restore ``inst`` (requested or inflight) and its plan;
    each step is a no-op when a killed run of it had already done it."""
    layout = table.timeline_layout
    started = now_millis(None)
    r = inst.requested
    inflight = Instant(r, Action.RESTORE, State.INFLIGHT)
    if inst.state == State.REQUESTED:
        write_instant(storage, inflight, layout)
    metadata_writer.mark_rebuilding(storage)
    order = [i.commit_time for i in plan.instants_to_rollback]
    _unpublish(storage, table, order)
    fault_point("restore_unpublished")  # every instant to undo un-published, no file deleted yet
    per_instant: dict[str, tuple[HoodieRollbackMetadata | None, ...]] = {}
    undone: list[Instant] = []
    for info in plan.instants_to_rollback:
        tl = timeline_of(storage, table)
        current = [i for i in tl.instants if i.requested == info.commit_time and i.action in WRITE_ACTIONS]
        target = current[0] if current else Instant(info.commit_time, info.action, State.INFLIGHT)
        listing = list_data_files(storage, cdc=True)
        rollback_plan, appended = plan_table_rollback(storage, table, target, listing)
        record = rollback_plan_record(storage, rollback_plan, appended, {f.path: f.size for f in listing})
        per_instant[info.commit_time] = (undo(storage, table, tl, target, record, r, now_millis(None)),)
        undone.append(target)
        fault_point("mid_restore")  # a restore killed after undoing its first instant
    savepoint_time = plan.savepoint_to_restore_timestamp or ""
    tl = timeline_of(storage, table)
    for sp in [i for i in tl.instants if i.action == Action.SAVEPOINT and i.requested > savepoint_time]:
        remove_instant(storage, tl, sp)
    md = HoodieRestoreMetadata(
        start_restore_time=r, time_taken_in_millis=max(0, now_millis(None) - started),
        instants_to_rollback=tuple(order), hoodie_restore_metadata=per_instant, version=1,
        restore_instant_info=plan.instants_to_rollback, extra_metadata=None)
    complete_instant(storage, table, inflight, instant_times(timeline_of(storage, table), clock),
                     format_avro_metadata(md, table.table_version))
    return RestoreResult(r, savepoint_time, tuple(undone), md, resumed)


def _unpublish(storage: Storage, table: TableConfig, newest_first: list[str]) -> None:
    """Remove the completed files of the instants to undo, newest first (an instant already un-published, or
    already undone, has none)."""
    layout = table.timeline_layout
    timeline = timeline_of(storage, table)
    for t in newest_first:
        for name in timeline.files_of(t):
            inst = parse_instant_file_name(name, layout)
            if inst.is_completed and inst.action in WRITE_ACTIONS:  # not a savepoint sharing the time
                storage.delete(posixpath.join(timeline_dir(layout), name))


__all__ = ["RestoreResult", "finish_pending_restores", "restore"]
