"""One write's transaction on the timeline: begin, start, complete or discard — shared by writes,
streaming checkpoints and inline table services.

Two concurrency modes, as Hudi's ``hoodie.write.concurrency.mode``:

- **single writer** (the default): the table lock (``reference.transaction.lock``) is held for the whole write.
  Before the write starts, every pending write is rolled back (``hoodie.cleaner.policy.failed.writes
  =EAGER``: with one writer, a pending write is a failed one) — except one whose heartbeat is alive,
  which belongs to a live writer under optimistic concurrency control;
- **optimistic concurrency control**: the lock is held only while the instant is created (failed
  writes rolled back, the requested and inflight instants written, a heartbeat started) and again
  while the write commits (``TransactionManager.beginTransaction``/``endTransaction``). At commit the
  timeline is read again and ``spec.timeline.conflict_resolution`` decides
  (``TransactionUtils.resolveWriteConflictIfAny``): a write whose file groups were touched by an
  instant that completed after it started raises ``WriteConflict`` naming that instant and is left as
  Apache Hudi's writer leaves it: its data files written, its instant inflight, its heartbeat stopped —
  a failed write, which the next writer rolls back (``BaseHoodieWriteClient.commitStats`` throws
  ``HoodieWriteConflictException`` from ``preCommit`` and rolls nothing back; measured with Apache Hudi
  1.2.0, ``tests/test_hudi_mixed_writers.py``). Failed writes are rolled back lazily (``LAZY``): only those
  whose heartbeat expired (``spec.storage.heartbeat``), so one writer never undoes another live writer's
  instant.

A write that raises for any other reason after its instant started is undone on the spot
(``discard_own_write``): the table is byte for byte as it was.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from reference.instrumentation.faults import armed, die, fault_point
from reference.instrumentation.pauses import pause_point
from reference.instrumentation.step_times import StepTimes
from reference.metadata import table_services as metadata_services
from reference.metadata import writer as metadata_writer
from reference.transaction.heartbeat import Heartbeat
from reference.transaction.lock import make_lock, table_lock
from spec.actions.archive import ArchiveConfig
from spec.actions.clustering import clustering_groups, pending_clustering_groups, updates_to_clustering
from spec.actions.compaction import read_compaction_plan
from spec.config.refused_options import BUCKET_CONFLICT_STRATEGY, conflict_strategy_of
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import HudiSpecError, WriteConflict
from spec.file_group.file_naming import is_log_file_name, parse_base_file_name, parse_log_file_name
from spec.metadata.record_index import Sizing
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline, instant_times
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
    from reference.config.options import WriteConfig

TIMELINE_TEMP = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")
"""The temporary sibling ``Storage.create_if_absent`` writes before linking an instant file into place."""

Write = Callable[[str, Timeline], CommitMetadata]
"""A transaction's work: ``(instant, timeline) → commit metadata``, writing the data files on the way."""
Clock = Callable[[], float]


class Writer(Protocol):
    """What a transaction needs of the process that writes (``reference.write.client.WriteClient`` is one):
    the table's storage, its clock (None: the system's), the heartbeat it judges other writers by, how
    it rolls back failed writes before it begins, the cleaner and archiver the metadata table's writer runs
    on the metadata table as the instant completes, and the table services it runs after it commits. The
    table services are the executors' (``reference.executors.service_client``), which this package never
    imports: the writer hands them in."""

    storage: Storage
    clock: Clock | None
    heartbeat: tuple[int, int]
    metadata_table_services: metadata_writer.TableServices

    def rollback_failed_writes(self, table: TableConfig, timeline: Timeline,
                               after: str | None = None) -> list[str]: ...

    def run_inline_services(self, table: TableConfig, cfg: WriteConfig) -> None: ...


def marked_files(storage: Storage, instant: str) -> list[str]:
    """The data files the write at ``instant`` named in its markers (``.hoodie/.temp/<instant>/``)."""
    return [markers.marked_file(instant, f.path)[0]
            for f in storage.list(markers.marker_dir(instant), recursive=True)
            if not f.is_dir and markers.is_marker_name(f.name)]


