"""One write's transaction on the timeline: begin, start, complete or discard — shared by writes,
streaming checkpoints and inline table services.

Two concurrency modes, as Hudi's ``hoodie.write.concurrency.mode``:

- **single writer** (the default): the table lock (``reference.lock``) is held for the whole write.
  Before the write starts, every pending write is rolled back (``hoodie.cleaner.policy.failed.writes
  =EAGER``: with one writer, a pending write is a failed one) — except one whose heartbeat is alive,
  which belongs to a live writer under optimistic concurrency control;
- **optimistic concurrency control**: the lock is held only while the instant is created (failed
  writes rolled back, the requested and inflight instants written, a heartbeat started) and again
  while the write commits (``TransactionManager.beginTransaction``/``endTransaction``). At commit the
  timeline is read again and ``spec.timeline.conflict_resolution`` decides
  (``TransactionUtils.resolveWriteConflictIfAny``): a write whose file groups were touched by an
  instant that completed after it started rolls back its own files and raises ``WriteConflict``
  naming that instant. Failed writes are rolled back lazily (``LAZY``): only those whose heartbeat
  expired (``spec.storage.heartbeat``), so one writer never undoes another live writer's instant.

A write that raises after its instant started is undone on the spot (``discard_own_write``): the
table is byte for byte as it was.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from reference import metadata_services, metadata_writer
from reference.executors.common import (
    clustering_groups,
    compaction_plan,
    pending_clustering_groups,
    pending_clusterings,
)
from reference.executors.rollback import finish_pending_rollbacks, rollback_instant
from reference.faults import armed, die, fault_point
from reference.heartbeat import Heartbeat, live_heartbeats
from reference.lock import StorageBasedLock, table_lock
from reference.step_times import StepTimes
from spec.actions.archive import ArchiveConfig
from spec.actions.clustering import updates_to_clustering
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import HudiSpecError, WriteConflict
from spec.file_group.file_naming import is_log_file_name, parse_base_file_name, parse_log_file_name
from spec.file_group.log_file.log_format import read_blocks
from spec.storage.heartbeat import DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata, parse_commit_metadata
from spec.timeline.conflict_resolution import (
    ConcurrentOperation,
    GroupId,
    candidate_instants,
    completed_set,
    describe_groups,
    find_write_conflict,
    operations_of,
)
from spec.timeline.instant import Action, Instant, InstantTimeGenerator, State, new_instant
from spec.timeline.layout import format_instant_file_name, read_instant_content, timeline_dir
from spec.write import markers
from spec.write.service_configs import archive_config

if TYPE_CHECKING:
    from reference.options import WriteConfig

TIMELINE_TEMP = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")
"""The temporary sibling ``Storage.create_if_absent`` writes before linking an instant file into place."""

Write = Callable[[str, Timeline], CommitMetadata]
"""A transaction's work: ``(instant, timeline) → commit metadata``, writing the data files on the way."""
Clock = Callable[[], float]


class Writer(Protocol):
    """What a transaction needs of the process that writes (``reference.client.WriteClient`` is one):
    the table's storage, its clock (None: the system's), the heartbeat it judges other writers by, how
    it rolls back failed writes before it begins, and the table services it runs after it commits."""

    storage: Storage
    clock: Clock | None
    heartbeat: tuple[int, int]

    def rollback_failed_writes(self, table: TableConfig, timeline: Timeline,
                               after: str | None = None) -> list[str]: ...

    def run_inline_services(self, table: TableConfig, cfg: WriteConfig) -> None: ...


def instant_generator(timeline: Timeline, clock: Clock | None) -> InstantTimeGenerator:
    """New instant times after every time on the timeline (requested and completion times), by ``clock``."""
    last = max((i.completed or i.requested for i in timeline.instants), default=None)
    return InstantTimeGenerator(clock or time.time, last)


# --- begin: failed writes rolled back ------------------------------------------------------------


