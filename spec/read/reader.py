"""How any table on disk is read: snapshot, read-optimized, incremental and time travel.

This reader is the normative statement of what a table means. It reads tables written by
anyone (Apache Hudi, this project's reference writer, any other implementation), one file
slice at a time, so memory is bounded by a slice, not by the table.

A query is planned by ``spec.read.query_plan`` (its checks, and the file slices it reads); each slice is
read — its base file, merged with its log blocks by ``spec.read.slice_merge`` — and put in the query's
table schema (``spec.schema.query_schema``):

- **snapshot** (as of the latest instant, or ``as_of`` for time travel): per file group, the
  latest visible slice, its base file merged with its log records (``spec.read.merge``);
- **read-optimized**: the base files of the latest slices only, logs ignored (for copy-on-write
  tables the same as snapshot);
- **incremental** ``(begin, end]``: the rows written by completed instants in the window: the
  file groups those instants wrote, read as a snapshot as of ``end``, keeping rows whose
  ``_hoodie_commit_time`` is in the window.

Every query reads the table as it means it: with a restore pending, the instants its plan rolls back
are left out of the timeline (``spec.actions.restore.readable_timeline``), so a restore that is
running or was killed shows the savepoint's state, never a state half way.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``MergeOnReadSnapshotRelation`` and ``IncrementalRelation`` / ``MergeOnReadIncrementalRelation``
(Spark datasource), ``HoodieFileGroupReader`` (1.x) and ``TableSchemaResolver``.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from spec.actions.restore import readable_timeline
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView
from spec.keygen.partition_path import default_partition_columns
from spec.read.query_plan import PartitionFilter, QueryPlan, check_columns, latest_write, plan_query, timeline_writes
from spec.schema import query_schema
from spec.schema.table_schema import COMMIT_TIME
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline

if TYPE_CHECKING:
    from concurrent.futures import Future

    from spec.file_group.log_file.corrupt_block import SkippedBlock
    from spec.read.merge import MergeRule

T = TypeVar("T")
SMALL_PLAN_BYTES = 8 * 1024 * 1024
"""A plan whose files (base and log) hold fewer bytes than this is read on the calling thread: starting
threads for it costs more than reading it."""
R = TypeVar("R")


@dataclass(frozen=True)
class SliceRead:
    """The rows of one file slice, and what was read to make them."""

    slice: FileSlice
    table: pa.Table


class TableReader:
    """Reads one table. Loads the config and timeline once; each query builds its file system view."""

    def __init__(self, path: str | Storage, workers: int | None = None, use_metadata_table: bool = True) -> None:
        """``workers``: how many file slices a query reads at once (default: the CPUs, at most 4); 1
        reads one slice at a time. ``use_metadata_table``: list files through the metadata table's ``files``
        partition where the table has one (as Apache Hudi and hudi-rs do); False lists storage."""
        self.workers = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))
        self.storage = path if isinstance(path, Storage) else Storage(path)
        self.config = TableConfig.load(self.storage)
        self.timeline = readable_timeline(self.storage, Timeline.load(self.storage, self.config.timeline_layout))
        """The active timeline as the table means it: a pending restore's undone instants left out
        (``spec.actions.restore.readable_timeline``)."""
        self.use_metadata_table = use_metadata_table
        self._listing: list[DataFile] | None = None
        self._table_columns: frozenset[str] | None = None
        self._schemas: dict[str, pa.Schema | None] = {}
        self._table_columns_known = False
        self._null_columns: dict[str, tuple[str, ...]] = {}
        self.columnar_merge = True
        """Merge slices column-wise where that gives the rule's rows (``spec.read.slice_merge``); False: record by
        record."""
        self.skipped: list[SkippedBlock] = []
        """The corrupt log regions the slices read so far skipped (``spec.file_group.log_file.scanner`` rule 3), file
        by file:
        a reader does not stop at them, as Hudi's does not, but says what it left out."""

    @functools.cached_property
    def rule(self) -> MergeRule:
        """The table's merge rule (``spec.read.merge.MergeRule.from_config``), worked out when a slice with log
        files is first merged."""
        from spec.read.merge import MergeRule

        return MergeRule.from_config(self.config)

    def table_schema(self, as_of: str | None = None) -> pa.Schema | None:
        """The data columns of the table schema a query reads with (``spec.schema.query_schema.table_schema``:
        the latest completed commit's writer schema, at or before ``as_of`` for time travel), once per
        ``as_of``."""
        key = as_of or ""
        if key not in self._schemas:
            self._schemas[key] = query_schema.table_schema(self.storage, self.timeline, as_of)
        return self._schemas[key]

    def conform(self, table: pa.Table, as_of: str | None, add_missing: bool = True) -> pa.Table:
        """A slice's rows in the query's table schema (``table_schema``; ``spec.schema.query_schema.conform``)."""
        return query_schema.conform(table, self.table_schema(as_of), add_missing)

    def table_columns(self) -> frozenset[str] | None:
        """The columns of the table's schema (``spec.schema.query_schema.table_columns``), worked out once."""
        if not self._table_columns_known:
            # slices are read on several threads: the answer is stored before it is marked known (two threads
            # may both work it out, to the same answer)
            self._table_columns = query_schema.table_columns(self.storage, self.timeline)
            self._table_columns_known = True
        return self._table_columns

    # --- one slice ---------------------------------------------------------------------------

    def _read_base(self, sl: FileSlice, columns: Sequence[str] | None) -> pa.Table | None:
        if sl.base_file is None:
            return None
        table = self.storage.read_parquet(sl.base_file.path)
        return _project(table, columns)

    def read_slice(self, sl: FileSlice, as_of: str | None = None, with_logs: bool = True,
                   columns: Sequence[str] | None = None, only: frozenset[str] | None = None) -> pa.Table | None:
        """The rows of one slice: its base file merged with its log records (``spec.read.slice_merge``) as of
        ``as_of`` (default: the latest instant), or the base file alone; only ``columns`` if given (merging
        reads every column, then projects); only the log blocks of the instants ``only`` names, when given
        (an incremental read's window)."""
        if not with_logs or not sl.log_files:
            return self.partition_values(sl, self._read_base(sl, columns))
        # the log scanner's and the merge's modules (and pyarrow.compute) load with the first slice that has logs
        from spec.file_group.log_file.scanner import scan_slice_logs
        from spec.read.slice_merge import SliceMerge

        blocks, stats = scan_slice_logs(self.storage, [f.path for f in sl.log_files], self.timeline,
                                        as_of or self.latest_instant(), self.config.table_version)
        self.skipped.extend(stats.skipped)
        if only is not None:
            blocks = [b for b in blocks if (b.instant_time or "") in only]
        if not blocks:
            return self.partition_values(sl, self._read_base(sl, columns))
        merge = SliceMerge(self.rule, self.config, self.table_columns, self.columnar_merge)
        merged = merge.merge(self._read_base(sl, None), blocks)
        return None if merged is None else self.partition_values(sl, _project(merged, columns))

    def null_partition_columns(self, partition_path: str) -> tuple[str, ...]:
        """The partition columns the rows of ``partition_path`` read as null
        (``spec.keygen.partition_path.default_partition_columns``; none for timestamp-based partition fields,
        whose folder is a formatted time), worked out once per partition."""
        if partition_path not in self._null_columns:
            raw_fields = (self.config.get("hoodie.table.partition.fields") or "").lower()
            timestamp = "TIMESTAMP" in (self.config.keygen_type or "").upper() or "Timestamp" in (
                self.config.keygen_class or "") or ":timestamp" in raw_fields
            self._null_columns[partition_path] = () if timestamp or not partition_path else default_partition_columns(
                partition_path, self.config.partition_fields, self.config.hive_style_partitioning)
        return self._null_columns[partition_path]

    def partition_values(self, sl: FileSlice, table: pa.Table | None) -> pa.Table | None:
        """A slice's rows with the partition columns its partition path reads as null set to null
        (``null_partition_columns``)."""
        if table is None:
            return None
        for column in self.null_partition_columns(sl.partition_path):
            if column in table.column_names:
                i = table.column_names.index(column)
                field = table.schema.field(i)
                table = table.set_column(i, field, pa.nulls(table.num_rows, field.type))
        return table

    def latest_instant(self) -> str | None:
        """The instant a query without ``as_of`` reads as of: the latest completed write (by requested time).
        Log blocks of later instants are not applied."""
        return latest_write(timeline_writes(self.timeline))

    # --- queries -----------------------------------------------------------------------------

    def view(self, as_of: str | None = None) -> FileSystemView:
        """The file system view of the table, as of ``as_of`` (time travel) or of its whole timeline, over the
        files the metadata table lists (read once per reader) or, without one, a listing of storage."""
        if self.use_metadata_table and self.config.metadata_partitions:  # its reader loads for a table with one
            from spec.metadata.metadata_table import list_table_files, uses_metadata_table

            if uses_metadata_table(self.config):
                if self._listing is None:
                    self._listing = list_table_files(self.storage, self.config, self.timeline)
                return FileSystemView.load(self.storage, self.config, self.timeline, as_of, self._listing)
        return FileSystemView.load(self.storage, self.config, self.timeline, as_of)

    def plan(self, query: str = "snapshot", as_of: str | None = None, begin: str | None = None,
             end: str | None = None, partition_filter: PartitionFilter = None) -> QueryPlan:
        """The checked query's plan over this table (``spec.read.query_plan.plan_query``)."""
        return plan_query(self, query, as_of, begin, end, partition_filter)

    def query(self, query: str = "snapshot", as_of: str | None = None, begin: str | None = None,
              end: str | None = None, partition_filter: PartitionFilter = None,
              columns: Sequence[str] | None = None) -> Iterator[SliceRead]:
        """The query's rows, one file slice at a time. Bad arguments raise here, before any slice is read."""
        return self.read_plan(self.plan(query, as_of, begin, end, partition_filter), columns)

    def iter_snapshot(self, as_of: str | None = None, read_optimized: bool = False,
                      partition_filter: PartitionFilter = None,
                      columns: Sequence[str] | None = None) -> Iterator[SliceRead]:
        """Snapshot (or read-optimized) rows, one file slice at a time."""
        return self.query("read_optimized" if read_optimized else "snapshot", as_of, None, None,
                          partition_filter, columns)

    def iter_incremental(self, begin: str | None, end: str | None = None,
                         partition_filter: PartitionFilter = None,
                         columns: Sequence[str] | None = None) -> Iterator[SliceRead]:
        """Rows written by completed instants in ``(begin, end]``, one file slice at a time."""
        return self.query("incremental", None, begin, end, partition_filter, columns)

    def read_plan(self, plan: QueryPlan, columns: Sequence[str] | None = None) -> Iterator[SliceRead]:
        """A plan's rows, one file slice at a time, in the plan's order, in the query's table schema; an
        incremental plan keeps the rows whose commit time is one of its window's instants. Slices without
        rows are left out."""
        window = None if plan.window is None else pa.array(plan.window, type=pa.string())
        project = columns if window is None else None  # an incremental read filters whole rows, then projects

        def read(sl: FileSlice) -> pa.Table | None:
            return self.read_slice(sl, plan.log_as_of, with_logs=plan.with_logs, columns=project,
                                   only=None if plan.window is None or plan.full_scan else frozenset(plan.window))

        small = sum(f.size for sl in plan.slices for f in (*sl.log_files, *([sl.base_file] if sl.base_file else []))
                    ) < SMALL_PLAN_BYTES
        for sl, table in in_order(read, plan.slices, self.workers if window is None and not small else 1):
            if table is not None and window is not None:
                import pyarrow.compute as pc

                table = table.filter(pc.is_in(table.column(COMMIT_TIME).cast(pa.string()), value_set=window))
            if table is None or not table.num_rows:
                continue
            if window is None:
                yield SliceRead(sl, self.conform(table, plan.as_of, add_missing=not columns))
            else:
                yield SliceRead(sl, _project(self.conform(table, None), columns))


