"""The local engine: the write path's data steps on pyarrow in this process, with no Spark.

Hudi runs one write client on several engines (``EngineType``: Spark, Flink, Java; its
``HoodieLocalEngineContext`` runs a client's work in one JVM). This is our local one: the same
steps, the same ``spec`` rules and the same handles as the Spark engine (``spark_engine.py``), on
Arrow tables — the batch's key columns, dedupe by the ordering field, the index join, the workload
profile, routing every record to its bucket, and the handles, one per bucket, run by a thread pool.
It fits batches that fit in memory; it writes byte-for-byte the tables the Spark engine writes,
except for the sequence numbers' task ids and the write tokens, which name Spark tasks there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from reference.engines.engine import Engine, Task
from reference.io.bulk_insert import BULK_INSERT_TASK
from reference.io.global_index import global_tag
from reference.io.handles import BUCKET, FILE_ID, HandleContext, run_handle
from reference.io.index import BUCKET_ID, IndexLookup, bloom_index, simple_index
from reference.io.merge_actions import MERGE_ACTION
from reference.io.partitioning import counts, new_buckets, route_batch, tag, tag_buckets
from spec.config.table_config import TableConfig
from spec.errors import InvalidOperation, InvalidRecord
from spec.keygen.auto_record_key import PREPPED_COLUMNS, auto_record_key_prefix
from spec.keygen.key_generators import check_record_keys, writes_complex_keys
from spec.keygen.key_values import java_string
from spec.keygen.partition_path import DEFAULT_PARTITION, ESCAPE_ORDER, check_partition_paths
from spec.schema.table_schema import META_FIELDS, PARTITION_PATH, RECORD_KEY
from spec.write.partitioner import BucketAssignment

SEQ = "__seq"


def _normal_type(t: pa.DataType) -> pa.DataType:
    """The type a column is written with: Spark's Arrow types (strings and binaries not large,
    timestamps in microseconds, UTC; a naive timestamp is read as UTC)."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_dictionary(t):
        return _normal_type(t.value_type)
    return t


def normalize(table: pa.Table) -> pa.Table:
    """The user's columns with the types the writer uses (meta columns of an earlier read dropped)."""
    keep = [f for f in table.schema if f.name not in META_FIELDS and (not f.name.startswith("__")
                                                                       or f.name == MERGE_ACTION)]
    cols = []
    for f in keep:
        col = table.column(f.name)
        target = _normal_type(f.type)
        if target != f.type:
            if pa.types.is_timestamp(f.type) and f.type.tz is None:
                col = col.cast(pa.timestamp(f.type.unit)).cast(pa.timestamp("us", tz="UTC"))
            else:
                col = col.cast(target)
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=pa.schema([pa.field(f.name, _normal_type(f.type), f.nullable)
                                                        for f in keep]))