def rollback_failed_writes(writer: Writer, table: TableConfig, timeline: Timeline, after: str | None = None,
                           interval_ms: int = DEFAULT_INTERVAL_MS,
                           tolerable_misses: int = DEFAULT_TOLERABLE_MISSES) -> list[str]:
    """Before a write: every failed write is rolled back, newest first, each under a rollback instant
    with its plan and metadata (``BaseHoodieTableServiceClient.rollbackFailedWrites``); the rollback
    instants come after ``after``, the new write's instant. A pending write is failed unless its
    heartbeat is alive (a live writer under optimistic concurrency control is never undone).

    What no rollback plan can name goes first: a completed instant file left half written, data
    files a killed task left half written (``.inprogress``) and log files holding no complete
    block. Pending compactions are not rolled back: they are retried. A rollback a killed process
    left pending is finished first, from its plan (Hudi's ``getPendingRollbackInfos``: a pending
    rollback is re-run, never planned anew)."""
    storage = writer.storage
    if finish_pending_rollbacks(storage, table, clock=writer.clock):
        timeline = Timeline.load(storage, table.timeline_layout)
    pending = _drop_partial_files(storage, table, timeline, interval_ms, tolerable_misses)
    rolled: list[str] = []
    for inst in reversed(pending):
        tl = Timeline.load(storage, table.timeline_layout)
        rollback_instant(storage, table, inst, clock=writer.clock, timeline=tl, after=after)
        rolled.append(inst.requested)
    return rolled


def _drop_partial_files(storage: Storage, table: TableConfig, timeline: Timeline,
                        interval_ms: int = DEFAULT_INTERVAL_MS,
                        tolerable_misses: int = DEFAULT_TOLERABLE_MISSES) -> list[Instant]:
    """Delete what killed writers left half written; the failed writes, oldest first."""
    layout = table.timeline_layout
    for f in storage.list(timeline_dir(layout)):
        if not f.is_dir and TIMELINE_TEMP.match(f.name):  # an instant file a killed writer left half written
            storage.delete(f.path)
    clusterings = {i.requested for i in pending_clusterings(storage, timeline)}  # table services: run again
    pending = [i for i in timeline.pending_writes().instants
               if i.action != Action.COMPACTION and i.requested not in clusterings]
    if not pending:
        return pending
    live = live_heartbeats(storage, interval_ms, tolerable_misses)
    pending = [i for i in pending if i.requested not in live]
    if not pending:
        return pending
    times = {i.requested for i in pending}
    for f in storage.list("", recursive=True):
        if f.is_dir or f.path.startswith(".hoodie") or not f.name.endswith(".inprogress"):
            continue
        try:
            if parse_base_file_name(f.name.removesuffix(".inprogress")).instant in times:
                storage.delete(f.path)
        except HudiSpecError:
            continue
    for t in times:
        for data in marked_files(storage, t):
            if (is_log_file_name(posixpath.basename(data)) and storage.exists(data)
                    and not any(r.block is not None for r in read_blocks(storage.read(data)))):
                storage.delete(data)  # a log file whose only block was cut short
    return pending


def marked_files(storage: Storage, instant: str) -> list[str]:
    """The data files the write at ``instant`` named in its markers (``.hoodie/.temp/<instant>/``)."""
    return [markers.marked_file(instant, f.path)[0]
            for f in storage.list(markers.marker_dir(instant), recursive=True)
            if not f.is_dir and markers.MARKER_EXTENSION in f.name]


def begin(writer: Writer, table: TableConfig) -> tuple[str, InstantTimeGenerator, Timeline]:
    """The new write's instant, after failed writes are rolled back (their rollback instants
    follow it, as in Hudi); a generator for what comes next, and the timeline the write sees."""
    timeline = Timeline.load(writer.storage, table.timeline_layout)
    instant = instant_generator(timeline, writer.clock).next()
    if writer.rollback_failed_writes(table, timeline, instant):
        timeline = Timeline.load(writer.storage, table.timeline_layout)
    return instant, instant_generator(timeline, writer.clock), timeline


# --- start, complete, discard --------------------------------------------------------------------


def request(storage: Storage, table: TableConfig, instant: str, action: str, content: bytes = b"") -> Instant:
    """The requested instant, holding ``content`` (a table service's plan; a write's is empty), created only
    if absent."""
    inst = new_instant(instant, action)
    layout = table.timeline_layout
    storage.create_if_absent(posixpath.join(timeline_dir(layout), format_instant_file_name(inst, layout)), content)
    return inst


def start(storage: Storage, table: TableConfig, instant: str, action: str) -> Instant:
    """A new write's requested (``request``) and inflight (``mark_inflight``) instants; the inflight one."""
    return mark_inflight(storage, table, request(storage, table, instant, action))


