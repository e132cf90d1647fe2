"""Rollbacks executed on a real table (Hudi's ``BaseRollbackActionExecutor`` and its copy-on-write and
merge-on-read subclasses).

``spec.actions.rollback`` decides what a rollback undoes and whether it may; here it is done:
``R.rollback.requested`` (HoodieRollbackPlan) → ``R.rollback.inflight`` (empty) → the target's
completed file removed (un-publish), its files deleted (COW, MOR v8) or ROLLBACK command blocks
appended in new log versions (MOR v6), its inflight and requested files removed → ``R.rollback`` /
``R_C.rollback`` (HoodieRollbackMetadata). A rollback left pending by a crash is finished from its
plan by the next rollback or write. An inflight compaction is rolled back to requested (its base
files only) before it is run again.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reference.executors.common import (
    Clock,
    absolute,
    complete_instant,
    in_partition,
    now_millis,
    read_record,
    relative,
    timeline_of,
    write_instant,
)
from reference.instrumentation.faults import fault_point
from reference.metadata.writer import check_service_keeps_it
from reference.transaction.lock import SINGLE_WRITER_LOCK, maybe_locked
from spec.actions.file_refs import GroupId
from spec.actions.rollback import (
    RollbackPlan,
    check_rollback_allowed,
    groups_of_files,
    instant_to_rollback,
    plan_rollback,
)
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import InvalidTable
from spec.file_group.file_naming import (
    ROLLBACK_WRITE_TOKEN,
    LogFileName,
    is_base_file_name,
    is_log_file_name,
    parse_log_file_name,
)
from spec.file_group.file_system_view import DataFile, list_data_files
from spec.file_group.log_file.log_blocks import rollback_command_block
from spec.file_group.log_file.log_format import append_blocks, read_blocks
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.timeline.active_timeline import Timeline, instant_times
from spec.timeline.avro_model import (
    HoodieInstantInfo,
    HoodieRollbackMetadata,
    HoodieRollbackPartitionMetadata,
    HoodieRollbackPlan,
    HoodieRollbackRequest,
    format_avro_metadata,
)
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import parse_instant_file_name, timeline_dir


@dataclass(frozen=True)
class RollbackResult:
    """A rollback: its instant, the instant undone, the plan and the metadata written."""

    instant: str
    target: Instant
    plan: HoodieRollbackPlan
    metadata: HoodieRollbackMetadata
    resumed: bool = False


def logs_with_blocks_of(storage: Storage, listing: Sequence[DataFile], instant_time: str) -> dict[GroupId, list[str]]:
    """Per file group, the log files holding a block written by ``instant_time`` (v6 logs are shared
    by deltacommits: the blocks say who wrote them)."""
    out: dict[GroupId, list[str]] = {}
    for f in listing:
        if not is_log_file_name(f.name):
            continue
        for rec in read_blocks(storage.read(f.path)):
            if rec.block is not None and rec.block.instant_time == instant_time:
                out.setdefault((f.partition_path, parse_log_file_name(f.name).file_id), []).append(f.name)
                break
    return out


def plan_table_rollback(storage: Storage, table: TableConfig, target: Instant,
                        listing: Sequence[DataFile] | None = None) -> tuple[RollbackPlan, dict[GroupId, list[str]]]:
    """The rollback plan of ``target`` over the table's files, and (v6 MOR) the logs it appended to."""
    files = list_data_files(storage, cdc=True) if listing is None else listing
    appended: dict[GroupId, list[str]] = {}
    if table.table_type == MERGE_ON_READ and table.table_version < 8:
        appended = logs_with_blocks_of(storage, files, target.requested)
    groups = groups_of_files((f.partition_path, f.name) for f in files)
    plan = plan_rollback(target, groups, table.table_type, table.table_version, appended)
    return plan, appended


def rollback_plan_record(storage: Storage, plan: RollbackPlan, appended: Mapping[GroupId, Sequence[str]],
                         sizes: Mapping[str, int]) -> HoodieRollbackPlan:
    """The HoodieRollbackPlan: per group the absolute paths to delete and (v6 MOR) the logs whose
    blocks get rolled back, with their sizes."""
    t = plan.instant_to_rollback
    requests = []
    for r in plan.requests:
        logs = appended.get((r.partition_path, r.file_id), ()) if r.command_block_log else ()
        requests.append(HoodieRollbackRequest(
            partition_path=r.partition_path, file_id=r.file_id, latest_base_instant=r.latest_base_instant or "",
            files_to_be_deleted=tuple(absolute(storage, in_partition(r.partition_path, f)) for f in r.files_to_delete),
            log_blocks_to_be_deleted={absolute(storage, in_partition(r.partition_path, lg)):
                                      sizes.get(in_partition(r.partition_path, lg), 0) for lg in logs}))
    return HoodieRollbackPlan(instant_to_rollback=HoodieInstantInfo(commit_time=t.requested, action=t.action),
                              rollback_requests=tuple(requests), version=1)


