"""Compaction of merge-on-read tables: schedule a plan, run it on Spark, trigger it inline.

- **schedule**: ``spec.actions.compaction.plan_compaction`` over the latest file slices (groups already
  under a pending compaction excluded) → ``<t>.compaction.requested`` holding the Avro
  ``HoodieCompactionPlan`` (one operation per slice with log files; version 2, Hudi's metrics).
  Nothing to compact → no instant.
- **run**: ``<t>.compaction.inflight``; one Spark task per operation reads the slice's base file
  and exactly the plan's log files, merged by the spec reader's rules (``spec.read.merge``), and writes
  the group's new base file at ``t`` — rows keep their commit time and sequence number, only
  ``_hoodie_file_name`` changes; then the completed instant is a ``commit`` (v8: ``t_<completion>
  .commit``) with ``compacted: true`` and operation ``COMPACT``. A compaction that died half way
  (inflight) is rolled back first — a rollback instant deletes the base files it wrote, the
  instant goes back to requested — then run again from its plan, as Hudi's
  ``BaseHoodieTableServiceClient.compact`` does.
- **pending first**: ``compact`` and inline compaction run every pending compaction before they
  schedule a new one (Hudi's ``runAnyPendingCompactions``).
- **beside an ingesting writer**: under optimistic concurrency control
  (``hoodie.write.concurrency.mode=optimistic_concurrency_control`` in ``options``) the table lock is
  held only while the plan is written and again while the compaction completes; the operations run
  outside it, so writers keep writing. The compaction resolves no conflicts at its commit; a writer
  whose file groups it planned resolves them at its own commit (``spec.timeline.conflict_resolution``), as in
  Hudi's ``BaseHoodieTableServiceClient``. Without that option the lock is held for the whole run.
- **inline**: after a deltacommit, when ``hoodie.compact.inline`` is set and at least
  ``hoodie.compact.inline.max.delta.commits`` deltacommits followed the last compaction
  (``spec.actions.compaction.should_schedule_compaction``), schedule and run one.

Writes that arrive while a compaction is pending append to the slice the compaction opens
(``reference.io.buckets.append_bucket``); their logs are not in the plan and stay on top of the new
base file.

The instants are the transaction's (``reference.transaction.transaction``: ``request``, ``start``, ``complete``);
the operations run on the writer's engine (``Engine.run_tasks``).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from reference.engines.engine import Engine
from reference.executors.common import pending_compaction_groups, read_record
from reference.executors.rollback import rollback_instant
from reference.instrumentation.faults import fault_point
from reference.io.buckets import stats_by_partition
from reference.io.cdc_log import write_cdc_log
from reference.io.handles import HandleContext, _write, marker_path
from reference.metadata.writer import check_service_keeps_it
from reference.transaction.lock import maybe_locked, table_lock
from reference.transaction.transaction import Writer, complete, mark_inflight, request
from spec.actions.clustering import pending_clustering_groups
from spec.actions.compaction import plan_compaction, should_schedule_compaction
from spec.actions.file_refs import SliceRef
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import HudiSpecError, InstantNotFound, InvalidOperation, InvalidTable, WriteConflict
from spec.file_group.file_naming import BaseFileName, parse_base_file_name
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView
from spec.file_group.log_file.log_blocks import block_record_count
from spec.file_group.log_file.scanner import scan_slice_logs
from spec.read.merge import MergeRule
from spec.read.reader import TableReader
from spec.schema.table_schema import (
    COMMIT_SEQNO,
    FILE_NAME,
    META_FIELDS,
    RECORD_KEY,
    avro_schema_from_arrow,
    record_name_for_table,
    with_meta_fields,
)
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.timeline.active_timeline import Timeline, instant_times
from spec.timeline.avro_model import (
    COMPACTION_METRICS,
    HoodieCompactionOperation,
    HoodieCompactionPlan,
    format_avro_metadata,
)
from spec.timeline.commit_metadata import CommitMetadata
from spec.timeline.conflict_resolution import may_schedule_compaction
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import read_instant_content
from spec.write.service_configs import compaction_config

if TYPE_CHECKING:
    from reference.config.options import WriteConfig

PLAN_VERSION = 2
"""``HoodieCompactionPlan.version`` as Hudi 0.x and 1.x write it."""


class Compactor(Writer, Protocol):
    """What compaction needs of the process that runs it (``reference.write.client.WriteClient`` is one): a
    transaction's writer, the table's base path and config, and an engine to run the operations on."""

    path: str

    def table_config(self) -> TableConfig | None: ...

    def engine(self) -> Engine: ...


def _require_mor(table: TableConfig) -> None:
    if table.table_type != MERGE_ON_READ:
        raise InvalidOperation(f"table {table.name} is {table.table_type}; compaction applies to MERGE_ON_READ tables",
                               hint="copy-on-write tables have no log files to compact")


def _mb(n: int) -> float:
    """Whole megabytes, as Hudi's default compaction strategy counts I/O (long division)."""
    return float(n // (1024 * 1024))


def schedule_compaction(client: Compactor, instant: str | None = None, *, locked: bool = False,
                        options: Mapping[str, Any] | None = None) -> str | None:
    """Write a compaction plan for every latest slice with log files; its instant, or None.
    Takes the table lock unless the caller holds it (``locked``); under optimistic concurrency
    control (``options``) it waits for the lock as writers do."""
    table = service_table(client)
    _require_mor(table)
    cfg = _config(options)
    if cfg.optimistic and not locked:
        with table_lock(client.storage, "schedule compaction", cfg.lock):
            return _schedule(client, table, instant, multi_writer=True)
    with maybe_locked(client.storage, locked, "schedule compaction", cfg.lock):
        return _schedule(client, table, instant)


def _schedule(client: Compactor, table: TableConfig, instant: str | None, multi_writer: bool = False) -> str | None:
    timeline = Timeline.load(client.storage, table.timeline_layout)
    client.rollback_failed_writes(table, timeline)
    timeline = Timeline.load(client.storage, table.timeline_layout)
    t = instant or instant_times(timeline, client.clock).next()
    latest = max((i.requested for i in timeline.instants), default="")
    if t <= latest:
        raise InvalidOperation(f"compaction instant {t} is not after the latest instant {latest}",
                               hint="omit the instant to let the writer choose one")
    if may_schedule_compaction(timeline, t, table.table_version, multi_writer) is not None:
        return None  # an earlier write is pending (a live writer's): Hudi skips scheduling
    busy = {**pending_compaction_groups(client.storage, timeline),  # and groups a pending clustering rewrites
            **pending_clustering_groups(client.storage, timeline)}
    view = FileSystemView.load(client.storage, table, timeline)
    sizes = {f.path: f.size for f in view.listing}
    plan = plan_compaction(t, [SliceRef.of(sl) for sl in view.latest_slices()], timeline, table.table_version,
                           set(busy))
    if plan is None:
        return None
    ops = []
    for op in plan.operations:
        log_size = sum(sizes.get(posixpath.join(op.partition_path, n) if op.partition_path else n, 0)
                       for n in op.log_files)
        base_size = sizes.get(posixpath.join(op.partition_path, op.base_file) if op.partition_path and op.base_file
                              else op.base_file or "", 0)
        read_mb, write_mb = _mb(base_size + log_size), _mb(base_size)
        metrics = dict(zip(COMPACTION_METRICS, (float(len(op.log_files)), read_mb + write_mb, read_mb,
                                                 float(log_size), write_mb), strict=True))
        ops.append(HoodieCompactionOperation(
            base_instant_time=op.base_instant, delta_file_paths=op.log_files, data_file_path=op.base_file,
            file_id=op.file_id, partition_path=op.partition_path, metrics=metrics))
    avro_plan = HoodieCompactionPlan(operations=tuple(ops), extra_metadata={}, version=PLAN_VERSION,
                                     preserve_hoodie_metadata=False, missing_schedule_partitions=())
    request(client.storage, table, t, Action.COMPACTION, format_avro_metadata(avro_plan, table.table_version))
    return t


def service_table(client: Compactor, service: str = "compact") -> TableConfig:
    """The table a table service (``service``: compact, cluster) runs on: InvalidOperation where there is none, and
    refused where this writer does not keep it (``check_service_keeps_it``)."""
    table = client.table_config()
    if table is None:
        raise InvalidOperation(f"there is no Hudi table at {client.path}", hint="write to it first")
    check_service_keeps_it(table, service)
    return table


def run_compaction(client: Compactor, instant: str | None = None, *, locked: bool = False,
                   options: Mapping[str, Any] | None = None) -> str:
    """Execute a pending compaction (the oldest when ``instant`` is None); returns its instant.
    Takes the table lock unless the caller holds it (``locked``)."""
    table = service_table(client)
    _require_mor(table)
    cfg = _config(options)
    if cfg.optimistic and not locked:
        return _run(client, table, instant, cfg.compression, commit_lock=cfg.lock)
    with maybe_locked(client.storage, locked, "run compaction", cfg.lock):
        return _run(client, table, instant, _codec(options))


def _run(client: Compactor, table: TableConfig, instant: str | None, codec: str = "gzip",
         commit_lock: StorageLockConfig | None = None) -> str:
    """Run one pending compaction. With ``commit_lock`` (optimistic concurrency control) the table
    lock is taken only to roll back a half-done earlier run and to complete; otherwise the caller holds it."""
    if commit_lock is None:
        return _run_steps(client, table, instant, codec, None)
    with table_lock(client.storage, "compaction", commit_lock):  # the instant chosen, a dead run undone
        t = _pending_instant(client, table, instant)
        if t.state == State.INFLIGHT:
            _undo_inflight(client, table, t)
    return _run_steps(client, table, t.requested, codec, commit_lock)


def _pending_instant(client: Compactor, table: TableConfig, instant: str | None) -> Instant:
    pending = Timeline.load(client.storage, table.timeline_layout).pending_compactions().instants
    if instant is None:
        if not pending:
            raise InstantNotFound("there is no pending compaction to run", hint="schedule one first")
        return pending[0]
    found = [i for i in pending if i.requested == instant]
    if not found:
        raise InstantNotFound(f"no pending compaction at {instant}",
                              hint="list them with `hudi-spec timeline`; schedule one with `hudi-spec compact`")
    return found[0]


def _undo_inflight(client: Compactor, table: TableConfig, inst: Instant) -> None:
    """A run that died half way: its partial output removed, rolled back to requested."""
    plan = read_record(client.storage, Instant(inst.requested, Action.COMPACTION, State.REQUESTED),
                       table.timeline_layout, HoodieCompactionPlan)
    _remove_partial_output(client.storage, plan, inst.requested)
    rollback_instant(client.storage, table, inst, clock=client.clock,
                     timeline=Timeline.load(client.storage, table.timeline_layout))


def _run_steps(client: Compactor, table: TableConfig, instant: str | None, codec: str,
               commit_lock: StorageLockConfig | None) -> str:
    layout = table.timeline_layout
    inst = _pending_instant(client, table, instant)
    t = inst.requested
    if inst.state == State.INFLIGHT:  # a run that died half way: rolled back to requested, then run again
        _undo_inflight(client, table, inst)
    timeline = Timeline.load(client.storage, layout)
    plan = read_record(client.storage, Instant(t, Action.COMPACTION, State.REQUESTED), layout, HoodieCompactionPlan)
    plan = _without_rolled_back_logs(client.storage, timeline, plan)
    inflight = mark_inflight(client.storage, table, Instant(t, Action.COMPACTION, State.REQUESTED))
    stats = _run_operations(client, plan, t, codec)
    schema = _latest_schema(client.storage, timeline) or table.create_schema or ""
    md = CommitMetadata(stats_by_partition(stats), True, {"schema": schema}, "COMPACT")
    if commit_lock is None:
        complete(client.storage, table, inflight, md,
                 instant_times(Timeline.load(client.storage, layout), client.clock), client.metadata_table_services)
        return t
    with table_lock(client.storage, f"commit of compaction {t}", commit_lock) as lock:
        if not lock.holds():
            raise WriteConflict(f"the table lock was lost before compaction {t} could commit",
                                hint="run the compaction again: it resumes from its plan")
        complete(client.storage, table, inflight, md,
                 instant_times(Timeline.load(client.storage, layout), client.clock), client.metadata_table_services)
    return t


def run_pending_compactions(client: Compactor, table: TableConfig, codec: str) -> list[str]:
    """Run every pending compaction, oldest first (Hudi's ``runAnyPendingCompactions``); an inflight
    one, which a killed compactor left, is rolled back first. The caller holds the lock."""
    pending = Timeline.load(client.storage, table.timeline_layout).pending_compactions().instants
    return [_run(client, table, inst.requested, codec) for inst in pending]


def compact(client: Compactor, *, locked: bool = False, options: Mapping[str, Any] | None = None) -> str | None:
    """Run the pending compactions (a killed one rolled back and run again), then schedule a
    compaction and run it; the last instant compacted, or None when there was nothing to compact.
    ``options``: write options the new base files follow (``hoodie.parquet.compression.codec``)."""
    table = service_table(client)
    _require_mor(table)
    cfg = _config(options)
    if cfg.optimistic and not locked:
        return _compact_beside_writers(client, table, cfg)
    with maybe_locked(client.storage, locked, "compaction", cfg.lock):
        codec = _codec(options)
        done = run_pending_compactions(client, table, codec)
        t = _schedule(client, table, None, multi_writer=cfg.optimistic)
        return _run(client, table, t, codec) if t is not None else (done[-1] if done else None)


def _compact_beside_writers(client: Compactor, table: TableConfig, cfg: WriteConfig) -> str | None:
    """``compact`` under optimistic concurrency control: the plan written under the lock (failed
    writes whose heartbeat expired rolled back first), the pending compactions and the new one run
    outside it, each completed under it (``BaseHoodieTableServiceClient.completeCompaction``)."""
    client.heartbeat = (cfg.heartbeat_interval_ms, cfg.heartbeat_tolerable_misses)
    with table_lock(client.storage, "schedule compaction", cfg.lock):
        pending = [i.requested for i in Timeline.load(client.storage, table.timeline_layout)
                   .pending_compactions().instants]
        t = _schedule(client, table, None, multi_writer=True)
    done = [_run(client, table, p, cfg.compression, commit_lock=cfg.lock) for p in pending + ([t] if t else [])]
    return done[-1] if done else None


def _config(options: Mapping[str, Any] | None) -> WriteConfig:
    from reference.config.options import parse_options

    return parse_options(dict(options or {}))


def _codec(options: Mapping[str, Any] | None) -> str:
    """The parquet codec of the compacted base files: ``hoodie.parquet.compression.codec`` (Hudi's
    default: gzip)."""
    return _config(options).compression


def maybe_inline_compaction(client: Compactor, table: TableConfig, cfg: WriteConfig) -> str | None:
    """Inline compaction after a deltacommit (``hoodie.compact.inline``): the pending compactions run
    first, as in Hudi's ``BaseHoodieTableServiceClient.inlineCompaction``, then a new one is
    scheduled and run when the NUM_COMMITS trigger is met. The deltacommit's writer holds the lock."""
    done = run_pending_compactions(client, table, cfg.compression)
    timeline = Timeline.load(client.storage, table.timeline_layout)
    if not should_schedule_compaction(timeline, compaction_config(cfg)):
        return done[-1] if done else None
    return compact(client, locked=True, options={"hoodie.parquet.compression.codec": cfg.compression,
                                                 "hoodie.write.concurrency.mode": cfg.concurrency_mode})


def _latest_schema(storage: Storage, timeline: Timeline) -> str | None:
    from spec.timeline.commit_metadata import parse_commit_metadata

    for inst in reversed(timeline.commits_timeline().completed().instants):
        md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))
        if md.schema:
            return md.schema
    return None


