"""The cleaner executed on a real table (Hudi's ``CleanPlanActionExecutor`` and ``CleanActionExecutor``).

``spec.actions.clean`` decides which files go (the plan); here they go, the way Apache Hudi leaves
the timeline: ``T.clean.requested`` (HoodieCleanerPlan) → ``T.clean.inflight`` (the same plan) →
the planned files deleted → ``T.clean`` / ``T_C.clean`` (HoodieCleanMetadata). An empty plan
writes no instant. A clean left pending by a crash is finished by the next clean.

Beside writers (optimistic concurrency control: ``clean(..., optimistic=True)``) the table lock is held
only while the plan is written and again while the clean completes (Hudi's ``scheduleTableService``
and ``CleanActionExecutor.runClean``); the deletes run outside it. The plan keeps what pending
writes and compactions need (``spec.actions.clean``), so a writer never loses a file it reads.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from reference.executors.common import (
    Clock,
    absolute,
    complete_instant,
    group_refs,
    in_partition,
    now_millis,
    read_record,
    relative,
    savepointed_files,
    timeline_of,
    write_instant,
)
from reference.instrumentation.faults import fault_point
from reference.metadata.writer import check_service_keeps_it
from reference.transaction.lock import SINGLE_WRITER_LOCK, maybe_locked, table_lock
from spec.actions.clean import CleanConfig, CleanPlan, plan_clean
from spec.actions.compaction import compaction_base_instants, pending_compaction_plans
from spec.config.table_config import TableConfig
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.timeline.active_timeline import Timeline, instant_times
from spec.timeline.avro_model import (
    HoodieActionInstant,
    HoodieCleanerPlan,
    HoodieCleanFileInfo,
    HoodieCleanMetadata,
    HoodieCleanPartitionMetadata,
    format_avro_metadata,
)
from spec.timeline.instant import Action, Instant, InstantTimeGenerator, State, format_instant_time

CLEAN_PLAN_VERSION = 2
"""Hudi writes cleaner plans and clean metadata as version 2 (file paths per partition)."""


@dataclass(frozen=True)
class CleanResult:
    """What a clean did: its instant (None when there was nothing to clean), the plan, and the files
    deleted per partition (names)."""

    instant: str | None
    plan: CleanPlan | None
    deleted: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    finished_pending: tuple[str, ...] = ()

    @property
    def total_deleted(self) -> int:
        """How many files the clean deleted."""
        return sum(len(v) for v in self.deleted.values())


SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"
"""The plan's extra metadata key listing the savepoints (``CleanerUtils.SAVEPOINTED_TIMESTAMPS``)."""


def cleaner_plan_record(storage: Storage, plan: CleanPlan, savepoints: tuple[str, ...] = ()) -> HoodieCleanerPlan:
    """The HoodieCleanerPlan of a clean plan: absolute file paths per partition (plan version 2), the last
    completed write's requested time, and the savepoints' times (comma-separated) as extra metadata when
    there are any (``CleanPlanActionExecutor.requestClean``, ``prepareExtraMetadata``)."""
    e = plan.earliest_instant_to_retain
    return HoodieCleanerPlan(
        earliest_instant_to_retain=None if e is None else HoodieActionInstant(
            timestamp=e.requested, action=e.action, state=e.state.value),
        last_completed_commit_timestamp=plan.last_completed_commit,
        extra_metadata={SAVEPOINTED_TIMESTAMPS: ",".join(savepoints)} if savepoints else {},
        policy=plan.policy,
        files_to_be_deleted_per_partition={},
        version=CLEAN_PLAN_VERSION,
        file_paths_to_be_deleted_per_partition={
            p: tuple(HoodieCleanFileInfo(file_path=absolute(storage, in_partition(p, f)),
                                         is_bootstrap_base_file=False)
                     for f in fs)
            for p, fs in plan.files_to_delete.items()},
        partitions_to_be_deleted=())


def _plan_files(storage: Storage, plan: HoodieCleanerPlan) -> dict[str, list[str]]:
    """Relative paths per partition from a cleaner plan (version 2 paths, or version 1 names)."""
    out: dict[str, list[str]] = {}
    for p, infos in (plan.file_paths_to_be_deleted_per_partition or {}).items():
        out.setdefault(p, []).extend(relative(storage, i.file_path) for i in infos if i.file_path)
    for p, names in (plan.files_to_be_deleted_per_partition or {}).items():
        out.setdefault(p, []).extend(in_partition(p, n) for n in names)
    return out


