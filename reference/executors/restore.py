"""Restore executed on a real table (Hudi's ``RestorePlanActionExecutor`` and ``BaseRestoreActionExecutor``).

``spec.actions.restore`` lists the instants to undo; here: ``R.restore.requested`` (HoodieRestorePlan)
→ ``R.restore.inflight`` → every write after the savepoint undone, newest first, as a rollback
would, but without rollback instants of its own (command blocks carry ``R``) → later savepoints
removed → ``R.restore`` / ``R_C.restore`` (HoodieRestoreMetadata).
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.executors.common import (
    Clock,
    complete_instant,
    instant_times,
    now_millis,
    remove_instant,
    timeline_of,
    write_instant,
)
from reference.executors.rollback import plan_table_rollback, rollback_plan_record, undo
from reference.faults import fault_point
from reference.lock import maybe_locked
from reference.metadata_writer import check_service_keeps_it
from spec.actions.restore import plan_restore
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import list_data_files
from spec.storage.hoodie_storage import Storage
from spec.timeline.avro_model import (
    HoodieInstantInfo,
    HoodieRestoreMetadata,
    HoodieRestorePlan,
    HoodieRollbackMetadata,
    format_avro_metadata,
)
from spec.timeline.instant import Action, Instant, State


@dataclass(frozen=True)
class RestoreResult:
    """A restore: its instant, the savepoint restored to, the instants undone (newest first)."""

    instant: str
    savepoint: str
    rolled_back: tuple[Instant, ...]
    metadata: HoodieRestoreMetadata


def restore(storage: Storage, table: TableConfig, savepoint_time: str, *,
            clock: Clock | None = None, locked: bool = False) -> RestoreResult:
    """Restore the table to a savepoint: every data-writing instant after it (completed or pending,
    compactions included) is undone newest first under one restore instant; savepoints after it go
    too. The table then reads exactly as it read at the savepoint."""
    check_service_keeps_it(table, "restore")
    with maybe_locked(storage, locked, "restore"):
        timeline = timeline_of(storage, table)
        targets = plan_restore(timeline, savepoint_time)
        started = now_millis(None)
        gen = instant_times(timeline, clock)
        r = gen.next()
        layout = table.timeline_layout
        infos = tuple(HoodieInstantInfo(commit_time=t.requested, action=t.action) for t in targets)
        requested = Instant(r, Action.RESTORE, State.REQUESTED)
        restore_plan = HoodieRestorePlan(instants_to_rollback=infos, version=2,
                                         savepoint_to_restore_timestamp=savepoint_time)
        write_instant(storage, requested, layout, format_avro_metadata(restore_plan, table.table_version))
        inflight = requested.transition(State.INFLIGHT)
        write_instant(storage, inflight, layout)
        per_instant: dict[str, tuple[HoodieRollbackMetadata | None, ...]] = {}
        for target in targets:
            tl = timeline_of(storage, table)
            listing = list_data_files(storage)
            plan, appended = plan_table_rollback(storage, table, target, listing)
            record = rollback_plan_record(storage, plan, appended, {f.path: f.size for f in listing})
            per_instant[target.requested] = (undo(storage, table, tl, target, record, r, now_millis(None)),)
            fault_point("mid_restore")  # a restore killed after undoing its first instant
        tl = timeline_of(storage, table)
        for sp in [i for i in tl.instants if i.action == Action.SAVEPOINT and i.requested > savepoint_time]:
            remove_instant(storage, tl, sp)
        md = HoodieRestoreMetadata(
            start_restore_time=r, time_taken_in_millis=max(0, now_millis(None) - started),
            instants_to_rollback=tuple(t.requested for t in targets), hoodie_restore_metadata=per_instant, version=1,
            restore_instant_info=infos, extra_metadata=None)
        complete_instant(storage, table, inflight, gen, format_avro_metadata(md, table.table_version))
        return RestoreResult(r, savepoint_time, targets, md)


__all__ = ["RestoreResult", "restore"]