def _without_rolled_back_logs(storage: Storage, timeline: Timeline, plan: HoodieCompactionPlan) -> HoodieCompactionPlan:
    """The plan without the log files it names that are gone because the write that made them was
    rolled back. Before table version 8 a slice lists its log files whether their write committed
    or not (a log file's name holds no instant), so a plan written while another writer was
    appending may name a log file that writer then undid; no completed instant names such a file.
    A missing log file a completed instant wrote is damage: InvalidTable."""
    partitions = {op.partition_path or "" for op in plan.operations or ()}
    present = {p: {f.name for f in storage.list(p) if not f.is_dir} for p in partitions}
    missing = {n for op in plan.operations or () for n in op.delta_file_paths or ()
               if n not in present[op.partition_path or ""]}
    if not missing:
        return plan
    from spec.timeline.commit_metadata import parse_commit_metadata

    for inst in timeline.commits_timeline().completed().instants:
        md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))
        lost = sorted(missing & {posixpath.basename(s.path) for s in md.all_write_stats() if s.path})
        if lost:
            raise InvalidTable(f"log file {lost[0]}, written by the completed instant {inst.requested} and named by "
                               "the compaction plan, is missing", hint="put the file back from a backup, or undo "
                               f"{inst.requested} (`hudi-spec rollback TABLE {inst.requested}`)")
    ops = tuple(replace(op, delta_file_paths=tuple(n for n in op.delta_file_paths or () if n not in missing))
                for op in plan.operations or ())
    return replace(plan, operations=ops)


