"""Streaming writes: one commit per checkpoint, file groups from ``spec.write.stream_buckets``.

A streaming writer (Hudi's Flink writer, ``BucketAssigner`` and ``StreamWriteFunction``; here driven by Spark
Structured Streaming's ``foreachBatch``) commits once per checkpoint — one micro-batch is one
checkpoint. Each record goes to the bucket ``spec.write.stream_buckets.StreamBucketAssigner`` gives it:

- a key the table holds goes to its file group (U);
- a new key goes to a small file, else to the partition's current new file group while it has
  room, else to a new file group (I). The assigner lives as long as the writer: a group opened in
  checkpoint 1 keeps taking new keys in checkpoint 2 (as an UPDATE bucket) — Flink's
  ``I, U | U, U``: the insert bucket of checkpoint 1 is appended to, not re-created.

Merge-on-read: every bucket goes through the append handle, so a new file group starts as a
log-only group; copy-on-write: a new group's bucket is a create handle, a known group's a merge
handle. Deletes are records whose ``_hoodie_is_deleted`` is true (a delete of a key the table
does not hold is dropped). Records of one checkpoint are combined per key first (the greatest
ordering value wins; of equal ones the later record).

Every commit records the micro-batch id in its extra metadata (``_hudi_streaming_sink_checkpoint``),
so a micro-batch Spark replays after a failure is not written twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from reference.config.options import WriteConfig, parse_options
from reference.engines.spark import SparkEngine, SparkEngineContext, key_columns, validate_keys
from reference.executors.common import pending_compaction_groups
from reference.io.bucket_index import bucket_index_of, bucket_lookup
from reference.io.buckets import (
    append_bucket,
    commit_metadata,
    commit_totals,
    handle_context,
    schema_json,
    write_partition_metadata,
)
from reference.io.global_index import global_index_of
from reference.io.handles import BUCKET, DELETE_FLAG, FILE_ID, BucketSpec
from reference.transaction import transaction
from reference.write.client import WriteClient, WriteResult
from reference.write.table_creation import new_table_config, table_created_by
from reference.write.write_checks import check_against_table, check_record_index_write, check_schema
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import InvalidOperation, UnsupportedTable
from spec.file_group.file_system_view import FileSystemView
from spec.index.global_index import refuse_streaming
from spec.read.merge import IS_DELETED_FIELD
from spec.read.reader import TableReader
from spec.schema.table_schema import PARTITION_PATH, RECORD_KEY
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import CommitMetadata, parse_commit_metadata
from spec.timeline.instant import Action
from spec.timeline.layout import read_instant_content
from spec.write.partitioner import average_record_size
from spec.write.service_configs import partitioner_config
from spec.write.stream_buckets import BucketStreamAssigner, StreamBucketAssigner, StreamFileGroup

CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"
"""The extra-metadata key under which each streaming commit records its micro-batch."""
CHECKPOINT_IDENTIFIER = "default_single_writer"


class StreamingWriter:
    """Writes a stream of micro-batches to one table, one commit per micro-batch (checkpoint)."""

    def __init__(self, path: str, options: Mapping[str, Any], spark: Any = None, clock: Any = None,
                 file_id_prefix: Any = None) -> None:
        self.engines = SparkEngineContext(spark)
        self.client = WriteClient(path, spark, clock, file_id_prefix)
        self.options = {**options, "hoodie.datasource.write.operation": "upsert"}
        self.cfg: WriteConfig = parse_options(self.options)
        self.assigner: StreamBucketAssigner | BucketStreamAssigner | None = None

    # --- the assigner's view of the table -------------------------------------------------------

    def _start_assigner(self, table: TableConfig, timeline: Timeline) -> StreamBucketAssigner | BucketStreamAssigner:
        """The assigner at the stream's start: the table's visible groups (in creation order) with
        their record counts, and the index of every key; a bucket index's: every partition's buckets
        (``reference.io.bucket_index``)."""
        bucket = bucket_index_of(self.cfg, table, "upsert")
        refuse_streaming(global_index_of(self.cfg, table))
        if bucket is not None:
            found = bucket_lookup(bucket, FileSystemView.load(self.client.storage, table, timeline))
            return BucketStreamAssigner(bucket, {p: found.groups(p) for p in found.file_ids})
        pcfg = partitioner_config(self.cfg)
        totals = commit_totals(self.client.storage, timeline)
        capacity = max(self.cfg.max_file_size // average_record_size(totals, pcfg), 1)
        reader = TableReader(self.client.storage)
        view = FileSystemView.load(self.client.storage, table, timeline)
        groups: dict[str, list[tuple[str, StreamFileGroup]]] = {}
        index: dict[tuple[str, str], str] = {}
        for g in view.groups:
            sl = g.latest_slice
            if sl is None:
                continue
            rows = reader.read_slice(sl, columns=[RECORD_KEY])
            keys = rows.column(RECORD_KEY).to_pylist() if rows is not None else []
            for k in keys:
                index[(g.partition_path, str(k))] = g.file_id
            groups.setdefault(g.partition_path, []).append((g.slices[0].base_instant,
                                                            StreamFileGroup(g.file_id, len(keys), 0)))
        ordered = {p: tuple(fg for _, fg in sorted(v, key=lambda x: (x[0], x[1].file_id))) for p, v in groups.items()}
        return StreamBucketAssigner(capacity, groups=ordered, key_index=index)

    # --- one checkpoint -------------------------------------------------------------------------

    def _committed_batch(self, timeline: Timeline) -> int | None:
        for inst in reversed(timeline.commits_timeline().completed().instants):
            md = parse_commit_metadata(read_instant_content(self.client.storage, inst, timeline.layout))
            mark = md.extra_metadata.get(CHECKPOINT_KEY)
            if mark:
                return int(json.loads(mark).get(CHECKPOINT_IDENTIFIER, -1))
        return None

    def write_checkpoint(self, data: Any, batch_id: int | None = None) -> WriteResult | None:
        """Write one micro-batch (a Spark DataFrame or pyarrow Table) as one commit; None when the
        batch is empty or was already committed (a replayed ``batch_id``)."""
        from pyspark.sql import functions as F
        from pyspark.sql.window import Window

        client = self.client
        engine = self.engines.engine()
        df = engine.frame(data)
        schema = engine.user_schema(df)
        table = client.table_config()
        new = table is None
        if table is None:  # created as part of the first checkpoint's commit, once its checks passed
            table = new_table_config(self.cfg, schema)
            timeline = Timeline((), table.timeline_layout)
        else:
            check_against_table(table, self.options)
            timeline = Timeline.load(client.storage, table.timeline_layout)
        if table.cdc_mode:  # Hudi's streaming (Flink) writer logs changes with handles of its own, not measured here
            raise UnsupportedTable("streaming writes to a table with change data capture are not supported: "
                                   "nothing was written", hint="write the batches with HudiTable.write(..., 'upsert')")
        check_record_index_write(client.storage, table, self.cfg)
        if not table.record_key_fields:
            raise InvalidOperation("streaming writes to a table with auto-generated record keys are not supported",
                                   hint="name a record key field (hoodie.datasource.write.recordkey.field), or "
                                        "write the batches with HudiTable.write(..., 'insert')")
        if batch_id is not None:
            done = self._committed_batch(timeline)
            if done is not None and batch_id <= done:
                return None
        df = check_schema(client.storage, engine, df, table, timeline, "upsert")
        df = key_columns(df, table)
        validate_keys(df, table)
        with table_created_by(client.storage, table, new):  # the table is written once the checks passed
            if self.assigner is None:
                self.assigner = self._start_assigner(table, timeline)
            # combine the checkpoint's records per key; keep each key's first position (assignment order)
            key = Window.partitionBy(PARTITION_PATH, RECORD_KEY)
            order = [F.col("__seq").desc()]
            if table.ordering_field:
                order.insert(0, F.col(table.ordering_field).desc_nulls_last())
            df = (df.withColumn("__seq", F.monotonically_increasing_id())
                  .withColumn("__first", F.min("__seq").over(key))
                  .withColumn("__rn", F.row_number().over(key.orderBy(*order))).filter("__rn = 1").drop("__rn")
                  .persist())  # used twice: the keys go to the assigner, the rows to the handles
            is_delete = (F.coalesce(F.col(IS_DELETED_FIELD), F.lit(False)) if IS_DELETED_FIELD in df.columns
                         else F.lit(False))
            try:
                return self._checkpoint(engine, df, table, timeline, is_delete, batch_id)
            finally:
                df.unpersist()

    def _checkpoint(self, engine: SparkEngine, df: Any, table: TableConfig, timeline: Timeline, is_delete: Any,
                    batch_id: int | None) -> WriteResult | None:
        client = self.client
        keys = df.select(PARTITION_PATH, RECORD_KEY, is_delete.alias("d"), "__first").orderBy("__first").collect()
        if not keys:
            return None
        action = Action.DELTA_COMMIT if table.table_type == MERGE_ON_READ else Action.COMMIT
        try:
            instant, md = transaction.transact(
                client, table, action, "streaming checkpoint", self.cfg,
                lambda t, timeline: self._write(engine, df, table, timeline, t, keys, batch_id))
        except BaseException:
            self.assigner = None  # rebuilt from the table at the next checkpoint
            raise
        return WriteResult(instant, action, "upsert", md)

    def _write(self, engine: SparkEngine, df: Any, table: TableConfig, timeline: Timeline, instant: str,
               keys: list[Any], batch_id: int | None) -> CommitMetadata:
        from pyspark.sql import functions as F

        client = self.client
        assert self.assigner is not None
        assigner = self.assigner
        mor = table.table_type == MERGE_ON_READ
        view = FileSystemView.load(client.storage, table, timeline)
        busy = pending_compaction_groups(client.storage, timeline)
        buckets: dict[tuple[str, str], int] = {}
        kinds: dict[tuple[str, str], str] = {}
        routing: list[tuple[str, str, int, str | None]] = []
        for r in keys:
            part, k = r[PARTITION_PATH], r[RECORD_KEY]
            known = assigner.location(part, k)
            if r["d"] and known is None:
                continue  # deleting a key the table does not hold
            assigner, b = assigner.assign(part, k, lambda n: client.new_file_id())
            number = buckets.setdefault((b.partition, b.file_id), len(buckets))
            kinds.setdefault((b.partition, b.file_id), b.kind)
            routing.append((part, k, number, known))
        specs: dict[int, BucketSpec] = {}
        for (part, fid), number in buckets.items():
            group = view.group(part, fid)
            if mor:
                specs[number] = (append_bucket(number, part, fid, group, busy) if group is not None
                                 else BucketSpec(number, "append", part, fid))
            elif group is not None and group.latest_slice is not None and group.latest_slice.base_file is not None:
                base = group.latest_slice.base_file
                specs[number] = BucketSpec(number, "update", part, fid, base.path, group.latest_slice.base_instant)
            else:
                specs[number] = BucketSpec(number, "insert", part, fid)
        user_schema = engine.user_schema(df)
        stats: list[dict[str, Any]] = []
        if specs:
            write_partition_metadata(client.storage, {s.partition for s in specs.values()}, instant)
            route_df = self.engines.spark.createDataFrame(
                routing, f"`{PARTITION_PATH}` string, `{RECORD_KEY}` string, `{BUCKET}` int, `{FILE_ID}` string")
            columns = [*user_schema.names, RECORD_KEY, PARTITION_PATH]
            tagged = (df.select(*columns).join(route_df, on=[PARTITION_PATH, RECORD_KEY], how="inner")
                      .withColumn(DELETE_FLAG, F.lit(False))
                      .select(*columns, DELETE_FLAG, FILE_ID, BUCKET))
            ctx = handle_context(client.path, table, self.cfg, instant, specs, user_schema)
            stats = engine.write_routed(tagged, ctx, user_schema)
        self.assigner = assigner.checkpoint()
        extra = {"schema": schema_json(table, user_schema)}
        if batch_id is not None:
            extra[CHECKPOINT_KEY] = json.dumps({CHECKPOINT_IDENTIFIER: str(batch_id)})
        return commit_metadata(stats, extra, "UPSERT")

    # --- Spark Structured Streaming -------------------------------------------------------------

    def foreach_batch(self) -> Callable[[Any, int], None]:
        """The function to pass to ``DataStreamWriter.foreachBatch``: each micro-batch one commit."""
        def write(batch: Any, batch_id: int) -> None:
            self.write_checkpoint(batch, batch_id)
        return write


def start_stream(stream: Any, path: str, options: Mapping[str, Any], checkpoint_location: str,
                 trigger: Mapping[str, Any] | None = None, spark: Any = None) -> Any:
    """Start a Structured Streaming query that writes ``stream`` (a streaming DataFrame) to the Hudi
    table at ``path``; returns the ``StreamingQuery``. ``trigger``: DataStreamWriter.trigger's
    keyword arguments (e.g. ``{"availableNow": True}``)."""
    writer = StreamingWriter(path, options, spark or stream.sparkSession)
    query = stream.writeStream.foreachBatch(writer.foreach_batch()).option("checkpointLocation", checkpoint_location)
    if trigger:
        query = query.trigger(**trigger)
    return query.start()


def write_checkpoints(path: str, batches: list[pa.Table], options: Mapping[str, Any], spark: Any = None,
                      **kwargs: Any) -> list[WriteResult | None]:
    """Write pyarrow tables as consecutive checkpoints of one stream (tests and examples)."""
    writer = StreamingWriter(path, options, spark, **kwargs)
    return [writer.write_checkpoint(b, i) for i, b in enumerate(batches)]


__all__ = ["CHECKPOINT_KEY", "StreamingWriter", "start_stream", "write_checkpoints"]
