"""The plan of a query: the checks it must pass and the file slices it reads.

Every reader of this project plans a query here: the spec reader (``spec.read.reader``), the Spark
reader (``reference.engines.spark_reader``) and, over its in-memory table, the oracle (the incremental
window and the instants a query may name).

- **Query types** (``QUERY_TYPES``): ``snapshot`` (with ``as_of``: time travel),
  ``read_optimized`` and ``incremental``. Only an incremental query takes ``begin`` / ``end``, and
  it takes no ``as_of``; every instant a query names is an instant time, 14 or 17 digits
  (``yyyyMMddHHmmss[SSS]``) (``check_query``).
- **Snapshot and time travel**: per file group the latest slice visible as of ``as_of`` (the latest
  completed write when none is named), its base file merged with the log blocks of instants up to
  that time. Time travel on a table with no completed instant reads nothing.
- **Read-optimized**: the same slices' base files alone; a slice without a base file is not read.
- **Incremental** ``(begin, end]``: the completed data writes whose completion time (layout 1: the requested
  time, which stands in) is after ``begin`` and at most ``end`` (``IncrementalWindow``), those archival moved to
  the archived timeline included; the file groups they wrote (their commit metadata; every file group when the
  window holds an archived write, as Hudi reads "the latest snapshot" then), their latest slices as of the last
  data write completed by ``end`` over the files the window's writes wrote alone (``window_view``: a base file
  only if one of them wrote it), applying only their log blocks, keeping the rows whose ``_hoodie_commit_time``
  is one of the window's instants. On merge-on-read a log record of the window that lost its merge to a base row
  written before the window is therefore returned (Apache Hudi's ``MergeOnReadIncrementalRelationV2`` builds its
  file system view from the window's written files alone, and reads their log blocks of the window's instants:
  the corpus's ``compaction-logs-mor-v8`` and ``insert-upsert-delete-logs-mor-v6`` run through ``--impl
  hudi_spark`` showed it). On timeline layout 2, when the window holds an archived write or a file a window's
  write wrote was cleaned, Hudi scans the table's latest slices whole, keeping the rows of the window's instants
  (``HoodieIncrementalRelationV2Trait.fullTableScan``, ``listLatestFileSlices``): the slices are read as a
  snapshot reads them, every log block applied, so a record copied into a newer base file since is read from
  that file (case ``clean-savepoint-cow-v8`` through Apache Hudi 1.2.0) and a record a later log block updated
  is not the window's any more (``clean-pending-compaction-mor-v8``). On timeline layout 1 (table version 6)
  there is no such fallback (``MergeOnReadIncrementalRelationV1``:
  ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` defaults to false): the window's view is built
  over every file its writes wrote, the cleaned ones too, and a window whose latest slices need a cleaned file
  is refused (``IncrementalRefused``; Hudi's read fails on the missing file: the corpus's version 6 clean cases
  through ``--impl hudi_spark``, on Hudi's tables and on the reference writer's alike). The table must populate
  the meta columns. A write that started before ``begin`` but completed inside the window is in it (table
  version 8 on: windows by completion time).
- **Time travel refused** where Apache Hudi refuses it (``spec.read.time_travel``): before the latest clean's
  earliest retained commit, or at or after a pending write.
- **Partition pruning** (``select_partitions``) only skips file groups; it never changes a row read.
- **Columns**: a query names only columns the table has (``check_columns``).
- **Missing files**: a query of the table's latest state (snapshot, read-optimized, or incremental up
  to the latest write) first checks that every file the completed instants wrote for a file group's
  latest slice, or a newer one, is there (read-optimized: every base file;
  ``spec.file_group.file_system_view.missing_slice_files``); a missing one is an ``InvalidTable``
  naming it. Without the check a deleted base file would read as the group's previous values and a
  deleted log file's delete block would bring deleted rows back. The reader decodes only the commit
  metadata of the instants since the oldest latest slice.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``DataSourceReadOptions``
(the query types and ``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``),
``HoodieBaseRelation`` and ``MergeOnReadSnapshotRelation`` (the slices of a snapshot and a
time-travel query), ``IncrementalRelation`` and ``MergeOnReadIncrementalRelation`` (the window,
begin exclusive and end inclusive, and the file groups it wrote), ``IncrementalQueryAnalyzer`` (1.x: the
window's archived instants, and reading the latest snapshot when there are some), ``HoodieInstantTimeGenerator``
(the instant time format); hudi-rs's timeline selector windows incremental queries alike.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NoReturn, Protocol

from spec.config.table_config import TableConfig
from spec.errors import IncrementalRefused, InvalidOperation, InvalidTable
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView, missing_slice_files
from spec.read.time_travel import check_time_travel
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import DATA_WRITES, Action, Instant, State
from spec.timeline.layout import read_instant_content

QUERY_TYPES = ("snapshot", "read_optimized", "incremental")

Write = tuple[str, str]
"""A completed data write: its requested time and its completion time (the requested time where the
timeline records none)."""


def check_instant(t: str | None, what: str) -> None:
    """An instant a query names is an instant time: 14 or 17 digits (``yyyyMMddHHmmss[SSS]``)."""
    if t is not None and not (t.isdigit() and len(t) in (14, 17)):
        raise InvalidOperation(f"{what} {t!r} is not an instant time", hint="use yyyyMMddHHmmssSSS")


def check_query(query: str, as_of: str | None, begin: str | None, end: str | None) -> None:
    """A query type is one of ``QUERY_TYPES``; only incremental takes begin/end, and it takes no as_of;
    every instant named is an instant time."""
    if query not in QUERY_TYPES:
        raise InvalidOperation(f"unknown query type {query!r}", hint=f"use one of {', '.join(QUERY_TYPES)}")
    if query == "incremental":
        if as_of is not None:
            raise InvalidOperation("an incremental query has no as_of", hint="use begin and end")
        check_instant(begin, "begin")
        check_instant(end, "end")
        return
    if begin is not None or end is not None:
        raise InvalidOperation(f"begin/end apply to incremental queries, not {query}",
                               hint="use --query incremental, or as_of for time travel")
    check_instant(as_of, "as_of")


def check_incremental_table(populate_meta_fields: bool) -> None:
    """An incremental query keeps rows by their ``_hoodie_commit_time``: the table must populate it."""
    if not populate_meta_fields:
        raise InvalidOperation("incremental queries need the commit time meta column, which this table "
                               "does not populate (hoodie.populate.meta.fields=false)",
                               hint="use a snapshot or time-travel query")


def check_columns(columns: Sequence[str] | None, available: Sequence[str]) -> None:
    """Every column a query selects is one the table's rows have."""
    missing = [c for c in columns or () if c not in available]
    if missing:
        raise InvalidOperation(f"no column {', '.join(map(repr, missing))} in the table",
                               hint=f"columns are: {', '.join(available)}")