def _remove_partial_output(storage: Storage, plan: HoodieCompactionPlan, t: str) -> None:
    """Delete the base files an earlier, killed run of this compaction left half written
    (``.inprogress``, which no rollback plan names)."""
    for partition in {op.partition_path or "" for op in plan.operations or ()}:
        for f in storage.list(partition):
            if f.is_dir or not f.name.endswith(".inprogress"):
                continue
            name = f.name.removesuffix(".inprogress")
            try:
                if parse_base_file_name(name).instant == t:
                    storage.delete(f.path)
            except HudiSpecError:
                continue


def _operation_json(op: HoodieCompactionOperation) -> str:
    return json.dumps({"partition": op.partition_path or "", "file_id": op.file_id,
                       "base_instant": op.base_instant_time, "base_file": op.data_file_path,
                       "logs": list(op.delta_file_paths or ())})


def _run_operations(client: Compactor, plan: HoodieCompactionPlan, t: str, codec: str = "gzip") -> list[dict[str, Any]]:
    """Every operation of the plan, one task each on the writer's engine (``Engine.run_tasks``)."""
    ops = [_operation_json(op) for op in plan.operations or ()]
    if not ops:
        return []
    base_path = client.path

    def task(payload: str, token: str) -> dict[str, Any]:
        return compact_slice(base_path, json.loads(payload), t, token, codec)

    engine = client.engine()
    try:
        return engine.run_tasks(task, ops, f"hudi compaction {t}: {len(ops)} file groups")
    finally:
        engine.release()