def _as_text(col: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """A key or partition column as text: strings and integers by Arrow's cast (the same text as
    Java's), other types by ``spec.keygen.key_values.java_string`` one value at a time."""
    t = col.type
    if pa.types.is_string(t) or pa.types.is_integer(t) or pa.types.is_boolean(t):
        return col.cast(pa.string())
    return pa.array([None if v is None else java_string(v) for v in col.to_pylist()], pa.string())


def with_keys(table: pa.Table, config: TableConfig) -> pa.Table:
    """``_hoodie_record_key`` and ``_hoodie_partition_path`` added by the table's key generator, the
    rules of the Spark engine's column expressions; a null or empty key, or a partition value that
    would leave its folder, is refused."""
    keys = config.record_key_fields
    missing = [f for f in (*keys, *config.partition_fields) if f not in table.column_names]
    if missing:
        raise InvalidRecord(f"the input lacks field(s) {', '.join(missing)}",
                            hint="record key, partition and ordering fields must be present")
    if not keys:  # auto-generated keys: given (records read from the table) or generated with the instant
        if RECORD_KEY in table.column_names:
            return table
        partition = _partition_column(table, config)
        check_partition_paths(pc.unique(partition).to_pylist(), config.partition_fields)
        return table.append_column(PARTITION_PATH, partition)
    if not writes_complex_keys(keys, config.keygen_type, config.keygen_class):
        key = _as_text(table.column(keys[0]))
    else:
        parts = []
        for k in keys:
            text = _as_text(table.column(k))
            text = pc.if_else(pc.is_null(text), "__null__", pc.if_else(pc.equal(text, ""), "__empty__", text))
            parts.append(pc.binary_join_element_wise(f"{k}:", text, ""))
        key = pc.binary_join_element_wise(*parts, ",")
    partition = _partition_column(table, config)
    check_record_keys(key.filter(pc.or_kleene(pc.is_null(key), pc.equal(key, ""))).to_pylist(), keys)
    check_partition_paths(pc.unique(partition).to_pylist(), config.partition_fields)
    return table.append_column(RECORD_KEY, key).append_column(PARTITION_PATH, partition)


def _partition_column(table: pa.Table, config: TableConfig) -> pa.Array | pa.ChunkedArray:
    """``_hoodie_partition_path`` of every row, by the table's key generator."""
    segments = []
    for f in config.partition_fields:
        text = _as_text(table.column(f))
        text = pc.if_else(pc.or_kleene(pc.is_null(text), pc.equal(text, "")), DEFAULT_PARTITION, text)
        if config.url_encode_partitions:
            text = escape_partition_values(text)
        segments.append(pc.binary_join_element_wise(f"{f}=", text, "") if config.hive_style_partitioning else text)
    return (pc.binary_join_element_wise(*segments, "/") if segments
            else pa.array([""] * table.num_rows, pa.string()))


def with_auto_keys(table: pa.Table, instant: str) -> pa.Table:
    """``_hoodie_record_key`` generated for a table with no record key field (``spec.keygen.auto_record_key``):
    ``<instant>_0_<row>``. The local engine's batch is one input partition, 0 (as for ``with_input_partition``),
    and a row's id is its index in the batch, so every key of the batch differs, and the instant makes them
    differ from every other batch's."""
    rows = pa.array(np.arange(table.num_rows, dtype=np.int64)).cast(pa.string())
    keys = pc.binary_join_element_wise(auto_record_key_prefix(instant, 0), rows, "")
    return table.add_column(table.schema.get_field_index(PARTITION_PATH), RECORD_KEY, keys)


def escape_partition_values(text: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``spec.keygen.partition_path.escape_path_name`` on a column: ``%`` first, so that no escape is escaped twice."""
    for c in ESCAPE_ORDER:
        text = pc.replace_substring(text, c, f"%{ord(c):02X}")
    return text


def dedupe(table: pa.Table, ordering: str | None, by_key: bool = False) -> pa.Table:
    """One record per (partition, key) — per key alone under a global index (``by_key``,
    ``spec.index.global_index``) —: the greatest ordering value (nulls lose), then the latest in the batch — the
    Spark engine's window rule."""
    table = table.append_column(SEQ, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    order = [] if by_key else [(PARTITION_PATH, "ascending")]
    order.append((RECORD_KEY, "ascending"))
    if ordering:
        order.append((ordering, "descending"))
    order.append((SEQ, "descending"))
    idx = pc.sort_indices(table, sort_keys=order, ).to_numpy()
    parts = pc.take(table.column(PARTITION_PATH), pa.array(idx)).to_numpy(zero_copy_only=False)
    keys = pc.take(table.column(RECORD_KEY), pa.array(idx)).to_numpy(zero_copy_only=False)
    first = np.ones(len(idx), dtype=bool)
    if len(idx) > 1:
        first[1:] = (keys[1:] != keys[:-1]) if by_key else (parts[1:] != parts[:-1]) | (keys[1:] != keys[:-1])
    return table.take(pa.array(np.sort(idx[first])))


def write_buckets(table: pa.Table, ctx: HandleContext, user_schema: pa.Schema, assignment: BucketAssignment,
                  workers: int | None = None) -> list[dict[str, Any]]:
    """Step 6: every record routed to its bucket, then one handle a bucket (``write_routed``)."""
    bucket_ids = table.column(BUCKET_ID) if BUCKET_ID in table.column_names else None
    buckets = route_batch(table.column(RECORD_KEY), table.column(PARTITION_PATH), table.column(FILE_ID), assignment,
                          bucket_ids)
    if bucket_ids is not None:
        table = table.drop_columns([BUCKET_ID])
    return _write_by_bucket(table, np.asarray(buckets), ctx, user_schema, workers)


def write_routed(table: pa.Table, ctx: HandleContext, user_schema: pa.Schema,
                 workers: int | None = None) -> list[dict[str, Any]]:
    """One handle a bucket, the bucket of each record in its ``BUCKET`` column, run by a thread pool
    (parquet and compression release the GIL). Bucket ``b``'s handle is task ``b``: its write token
    is ``<b>-0-<b>`` and its sequence numbers ``<instant>_<b>_<i>``."""
    buckets = table.column(BUCKET).to_numpy(zero_copy_only=False)
    return _write_by_bucket(table.drop_columns([BUCKET]), buckets, ctx, user_schema, workers)


def _write_by_bucket(table: pa.Table, buckets: npt.NDArray[Any], ctx: HandleContext, user_schema: pa.Schema,
                     workers: int | None) -> list[dict[str, Any]]:
    order = np.argsort(buckets, kind="stable")
    sorted_buckets = buckets[order]
    table = table.take(pa.array(order))
    starts = np.flatnonzero(np.r_[True, sorted_buckets[1:] != sorted_buckets[:-1]]) if len(order) else np.array([])
    ends = np.r_[starts[1:], len(order)] if len(order) else np.array([])
    jobs = [(int(sorted_buckets[s]), table.slice(int(s), int(e - s))) for s, e in zip(starts, ends, strict=True)]

    def run(job: tuple[int, pa.Table]) -> list[dict[str, Any]]:
        bucket, rows = job
        return run_handle(ctx, bucket, rows, bucket, f"{bucket}-0-{bucket}", user_schema)

    return [s for stats in _in_threads(run, jobs, "hudi-handle", workers) for s in stats]


def _in_threads(run: Any, jobs: Sequence[Any], prefix: str, workers: int | None = None) -> list[Any]:
    """``run`` over ``jobs`` on a few threads of this process (one job: in this thread), results in order."""
    workers = workers or min(len(jobs), os.cpu_count() or 1) or 1
    if workers == 1 or len(jobs) <= 1:
        return [run(j) for j in jobs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=prefix) as pool:
        return list(pool.map(run, jobs))


class LocalEngine(Engine):
    """The write path's data steps on Arrow tables in this process (see the module docstring)."""

    name = "local"

    def frame(self, data: Any) -> pa.Table:
        """The input as an Arrow table: a pyarrow Table as is, a Spark DataFrame collected as Arrow."""
        if isinstance(data, pa.Table):
            return normalize(data)
        if hasattr(data, "sparkSession") and hasattr(data, "schema"):
            from reference.engines.spark_arrow import spark_to_arrow

            return normalize(spark_to_arrow(data))
        if hasattr(data, "to_arrow"):  # e.g. a pyarrow dataset or a polars frame
            return normalize(data.to_arrow())
        raise InvalidOperation(f"cannot write a {type(data).__name__}", hint="pass a pyarrow Table")

    def columns(self, frame: pa.Table) -> list[str]:
        return list(frame.column_names)

    def user_schema(self, frame: pa.Table) -> pa.Schema:
        return pa.schema([f for f in frame.schema if not f.name.startswith("__") and f.name not in META_FIELDS])

    def has_null(self, frame: pa.Table, column: str) -> bool:
        return bool(frame.column(column).null_count)

    def cast(self, frame: pa.Table, casts: Mapping[str, pa.DataType]) -> pa.Table:
        for name, to in casts.items():
            i = frame.schema.get_field_index(name)
            frame = frame.set_column(i, frame.schema.field(i).with_type(to), frame.column(name).cast(to))
        return frame

    def prepped_frame(self, data: Any) -> pa.Table:
        """Rows read from the table: the user's columns and their ``_hoodie_record_key`` and
        ``_hoodie_partition_path``, which are their keys."""
        raw = data if isinstance(data, pa.Table) else self._arrow(data)
        frame = self.frame(raw)
        for name in PREPPED_COLUMNS:
            frame = frame.append_column(name, raw.column(name).cast(pa.string()))
        return frame

    def _arrow(self, data: Any) -> pa.Table:
        from reference.engines.spark_arrow import spark_to_arrow

        return spark_to_arrow(data)

    def with_keys(self, frame: pa.Table, config: TableConfig) -> pa.Table:
        return with_keys(frame, config)

    def with_auto_keys(self, frame: pa.Table, instant: str) -> pa.Table:
        return with_auto_keys(frame, instant)

    def dedupe(self, frame: pa.Table, ordering: str | None) -> pa.Table:
        return dedupe(frame, ordering)

    def tag_location(self, frame: pa.Table, lookup: IndexLookup | None, dedupe: bool,
                     ordering: str | None, by_key: bool = False) -> tuple[pa.Table, None]:
        """The lookup runs here, on the batch's keys (``reference.io.index``); by BLOOM footers, a batch is
        deduplicated only when a key repeats in it (a batch without a repeated key is its own dedupe). Counting
        the tagged batch costs less than tagging its keys too, so no counts come back. A bucket index reads no
        file: each record's tags are its bucket's (``reference.io.partitioning.tag_buckets``)."""
        if by_key and dedupe and (lookup is None or lookup.global_index is None):  # a global index's insert
            frame, dedupe = _dedupe(frame, ordering, by_key=True).drop_columns([SEQ]), False
        if lookup is not None and lookup.bucket is not None:
            return tag_buckets(self.dedupe(frame, ordering) if dedupe else frame, lookup.bucket, lookup.delete), None
        if lookup is not None and lookup.global_index is not None:
            frame = _dedupe(frame, ordering, by_key=True).drop_columns([SEQ]) if dedupe else frame
            return global_tag(frame, lookup.global_index, lookup.delete), None
        if dedupe and not (lookup is not None and lookup.bloom):
            frame = self.dedupe(frame, ordering)
        located: pa.Table | None = None
        if lookup is not None and lookup.bloom:
            keys = frame.select([PARTITION_PATH, RECORD_KEY])
            if dedupe:
                distinct = keys.group_by([PARTITION_PATH, RECORD_KEY]).aggregate([])
                if distinct.num_rows < keys.num_rows:
                    frame, keys = self.dedupe(frame, ordering), distinct
            located, _ = bloom_index(lookup.storage, lookup.view, keys)
        elif lookup is not None and lookup.located is not None:
            located = lookup.located  # the partitioned record index
        elif lookup is not None:
            located = simple_index(lookup.storage, lookup.view)
        return tag(frame, located, lookup is not None and lookup.delete), None

    def keys_in_two_partitions(self, frame: pa.Table) -> list[str]:
        pairs = frame.select([RECORD_KEY, PARTITION_PATH]).group_by([RECORD_KEY, PARTITION_PATH]).aggregate([])
        counted = pairs.group_by(RECORD_KEY).aggregate([(PARTITION_PATH, "count")])
        twice = counted.filter(pc.greater(counted.column(f"{PARTITION_PATH}_count"), 1)).column(RECORD_KEY)
        return sorted(str(k) for k in twice.to_pylist())[:10]

    def partitions(self, frame: pa.Table) -> set[str]:
        return set(pc.unique(frame.column(PARTITION_PATH)).to_pylist())

    def with_input_partition(self, frame: pa.Table) -> pa.Table:
        """The local engine's batch is one input partition, 0."""
        tokens = pc.binary_join_element_wise(f"{BULK_INSERT_TASK}0:", frame.column(PARTITION_PATH).cast(pa.string()),
                                             "")
        return frame.set_column(frame.schema.get_field_index(FILE_ID), FILE_ID, tokens)

    def counts(self, frame: pa.Table) -> Mapping[tuple[str, str | None], int]:
        return counts(frame)

    def new_buckets(self, frame: pa.Table) -> set[tuple[str, int]]:
        return new_buckets(frame)

    def write_buckets(self, frame: pa.Table, ctx: HandleContext, user_schema: pa.Schema,
                      assignment: BucketAssignment) -> list[dict[str, Any]]:
        return write_buckets(frame, ctx, user_schema, assignment)

    def write_routed(self, frame: pa.Table, ctx: HandleContext, user_schema: pa.Schema) -> list[dict[str, Any]]:
        return write_routed(frame, ctx, user_schema)

    def run_tasks(self, task: Task, payloads: Sequence[str], description: str) -> list[dict[str, Any]]:
        """Payload ``i`` runs on a thread of this process with write token ``<i>-0-<i>``."""
        def one(item: tuple[int, str]) -> dict[str, Any]:
            i, payload = item
            return task(payload, f"{i}-0-{i}")

        return _in_threads(one, list(enumerate(payloads)), "hudi-task")

    def release(self) -> None:
        """Nothing is cached outside the frames themselves."""


class LocalEngineContext:
    """Writes on the local engine (Hudi's ``HoodieLocalEngineContext``): a fresh ``LocalEngine`` each; jobs are
    not shown, so their status goes nowhere."""

    name = "local"

    def engine(self) -> LocalEngine:
        return LocalEngine()

    def set_job_status(self, description: str) -> None:
        """No job is shown in this process."""


_dedupe = dedupe

__all__ = ["LocalEngine", "LocalEngineContext", "dedupe", "normalize", "with_keys", "write_buckets", "write_routed"]