def in_order(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[tuple[T, R]]:
    """``(item, fn(item))`` for every item, in order, with up to ``workers`` calls running at once on
    threads (reading and merging a slice is mostly pyarrow, which releases the GIL). At most ``workers``
    results wait for the consumer; an error is raised where its item comes."""
    if workers <= 1 or len(items) <= 1:
        for item in items:
            yield item, fn(item)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hudi-read") as pool:
        pending: deque[tuple[T, Future[R]]] = deque()
        for item in items:
            pending.append((item, pool.submit(fn, item)))
            if len(pending) >= workers:
                first, result = pending.popleft()
                yield first, result.result()
        while pending:
            first, result = pending.popleft()
            yield first, result.result()



def _project(table: pa.Table, columns: Sequence[str] | None) -> pa.Table:
    if not columns:
        return table
    check_columns(columns, table.column_names)
    return table.select(list(columns))


# --8<-- [start:read_table]
def read_table(path: str | Storage, query: str = "snapshot", as_of: str | None = None,
               begin: str | None = None, end: str | None = None, columns: Sequence[str] | None = None,
               partition_filter: PartitionFilter = None, skipped: list[SkippedBlock] | None = None,
               use_metadata_table: bool = True) -> pa.Table:
    """Read a table with one query type; an empty table (no columns) when nothing is visible. Files are listed
    through the metadata table where there is one, unless ``use_metadata_table`` is False. ``skipped``, if
    given, receives the corrupt log regions the read skipped."""
    reader = TableReader(path, use_metadata_table=use_metadata_table)
    tables = [p.table for p in reader.query(query, as_of, begin, end, partition_filter, columns)]
    if skipped is not None:
        skipped.extend(reader.skipped)
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="permissive")
# --8<-- [end:read_table]


def iter_table(path: str | Storage, query: str = "snapshot", as_of: str | None = None,
               begin: str | None = None, end: str | None = None, columns: Sequence[str] | None = None,
               partition_filter: PartitionFilter = None) -> Iterator[pa.Table]:
    """The same query, one Arrow table per file slice (memory bounded by a few slices: those being read,
    at most as many as the reader's workers, and the one the caller holds)."""
    for p in TableReader(path).query(query, as_of, begin, end, partition_filter, columns):
        yield p.table