def mark_inflight(storage: Storage, table: TableConfig, requested: Instant) -> Instant:
    """The inflight instant of a requested one, created only if absent, and the folder of the instant's
    markers; the inflight instant."""
    layout = table.timeline_layout
    inst = requested.transition(State.INFLIGHT)
    storage.create_if_absent(posixpath.join(timeline_dir(layout), format_instant_file_name(inst, layout)), b"")
    storage.mkdirs(markers.marker_dir(inst.requested))
    return inst


def complete(storage: Storage, table: TableConfig, inst: Instant, md: CommitMetadata,
             gen: InstantTimeGenerator, metadata_enable: bool | None = None,
             archive: ArchiveConfig | None = None) -> None:
    """The completed instant, with the write's metadata, created only if absent; markers removed first. The
    metadata table records the instant first (``reference.metadata_services.on_commit``; ``metadata_enable``
    None keeps the table's metadata table as it is; ``archive``, the writer's archival config, sets the
    metadata table's)."""
    layout = table.timeline_layout
    metadata_services.on_commit(storage, inst, md, gen, metadata_enable, archive)
    completed = gen.next() if layout == 2 else None
    done = inst.transition(State.COMPLETED, completed=completed)
    storage.delete_dir(markers.marker_dir(inst.requested))
    name = posixpath.join(timeline_dir(layout), format_instant_file_name(done, layout))
    content = format_commit_metadata(md, table.table_version)
    if armed("mid_commit"):  # a crash while the completed instant is being written
        storage.write_atomic(f"{timeline_dir(layout)}/.{posixpath.basename(name)}.{'0' * 32}.tmp",
                             content[: len(content) // 2])
        die()
    storage.create_if_absent(name, content)


def discard_own_write(storage: Storage, table: TableConfig, inst: Instant) -> None:
    """A write that failed with an error in this process is undone on the spot and leaves no
    trace: the data files it named in markers or by its instant, its markers and its instant
    files; the table is byte for byte as it was. Only this write's own files are touched."""
    layout = table.timeline_layout
    t = inst.requested
    for data in marked_files(storage, t):
        storage.delete(data)
    for f in storage.list("", recursive=True):
        if f.is_dir or f.path.startswith(".hoodie"):
            continue
        name = f.name.removesuffix(".inprogress")
        try:
            ours = ((name.endswith(".parquet") and parse_base_file_name(name).instant == t)
                    or (table.table_version >= 8 and is_log_file_name(name)
                        and parse_log_file_name(name).instant == t))
        except HudiSpecError:
            continue
        if ours:
            storage.delete(f.path)
    storage.delete_dir(markers.marker_dir(t))
    metadata_writer.discard(storage, t)
    timeline = Timeline.load(storage, layout)
    for name in reversed(timeline.files_of(t)):
        storage.delete(posixpath.join(timeline_dir(layout), name))


# --- the two modes -------------------------------------------------------------------------------


def transact(writer: Writer, table: TableConfig, action: str, label: str, cfg: WriteConfig, write: Write,
             times: StepTimes | None = None) -> tuple[str, CommitMetadata]:
    """One write: failed writes rolled back, the instant requested and inflight, ``write(instant,
    timeline)`` writing the data files, the instant completed with the metadata it returns, then the
    inline services — under the concurrency mode of ``cfg``. ``times``, if given, gets the start,
    commit and table services steps."""
    times = times or StepTimes()
    if cfg.optimistic:
        return _optimistic(writer, table, action, label, cfg, write, times)
    storage = writer.storage
    with table_lock(storage, label, cfg.lock):
        instant, gen, timeline = begin(writer, table)
        started = start(storage, table, instant, action)
        times.mark("start")
        try:
            fault_point("after_start")
            md = write(instant, timeline)
            fault_point("before_commit")
            reject_updates_to_clustering(storage, timeline, started, md)
            complete(storage, table, started, md, gen, cfg.metadata_enable, archive_config(cfg))
            times.mark("commit")
        except BaseException:
            discard_own_write(storage, table, started)
            raise
        writer.run_inline_services(table, cfg)
        times.mark("table services")
    return instant, md


def _optimistic(writer: Writer, table: TableConfig, action: str, label: str, cfg: WriteConfig, write: Write,
                times: StepTimes) -> tuple[str, CommitMetadata]:
    storage = writer.storage
    lock = StorageBasedLock(storage, cfg.lock)
    lock.lock(label)
    try:
        writer.heartbeat = (cfg.heartbeat_interval_ms, cfg.heartbeat_tolerable_misses)
        instant, _, timeline = begin(writer, table)
        started = start(storage, table, instant, action)
        heartbeat = Heartbeat(storage, instant, cfg.heartbeat_interval_ms).start()
        at_start = completed_set(timeline)
    finally:
        lock.unlock()
    times.mark("start")
    try:
        try:
            fault_point("after_start")
            md = write(instant, timeline)
            fault_point("before_commit")
            lock.lock(f"commit of {label}")
            try:
                now = Timeline.load(storage, table.timeline_layout)
                mine = now.get(instant)
                if mine is None or mine.state != State.INFLIGHT:
                    raise WriteConflict(f"write {instant} is no longer inflight on the timeline: another writer "
                                        "rolled it back", hint="retry the write")
                resolve_write_conflict(storage, now, started, md, at_start, table)
                if not lock.holds():
                    raise WriteConflict(f"the table lock was lost before {instant} could commit",
                                        hint="the write was rolled back; retry it")
                complete(storage, table, started, md, instant_generator(now, writer.clock), cfg.metadata_enable,
                         archive_config(cfg))
                times.mark("commit")
                writer.run_inline_services(table, cfg)
                times.mark("table services")
            finally:
                lock.unlock()
        except BaseException:
            discard_own_write(storage, table, started)
            raise
    finally:
        heartbeat.stop()
    return instant, md


def reject_updates_to_clustering(storage: Storage, timeline: Timeline, inst: Instant, md: CommitMetadata) -> None:
    """A write touching a file group a pending clustering rewrites fails (Hudi's ``SparkRejectUpdateStrategy``,
    ``spec.actions.clustering.updates_to_clustering``): WriteConflict, and the caller rolls the write back."""
    held = pending_clustering_groups(storage, timeline)
    rejected = updates_to_clustering(ConcurrentOperation.of_commit(inst, md).file_groups, held)
    if rejected:
        raise WriteConflict(
            f"write {inst.requested} touches file group(s) the pending clustering "
            f"{', '.join(sorted({held[g] for g in rejected}))} is rewriting: {describe_groups(rejected)}; the write "
            "was rolled back and left nothing behind", hint="let the clustering complete, then retry the write")


def resolve_write_conflict(storage: Storage, timeline: Timeline, inst: Instant, md: CommitMetadata,
                           completed_at_start: frozenset[str], table: TableConfig | None = None) -> None:
    """``TransactionUtils.resolveWriteConflictIfAny``: WriteConflict when an instant that completed
    after this write started (or a table service scheduled after it) touched one of its file groups;
    the candidates by ``table``'s version and type (``spec.timeline.conflict_resolution.candidate_instants``)."""
    version, mor = (table.table_version, table.table_type == MERGE_ON_READ) if table is not None else (6, False)
    candidates = candidate_instants(timeline, inst.requested, completed_at_start, version, mor)
    metadata: dict[str, CommitMetadata] = {}
    plans: dict[str, list[GroupId]] = {}
    for c in candidates:
        if c.is_completed:
            metadata[c.requested] = parse_commit_metadata(read_instant_content(storage, c, timeline.layout))
        elif c.action == Action.COMPACTION:
            plans[c.requested] = [(o.partition_path, o.file_id)
                                  for o in compaction_plan(storage, c.requested, timeline.layout).operations]
        else:
            plans[c.requested] = list(clustering_groups(storage, c, timeline.layout))
    this = ConcurrentOperation.of_commit(inst, md)
    reject_updates_to_clustering(storage, timeline, inst, md)
    found = find_write_conflict(this, operations_of(candidates, metadata, plans))
    if found is not None:
        other, groups = found
        raise WriteConflict(
            f"write {inst.requested} conflicts with {other.action} {other.instant}, which "
            f"{'completed' if other.instant in metadata else 'was scheduled'} after it started and touched the "
            f"same file group(s): {describe_groups(groups)}; the write was rolled back and left nothing behind",
            hint="retry the write: it will start from the table as it is now")


__all__ = ["TIMELINE_TEMP", "Writer", "begin", "complete", "discard_own_write", "instant_generator", "mark_inflight",
           "marked_files", "reject_updates_to_clustering", "request", "resolve_write_conflict",
           "rollback_failed_writes", "start", "transact"]
