"""The write client: Hudi's eight-step write path (``BaseHoodieWriteClient``) on PySpark, for copy-on-write tables.

1. create the client (options validated into a WriteConfig; the table created if new);
2. transform the input: record key and partition path as Spark column expressions;
3. start the commit: roll back failed earlier writes, then a requested and an inflight instant;
4. prepare records: dedupe by key on the ordering field; tag each with its current file group
   (the index: keys read from the latest base files);
5. partition records: the WorkloadProfile counts records per (partition, file group) — from the
   keys the BLOOM index brought to the driver, else by a Spark aggregation; ``spec.partitioner``
   assigns buckets, each record gets its bucket;
6. write storage: one Spark task per bucket runs a create or merge handle (``handles.py``);
7. update the index (nothing to do: the keys live in the base files);
8. commit: write stats → commit metadata → the completed instant, created atomically.

A write that fails after its instant started is rolled back before the error is raised, so the
table is left as it was; a writer killed half way leaves a pending instant that the next write
rolls back (step 3).
"""

from __future__ import annotations

import json
import posixpath
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from reference import transaction
from reference.bulk_insert import bulk_insert_assignment, with_input_partition
from reference.compaction import maybe_inline_compaction
from reference.executors.archive import archive
from reference.executors.clean import clean
from reference.executors.common import pending_compaction_plans
from reference.handles import BucketSpec, HandleContext
from reference.index import bloom_index, simple_index
from reference.local_engine import LocalEngine
from reference.local_engine import counts as count_records
from reference.local_engine import tag as tag_records
from reference.options import WriteConfig, parse_options
from reference.spark_engine import SparkEngine, run_buckets
from reference.step_times import StepTimes
from reference.write_checks import cast_columns, combines, given_identity, has_null, primitive, table_identity
from spec import writer_utils as wu
from spec.actions.compaction import groups_under_compaction
from spec.append_handle import AppendHandleConfig
from spec.commit_metadata import (
    NULL_COMMIT,
    CommitMetadata,
    WriteStat,
    parse_commit_metadata,
    write_stat,
)
from spec.errors import InvalidConfig, InvalidOperation, InvalidRecord, InvalidTable, SchemaMismatch
from spec.file_naming import make_file_id, parse_base_file_name
from spec.file_system_view import FileSystemView, list_data_files, missing_latest_files
from spec.heartbeat import DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES
from spec.instant import Action, Instant, InstantTimeGenerator
from spec.merge import MergeRule
from spec.partition_metadata import PARTITION_METADATA_FILE, PartitionMetadata, partition_depth
from spec.partitioner import (
    BucketAssignment,
    SmallFile,
    SmallFileCandidate,
    WorkloadProfile,
    assign_buckets,
    average_record_size,
    select_small_files,
)
from spec.schema import (
    META_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
    avro_schema_from_arrow,
    record_name_for_table,
    with_meta_fields,
)
from spec.schema_evolution import reconcile_type
from spec.service_configs import archive_config, clean_config, compaction_config, partitioner_config
from spec.storage import Storage
from spec.table_config import MERGE_ON_READ, TableConfig
from spec.timeline import Timeline
from spec.timeline_layout import HISTORY_DIRS, read_instant_content, timeline_dir

ENGINES = ("spark", "local")
"""Where a write's data steps run: Spark jobs, or pyarrow in this process (``local_engine.py``)."""
REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")
OPERATION_TYPES = {"upsert": "UPSERT", "insert": "INSERT", "bulk_insert": "BULK_INSERT", "delete": "DELETE",
                   "insert_overwrite": "INSERT_OVERWRITE", "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
                   "delete_partition": "DELETE_PARTITION"}


@dataclass(frozen=True)
class WriteResult:
    """What a write did: its instant, action, and the files written per partition; ``step_seconds``,
    the seconds it spent in each step of the write path (``StepTimes.STEPS``), in the order they ran."""

    instant: str
    action: str
    operation: str
    metadata: CommitMetadata
    step_seconds: Mapping[str, float] = field(default_factory=dict)


# --- step 1: the table -------------------------------------------------------------------------