# --8<-- [start:window]
@dataclass(frozen=True)
class IncrementalWindow:
    """An incremental query's window ``(begin, end]`` over completion times: begin exclusive (None: from
    the start), end inclusive (None: the latest)."""

    begin: str | None
    end: str | None

    def contains(self, completion: str) -> bool:
        """Whether a write completed at ``completion`` is in the window."""
        return (self.begin is None or completion > self.begin) and (self.end is None or completion <= self.end)

    def instants(self, writes: Iterable[Write]) -> tuple[str, ...]:
        """The requested times of the completed writes in the window, in the order given."""
        return tuple(t for t, done in writes if self.contains(done))

    def snapshot_as_of(self, writes: Iterable[Write]) -> str | None:
        """The instant the window's file groups are read as of: the latest write completed by ``end``."""
        return latest_write(writes, self.end)
# --8<-- [end:window]


def latest_write(writes: Iterable[Write], completed_by: str | None = None) -> str | None:
    """The latest requested time of the completed writes (completed by ``completed_by`` when given):
    the instant a snapshot without ``as_of`` reads as of. Log blocks of later instants are not applied."""
    return max((t for t, done in writes if completed_by is None or done <= completed_by), default=None)


def write_times(instants: Iterable[Instant]) -> tuple[Write, ...]:
    """The completed ones of data-writing instants, as writes: their requested time and their completion
    time, the requested time standing in where the timeline records none (layout 1)."""
    return tuple((i.requested, i.completed or i.requested) for i in instants if i.is_completed)


def timeline_writes(timeline: Timeline) -> tuple[Write, ...]:
    """The completed data writes of a timeline (commit, deltacommit, replacecommit, compaction included)."""
    return write_times(timeline.commits_timeline().instants)


