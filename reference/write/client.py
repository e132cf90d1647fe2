"""The write client: Hudi's eight-step write path (``BaseHoodieWriteClient``) on PySpark, for copy-on-write tables.

1. create the client (options validated into a WriteConfig; the table created if new);
2. transform the input: record key and partition path as Spark column expressions;
3. start the commit: roll back failed earlier writes, then a requested and an inflight instant;
4. prepare records: dedupe by key on the ordering field; tag each with its current file group
   (the index: keys read from the latest base files; a bucket index: the group of the key's bucket);
5. partition records: the WorkloadProfile counts records per (partition, file group) — from the
   keys the BLOOM index brought to the driver, else by a Spark aggregation; ``spec.write.partitioner``
   assigns buckets, each record gets its bucket;
6. write storage: one Spark task per bucket runs a create or merge handle (``handles.py``);
7. update the index (nothing to do: the keys live in the base files);
8. commit: write stats → commit metadata → the completed instant, created atomically.

A write that fails after its instant started is rolled back before the error is raised, so the
table is left as it was; a writer killed half way leaves a pending instant that the next write
rolls back (step 3).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from reference.config.options import WriteConfig, parse_options
from reference.engines import engine_context
from reference.engines.engine import Engine, EngineContext
from reference.executors.common import pending_compaction_groups
from reference.executors.service_client import METADATA_TABLE_SERVICES, rollback_failed_writes, run_inline_services
from reference.instrumentation.step_times import StepTimes
from reference.io.bucket_index import bucket_assignment, bucket_index_of, bucket_lookup
from reference.io.buckets import (
    bucket_specs,
    commit_metadata,
    commit_totals,
    handle_context,
    schema_json,
    small_files,
    write_partition_metadata,
)
from reference.io.bulk_insert import bulk_insert_assignment
from reference.io.global_index import GlobalLookup, global_index_of
from reference.io.index import IndexLookup, record_level_locations
from reference.metadata.record_index import partitioned
from reference.metadata.writer import TableServices
from reference.transaction import transaction
from reference.transaction.transaction import Clock
from reference.write.table_creation import new_table_config, table_created_by
from reference.write.write_checks import (
    check_against_table,
    check_cdc_write,
    check_one_partition_per_key,
    check_record_index_write,
    check_schema,
    combines,
)
from spec.actions.clustering import pending_clustering_groups
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.config.write_operation import REPLACE_OPERATIONS, WriteOperationType, write_action
from spec.errors import InvalidOperation, InvalidRecord, InvalidTable
from spec.file_group.file_naming import make_file_id
from spec.file_group.file_system_view import FileSystemView, list_data_files, missing_latest_files
from spec.index.bucket_index import INDEXED_OPERATIONS
from spec.keygen.auto_record_key import PREPPED_COLUMNS, auto_generates_record_keys, check_keyless_write
from spec.metadata.partitioned_record_index import INDEX_TYPE as RECORD_LEVEL_INDEX
from spec.schema.table_schema import RECORD_KEY
from spec.storage.heartbeat import DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import CommitMetadata
from spec.timeline.instant import Action
from spec.write.partitioner import WorkloadProfile, assign_buckets, average_record_size
from spec.write.service_configs import clean_config, partitioner_config
from spec.write.writer_utils import check_table_features


@dataclass(frozen=True)
class WriteResult:
    """What a write did: its instant, action, and the files written per partition; ``step_seconds``,
    the seconds it spent in each step of the write path (``StepTimes.STEPS``), in the order they ran."""

    instant: str
    action: str
    operation: str
    metadata: CommitMetadata
    step_seconds: Mapping[str, float] = field(default_factory=dict)


class WriteClient:
    """Writes one table (a ``transaction.Writer`` and an ``executors.service_client.ServiceWriter``) on the
    engine named ``engine`` (``reference.engines.ENGINES``; ``spark``: the Spark session to run on, None: the
    process's). ``clock`` and ``file_id_prefix`` are injectable for replayable tests."""

    metadata_table_services: TableServices = METADATA_TABLE_SERVICES
    """The cleaner and archiver the metadata table's writer runs on the metadata table."""

    def __init__(self, path: str, spark: Any = None, clock: Clock | None = None, file_id_prefix: Any = None,
                 engine: str = "spark") -> None:
        self.engines: EngineContext = engine_context(engine, spark)
        self.storage = Storage(path)
        self.path = self.storage.root if "://" not in path else path
        self.clock = clock
        self._new_prefix = file_id_prefix or (lambda: str(uuid.uuid4()))
        self.heartbeat: tuple[int, int] = (DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES)

    def table_config(self) -> TableConfig | None:
        return TableConfig.load(self.storage) if self.storage.exists(".hoodie/hoodie.properties") else None

    def new_file_id(self) -> str:
        """A new file group's id (``<prefix>-0``; the prefix a UUID unless injected)."""
        return make_file_id(self._new_prefix(), 0)

    # step 3
    def rollback_failed_writes(self, table: TableConfig, timeline: Timeline, after: str | None = None) -> list[str]:
        """Roll back the failed writes before a write (``executors.service_client.rollback_failed_writes``; a
        pending write whose heartbeat is alive, by ``self.heartbeat``'s interval and misses, is not failed)."""
        return rollback_failed_writes(self.storage, table, timeline, after, self.clock, *self.heartbeat)

    def engine(self) -> Engine:
        """A fresh engine for one write (it holds what the write caches)."""
        return self.engines.engine()

    def set_job_status(self, description: str) -> None:
        """Name the engine's jobs that follow."""
        self.engines.set_job_status(description)

    def write(self, data: Any, operation: str | None = None, options: Mapping[str, Any] | None = None, *,
              prepped: bool = False) -> WriteResult:
        """Write ``data`` (a Spark DataFrame or a pyarrow Table) with one operation. ``prepped``: the records are
        rows read from the table (an update or delete by a condition); an upsert or delete of them is recorded as
        ``UPSERT_PREPPED`` / ``DELETE_PREPPED``, as Hudi's Spark SQL ``UPDATE`` and ``DELETE`` record theirs (as
        is any upsert or delete of rows with their keys' meta columns on a table with auto-generated keys,
        ``HoodieSparkSqlWriter.canDoPreppedWrites``)."""
        self.storage.check_writable()  # a store without conditional writes is refused before any request
        opts = dict(options or {})
        if operation is not None:
            opts["hoodie.datasource.write.operation"] = operation
        times = StepTimes()
        cfg = parse_options(opts)
        op = cfg.operation
        engine = self.engine()
        table = self.table_config()
        keyless = not table.record_key_fields if table is not None else auto_generates_record_keys(opts)
        keys_given = keyless and data is not None and all(c in _column_names(data) for c in PREPPED_COLUMNS)
        if keyless:
            check_keyless_write(op, opts, keys_given)
        prepped = (prepped or keys_given) and op in ("upsert", "delete")
        frame = None if op == "delete_partition" and data is None else (
            engine.prepped_frame(data) if keys_given else engine.frame(data))
        schema = engine.user_schema(frame) if frame is not None else None
        new = table is None
        if table is None:  # created as part of this write: nothing on disk until every check passed
            if schema is None:
                raise InvalidOperation("cannot create a table from a delete_partition", hint="write data first")
            table = new_table_config(cfg, schema)
            timeline = Timeline((), table.timeline_layout)
            check_table_features(table.props)  # e.g. change data capture on merge-on-read
        else:
            check_against_table(table, opts)
            timeline = Timeline.load(self.storage, table.timeline_layout)
            self.check_timeline_files(table, timeline)
        bucket_index_of(cfg, table, op)  # refused before anything is written
        check_cdc_write(table, cfg, op, new)
        check_record_index_write(self.storage, table, cfg)
        if frame is not None:
            ordering = table.ordering_field
            if (op != "delete" and ordering and combines(cfg, op) and ordering in engine.columns(frame)
                    and engine.has_null(frame, ordering)):
                raise InvalidRecord(f"a record has no value for the ordering field {ordering!r}",
                                    hint=f"a {op} combines records by their ordering value: give every record one "
                                         "(or turn the operation's hoodie.combine.before.* option off)")
            frame = check_schema(self.storage, engine, frame, table, timeline, op)
            frame = engine.with_keys(frame, table)
        action = Action(write_action(op, table.table_type == MERGE_ON_READ, creates_table=new))
        times.mark("prepare")
        try:
            with table_created_by(self.storage, table, new):
                def write_data(instant: str, timeline: Timeline) -> CommitMetadata:
                    return self._write(engine, frame, table, timeline, cfg, instant, op, times, prepped)

                instant, md = transaction.transact(self, table, action, op, cfg, write_data, times)
        finally:
            engine.release()
        return WriteResult(instant, action, op, md, dict(times.seconds))

    def run_inline_services(self, table: TableConfig, cfg: WriteConfig) -> None:
        """After a commit: ``executors.service_client.run_inline_services``."""
        run_inline_services(self, table, cfg)

    def check_timeline_files(self, table: TableConfig, timeline: Timeline) -> None:
        """Before a write: every file the latest file slices need by the timeline is there
        (``spec.file_group.file_system_view.missing_latest_files``); a missing one stops the write, which would
        otherwise write the keys it held a second time."""
        missing = missing_latest_files(self.storage, timeline, list_data_files(self.storage))
        if missing:
            instant, path = missing[0]
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise InvalidTable(
                f"{path}, written by the completed instant {instant}, is missing{more}; writing now could "
                "duplicate the keys it held",
                hint=f"put the file back from a backup, or undo {instant} and what came after it "
                     f"(`hudi-spec rollback TABLE {instant}`, or restore to an earlier savepoint)")

    # steps 4-6
    def _write(self, engine: Engine, df: Any, table: TableConfig, timeline: Timeline,
               cfg: WriteConfig, instant: str, op: str, times: StepTimes | None = None,
               prepped: bool = False) -> CommitMetadata:
        times = times or StepTimes()
        view = FileSystemView.load(self.storage, table, timeline)
        replaced: dict[str, list[str]] = {}
        if op == "delete_partition":
            targets = set(cfg.partitions_to_delete)
            if not targets:
                raise InvalidOperation("delete_partition needs partitions",
                                       hint="set hoodie.datasource.write.partitions.to.delete")
            for g in view.groups:
                if g.partition_path in targets:
                    replaced.setdefault(g.partition_path, []).append(g.file_id)
            return commit_metadata([], {"schema": schema_json(table, None)}, WriteOperationType.DELETE_PARTITION.value,
                                   replaced)
        assert df is not None
        user_schema = engine.user_schema(df)
        dedupe = combines(cfg, op)
        ordering = table.ordering_field if op != "delete" else None
        lookup = None
        bucket = bucket_index_of(cfg, table, op)
        global_index = global_index_of(cfg, table)
        if cfg.index_type == RECORD_LEVEL_INDEX and dedupe:
            check_one_partition_per_key(engine.keys_in_two_partitions(df))
        if op in ("upsert", "delete") or (bucket is not None and op in INDEXED_OPERATIONS):
            located = (record_level_locations(self.storage) if cfg.index_type == RECORD_LEVEL_INDEX
                       and partitioned(self.storage, table) else None)
            lookup = IndexLookup(self.path, self.storage, view, cfg.index_type == "BLOOM", op == "delete",
                                 bucket_lookup(bucket, view) if bucket is not None else None,
                                 GlobalLookup(global_index, self.storage, view, table) if global_index else None,
                                 located)
            self.set_job_status(f"commit {instant}: index lookup")
        if not table.record_key_fields and RECORD_KEY not in engine.columns(df):
            df = engine.with_auto_keys(df, instant)
        # (a bulk_insert or insert without dedupe is read twice, by the profile and the handles: recomputing
        # its key columns costs less than caching it, as Hudi's bulk insert does not cache either)
        df, counts = engine.tag_location(df, lookup, dedupe, ordering, by_key=global_index is not None)
        times.mark("index lookup")
        if op in ("insert_overwrite", "insert_overwrite_table"):
            incoming_parts = engine.partitions(df)
            for g in view.groups:
                if op == "insert_overwrite_table" or g.partition_path in incoming_parts:
                    replaced.setdefault(g.partition_path, []).append(g.file_id)
        if op == "bulk_insert":
            df = engine.with_input_partition(df)
        if counts is None:
            self.set_job_status(f"commit {instant}: workload profile")
            counts = engine.counts(df)
        profile = WorkloadProfile.from_counts(counts)
        busy = pending_compaction_groups(self.storage, timeline)
        clustering = pending_clustering_groups(self.storage, timeline)
        small = {} if bucket is not None or op in ("bulk_insert", "insert_overwrite", "insert_overwrite_table") else {
            p: files for p, files in small_files(view, cfg, busy, clustering).items()
            if p in profile.partitions and profile.partitions[p].inserts > 0}  # looked up only where inserts go
        pcfg = partitioner_config(cfg)
        avg = average_record_size(commit_totals(self.storage, timeline), pcfg)
        if bucket is not None:
            assignment = bucket_assignment(profile, engine.new_buckets(df), self.new_file_id)
        elif op == "bulk_insert":
            assignment = bulk_insert_assignment(counts, cfg.bulk_insert_sort_mode, self.new_file_id)
        else:
            assignment = assign_buckets(profile, small, pcfg, avg, self.new_file_id)
        write_partition_metadata(self.storage, {b.partition for b in assignment.buckets}, instant)
        small_ids = {sf.file_id for sfs in small.values() for sf in sfs}
        times.mark("workload profile")
        stats: list[dict[str, Any]] = []
        if assignment.buckets:  # step 6
            ctx = handle_context(self.path, table, cfg, instant, bucket_specs(assignment, view, small_ids, busy),
                                 user_schema, sort_by_key=op == "bulk_insert" and cfg.bulk_insert_sort_mode != "NONE",
                                 concat=op == "insert" and cfg.allow_duplicate_on_inserts)
            stats = engine.write_buckets(df, ctx, user_schema, assignment)
        times.mark("handles")
        operation_type = WriteOperationType.of_option(op).value
        if prepped:
            operation_type = WriteOperationType(f"{operation_type}_PREPPED").value
        return commit_metadata(stats, {"schema": schema_json(table, user_schema)}, operation_type,
                               replaced if op in REPLACE_OPERATIONS else None)




def _column_names(data: Any) -> list[str]:
    """The column names of a write's input (a pyarrow Table, a Spark DataFrame, or what has ``column_names``)."""
    if isinstance(data, pa.Table):
        return list(data.column_names)
    names = getattr(data, "columns", None) or getattr(data, "column_names", None) or []
    return [str(n) for n in names]


def write_arrow(path: str, data: pa.Table, operation: str, options: Mapping[str, Any],
                spark: Any = None) -> WriteResult:
    """Convenience: write a pyarrow Table."""
    return WriteClient(path, spark).write(data, operation, options)


__all__ = ["WriteClient", "WriteResult", "clean_config", "write_arrow"]