def new_table_config(cfg: WriteConfig, schema: pa.Schema) -> TableConfig:
    """The hoodie.properties a first write with these options creates (nothing written yet)."""
    if not cfg.table_name:
        raise InvalidConfig("a new table needs hoodie.table.name", hint="pass options={'hoodie.table.name': ...}")
    if not cfg.record_key_fields:
        raise InvalidConfig("a new table needs hoodie.datasource.write.recordkey.field",
                            hint="name the field(s) that identify a record")
    avro = avro_schema_from_arrow(schema, *record_name_for_table(cfg.table_name))
    return TableConfig.create(cfg.table_name, cfg.table_type, cfg.table_version, cfg.record_key_fields,
                              cfg.ordering_field, cfg.partition_fields, cfg.keygen_type, cfg.hive_style,
                              cfg.url_encode, merge_mode=cfg.merge_mode, create_schema=json.dumps(avro))


def write_table_files(storage: Storage, table: TableConfig) -> None:
    """Create ``.hoodie`` with hoodie.properties and the folders Hudi's writers expect."""
    layout = table.timeline_layout
    for folder in (".hoodie/.temp", ".hoodie/.aux/.bootstrap/.partitions", ".hoodie/.aux/.bootstrap/.fileids",
                   ".hoodie/.schema", timeline_dir(layout), HISTORY_DIRS[layout]):
        storage.mkdirs(folder)
    storage.create_if_absent(".hoodie/hoodie.properties", table.to_bytes())


def remove_new_files(storage: Storage, before: set[str] | None) -> None:
    """Undo a table creation: delete every file and folder under the base path that is not in
    ``before`` (what was there before the first write started; None: the base path did not exist)."""
    if before is None:
        if storage.is_dir(""):
            storage.fs.delete_dir(storage.root)
        return
    new = [f for f in storage.list("", recursive=True) if f.path not in before]
    new_dirs = {f.path for f in new if f.is_dir}
    for f in new:
        if posixpath.dirname(f.path) in new_dirs:
            continue  # deleted with its folder
        if f.is_dir:
            storage.delete_dir(f.path)
        else:
            storage.delete(f.path)


@contextmanager
def table_created_by(storage: Storage, table: TableConfig, new: bool) -> Iterator[None]:
    """The first write's table creation as part of its transaction: ``.hoodie`` is written when the
    write's checks have passed, and removed again, with everything else the write left, when the write
    fails before any commit completed — a refused or failed first write leaves no table behind."""
    if not new:
        yield
        return
    before = {f.path for f in storage.list("", recursive=True)} if storage.is_dir("") else None
    try:
        write_table_files(storage, table)
        yield
    except BaseException:
        if Timeline.load(storage, table.timeline_layout).latest_completed() is None:
            remove_new_files(storage, before)
        raise


def _check_against_table(table: TableConfig, cfg: WriteConfig, options: Mapping[str, Any]) -> None:
    wu.validate_table_config(table_identity(table), given_identity(options))
    if table.metadata_partitions:
        raise InvalidOperation(
            f"the table has a metadata table ({', '.join(table.metadata_partitions)}) that this writer does not "
            "maintain; writing would leave it stale for Java readers",
            hint="write with Apache Hudi, or disable the metadata table there first "
                 "(which drops hoodie.table.metadata.partitions)")


# --- the client ----------------------------------------------------------------------------------