@dataclass
class _Outcome:
    """One partition's share of a rollback, as HoodieRollbackPartitionMetadata records it."""

    ok: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    logs: dict[str, int] = field(default_factory=dict)
    from_failed: dict[str, int] = field(default_factory=dict)


def _command_log(storage: Storage, partition: str, touched_log: str) -> str:
    """The new log file of a ROLLBACK command block: the touched slice's log, next version, token 1-0-1
    (versions counted on the listing now, so a crash-retried rollback never reuses a name)."""
    first = parse_log_file_name(posixpath.basename(relative(storage, touched_log)))
    versions = [lg.version for f in storage.list(partition) if not f.is_dir and is_log_file_name(f.name)
                for lg in (parse_log_file_name(f.name),) if (lg.file_id, lg.instant) == (first.file_id, first.instant)]
    version = max(versions, default=0) + 1
    return in_partition(partition, LogFileName(first.file_id, first.instant, version, ROLLBACK_WRITE_TOKEN).format())


def undo(storage: Storage, table: TableConfig, timeline: Timeline, target: Instant, plan: HoodieRollbackPlan,
          command_instant: str, started_ms: int, keep_requested: bool = False) -> HoodieRollbackMetadata:
    """Carry out a rollback plan: un-publish the target, delete its files, append ROLLBACK command
    blocks (v6 MOR; INSTANT_TIME ``command_instant``), then remove the target's pending files — all
    but its requested file when ``keep_requested`` (an inflight compaction goes back to requested,
    Hudi's ``revertCompactionInflightToRequested``)."""
    layout = table.timeline_layout
    names = timeline.files_of(target)
    completed = [n for n in names if parse_instant_file_name(n, layout).is_completed]
    for n in completed:  # un-publish first: readers stop seeing the instant before its files go
        storage.delete(posixpath.join(timeline_dir(layout), n))
    outcome: dict[str, _Outcome] = {}
    total = 0
    for req in plan.rollback_requests or ():
        e = outcome.setdefault(req.partition_path, _Outcome())
        for path in req.files_to_be_deleted:
            rel = relative(storage, path)
            if storage.exists(rel):
                storage.delete(rel)
                e.ok.append(path)
                total += 1
                fault_point("mid_rollback")  # a rollback killed after its first delete
            else:
                e.failed.append(path)
        if req.log_blocks_to_be_deleted:
            rel = _command_log(storage, req.partition_path, next(iter(req.log_blocks_to_be_deleted)))
            append_blocks(storage, rel, [rollback_command_block(command_instant, target.requested)])
            fault_point("mid_rollback")  # (MOR v6) a rollback killed after its first command block
            e.logs[absolute(storage, rel)] = storage.size(rel)
            e.from_failed.update(req.log_blocks_to_be_deleted)
    storage.delete_dir(f".hoodie/.temp/{target.requested}")
    for n in sorted(set(names) - set(completed), key=lambda n: parse_instant_file_name(n, layout).state,
                    reverse=True):  # inflight, then requested
        if keep_requested and parse_instant_file_name(n, layout).state == State.REQUESTED:
            continue
        storage.delete(posixpath.join(timeline_dir(layout), n))
    partitions = {p: HoodieRollbackPartitionMetadata(
        partition_path=p, success_delete_files=tuple(e.ok), failed_delete_files=tuple(e.failed),
        rollback_log_files=e.logs, log_files_from_failed_commit=e.from_failed)
        for p, e in sorted(outcome.items())}
    return HoodieRollbackMetadata(
        start_rollback_time=command_instant, time_taken_in_millis=max(0, now_millis(None) - started_ms),
        total_files_deleted=total, commits_rollback=(target.requested,), partition_metadata=partitions, version=1,
        instants_rollback=(HoodieInstantInfo(commit_time=target.requested, action=target.action),))



def rollback(storage: Storage, table: TableConfig, instant_time: str | None = None, *,
             clock: Clock | None = None, locked: bool = False,
             lock: StorageLockConfig = SINGLE_WRITER_LOCK) -> RollbackResult:
    """Explicitly roll back ``instant_time`` (default: the latest data-writing instant, completed or
    pending). Refused, with the table untouched, as ``spec.actions.rollback.check_rollback_allowed`` says.

    Rollbacks a crash left pending are finished first, from their plans; when one of them undid
    the instant asked for (or no instant was named), that finished rollback is the result. A rollback
    refused by what is on storage now is refused before the table lock is taken: the refusal changes
    nothing, not even the lock's file. ``lock``: the table lock of the configured provider
    (``WriteConfig.lock``), unless ``locked``.
    """
    check_service_keeps_it(table, "roll back")
    if not locked:
        timeline = timeline_of(storage, table)
        if not timeline.filter(lambda i: i.action == Action.ROLLBACK and not i.is_completed).instants:
            check_rollback_allowed(timeline, instant_to_rollback(timeline, instant_time))
    with maybe_locked(storage, locked, "rollback", lock):
        resumed = finish_pending_rollbacks(storage, table, clock=clock)
        for r in reversed(resumed):
            if instant_time is None or r.target.requested == instant_time:
                return r
        timeline = timeline_of(storage, table)
        target = instant_to_rollback(timeline, instant_time)
        check_rollback_allowed(timeline, target)
        return rollback_instant(storage, table, target, clock=clock, timeline=timeline)