# --8<-- [start:partitions]
PartitionFilter = Sequence[str] | Callable[[str], bool] | None


def select_partitions(partitions: Sequence[str], partition_filter: PartitionFilter) -> list[str] | None:
    """Partition pruning: the partition paths a query reads — all (None), those listed, or those the
    predicate accepts. Pruning only skips file groups; it never changes a row that is read."""
    if partition_filter is None:
        return None
    if callable(partition_filter):
        return [p for p in partitions if partition_filter(p)]
    if isinstance(partition_filter, str):
        return [partition_filter]
    return list(partition_filter)
# --8<-- [end:partitions]


@dataclass(frozen=True)
class QueryPlan:
    """What a query reads: the file slices in the table's slice order, and how each is read.

    ``as_of`` is the time-travel instant the query names (its table schema is the one then);
    ``with_logs`` is False for read-optimized queries (base files only); ``log_as_of`` is the instant
    log blocks are applied as of; ``window`` is an incremental query's instants, the commit times its
    rows keep (None for other queries); ``full_scan`` marks an incremental query that reads the latest slices
    as a snapshot does, every log block applied (else only the window's log blocks are).
    """

    query: str
    slices: tuple[FileSlice, ...]
    with_logs: bool
    log_as_of: str | None
    window: tuple[str, ...] | None = None
    as_of: str | None = None
    full_scan: bool = False

    def merged(self) -> list[int]:
        """Indexes of the slices whose base file is merged with log files."""
        return [k for k, sl in enumerate(self.slices) if self.with_logs and sl.log_files]

    def base_only(self) -> list[int]:
        """Indexes of the slices that are their base file alone."""
        merged = set(self.merged())
        return [k for k, sl in enumerate(self.slices) if k not in merged and sl.base_file is not None]


class PlannedTable(Protocol):
    """What planning reads of a table: its config, storage and timeline, and its file system view."""

    config: TableConfig
    storage: Storage
    timeline: Timeline

    def view(self, as_of: str | None = None) -> FileSystemView:
        """The file system view as of ``as_of`` (None: the whole timeline)."""
        ...


def latest_clean_retained(storage: Storage, timeline: Timeline) -> str | None:
    """The latest completed clean's earliest commit to retain ("" when it names none), None when no clean
    completed (``spec.read.time_travel``). Only a time-travel query loads the Avro model that reads it."""
    cleans = [i for i in timeline.instants if i.action == Action.CLEAN and i.is_completed]
    if not cleans:
        return None
    from spec.timeline.avro_model import HoodieCleanMetadata, parse_avro_metadata

    md = parse_avro_metadata(read_instant_content(storage, cleans[-1], timeline.layout), HoodieCleanMetadata)
    return md.earliest_commit_to_retain or ""


# --8<-- [start:plan_query]
def plan_query(table: PlannedTable, query: str = "snapshot", as_of: str | None = None, begin: str | None = None,
               end: str | None = None, partition_filter: PartitionFilter = None) -> QueryPlan:
    """The checked query's plan: the file slices it reads and how (see the module docstring)."""
    check_query(query, as_of, begin, end)
    if query == "incremental":
        return _plan_incremental(table, IncrementalWindow(begin, end), partition_filter)
    if as_of is not None and table.timeline.latest_completed() is None:
        return QueryPlan(query, (), False, None, as_of=as_of)
    if as_of is not None:
        check_time_travel(table.timeline, as_of, latest_clean_retained(table.storage, table.timeline))
    read_optimized = query == "read_optimized"
    view = table.view(as_of)
    if as_of is None:
        check_files_present(table.storage, view, with_logs=not read_optimized)
    slices = [sl for sl in view.latest_slices(select_partitions(view.partitions(), partition_filter))
              if not (read_optimized and sl.base_file is None)]
    log_as_of = as_of or latest_write(timeline_writes(table.timeline))
    return QueryPlan(query, tuple(slices), not read_optimized, log_as_of, as_of=as_of)
# --8<-- [end:plan_query]