class WriteClient:
    """Writes one table. ``clock`` and ``file_id_prefix`` are injectable for replayable tests."""

    def __init__(self, path: str, spark: Any = None, clock: Any = None, file_id_prefix: Any = None,
                 engine: str = "spark") -> None:
        if engine not in ENGINES:
            raise InvalidConfig(f"engine {engine!r} is unknown", hint=f"use one of {', '.join(ENGINES)}")
        self.engine_name = engine
        self.storage = Storage(path)
        self.path = self.storage.root if "://" not in path else path
        self._spark = spark
        self._clock = clock
        self._new_prefix = file_id_prefix or (lambda: str(uuid.uuid4()))
        self.heartbeat: tuple[int, int] = (DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES)

    @property
    def spark(self) -> Any:
        if self._spark is None:
            from reference.spark import get_or_create_session

            self._spark = get_or_create_session()
        return self._spark

    def table_config(self) -> TableConfig | None:
        return TableConfig.load(self.storage) if self.storage.exists(".hoodie/hoodie.properties") else None

    def _generator(self, timeline: Timeline) -> InstantTimeGenerator:
        last = max((i.completed or i.requested for i in timeline.instants), default=None)
        return InstantTimeGenerator(self._clock, last) if self._clock else InstantTimeGenerator(last=last)

    # step 3
    def rollback_failed_writes(self, table: TableConfig, timeline: Timeline, after: str | None = None) -> list[str]:
        """Roll back the failed writes before a write (``transaction.rollback_failed_writes``; a pending
        write whose heartbeat is alive, by ``self.heartbeat``'s interval and misses, is not failed)."""
        return transaction.rollback_failed_writes(self, table, timeline, after, *self.heartbeat)

    def discard_own_write(self, table: TableConfig, inst: Instant) -> None:
        """Undo this process's failed write on the spot (``transaction.discard_own_write``)."""
        transaction.discard_own_write(self, table, inst)

    def engine(self) -> SparkEngine | LocalEngine:
        """A fresh engine for one write (it holds what the write caches)."""
        return LocalEngine() if self.engine_name == "local" else SparkEngine(self.spark)

    def write(self, data: Any, operation: str | None = None, options: Mapping[str, Any] | None = None) -> WriteResult:
        """Write ``data`` (a Spark DataFrame or a pyarrow Table) with one operation."""
        opts = dict(options or {})
        if operation is not None:
            opts["hoodie.datasource.write.operation"] = operation
        times = StepTimes()
        cfg = parse_options(opts)
        op = cfg.operation
        engine = self.engine()
        frame = None if op == "delete_partition" and data is None else engine.frame(data)
        schema = engine.user_schema(frame) if frame is not None else None
        table = self.table_config()
        new = table is None
        if table is None:  # created as part of this write: nothing on disk until every check passed
            if schema is None:
                raise InvalidOperation("cannot create a table from a delete_partition", hint="write data first")
            table = new_table_config(cfg, schema)
            timeline = Timeline((), table.timeline_layout)
        else:
            _check_against_table(table, cfg, opts)
            timeline = Timeline.load(self.storage, table.timeline_layout)
            self.check_timeline_files(table, timeline)
        if frame is not None:
            ordering = table.ordering_field
            if (op != "delete" and ordering and combines(cfg, op) and ordering in engine.columns(frame)
                    and has_null(engine, frame, ordering)):
                raise InvalidRecord(f"a record has no value for the ordering field {ordering!r}",
                                    hint=f"a {op} combines records by their ordering value: give every record one "
                                         "(or turn the operation's hoodie.combine.before.* option off)")
            frame = self._check_schema(engine, frame, table, timeline, op)
            frame = engine.with_keys(frame, table)
        action = (Action.REPLACE_COMMIT if op in REPLACE_OPERATIONS
                  else Action.DELTA_COMMIT if table.table_type == MERGE_ON_READ else Action.COMMIT)
        times.mark("prepare")
        try:
            with table_created_by(self.storage, table, new):
                def write_data(instant: str, timeline: Timeline) -> CommitMetadata:
                    return self._write(engine, frame, table, timeline, cfg, instant, op, times)

                instant, md = self.transact(table, action, op, cfg, write_data, times)
        finally:
            engine.release()
        return WriteResult(instant, action, op, md, dict(times.seconds))

    def transact(self, table: TableConfig, action: str, label: str, cfg: WriteConfig,
                 write: Callable[[str, Timeline], CommitMetadata],
                 times: StepTimes | None = None) -> tuple[str, CommitMetadata]:
        """One write in a transaction under the concurrency mode of ``cfg`` (``reference.transaction``)."""
        return transaction.transact(self, table, action, label, cfg, write, times)

    def run_inline_services(self, table: TableConfig, cfg: WriteConfig) -> None:
        """After a commit, under the writer's lock, as Hudi's write client does: inline compaction
        (merge-on-read, ``hoodie.compact.inline``), then the cleaner (``hoodie.clean.automatic``), then
        archival (``hoodie.archive.automatic``)."""
        if table.table_type == MERGE_ON_READ and cfg.inline_compact:
            maybe_inline_compaction(self, table, cfg)
        if cfg.auto_clean:
            self._label("clean")
            clean(self.storage, table, clean_config(cfg), clock=self._clock, locked=True)
        if cfg.auto_archive:
            self._label("archive")
            archive(self.storage, table, archive_config(cfg), compaction_config(cfg), locked=True)

    def _label(self, action: str) -> None:
        if self._spark is not None:
            self._spark.sparkContext.setJobDescription(f"hudi {action}")

    def begin(self, table: TableConfig) -> tuple[str, InstantTimeGenerator, Timeline]:
        """The new write's instant after failed writes are rolled back (``transaction.begin``)."""
        return transaction.begin(self, table)

    def check_timeline_files(self, table: TableConfig, timeline: Timeline) -> None:
        """Before a write: every file the latest file slices need by the timeline is there
        (``spec.file_system_view.missing_latest_files``); a missing one stops the write, which would
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

    def _check_schema(self, engine: SparkEngine | LocalEngine, frame: Any, table: TableConfig, timeline: Timeline,
                      op: str) -> Any:
        """The batch checked against the table's latest schema before anything is written
        (``spec.schema_evolution``): key, partition and ordering fields present; no column of the table
        dropped; each column's type the table's, a promotion of it (the batch's values are cast to the
        table's type) or a type it promotes to (the column evolves); anything else ``SchemaMismatch``."""
        names = engine.columns(frame)
        columns = set(names)
        needed = set(table.record_key_fields) | set(table.partition_fields)
        if op not in ("delete",) and table.ordering_field:
            needed.add(table.ordering_field)
        missing = sorted(needed - columns)
        if missing:
            raise InvalidRecord(f"the input lacks field(s) {', '.join(missing)}",
                                hint="record key, partition and ordering fields must be present")
        if op == "delete":
            return frame
        latest = timeline.commits_timeline().latest_completed()
        if latest is None:
            return frame
        md = parse_commit_metadata(read_instant_content(self.storage, latest, timeline.layout))
        if not md.schema:
            return frame
        fields = json.loads(md.schema)["fields"]
        known = {f["name"] for f in fields}
        dropped = sorted(known - columns - set(META_FIELDS))
        if dropped:
            raise SchemaMismatch(f"the input drops column(s) {', '.join(dropped)} of the table's schema",
                                 hint="write every column of the table (new columns may be added)")
        table_types = {f["name"]: primitive(f["type"]) for f in fields}
        incoming = avro_schema_from_arrow(engine.user_schema(frame), *record_name_for_table(table.name))
        casts = {}
        for f in incoming["fields"]:
            old, new = table_types.get(f["name"]), primitive(f["type"])
            if old is None or new is None or old == new:
                continue
            if reconcile_type(f["name"], old, new) == old:
                casts[f["name"]] = old
        return cast_columns(engine, frame, casts) if casts else frame

    # steps 4-6
    def _write(self, engine: SparkEngine | LocalEngine, df: Any, table: TableConfig, timeline: Timeline,
               cfg: WriteConfig, instant: str, op: str, times: StepTimes | None = None) -> CommitMetadata:
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
            return CommitMetadata({}, False, {"schema": self._schema_json(table, None)}, "DELETE_PARTITION",
                                  {p: tuple(v) for p, v in replaced.items()})
        assert df is not None
        user_schema = engine.user_schema(df)
        dedupe = combines(cfg, op)
        ordering = table.ordering_field if op != "delete" else None
        bloom = op in ("upsert", "delete") and cfg.index_type == "BLOOM"
        if dedupe and not bloom:
            df = engine.dedupe(df, ordering)
        if dedupe or op in ("upsert", "delete"):
            df = engine.persist(df)  # read by the index lookup, the workload profile and the handles
        # (a bulk_insert or insert without dedupe is read twice, by the profile and the handles: recomputing
        # its key columns costs less than caching it, as Hudi's bulk insert does not cache either)
        located: pa.Table | None = None
        counts: Mapping[tuple[str, str | None], int] | None = None
        if bloom:
            self._label(f"commit {instant}: index lookup")
            keys = engine.keys(df)
            if dedupe:
                distinct = keys.group_by([PARTITION_PATH, RECORD_KEY]).aggregate([])
                if distinct.num_rows < keys.num_rows:  # a batch without a repeated key is its own dedupe
                    df, keys = engine.dedupe(df, ordering), distinct
            located, _ = bloom_index(self.storage, view, keys)
            if engine.name == "spark":
                # the workload profile from the keys the lookup brought to the driver: no Spark job of its own
                # (the local engine counts the tagged batch itself, which costs less than tagging the keys too)
                counts = count_records(tag_records(keys, located, op == "delete"))
        elif op in ("upsert", "delete"):
            located = simple_index(self.storage, view)
        df = engine.tag(df, located, op == "delete")
        times.mark("index lookup")
        if op in ("insert_overwrite", "insert_overwrite_table"):
            incoming_parts = engine.partitions(df)
            for g in view.groups:
                if op == "insert_overwrite_table" or g.partition_path in incoming_parts:
                    replaced.setdefault(g.partition_path, []).append(g.file_id)
        if op == "bulk_insert":
            df = with_input_partition(engine, df)
        if counts is None:
            self._label(f"commit {instant}: workload profile")
            counts = engine.counts(df)
        profile = WorkloadProfile.from_counts(counts)
        busy = pending_compaction_groups(self.storage, timeline)
        small = {} if op in ("bulk_insert", "insert_overwrite", "insert_overwrite_table") else {
            p: files for p, files in self._small_files(view, cfg, busy).items()
            if p in profile.partitions and profile.partitions[p].inserts > 0}  # looked up only where inserts go
        pcfg = partitioner_config(cfg)
        avg = average_record_size(self._commit_totals(timeline), pcfg)
        def new_file_id() -> str:
            return make_file_id(self._new_prefix(), 0)

        assignment = (bulk_insert_assignment(counts, cfg.bulk_insert_sort_mode, new_file_id) if op == "bulk_insert"
                      else assign_buckets(profile, small, pcfg, avg, new_file_id))
        self._write_partition_metadata({b.partition for b in assignment.buckets}, instant)
        small_ids = {sf.file_id for sfs in small.values() for sf in sfs}
        times.mark("workload profile")
        stats = (self._run_handles(engine, df, table, assignment, view, instant, user_schema, cfg, op, busy,
                                   small_ids)
                 if assignment.buckets else [])
        times.mark("handles")
        by_partition: dict[str, list[WriteStat]] = {}
        for s in stats:
            by_partition.setdefault(s["partitionPath"], []).append(_stat(s))
        replace = {p: tuple(v) for p, v in replaced.items()} if op in REPLACE_OPERATIONS else None
        return CommitMetadata({p: tuple(v) for p, v in sorted(by_partition.items())}, False,
                              {"schema": self._schema_json(table, user_schema)}, OPERATION_TYPES[op], replace)

    def _schema_json(self, table: TableConfig, schema: pa.Schema | None) -> str:
        if schema is None:
            return table.create_schema or ""
        return json.dumps(avro_schema_from_arrow(schema, *record_name_for_table(table.name)))

    def _small_files(self, view: FileSystemView, cfg: WriteConfig,
                     busy: Mapping[tuple[str, str], str]) -> dict[str, list[SmallFile]]:
        """Per partition, the small files inserts may go to (``spec.partitioner`` COW and MOR rules;
        ``busy`` groups are under a pending compaction)."""
        mor = view.config.table_type == MERGE_ON_READ
        by_partition: dict[str, list[SmallFileCandidate]] = {}
        for sl in view.latest_slices():
            by_partition.setdefault(sl.partition_path, []).append(SmallFileCandidate(
                sl.file_id, sl.base_file.size if sl.base_file else None, bool(sl.log_files),
                (sl.partition_path, sl.file_id) in busy))
        return {p: select_small_files(c, cfg.small_file_limit, merge_on_read=mor) for p, c in by_partition.items()}

    def _commit_totals(self, timeline: Timeline) -> list[tuple[int, int]]:
        """(bytes, records) of the base files each completed commit / replacecommit wrote, oldest first."""
        totals = []
        for inst in timeline.commits_timeline().completed().instants:
            if inst.action not in (Action.COMMIT, Action.REPLACE_COMMIT):
                continue
            md = parse_commit_metadata(read_instant_content(self.storage, inst, timeline.layout))
            stats = [s for s in md.all_write_stats() if not s.is_delta]
            totals.append((sum(s.total_write_bytes for s in stats), sum(s.num_writes for s in stats)))
        return totals

    def _write_partition_metadata(self, partitions: set[str], instant: str) -> None:
        for p in partitions:
            rel = posixpath.join(p, PARTITION_METADATA_FILE) if p else PARTITION_METADATA_FILE
            if not self.storage.exists(rel):
                self.storage.write_atomic(rel, PartitionMetadata(instant, partition_depth(p)).format())

    def _run_handles(self, engine: SparkEngine | LocalEngine, df: Any, table: TableConfig,
                     assignment: BucketAssignment, view: FileSystemView,
                     instant: str, user_schema: pa.Schema, cfg: WriteConfig, op: str,
                     busy: Mapping[tuple[str, str], str], small_ids: set[str]) -> list[dict[str, Any]]:
        mor = table.table_type == MERGE_ON_READ
        specs: dict[int, BucketSpec] = {}
        for b in assignment.buckets:
            if b.kind == "UPDATE":
                group = view.group(b.partition, b.file_id)
                base = group.latest_slice.base_file if group and group.latest_slice else None
                prev = parse_base_file_name(base.name).instant if base else NULL_COMMIT
                if mor and b.file_id not in small_ids:
                    specs[b.number] = append_bucket(b.number, b.partition, b.file_id, group, busy)
                else:
                    specs[b.number] = BucketSpec(b.number, "update", b.partition, b.file_id,
                                                 base.path if base else None, prev)
            else:
                specs[b.number] = BucketSpec(b.number, "insert", b.partition, b.file_id)
        ctx = self.handle_context(table, cfg, instant, specs, user_schema,
                                  sort_by_key=op == "bulk_insert" and cfg.bulk_insert_sort_mode != "NONE",
                                  concat=op == "insert" and cfg.allow_duplicate_on_inserts)
        return engine.write_buckets(df, ctx, user_schema, assignment)

    def handle_context(self, table: TableConfig, cfg: WriteConfig, instant: str, specs: Mapping[int, BucketSpec],
                       user_schema: pa.Schema, sort_by_key: bool = False, concat: bool = False) -> HandleContext:
        """What every handle of one write needs, shipped to the Spark tasks."""
        avro = with_meta_fields(avro_schema_from_arrow(user_schema, *record_name_for_table(table.name)))
        ordering = table.ordering_field
        return HandleContext(self.path, instant, json.dumps(avro), MergeRule.from_config(table), cfg.compression,
                             specs, sort_by_key=sort_by_key, concat=concat, table_version=table.table_version,
                             append=AppendHandleConfig(cfg.log_block_size, cfg.log_file_size, table.table_version),
                             record_size=cfg.record_size_estimate, ordering_field=ordering,
                             ordering_branch=ordering_branch(user_schema, ordering))

    def write_buckets(self, tagged: Any, ctx: HandleContext, user_schema: pa.Schema) -> list[dict[str, Any]]:
        """Step 6 on Spark: one task per bucket (the ``BUCKET`` column) runs its handle; the write stats."""
        return run_buckets(self.spark, tagged, ctx, user_schema)


def pending_compaction_groups(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → the pending compaction (requested or inflight) whose plan holds the group."""
    return groups_under_compaction(pending_compaction_plans(storage, timeline))


def append_bucket(number: int, partition: str, file_id: str, group: Any,
                  busy: Mapping[tuple[str, str], str]) -> BucketSpec:
    """An append handle's bucket: the slice its log joins is the group's pending compaction, else its
    latest slice (named by its base instant, or for a log-only group by its first log's instant)."""
    sl = group.latest_slice if group is not None else None
    base = sl.base_file if sl is not None else None
    logs = tuple(f.name for s in (group.slices if group is not None else ()) for f in s.log_files)
    base_instant = busy.get((partition, file_id)) or (sl.base_instant if sl is not None else None)
    return BucketSpec(number, "append", partition, file_id, None,
                      sl.base_instant if sl is not None else NULL_COMMIT, base_instant=base_instant,
                      base_file_name=base.name if base is not None else None, existing_logs=logs)


_BRANCH_BY_TYPE = ((pa.types.is_int8, 1), (pa.types.is_int16, 1), (pa.types.is_int32, 1), (pa.types.is_int64, 2),
                   (pa.types.is_float32, 3), (pa.types.is_float64, 4), (pa.types.is_binary, 5),
                   (pa.types.is_string, 6), (pa.types.is_large_string, 6))


def ordering_branch(schema: pa.Schema, ordering: str | None) -> int:
    """The ``HoodieDeleteRecord.orderingVal`` union branch for the ordering field's type (0: none)."""
    if ordering is None or ordering not in schema.names:
        return 0
    t = schema.field(ordering).type
    return next((b for test, b in _BRANCH_BY_TYPE if test(t)), 0)


def _stat(values: Mapping[str, Any]) -> WriteStat:
    return write_stat(**values)


def write_arrow(path: str, data: pa.Table, operation: str, options: Mapping[str, Any],
                spark: Any = None) -> WriteResult:
    """Convenience: write a pyarrow Table."""
    return WriteClient(path, spark).write(data, operation, options)


__all__ = ["WriteClient", "WriteResult", "new_table_config", "table_created_by", "write_arrow", "write_table_files"]