def compact_slice(base_path: str, op: Mapping[str, Any], t: str, write_token: str,
                  compression: str = "gzip") -> dict[str, Any]:
    """Merge one slice (its base file and the plan's log files) into the group's base file at ``t``;
    the compaction's write stat."""
    reader = TableReader(base_path)
    storage = reader.storage
    partition = op["partition"]

    def data_file(name: str) -> DataFile:
        rel = posixpath.join(partition, name) if partition else name
        return DataFile(partition, name, storage.size(rel))

    base = data_file(op["base_file"]) if op["base_file"] else None
    logs = [data_file(n) for n in op["logs"]]
    sl = FileSlice(partition, op["file_id"], op["base_instant"], base).with_logs(logs)
    merged = reader.read_slice(sl)
    blocks, scan = scan_slice_logs(storage, [f.path for f in sl.log_files], reader.timeline,
                                   reader.latest_instant(), reader.config.table_version)
    name = BaseFileName(op["file_id"], write_token, t).format()
    rel = posixpath.join(partition, name) if partition else name
    storage.create_if_absent(marker_path(t, rel, "CREATE"), b"")
    if merged is None:
        merged = pa.table({n: pa.array([], pa.string()) for n in META_FIELDS})
    merged = merged.set_column(merged.schema.get_field_index(FILE_NAME), FILE_NAME,
                               pa.array([name] * merged.num_rows, pa.string()))
    merged = merged.sort_by([(RECORD_KEY, "ascending")])
    data_schema = pa.schema([f for f in merged.schema if f.name not in META_FIELDS])
    avro = with_meta_fields(avro_schema_from_arrow(data_schema, *record_name_for_table(reader.config.name)))
    ctx = HandleContext(base_path, t, json.dumps(avro), MergeRule.from_config(reader.config), compression, {})
    size = _write(storage, rel, merged, ctx)
    fault_point("mid_compaction")  # a compaction killed after one new base file
    base_keys = pa.array([], pa.string())
    base_seqnos = pa.array([], pa.string())
    if base is not None:
        stored = storage.read_parquet(base.path, columns=[RECORD_KEY, COMMIT_SEQNO])
        base_keys = pc.unique(stored.column(RECORD_KEY).cast(pa.string()).combine_chunks())
        base_seqnos = stored.column(COMMIT_SEQNO).cast(pa.string()).combine_chunks()
    out_keys = pc.unique(merged.column(RECORD_KEY).cast(pa.string()).combine_chunks())
    log_records = sum(block_record_count(b) for b in blocks)
    kept = pc.is_in(out_keys, value_set=base_keys)
    log_keys = _log_keys(blocks)
    updated_keys = pc.and_(kept, pc.is_in(out_keys, value_set=log_keys))
    # the keys the base file or a log held that the new file lacks (spec.write.ledger.compaction_stat)
    held = pc.unique(pa.concat_arrays([base_keys, log_keys.cast(pa.string())]))
    deletes = len(held) - (pc.sum(pc.is_in(held, value_set=out_keys)).as_py() or 0)
    # only rows a log record replaced (spec.write.ledger.compaction_stat)
    keys = merged.column(RECORD_KEY).cast(pa.string()).combine_chunks()
    replaced = pc.invert(pc.is_in(merged.column(COMMIT_SEQNO).cast(pa.string()).combine_chunks(),
                                  value_set=base_seqnos))
    updated_keys = pc.and_(updated_keys, pc.is_in(out_keys, value_set=pc.filter(keys, replaced)))
    updated = pc.sum(updated_keys).as_py() or 0
    kept_count = pc.sum(kept).as_py() or 0
    stat: dict[str, Any] = {
        "fileId": op["file_id"], "path": rel, "prevCommit": op["base_instant"], "numWrites": merged.num_rows,
        "numDeletes": deletes, "numUpdateWrites": updated, "numInserts": len(out_keys) - kept_count,
        "totalWriteBytes": size, "totalWriteErrors": 0, "partitionPath": partition, "fileSizeInBytes": size,
        "totalLogRecords": log_records, "totalLogFilesCompacted": len(logs),
        "totalLogSizeCompacted": sum(f.size for f in logs), "totalUpdatedRecordsCompacted": updated,
        "totalLogBlocks": scan.total_blocks, "totalCorruptLogBlock": scan.corrupt,
        "totalRollbackBlocks": scan.rolled_back, "prevBaseFile": op["base_file"],
    }
    mode = reader.config.cdc_mode
    if mode is not None and base is not None:  # Hudi's compaction logs what it changed against the base file
        stat["cdcStats"] = write_cdc_log(storage, t, mode, ctx.avro_schema_json, partition, op["file_id"], write_token,
                                         storage.read_parquet(base.path), merged, reader.config.table_version,
                                         replaced.to_pylist())
    return stat


def _log_keys(blocks: Any) -> pa.Array:
    """The record keys the data and delete blocks of a slice's logs carry (data blocks decoded a column at a
    time where ``decode_avro_columns`` can)."""
    from spec.file_group.log_file.delete_block import decode_delete_records
    from spec.file_group.log_file.log_blocks import decode_avro_columns, decode_records
    from spec.file_group.log_file.log_format import BlockType

    keys: list[pa.Array] = []
    for b in blocks:
        if b.block_type == BlockType.DELETE_BLOCK:
            keys.append(pa.array([d.record_key or "" for d in decode_delete_records(b)], pa.string()))
        elif b.is_data:
            columns = decode_avro_columns(b)
            if columns is not None and RECORD_KEY in columns.column_names:
                keys.append(columns.column(RECORD_KEY).cast(pa.string()).combine_chunks())
            else:
                keys.append(pa.array([str(r.get(RECORD_KEY)) for r in decode_records(b)], pa.string()))
    return pc.unique(pa.concat_arrays(keys)) if keys else pa.array([], pa.string())


__all__ = [
    "compact",
    "compact_slice",
    "maybe_inline_compaction",
    "run_compaction",
    "run_pending_compactions",
    "schedule_compaction",
    "service_table",
]