def _plan_incremental(table: PlannedTable, window: IncrementalWindow,
                      partition_filter: PartitionFilter) -> QueryPlan:
    """The file groups written by the window's instants, as a snapshot as of the last data write
    completed by the window's end."""
    check_incremental_table(table.config.populate_meta_fields)
    if table.timeline.layout < 2:
        check_hollow_commits(table.storage, table.timeline, window)
    active = timeline_writes(table.timeline)
    archived = archived_writes(table.storage, table.config) if _reaches_archive(window, active) else ()
    writes = (*archived, *active)
    instants = window.instants(writes)
    if not instants:
        return QueryPlan("incremental", (), True, None, ())
    as_of = window.snapshot_as_of(writes)
    view = table.view(as_of)
    if as_of == latest_write(writes):
        check_files_present(table.storage, view)
    archived_in = bool(set(instants) & {t for t, _ in archived})
    written = {} if archived_in else paths_written(table.storage, table.timeline, instants)
    cleaned = not all(table.storage.exists(p) for p in written)
    full_scan = (archived_in or cleaned) and table.timeline.layout >= 2
    if full_scan:  # the table's latest slices, read as a snapshot
        as_of, view = latest_write(writes), table.view()
        check_files_present(table.storage, view)
    elif cleaned:
        view = window_view(view, set(written), [DataFile(part, posixpath.basename(p))
                                                for p, (part, _, _) in written.items()])
        check_window_files(table.storage, view, window)
    elif not archived_in:
        view = window_view(view, set(written))
    slices = view.latest_slices(select_partitions(view.partitions(), partition_filter))
    return QueryPlan("incremental", tuple(slices), True, as_of, instants, full_scan=full_scan)


# --8<-- [start:check_hollow_commits]
HOLLOW_COMMIT_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
"""The actions of Hudi's commits timeline (``getCommitsTimeline``) on timeline layout 1."""


def hollow_commit(instants: Iterable[Instant], clusterings: Iterable[str] = ()) -> str | None:
    """The pending write (requested or inflight; not one of the pending ``clusterings``) a completed write requested
    after it leaves hollow, the earliest; None when there is none (Hudi's ``handleHollowCommitIfNeeded``)."""
    instants = [i for i in instants if i.action in HOLLOW_COMMIT_ACTIONS]
    skipped = set(clusterings)
    first = min((i.requested for i in instants if not i.is_completed and i.requested not in skipped), default=None)
    if first is not None and any(i.is_completed and i.requested > first for i in instants):
        return first
    return None


def refuse_hollow(window: IncrementalWindow, pending: str) -> NoReturn:
    """Raise ``IncrementalRefused``: a hollow commit (``check_hollow_commits``)."""
    raise IncrementalRefused(
        f"the incremental window ({window.begin or 'start'}, {window.end or 'latest'}] cannot be read while the "
        f"write {pending} is pending and a later write has completed (a hollow commit on a version 6 table)",
        hint="roll back or finish the pending write (the next write or the cleaner rolls a failed one back)")


def check_hollow_commits(storage: Storage, timeline: Timeline, window: IncrementalWindow) -> None:
    """Timeline layout 1: ``IncrementalRefused`` while a write is pending (requested or inflight; not a clustering)
    and a write requested after it has completed — a hollow commit, whatever the window (``hollow_commit``).
    Hudi 1.x's incremental relations of table version 6 refuse the query (``TimelineUtils.handleHollowCommitIfNeeded``,
    its policy ``hoodie.read.timeline.holes.resolution.policy`` FAIL by default; measured with Apache Hudi 1.2.0:
    case ``concurrent-compaction-mor-v6``, a write that lost conflict resolution to a compaction, left inflight).
    From version 8 on, windows are taken by completion time and a pending write leaves no hole."""
    from spec.actions.clustering import pending_clusterings

    if not any(not i.is_completed for i in timeline.instants):
        return
    pending = hollow_commit(timeline.instants, (i.requested for i in pending_clusterings(storage, timeline)))
    if pending is not None:
        refuse_hollow(window, pending)
# --8<-- [end:check_hollow_commits]


# --8<-- [start:check_window_files]
def check_window_files(storage: Storage, view: FileSystemView, window: IncrementalWindow) -> None:
    """Timeline layout 1: ``IncrementalRefused`` naming the first file of the window view's latest slices a clean
    deleted (Hudi 1.x's ``MergeOnReadIncrementalRelationV1`` reads those slices without a fallback: its
    ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` defaults to false, and the read fails on the
    missing file)."""
    for sl in view.latest_slices():
        names = ([sl.base_file.name] if sl.base_file is not None else []) + [lf.name for lf in sl.log_files]
        for name in names:
            path = posixpath.join(sl.partition_path, name) if sl.partition_path else name
            if not storage.exists(path):
                refuse_window(window, path)