def _execute_clean(storage: Storage, table: TableConfig, timeline: Timeline, inst: Instant,
                   plan: HoodieCleanerPlan, gen: InstantTimeGenerator, started_ms: int,
                   commit_lock: StorageLockConfig | None = None, clock: Clock | None = None
                   ) -> dict[str, tuple[str, ...]]:
    """Run a requested or inflight clean from its plan: inflight file (the plan again), the deletes,
    then the completed file with HoodieCleanMetadata. A file already gone counts as a failed delete,
    as Hudi counts it. With ``commit_lock`` the completed file is written under the table lock, its
    completion time after everything then on the timeline."""
    layout = table.timeline_layout
    plan_bytes = format_avro_metadata(plan, table.table_version)
    if inst.state == State.REQUESTED:
        inst = inst.transition(State.INFLIGHT)
        write_instant(storage, inst, layout, plan_bytes)
    deleted: dict[str, tuple[str, ...]] = {}
    partitions: dict[str, HoodieCleanPartitionMetadata] = {}
    for p, paths in sorted(_plan_files(storage, plan).items()):
        ok, failed = [], []
        for path in paths:
            if storage.exists(path):
                storage.delete(path)
                ok.append(posixpath.basename(path))
                fault_point("mid_clean")  # a clean killed after its first delete
            else:
                failed.append(posixpath.basename(path))
        deleted[p] = tuple(ok)
        partitions[p] = HoodieCleanPartitionMetadata(
            partition_path=p, policy=plan.policy, delete_path_patterns=tuple(posixpath.basename(x) for x in paths),
            success_delete_files=tuple(ok), failed_delete_files=tuple(failed), is_partition_deleted=False)
    earliest = plan.earliest_instant_to_retain
    md = HoodieCleanMetadata(
        start_clean_time=inst.requested,
        time_taken_in_millis=max(0, int(time.time() * 1000) - started_ms),
        total_files_deleted=sum(len(v) for v in deleted.values()),
        earliest_commit_to_retain=earliest.timestamp if earliest else "",
        last_completed_commit_timestamp=plan.last_completed_commit_timestamp,
        partition_metadata=partitions, version=CLEAN_PLAN_VERSION, bootstrap_partition_metadata={},
        extra_metadata=plan.extra_metadata if plan.extra_metadata is not None else {})
    if commit_lock is None:
        complete_instant(storage, table, inst, gen, format_avro_metadata(md, table.table_version))
        return deleted
    with table_lock(storage, f"commit of clean {inst.requested}", commit_lock):
        complete_instant(storage, table, inst, instant_times(timeline_of(storage, table), clock),
                         format_avro_metadata(md, table.table_version))
    return deleted


def finish_pending_cleans(storage: Storage, table: TableConfig, clock: Clock | None = None) -> list[str]:
    """Finish every clean a crash left requested or inflight, from the plan it wrote (as Hudi does
    before it plans a new clean). Returns their instant times."""
    timeline = timeline_of(storage, table)
    done = []
    for inst in timeline.instants:
        if inst.action != Action.CLEAN or inst.is_completed:
            continue
        plan = read_record(storage, Instant(inst.requested, Action.CLEAN, State.REQUESTED), timeline.layout,
                           HoodieCleanerPlan)
        _execute_clean(storage, table, timeline, inst, plan, instant_times(timeline, clock), now_millis(None))
        done.append(inst.requested)
    return done


def plan_table_clean(storage: Storage, table: TableConfig, config: CleanConfig,
                     now: str | None = None, timeline: Timeline | None = None) -> CleanPlan:
    """The cleaner plan for the table as it is: its file groups, savepoints and pending compactions."""
    tl = timeline or timeline_of(storage, table)
    return plan_clean(group_refs(storage, table, tl), tl, config, savepointed_files(storage, tl),
                      compaction_base_instants(pending_compaction_plans(storage, tl)), now)