def finish_pending_rollbacks(storage: Storage, table: TableConfig, *,
                             clock: Clock | None = None) -> list[RollbackResult]:
    """Finish every rollback a crash left requested or inflight, oldest first, from the plan in its
    requested file (files already gone count as failed deletes). Hudi re-runs such a rollback
    rather than planning a new one."""
    out = []
    timeline = timeline_of(storage, table)
    layout = table.timeline_layout
    for inst in timeline.instants:
        if inst.action != Action.ROLLBACK or inst.is_completed:
            continue
        requested = Instant(inst.requested, Action.ROLLBACK, State.REQUESTED)
        record = read_record(storage, requested, layout, HoodieRollbackPlan)
        info = record.instant_to_rollback
        if info is None:
            raise InvalidTable(f"the pending rollback {inst.requested} names no instant to roll back",
                               hint="delete its files from the timeline by hand")
        tl = timeline_of(storage, table)
        family = [i for i in tl.instants if i.requested == info.commit_time and i.action != Action.ROLLBACK
                  and i.action != Action.SAVEPOINT]
        target = family[0] if family else Instant(info.commit_time, info.action, State.INFLIGHT)
        started = now_millis(None)
        inflight = requested.transition(State.INFLIGHT)
        if inst.state == State.REQUESTED:
            write_instant(storage, inflight, layout)
        md = undo(storage, table, tl, target, record, inst.requested, started,
                  keep_requested=_goes_back_to_plan(storage, table, target))
        complete_instant(storage, table, inflight, instant_times(tl, clock),
                         format_avro_metadata(md, table.table_version))
        out.append(RollbackResult(inst.requested, target, record, md, resumed=True))
    return out


def rollback_instant(storage: Storage, table: TableConfig, target: Instant, *, clock: Clock | None = None,
                     timeline: Timeline | None = None, after: str | None = None) -> RollbackResult:
    """Roll back one instant under a new rollback instant (no checks: the write client calls this for
    its own failed writes, the compactor for an inflight compaction).

    An inflight compaction is rolled back as Hudi's ``HoodieTable.rollbackInflightCompaction`` does
    (``BaseHoodieTableServiceClient.compact`` calls it before it runs the plan again): only the base
    files it wrote are deleted (the log files of its slice hold later deltacommits), and the
    instant goes back to requested, its plan kept."""
    tl = timeline or timeline_of(storage, table)
    started = now_millis(None)
    listing = list_data_files(storage, cdc=True)
    compaction = target.action == Action.COMPACTION and not target.is_completed
    back_to_plan = _goes_back_to_plan(storage, table, target)
    if compaction:
        # its base files, and the CDC logs beside them (a CDC table's); not the slice's data logs
        listing = [f for f in listing if is_base_file_name(f.name) or f.name.endswith(".cdc")]
    plan, appended = plan_table_rollback(storage, table, target, listing)
    sizes = {f.path: f.size for f in listing}
    record = rollback_plan_record(storage, plan, appended, sizes)
    gen = instant_times(tl, clock, after)
    r = gen.next()
    layout = table.timeline_layout
    requested = Instant(r, Action.ROLLBACK, State.REQUESTED)
    write_instant(storage, requested, layout, format_avro_metadata(record, table.table_version))
    inflight = requested.transition(State.INFLIGHT)
    write_instant(storage, inflight, layout)
    md = undo(storage, table, tl, target, record, r, started, keep_requested=back_to_plan)
    complete_instant(storage, table, inflight, gen, format_avro_metadata(md, table.table_version))
    return RollbackResult(r, target, record, md)


def _goes_back_to_plan(storage: Storage, table: TableConfig, target: Instant) -> bool:
    """An inflight compaction or clustering: rolled back to its requested plan (``rollbackInflightCompaction``,
    ``rollbackInflightClustering``), which is run again."""
    if target.is_completed:
        return False
    if target.action == Action.COMPACTION:
        return True
    from spec.actions.clustering import clustering_plan, is_clustering

    return (target.action in (Action.CLUSTERING, Action.REPLACE_COMMIT)
            and is_clustering(target.action, clustering_plan(storage, target, table.timeline_layout)))


__all__ = [
    "RollbackResult", "finish_pending_rollbacks", "logs_with_blocks_of", "plan_table_rollback",
    "rollback", "rollback_instant", "rollback_plan_record", "undo",
]