# --8<-- [end:check_window_files]


def refuse_window(window: IncrementalWindow, path: str) -> NoReturn:
    """Raise ``IncrementalRefused``: the window reads ``path``, which a clean deleted."""
    raise IncrementalRefused(
        f"the incremental window ({window.begin or 'start'}, {window.end or 'latest'}] reads {path}, which a clean "
        "deleted", hint="query a window ending at a later write of that file group, or retain more commits "
                        "(hoodie.cleaner.commits.retained) to read windows further back")


def window_view(view: FileSystemView, written: set[str], listing: Sequence[DataFile] | None = None) -> FileSystemView:
    """The file system view an incremental read merges: the same view built over the files the window's
    writes wrote alone (``written``: paths relative to the table). A base file written before the window
    is not in it, so a log record of the window that lost its merge to it is read as written; the reader
    applies only the log blocks of the window's instants (``QueryPlan.window``). Apache Hudi's
    ``MergeOnReadIncrementalRelationV2`` (a ``HoodieTableFileSystemView`` over the window's affected files,
    ``getLatestMergedFileSlicesBeforeOrOn``, log blocks limited by ``includedInstantTimeSet``). Hudi lists those
    files from the commit metadata, so a file a clean deleted is in its view: ``listing`` gives them all."""
    if listing is None:
        listing = [f for f in view.listing if posixpath.join(f.partition_path, f.name) in written]
    return FileSystemView.build(listing, view.timeline, view.config, view.as_of, view.replacements)


def _reaches_archive(window: IncrementalWindow, active: Sequence[Write]) -> bool:
    """Whether the window may hold a write archival moved off the active timeline: it begins before the
    first completion time of the active timeline's writes (or the active timeline has none)."""
    return window.begin is None or not active or window.begin < min(done for _, done in active)


def archived_writes(storage: Storage, config: TableConfig) -> tuple[Write, ...]:
    """The completed data writes of the archived timeline (``spec.actions.archive.archived_instants``), as
    writes: requested time and completion time (the requested time where the archive records none)."""
    from spec.actions.archive import archived_instants  # the archive's readers, only for queries that need them

    return tuple((a.requested, a.completed or a.requested) for a in archived_instants(storage, config)
                 if a.state == State.COMPLETED.value and a.action in DATA_WRITES)


def check_files_present(storage: Storage, view: FileSystemView, with_logs: bool = True) -> None:
    """``InvalidTable`` naming the first file the view's latest slices need by the timeline that is missing
    (``missing_slice_files``; base files only without ``with_logs``), the instant that wrote it, and what
    to do."""
    missing = missing_slice_files(storage, view, with_logs)
    if missing:
        instant, path = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InvalidTable(
            f"{path}, written by the completed instant {instant}, is missing{more}; reading without it would "
            "return rows the timeline says were changed or deleted",
            hint=f"put the file back from a backup, or undo {instant} and what came after it "
                 f"(`hudi-spec rollback TABLE {instant}`, or restore to an earlier savepoint)")


def paths_written(storage: Storage, timeline: Timeline, instants: Iterable[str]) -> dict[str, tuple[str, str, str]]:
    """The files the instants' commit metadata says they wrote: path → (partition path, file id, instant)."""
    out: dict[str, tuple[str, str, str]] = {}
    for t in instants:
        inst = timeline.get(t)
        if inst is None:
            continue
        for st in parse_commit_metadata(read_instant_content(storage, inst, timeline.layout)).all_write_stats():
            if st.path and st.file_id:
                out[st.path] = (st.partition_path or "", st.file_id, t)
    return out


def files_written(storage: Storage, timeline: Timeline, instants: Iterable[str]) -> set[tuple[str, str]]:
    """The file groups ``(partition path, file id)`` the instants' commit metadata says they wrote."""
    touched: set[tuple[str, str]] = set()
    for t in instants:
        inst = timeline.get(t)
        if inst is not None:
            touched |= parse_commit_metadata(read_instant_content(storage, inst, timeline.layout)).file_ids_written()
    return touched