def clean(storage: Storage, table: TableConfig, config: CleanConfig | None = None, *,
          now: str | None = None, clock: Clock | None = None, locked: bool = False,
          lock: StorageLockConfig = SINGLE_WRITER_LOCK, optimistic: bool = False,
          rollback_failed: Callable[[TableConfig, Timeline], object] | None = None) -> CleanResult:
    """Plan and run the cleaner (Hudi's CleanPlanActionExecutor + CleanActionExecutor).

    Pending cleans are finished first. Nothing to clean leaves no instant. ``now`` is the current
    instant time for KEEP_LATEST_BY_HOURS (default: the clock's). ``lock``: the table lock of the
    configured provider (``WriteConfig.lock``). With ``optimistic`` (optimistic concurrency control) it is
    held only to plan and to complete, and waited for as writers wait; otherwise the clean holds it
    throughout (unless ``locked``: the caller holds it).
    ``rollback_failed``: with ``optimistic``, how failed writes are rolled back first (Hudi's cleaner does it
    under the LAZY failed-writes policy, ``CleanerUtils.rollbackFailedWrites``: only writes whose
    heartbeat expired).
    """
    check_service_keeps_it(table, "clean")
    if optimistic and not locked:
        return _clean_beside_writers(storage, table, config or CleanConfig(), now, clock, lock, rollback_failed)
    with maybe_locked(storage, locked, "clean", lock):
        s = _schedule_clean(storage, table, config or CleanConfig(), now, clock)
        if s.requested is None or s.record is None or s.gen is None:
            return CleanResult(None, s.plan, {}, s.finished)
        deleted = _execute_clean(storage, table, s.timeline, s.requested, s.record, s.gen, s.started)
        return CleanResult(s.requested.requested, s.plan, deleted, s.finished)


@dataclass(frozen=True)
class _Scheduled:
    """A clean scheduled: the pending cleans finished first, the timeline it was planned on, its plan and,
    unless the plan is empty, its requested instant (written), plan record and instant time generator."""

    finished: tuple[str, ...]
    timeline: Timeline
    plan: CleanPlan
    started: int
    requested: Instant | None = None
    record: HoodieCleanerPlan | None = None
    gen: InstantTimeGenerator | None = None


def _schedule_clean(storage: Storage, table: TableConfig, cfg: CleanConfig, now: str | None,
                    clock: Clock | None) -> _Scheduled:
    """Finish pending cleans, plan a clean and, when it deletes anything, write its requested instant
    (``CleanPlanActionExecutor``): the caller holds the lock."""
    finished = tuple(finish_pending_cleans(storage, table, clock))
    timeline = timeline_of(storage, table)
    if now is None:
        now = format_instant_time(datetime.fromtimestamp((clock or time.time)(), UTC))
    started = now_millis(None)
    plan = plan_table_clean(storage, table, cfg, now, timeline)
    if plan.is_empty:
        return _Scheduled(finished, timeline, plan, started)
    gen = instant_times(timeline, clock)
    requested = Instant(gen.next(), Action.CLEAN, State.REQUESTED)
    savepoints = tuple(i.requested for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed)
    record = cleaner_plan_record(storage, plan, savepoints)
    write_instant(storage, requested, table.timeline_layout, format_avro_metadata(record, table.table_version))
    return _Scheduled(finished, timeline, plan, started, requested, record, gen)


def _clean_beside_writers(storage: Storage, table: TableConfig, cfg: CleanConfig, now: str | None,
                          clock: Clock | None, lock: StorageLockConfig,
                          rollback_failed: Callable[[TableConfig, Timeline], object] | None) -> CleanResult:
    """The cleaner under optimistic concurrency control: failed writes rolled back, pending cleans
    finished and the plan written under the lock, the deletes outside it, the completed instant under
    it again."""
    with table_lock(storage, "schedule clean", lock):
        if rollback_failed is not None:
            rollback_failed(table, timeline_of(storage, table))
        s = _schedule_clean(storage, table, cfg, now, clock)
    if s.requested is None or s.record is None or s.gen is None:
        return CleanResult(None, s.plan, {}, s.finished)
    deleted = _execute_clean(storage, table, s.timeline, s.requested, s.record, s.gen, s.started, lock, clock)
    return CleanResult(s.requested.requested, s.plan, deleted, s.finished)


__all__ = ["CLEAN_PLAN_VERSION", "SAVEPOINTED_TIMESTAMPS", "CleanResult", "clean", "cleaner_plan_record",
           "finish_pending_cleans", "plan_table_clean"]
