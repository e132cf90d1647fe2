"""Table services executed on a real table: clean, rollback, savepoint and restore.

``spec.services`` decides *what* a service does (the plan); this module does it to the files, the
way Apache Hudi leaves them, and leaves the plan and the outcome on the timeline:

- **clean**: ``T.clean.requested`` (HoodieCleanerPlan) → ``T.clean.inflight`` (the same plan) →
  the planned files deleted → ``T.clean`` / ``T_C.clean`` (HoodieCleanMetadata). An empty plan
  writes no instant. A clean left pending by a crash is finished by the next clean.
- **rollback**: ``R.rollback.requested`` (HoodieRollbackPlan) → ``R.rollback.inflight`` (empty) →
  the target's completed file removed (un-publish), its files deleted (COW, MOR v8) or ROLLBACK
  command blocks appended in new log versions (MOR v6), its inflight and requested files removed
  → ``R.rollback`` / ``R_C.rollback`` (HoodieRollbackMetadata). A rollback left pending by a
  crash is finished from its plan by the next rollback or write. An inflight compaction is rolled
  back to requested (its base files only) before it is run again.
- **savepoint**: ``T.savepoint.inflight`` (empty) → ``T.savepoint`` / ``T_C.savepoint``
  (HoodieSavepointMetadata: the files of the latest slices as of ``T``), ``T`` being the
  savepointed commit's own time.
- **restore**: ``R.restore.requested`` (HoodieRestorePlan) → ``R.restore.inflight`` → every
  write after the savepoint undone, newest first, as a rollback would, but without rollback
  instants of its own (command blocks carry ``R``) → later savepoints removed →
  ``R.restore`` / ``R_C.restore`` (HoodieRestoreMetadata).

Paths in plans and metadata are absolute, as Hudi writes them; every function takes the table's
storage and config explicitly so that the write client can call it. Archival lives in
``reference.archive``.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from reference.faults import fault_point
from reference.lock import maybe_locked
from spec.errors import InstantNotFound, InvalidOperation, InvalidTable
from spec.file_naming import (
    ROLLBACK_WRITE_TOKEN,
    LogFileName,
    is_base_file_name,
    is_log_file_name,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.file_system_view import (
    DataFile,
    FileSystemView,
    build_file_groups,
    file_group_replacements,
    list_data_files,
)
from spec.instant import WRITE_ACTIONS, Action, Instant, InstantTimeGenerator, State, format_instant_time
from spec.log_blocks import rollback_command_block
from spec.log_format import append_blocks, read_blocks
from spec.plans import (
    HoodieActionInstant,
    HoodieCleanerPlan,
    HoodieCleanFileInfo,
    HoodieCleanMetadata,
    HoodieCleanPartitionMetadata,
    HoodieCompactionPlan,
    HoodieInstantInfo,
    HoodieRestoreMetadata,
    HoodieRestorePlan,
    HoodieRollbackMetadata,
    HoodieRollbackPartitionMetadata,
    HoodieRollbackPlan,
    HoodieRollbackRequest,
    HoodieSavepointMetadata,
    HoodieSavepointPartitionMetadata,
    format_avro_metadata,
    parse_avro_metadata,
)
from spec.services import (
    MERGE_ON_READ,
    CleanConfig,
    CleanPlan,
    GroupId,
    GroupRef,
    RollbackPlan,
    SliceRef,
    instant_to_rollback,
    plan_clean,
    plan_restore,
    plan_rollback,
)
from spec.storage import Storage
from spec.table_config import TableConfig
from spec.timeline import Timeline
from spec.timeline_layout import instant_file_path, parse_instant_file_name, read_instant_content, timeline_dir

Clock = Callable[[], float]
"""Seconds since the epoch (``time.time``); injectable so tests replay exact instant times."""

CLEAN_PLAN_VERSION = 2
"""Hudi writes cleaner plans and clean metadata as version 2 (file paths per partition)."""

DATA_WRITES = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})


# --- shared helpers ------------------------------------------------------------------------------

def _timeline(storage: Storage, table: TableConfig) -> Timeline:
    return Timeline.load(storage, table.timeline_layout)


def _generator(timeline: Timeline, clock: Clock | None, after: str | None = None) -> InstantTimeGenerator:
    """New instant times after every time on the timeline (requested and completion times) and ``after``."""
    last = max([i.completed or i.requested for i in timeline.instants] + ([after] if after else []), default=None)
    return InstantTimeGenerator(clock or time.time, last)


def _now_millis(clock: Clock | None) -> int:
    return int((clock or time.time)() * 1000)


def _write_instant(storage: Storage, inst: Instant, layout: int, data: bytes = b"") -> None:
    """Create an instant file; timeline files are never overwritten (a second writer fails)."""
    storage.create_if_absent(instant_file_path(inst, layout), data)


def _complete(storage: Storage, table: TableConfig, inst: Instant, gen: InstantTimeGenerator,
              data: bytes) -> Instant:
    """Move an inflight instant to COMPLETED (layout 2: with a completion time from the generator)."""
    done = inst.transition(State.COMPLETED, completed=gen.next() if table.timeline_layout >= 2 else None)
    _write_instant(storage, done, table.timeline_layout, data)
    return done


def absolute(storage: Storage, rel: str) -> str:
    """The absolute path Hudi writes into plans and metadata for a file relative to the base path."""
    return storage.full(rel)


def relative(storage: Storage, path: str) -> str:
    """The path relative to the base path of an absolute path from a plan (``file:`` scheme allowed)."""
    text = path.removeprefix("file://").removeprefix("file:")
    root = storage.root.rstrip("/") + "/"
    if text.startswith(root):
        return text[len(root):]
    if "://" not in text and not text.startswith("/"):
        return text
    raise InvalidTable(f"{path} is not inside the table at {storage.root}",
                       hint="the plan belongs to another table; remove the pending instant by hand")


def _rel(partition: str, name: str) -> str:
    return posixpath.join(partition, name) if partition else name


def _parse(storage: Storage, inst: Instant | str, layout: int, expect: type) -> object:
    return parse_avro_metadata(read_instant_content(storage, inst, layout), expect)


def savepointed_files(storage: Storage, timeline: Timeline) -> frozenset[str]:
    """The file names every completed savepoint keeps (its HoodieSavepointMetadata)."""
    names: set[str] = set()
    for inst in timeline.instants:
        if inst.action == Action.SAVEPOINT and inst.is_completed:
            md = _parse(storage, inst, timeline.layout, HoodieSavepointMetadata)
            assert isinstance(md, HoodieSavepointMetadata)
            for pm in md.partition_metadata.values():
                names.update(pm.savepoint_data_file)
    return frozenset(names)


def savepoint_times(timeline: Timeline) -> list[str]:
    """Requested times of the completed savepoints (each the time of the commit it keeps)."""
    return [i.requested for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed]


def compaction_plan(storage: Storage, timeline: Timeline, instant_time: str) -> HoodieCompactionPlan:
    """The plan in ``T.compaction.requested`` (kept on the timeline after the compaction completes)."""
    md = _parse(storage, f"{instant_time}.compaction.requested", timeline.layout, HoodieCompactionPlan)
    assert isinstance(md, HoodieCompactionPlan)
    return md


def pending_compaction_bases(storage: Storage, timeline: Timeline) -> dict[GroupId, str]:
    """Per file group under a pending compaction, the base instant of its operation."""
    out: dict[GroupId, str] = {}
    for inst in timeline.pending_compactions().instants:
        for op in compaction_plan(storage, timeline, inst.requested).operations or ():
            if op.file_id is not None and op.base_instant_time is not None:
                out[(op.partition_path or "", op.file_id)] = op.base_instant_time
    return out


def group_refs(storage: Storage, table: TableConfig, timeline: Timeline,
               listing: Sequence[DataFile] | None = None) -> list[GroupRef]:
    """Every file group with its committed slices, replaced groups included and marked with the
    replacecommit that replaced them: what the cleaner plans over."""
    files = list_data_files(storage) if listing is None else listing
    pending = [i.requested for i in timeline.pending_compactions().instants]
    replacements = file_group_replacements(storage, timeline)
    return [GroupRef(g.partition_path, g.file_id, tuple(SliceRef.of(s) for s in g.slices),
                     replacements.get((g.partition_path, g.file_id)))
            for g in build_file_groups(files, timeline, table.table_version, None, set(), pending)]


# =============================================================================================
# Clean
# =============================================================================================

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
        return sum(len(v) for v in self.deleted.values())


def cleaner_plan_record(storage: Storage, plan: CleanPlan) -> HoodieCleanerPlan:
    """The HoodieCleanerPlan of a clean plan: absolute file paths per partition (plan version 2)."""
    e = plan.earliest_instant_to_retain
    return HoodieCleanerPlan(
        earliest_instant_to_retain=None if e is None else HoodieActionInstant(
            timestamp=e.requested, action=e.action, state=e.state.value),
        policy=plan.policy,
        files_to_be_deleted_per_partition={},
        version=CLEAN_PLAN_VERSION,
        file_paths_to_be_deleted_per_partition={
            p: tuple(HoodieCleanFileInfo(file_path=absolute(storage, _rel(p, f)), is_bootstrap_base_file=False)
                     for f in fs)
            for p, fs in plan.files_to_delete.items()},
        partitions_to_be_deleted=())


def _plan_files(storage: Storage, plan: HoodieCleanerPlan) -> dict[str, list[str]]:
    """Relative paths per partition from a cleaner plan (version 2 paths, or version 1 names)."""
    out: dict[str, list[str]] = {}
    for p, infos in (plan.file_paths_to_be_deleted_per_partition or {}).items():
        out.setdefault(p, []).extend(relative(storage, i.file_path) for i in infos if i.file_path)
    for p, names in (plan.files_to_be_deleted_per_partition or {}).items():
        out.setdefault(p, []).extend(_rel(p, n) for n in names)
    return out


def _execute_clean(storage: Storage, table: TableConfig, timeline: Timeline, inst: Instant,
                   plan: HoodieCleanerPlan, gen: InstantTimeGenerator, started_ms: int) -> dict[str, tuple[str, ...]]:
    """Run a requested or inflight clean from its plan: inflight file (the plan again), the deletes,
    then the completed file with HoodieCleanMetadata. A file already gone counts as a failed delete,
    as Hudi counts it."""
    layout = table.timeline_layout
    plan_bytes = format_avro_metadata(plan, table.table_version)
    if inst.state == State.REQUESTED:
        inst = inst.transition(State.INFLIGHT)
        _write_instant(storage, inst, layout, plan_bytes)
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
    completed = [i for i in timeline.commits_timeline().instants if i.requested < inst.requested]
    earliest = plan.earliest_instant_to_retain
    md = HoodieCleanMetadata(
        policy=plan.policy, start_clean_time=inst.requested,
        time_taken_in_millis=max(0, int(time.time() * 1000) - started_ms),
        total_files_deleted=sum(len(v) for v in deleted.values()),
        earliest_commit_to_retain=earliest.timestamp if earliest else "",
        last_completed_commit_timestamp=completed[-1].requested if completed else "",
        partition_metadata=partitions, version=CLEAN_PLAN_VERSION, bootstrap_partition_metadata={})
    _complete(storage, table, inst, gen, format_avro_metadata(md, table.table_version))
    return deleted


def finish_pending_cleans(storage: Storage, table: TableConfig, clock: Clock | None = None) -> list[str]:
    """Finish every clean a crash left requested or inflight, from the plan it wrote (as Hudi does
    before it plans a new clean). Returns their instant times."""
    timeline = _timeline(storage, table)
    done = []
    for inst in timeline.instants:
        if inst.action != Action.CLEAN or inst.is_completed:
            continue
        plan = _parse(storage, Instant(inst.requested, Action.CLEAN, State.REQUESTED), timeline.layout,
                      HoodieCleanerPlan)
        assert isinstance(plan, HoodieCleanerPlan)
        _execute_clean(storage, table, timeline, inst, plan, _generator(timeline, clock), _now_millis(None))
        done.append(inst.requested)
    return done


def plan_table_clean(storage: Storage, table: TableConfig, config: CleanConfig,
                     now: str | None = None, timeline: Timeline | None = None) -> CleanPlan:
    """The cleaner plan for the table as it is: its file groups, savepoints and pending compactions."""
    tl = timeline or _timeline(storage, table)
    return plan_clean(group_refs(storage, table, tl), tl, config, savepointed_files(storage, tl),
                      pending_compaction_bases(storage, tl), now)


def clean(storage: Storage, table: TableConfig, config: CleanConfig | None = None, *,
          now: str | None = None, clock: Clock | None = None, locked: bool = False) -> CleanResult:
    """Plan and run the cleaner (Hudi's CleanPlanActionExecutor + CleanActionExecutor).

    Pending cleans are finished first. Nothing to clean leaves no instant. ``now`` is the current
    instant time for KEEP_LATEST_BY_HOURS (default: the clock's).
    """
    with maybe_locked(storage, locked, "clean"):
        cfg = config or CleanConfig()
        finished = tuple(finish_pending_cleans(storage, table, clock))
        timeline = _timeline(storage, table)
        if now is None:
            now = format_instant_time(datetime.fromtimestamp((clock or time.time)(), UTC))
        started = _now_millis(None)
        plan = plan_table_clean(storage, table, cfg, now, timeline)
        if plan.is_empty:
            return CleanResult(None, plan, {}, finished)
        gen = _generator(timeline, clock)
        t = gen.next()
        record = cleaner_plan_record(storage, plan)
        requested = Instant(t, Action.CLEAN, State.REQUESTED)
        _write_instant(storage, requested, table.timeline_layout, format_avro_metadata(record, table.table_version))
        deleted = _execute_clean(storage, table, timeline, requested, record, gen, started)
        return CleanResult(t, plan, deleted, finished)


# =============================================================================================
# Rollback
# =============================================================================================

@dataclass(frozen=True)
class RollbackResult:
    """A rollback: its instant, the instant undone, the plan and the metadata written."""

    instant: str
    target: Instant
    plan: HoodieRollbackPlan
    metadata: HoodieRollbackMetadata
    resumed: bool = False


def raw_group_refs(listing: Sequence[DataFile]) -> list[GroupRef]:
    """Groups with every data file, committed or not, one pseudo-slice per file: a rollback must see
    what a failed write left, which no file-system view shows."""
    groups: dict[GroupId, list[SliceRef]] = {}
    for f in listing:
        if is_base_file_name(f.name):
            b = parse_base_file_name(f.name)
            groups.setdefault((f.partition_path, b.file_id), []).append(
                SliceRef(f.partition_path, b.file_id, b.instant, f.name))
        elif is_log_file_name(f.name):
            lg = parse_log_file_name(f.name)
            groups.setdefault((f.partition_path, lg.file_id), []).append(
                SliceRef(f.partition_path, lg.file_id, lg.instant, None, (f.name,)))
    return [GroupRef(p, fid, tuple(slices)) for (p, fid), slices in sorted(groups.items())]


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
    files = list_data_files(storage) if listing is None else listing
    appended: dict[GroupId, list[str]] = {}
    if table.table_type == MERGE_ON_READ and table.table_version < 8:
        appended = logs_with_blocks_of(storage, files, target.requested)
    plan = plan_rollback(target, raw_group_refs(files), table.table_type, table.table_version, appended)
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
            files_to_be_deleted=tuple(absolute(storage, _rel(r.partition_path, f)) for f in r.files_to_delete),
            log_blocks_to_be_deleted={absolute(storage, _rel(r.partition_path, lg)):
                                      sizes.get(_rel(r.partition_path, lg), 0) for lg in logs}))
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
    return _rel(partition, LogFileName(first.file_id, first.instant, version, ROLLBACK_WRITE_TOKEN).format())


def _undo(storage: Storage, table: TableConfig, timeline: Timeline, target: Instant, plan: HoodieRollbackPlan,
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
        start_rollback_time=command_instant, time_taken_in_millis=max(0, _now_millis(None) - started_ms),
        total_files_deleted=total, commits_rollback=(target.requested,), partition_metadata=partitions, version=1,
        instants_rollback=(HoodieInstantInfo(commit_time=target.requested, action=target.action),))


# --8<-- [start:rollback_allowed]
def check_rollback_allowed(storage: Storage, timeline: Timeline, target: Instant) -> None:
    """A pending compaction is not rolled back (it is retried); a completed write is rolled back only
    when no write completed after it, and never while a savepoint keeps it."""
    if target.action == Action.COMPACTION:
        raise InvalidOperation(f"{target.requested} is a pending compaction",
                               hint="run the compaction instead of rolling it back")
    if target.is_completed:
        later = [i for i in timeline.instants if i.is_completed and i.action in DATA_WRITES
                 and i.requested > target.requested]
        if later:
            raise InvalidOperation(f"cannot roll back {target.requested}: {later[0].requested} completed after it",
                                   hint="roll back the later commits first, or restore to a savepoint")
        if target.requested in savepoint_times(timeline):
            raise InvalidOperation(f"{target.requested} is savepointed", hint="delete the savepoint first")
# --8<-- [end:rollback_allowed]


def rollback(storage: Storage, table: TableConfig, instant_time: str | None = None, *,
             clock: Clock | None = None, locked: bool = False) -> RollbackResult:
    """Explicitly roll back ``instant_time`` (default: the latest data-writing instant, completed or
    pending). Refused, with the table untouched, as ``check_rollback_allowed`` says.

    Rollbacks a crash left pending are finished first, from their plans; when one of them undid
    the instant asked for (or no instant was named), that finished rollback is the result.
    """
    with maybe_locked(storage, locked, "rollback"):
        resumed = finish_pending_rollbacks(storage, table, clock=clock)
        for r in reversed(resumed):
            if instant_time is None or r.target.requested == instant_time:
                return r
        timeline = _timeline(storage, table)
        target = instant_to_rollback(timeline, instant_time)
        check_rollback_allowed(storage, timeline, target)
        return rollback_instant(storage, table, target, clock=clock, timeline=timeline)


def finish_pending_rollbacks(storage: Storage, table: TableConfig, *,
                             clock: Clock | None = None) -> list[RollbackResult]:
    """Finish every rollback a crash left requested or inflight, oldest first, from the plan in its
    requested file (files already gone count as failed deletes). Hudi re-runs such a rollback
    rather than planning a new one."""
    out = []
    timeline = _timeline(storage, table)
    layout = table.timeline_layout
    for inst in timeline.instants:
        if inst.action != Action.ROLLBACK or inst.is_completed:
            continue
        requested = Instant(inst.requested, Action.ROLLBACK, State.REQUESTED)
        record = _parse(storage, requested, layout, HoodieRollbackPlan)
        assert isinstance(record, HoodieRollbackPlan)
        info = record.instant_to_rollback
        if info is None:
            raise InvalidTable(f"the pending rollback {inst.requested} names no instant to roll back",
                               hint="delete its files from the timeline by hand")
        tl = _timeline(storage, table)
        family = [i for i in tl.instants if i.requested == info.commit_time and i.action != Action.ROLLBACK
                  and i.action != Action.SAVEPOINT]
        target = family[0] if family else Instant(info.commit_time, info.action, State.INFLIGHT)
        started = _now_millis(None)
        inflight = requested.transition(State.INFLIGHT)
        if inst.state == State.REQUESTED:
            _write_instant(storage, inflight, layout)
        md = _undo(storage, table, tl, target, record, inst.requested, started,
                   keep_requested=_is_pending_compaction(target))
        _complete(storage, table, inflight, _generator(tl, clock), format_avro_metadata(md, table.table_version))
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
    tl = timeline or _timeline(storage, table)
    started = _now_millis(None)
    listing = list_data_files(storage)
    compaction = _is_pending_compaction(target)
    if compaction:
        listing = [f for f in listing if is_base_file_name(f.name)]
    plan, appended = plan_table_rollback(storage, table, target, listing)
    sizes = {f.path: f.size for f in listing}
    record = rollback_plan_record(storage, plan, appended, sizes)
    gen = _generator(tl, clock, after)
    r = gen.next()
    layout = table.timeline_layout
    requested = Instant(r, Action.ROLLBACK, State.REQUESTED)
    _write_instant(storage, requested, layout, format_avro_metadata(record, table.table_version))
    inflight = requested.transition(State.INFLIGHT)
    _write_instant(storage, inflight, layout)
    md = _undo(storage, table, tl, target, record, r, started, keep_requested=compaction)
    _complete(storage, table, inflight, gen, format_avro_metadata(md, table.table_version))
    return RollbackResult(r, target, record, md)


def _is_pending_compaction(target: Instant) -> bool:
    return target.action == Action.COMPACTION and not target.is_completed


# =============================================================================================
# Savepoint and restore
# =============================================================================================

@dataclass(frozen=True)
class SavepointResult:
    """A savepoint: the commit it keeps and the files kept per partition."""

    instant: str
    metadata: HoodieSavepointMetadata

    @property
    def files(self) -> frozenset[tuple[str, str]]:
        return frozenset((p, f) for p, m in self.metadata.partition_metadata.items() for f in m.savepoint_data_file)


def _last_clean_retains(storage: Storage, timeline: Timeline) -> str | None:
    cleans = [i for i in timeline.instants if i.action == Action.CLEAN and i.is_completed]
    if not cleans:
        return None
    md = _parse(storage, cleans[-1], timeline.layout, HoodieCleanMetadata)
    assert isinstance(md, HoodieCleanMetadata)
    return md.earliest_commit_to_retain or None


def savepoint_create(storage: Storage, table: TableConfig, instant_time: str | None = None, *,
                     user: str = "hudi-spec", comment: str = "", clock: Clock | None = None,
                     locked: bool = False) -> SavepointResult:
    """Savepoint a completed write (default: the latest): the files of the latest slices as of it
    are kept by every later clean, and the table can be restored to it.

    Refused when the commit is not a completed write, is savepointed already, or is older than what
    the last clean retained (its files may be gone).
    """
    with maybe_locked(storage, locked, "savepoint"):
        timeline = _timeline(storage, table)
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
        retained = _last_clean_retains(storage, timeline)
        if retained is not None and instant_time < retained:
            raise InvalidOperation(f"cannot savepoint {instant_time}: the last clean retained only commits from "
                                   f"{retained} on", hint="savepoint a later commit")
        view = FileSystemView.load(storage, table, timeline, as_of=instant_time)
        per_partition: dict[str, list[str]] = {}
        for g in view.groups:
            s = g.latest_slice
            if s is None:
                continue
            names = ([s.base_file.name] if s.base_file else []) + [lf.name for lf in s.log_files]
            per_partition.setdefault(g.partition_path, []).extend(names)
        md = HoodieSavepointMetadata(
            savepointed_by=user, savepointed_at=_now_millis(clock), comments=comment,
            partition_metadata={p: HoodieSavepointPartitionMetadata(partition_path=p,
                                                                    savepoint_data_file=tuple(sorted(fs)))
                                for p, fs in sorted(per_partition.items())})
        gen = _generator(timeline, clock)
        inflight = Instant(instant_time, Action.SAVEPOINT, State.INFLIGHT)
        _write_instant(storage, inflight, table.timeline_layout)
        _complete(storage, table, inflight, gen, format_avro_metadata(md, table.table_version))
        return SavepointResult(instant_time, md)


def savepoint_delete(storage: Storage, table: TableConfig, instant_time: str, *, locked: bool = False) -> None:
    """Delete a savepoint (Hudi's ``deleteSavepoint``): its completed file first (un-publish), then its
    inflight file; its files become cleanable again. InstantNotFound if there is no such savepoint."""
    with maybe_locked(storage, locked, "savepoint delete"):
        timeline = _timeline(storage, table)
        found = [i for i in timeline.instants if i.action == Action.SAVEPOINT and i.requested == instant_time]
        if not found:
            raise InstantNotFound(f"no savepoint at {instant_time}", hint="list them with hudi-spec savepoints")
        layout = table.timeline_layout
        names = timeline.files_of(found[0])
        for n in sorted(names, key=lambda n: parse_instant_file_name(n, layout).state, reverse=True):
            storage.delete(posixpath.join(timeline_dir(layout), n))


def savepoint_metadata(storage: Storage, timeline: Timeline, instant_time: str) -> HoodieSavepointMetadata:
    """The metadata of the completed savepoint at ``instant_time``."""
    found = [i for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed
             and i.requested == instant_time]
    if not found:
        raise InstantNotFound(f"no completed savepoint at {instant_time}", hint="list them with hudi-spec savepoints")
    md = _parse(storage, found[0], timeline.layout, HoodieSavepointMetadata)
    assert isinstance(md, HoodieSavepointMetadata)
    return md


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
    with maybe_locked(storage, locked, "restore"):
        timeline = _timeline(storage, table)
        targets = plan_restore(timeline, savepoint_time)
        started = _now_millis(None)
        gen = _generator(timeline, clock)
        r = gen.next()
        layout = table.timeline_layout
        infos = tuple(HoodieInstantInfo(commit_time=t.requested, action=t.action) for t in targets)
        requested = Instant(r, Action.RESTORE, State.REQUESTED)
        restore_plan = HoodieRestorePlan(instants_to_rollback=infos, version=2,
                                         savepoint_to_restore_timestamp=savepoint_time)
        _write_instant(storage, requested, layout, format_avro_metadata(restore_plan, table.table_version))
        inflight = requested.transition(State.INFLIGHT)
        _write_instant(storage, inflight, layout)
        per_instant: dict[str, tuple[HoodieRollbackMetadata | None, ...]] = {}
        for target in targets:
            tl = _timeline(storage, table)
            listing = list_data_files(storage)
            plan, appended = plan_table_rollback(storage, table, target, listing)
            record = rollback_plan_record(storage, plan, appended, {f.path: f.size for f in listing})
            per_instant[target.requested] = (_undo(storage, table, tl, target, record, r, _now_millis(None)),)
        tl = _timeline(storage, table)
        for sp in [i for i in tl.instants if i.action == Action.SAVEPOINT and i.requested > savepoint_time]:
            for n in sorted(tl.files_of(sp), key=lambda n: parse_instant_file_name(n, layout).state, reverse=True):
                storage.delete(posixpath.join(timeline_dir(layout), n))
        md = HoodieRestoreMetadata(
            start_restore_time=r, time_taken_in_millis=max(0, _now_millis(None) - started),
            instants_to_rollback=tuple(t.requested for t in targets), hoodie_restore_metadata=per_instant, version=1,
            restore_instant_info=infos, extra_metadata=None)
        _complete(storage, table, inflight, gen, format_avro_metadata(md, table.table_version))
        return RestoreResult(r, savepoint_time, targets, md)


def write_instants(timeline: Timeline) -> list[Instant]:
    """Data-writing instants of a timeline (any state)."""
    return [i for i in timeline.instants if i.action in WRITE_ACTIONS]


def open_table(path: str) -> tuple[Storage, TableConfig]:
    """Storage and config of the table at ``path`` (InvalidTable when there is none)."""
    storage = Storage(path)
    if not storage.exists(".hoodie/hoodie.properties"):
        raise InvalidTable(f"{path} is not a Hudi table (no .hoodie/hoodie.properties)",
                           hint="point at the table's base path")
    return storage, TableConfig.load(storage)


__all__ = [
    "CleanResult", "RestoreResult", "RollbackResult", "SavepointResult", "absolute", "check_rollback_allowed",
    "clean", "cleaner_plan_record", "compaction_plan", "finish_pending_cleans", "finish_pending_rollbacks",
    "group_refs", "open_table", "pending_compaction_bases", "plan_table_clean", "plan_table_rollback",
    "raw_group_refs", "relative", "restore", "rollback", "rollback_instant", "rollback_plan_record",
    "savepoint_create", "savepoint_delete", "savepoint_metadata", "savepoint_times", "savepointed_files",
    "write_instants",
]