def begin(writer: Writer, table: TableConfig) -> tuple[str, InstantTimeGenerator, Timeline]:
    """The new write's instant, after failed writes are rolled back; a generator for what comes next, and the
    timeline the write sees. The rollbacks come first and the write's time after them
    (``BaseHoodieWriteClient.startCommit``; ``spec.model.table_model.start_commit``), unless the writer's clock
    names the write's time (a clock whose ``pinned`` is true, as a replay's: Hudi's ``startCommitWithTime``),
    which the write takes first, its rollbacks following it."""
    timeline = Timeline.load(writer.storage, table.timeline_layout)
    if getattr(writer.clock, "pinned", False):
        instant = instant_times(timeline, writer.clock).next()
        if writer.rollback_failed_writes(table, timeline, instant):
            timeline = Timeline.load(writer.storage, table.timeline_layout)
    else:
        if writer.rollback_failed_writes(table, timeline):
            timeline = Timeline.load(writer.storage, table.timeline_layout)
        instant = instant_times(timeline, writer.clock).next()
    return instant, instant_times(timeline, writer.clock, after=instant), timeline


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
             gen: InstantTimeGenerator, services: metadata_writer.TableServices, metadata_enable: bool | None = None,
             archive: ArchiveConfig | None = None, record_index: bool | None = None, partitioned: bool = False,
             sizing: Sizing | None = None) -> None:
    """The completed instant, with the write's metadata, created only if absent; markers removed first. The
    metadata table records the instant first (``reference.metadata.table_services.on_commit``, its cleaner and archiver
    ``services``; ``metadata_enable`` None keeps the table's metadata table as it is; ``archive``, the writer's
    archival config, sets the metadata table's; ``sizing`` sizes a record index it creates)."""
    layout = table.timeline_layout
    metadata_services.on_commit(storage, inst, md, gen, services, metadata_enable, archive, record_index, partitioned,
                                sizing)
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
            complete(storage, table, started, md, gen, writer.metadata_table_services, cfg.metadata_enable,
                     archive_config(cfg), cfg.keeps_record_index, cfg.record_level_index_enable,
                     cfg.record_index_sizing)
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
    lock = make_lock(storage, cfg.lock)
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
    lost: list[WriteConflict] = []
    try:
        try:
            fault_point("after_start")
            md = write(instant, timeline)
            fault_point("before_commit")
            pause_point("before_commit")
            lock.lock(f"commit of {label}")
            try:
                now = Timeline.load(storage, table.timeline_layout)
                mine = now.get(instant)
                if mine is None or mine.state != State.INFLIGHT:
                    raise WriteConflict(f"write {instant} is no longer inflight on the timeline: another writer "
                                        "rolled it back", hint="retry the write")
                reject_updates_to_clustering(storage, now, started, md)  # refused outright: undone on the spot
                try:
                    resolve_write_conflict(storage, now, started, md, at_start, table,
                                           by_bucket=conflict_strategy_of(cfg.index_type) == BUCKET_CONFLICT_STRATEGY)
                except WriteConflict as err:
                    lost.append(err)
                    raise
                if not lock.holds():
                    raise WriteConflict(f"the table lock was lost before {instant} could commit",
                                        hint="the write was rolled back; retry it")
                complete(storage, table, started, md, instant_times(now, writer.clock), writer.metadata_table_services,
                         cfg.metadata_enable, archive_config(cfg), cfg.keeps_record_index,
                         cfg.record_level_index_enable, cfg.record_index_sizing)
                times.mark("commit")
                writer.run_inline_services(table, cfg)
                times.mark("table services")
            finally:
                lock.unlock()
        except BaseException as err:
            if not (lost and err is lost[0]):  # a write that lost conflict resolution is left as Hudi leaves it
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
                           completed_at_start: frozenset[str], table: TableConfig | None = None,
                           by_bucket: bool = False) -> None:
    """``TransactionUtils.resolveWriteConflictIfAny``: WriteConflict when an instant that completed
    after this write started (or a table service scheduled after it) touched one of its file groups
    (``by_bucket``, a bucket-indexed table: one of its buckets); the candidates by ``table``'s version and type
    (``spec.timeline.conflict_resolution.candidate_instants``)."""
    version, mor = (table.table_version, table.table_type == MERGE_ON_READ) if table is not None else (6, False)
    candidates = candidate_instants(timeline, inst.requested, completed_at_start, version, mor)
    metadata: dict[str, CommitMetadata] = {}
    plans: dict[str, list[GroupId]] = {}
    for c in candidates:
        if c.is_completed:
            metadata[c.requested] = parse_commit_metadata(read_instant_content(storage, c, timeline.layout))
        elif c.action == Action.COMPACTION:
            plans[c.requested] = [(o.partition_path, o.file_id)
                                  for o in read_compaction_plan(storage, c.requested, timeline.layout).operations]
        else:
            plans[c.requested] = list(clustering_groups(storage, c, timeline.layout))
    this = ConcurrentOperation.of_commit(inst, md)
    reject_updates_to_clustering(storage, timeline, inst, md)
    found = find_write_conflict(this, operations_of(candidates, metadata, plans), by_bucket)
    if found is not None:
        other, groups = found
        raise WriteConflict(
            f"write {inst.requested} conflicts with {other.action} {other.instant}, which "
            f"{'completed' if other.instant in metadata else 'was scheduled'} after it started and touched the "
            f"same {'bucket' if by_bucket else 'file group'}(s): {describe_groups(groups)}; the write did not commit: "
            "it is left inflight, as Apache Hudi leaves it, and is rolled back by the next writer",
            hint="retry the write: it will start from the table as it is now")


__all__ = ["TIMELINE_TEMP", "Writer", "begin", "complete", "discard_own_write", "mark_inflight", "marked_files",
           "request", "resolve_write_conflict", "start", "transact"]
