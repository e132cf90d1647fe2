"""Write handles: the work of one bucket, run inside a Spark task (or directly, without Spark).

- create handle: a new file group — every incoming record becomes a row of a new base file;
- merge handle: an existing file group — the old base file's rows merged with the incoming
  records (updates replace or lose to the stored row per ``spec.read.merge``, deletes remove it,
  inserts routed to this small file are added), written as the group's next base file;
- concat handle: an ``insert`` routed to a small file — the old rows as they are, then every
  incoming record, none merged by key (Hudi's ``HoodieConcatHandle``, chosen when
  ``hoodie.merge.allow.duplicate.on.inserts`` is on, its default since 0.15.0);
- append handle (merge-on-read): an existing file group's updates and deletes appended to a new
  log file of its latest slice as Avro data blocks and one delete block, buffered, split and
  rolled over by ``spec.write.append_handle``'s rules; nothing is merged (readers and compaction merge).

Every row gets the five meta columns; rows copied unchanged keep their commit time and
sequence number (only ``_hoodie_file_name`` changes), as Hudi's merge handle does.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reference.instrumentation.faults import armed, die
from reference.io.avro_columns import block_content, encode_records
from reference.io.bloom import extended_footer
from reference.io.bloom import footer as bloom_footer
from reference.io.cdc_log import slice_cdc_logs, write_cdc_log
from reference.io.merge_actions import merge_actions
from spec.config.parquet_codec import parquet_compression
from spec.config.parquet_dictionary import dictionary_columns
from spec.file_group.file_naming import BaseFileName, parse_log_file_name
from spec.file_group.log_file.delete_block import INT_BRANCH, NATURAL_ORDERING, delete_block, delete_record
from spec.file_group.log_file.log_blocks import avro_data_block
from spec.file_group.log_file.log_format import LogBlock, encode_blocks
from spec.read.merge import IS_DELETED_FIELD, MergeMode, MergeRule, Version, as_version, merge_handle_keeps_stored
from spec.schema.table_schema import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_FIELDS, PARTITION_PATH, RECORD_KEY
from spec.storage.hoodie_storage import Storage
from spec.timeline.commit_metadata import NULL_COMMIT
from spec.write import markers
from spec.write.append_handle import (
    AppendHandleConfig,
    LogRecordOp,
    PlannedBlock,
    first_log_file,
    plan_appends,
    plan_log_files,
)

_Array = npt.NDArray[Any]
"""A numpy array of any element type."""

DELETE_FLAG = "__hudi_spec_is_delete"
BUCKET = "__hudi_spec_bucket"
FILE_ID = "__file_id"
"""The internal column of each record's current file group (null: an insert), set by the engines' ``tag``."""


@dataclass(frozen=True)
class BucketSpec:
    """What one handle writes: a new or existing file group in a partition."""

    bucket: int
    kind: str  # "insert" (new file group), "update" (existing group, incl. a small file taking inserts)
    #            or "append" (merge-on-read: the group's latest slice gets a new log file)
    partition: str
    file_id: str
    old_base: str | None = None  # path of the group's current base file (update buckets)
    prev_commit: str = NULL_COMMIT
    base_instant: str | None = None  # append: the slice the logs join (names v6 log files)
    base_file_name: str | None = None  # append: the slice's base file name, for the write stat
    existing_logs: tuple[str, ...] = ()  # append: names of the group's log files (the next version)
    slice_logs: tuple[str, ...] = ()  # append: the log files of the slice the log joins (a CDC table's stats name them)


@dataclass(frozen=True)
class HandleContext:
    """Everything a handle needs, shipped to the Spark task."""

    base_path: str
    instant: str
    avro_schema_json: str  # Avro schema with meta fields, for the parquet footer
    rule: MergeRule
    compression: str
    buckets: Mapping[int, BucketSpec]
    sort_by_key: bool = False  # bulk_insert with a sort mode: each file's rows in record key order
    concat: bool = False  # insert into a small file: old rows kept, every incoming row appended (concat handle)
    table_version: int = 6
    append: AppendHandleConfig = field(default_factory=AppendHandleConfig)
    record_size: int = 1024  # the size estimate of one record (bytes) the append handle buffers by
    ordering_field: str | None = None
    ordering_branch: int = 0  # HoodieDeleteRecord.orderingVal union branch of the ordering field's type
    cdc_mode: str | None = None  # a table with change data capture: its supplemental logging mode (merge handles log)


def marker_path(instant: str, data_file: str, io_type: str) -> str:
    """A direct marker: ``.hoodie/.temp/<instant>/<partition>/<data file>.marker.<CREATE|MERGE|APPEND>``
    (``spec.write.markers``)."""
    return markers.marker_path(instant, data_file, io_type)


def seqno(instant: str, task_partition: int, index: int) -> str:
    """``_hoodie_commit_seqno``: ``<instant>_<task partition id>_<record index in the task>``."""
    return f"{instant}_{task_partition}_{index}"


def _with_meta(table: pa.Table, meta: Mapping[str, Sequence[Any] | pa.Array], data_schema: pa.Schema) -> pa.Table:
    cols = [meta[n] if isinstance(meta[n], pa.Array | pa.ChunkedArray) else pa.array(meta[n], type=pa.string())
            for n in META_FIELDS]
    data = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
            for f in data_schema]
    schema = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + list(data_schema))
    return pa.Table.from_arrays(cols + data, schema=schema)


def seqnos(instant: str, task_partition: int, start: int, n: int) -> pa.Array:
    """``seqno(instant, task_partition, i)`` for ``i`` in ``start .. start + n - 1``."""
    numbers = pa.array(np.arange(start, start + n, dtype=np.int64)).cast(pa.string())
    return pc.binary_join_element_wise(f"{instant}_{task_partition}_", numbers, "")


def _constant(value: str, n: int) -> pa.Array:
    """A string column of ``n`` times ``value`` (dictionary-decoded, so parquet sees plain strings)."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                          pa.array([value], pa.string())).cast(pa.string())


def writer_compression(codec: str, table: pa.Table | None = None) -> dict[str, Any]:
    """What pyarrow's parquet writer is given to write as Hudi's parquet-mr does: the ``compression`` and
    ``compression_level`` of ``hoodie.parquet.compression.codec`` (``spec.config.parquet_codec``: gzip at zlib's
    level 6, not Arrow's default 9; zstd at parquet-mr's 3) and, given the ``table``, the columns kept
    dictionary-encoded (``spec.config.parquet_dictionary``: near-unique columns are written plain)."""
    c = parquet_compression(codec)
    return {"compression": c.codec, "compression_level": c.level,
            **({} if table is None else {"use_dictionary": dictionary_columns(table)})}


def _write(storage: Storage, rel: str, table: pa.Table, ctx: HandleContext, bucket: int | None = None,
           bloom: Mapping[str, str] | None = None) -> int:
    """Write base file ``rel`` with Hudi's footer: the Avro schema, the min and max record keys and the
    bloom filter of its keys (``bloom`` where the caller has it already, else built from the keys)."""
    keys = table.column(RECORD_KEY)
    footer = {b"parquet.avro.schema": ctx.avro_schema_json.encode(), b"writer.model.name": b"avro"}
    if table.num_rows:
        footer[b"hoodie_min_record_key"] = str(pc.min(keys).as_py()).encode()
        footer[b"hoodie_max_record_key"] = str(pc.max(keys).as_py()).encode()
        # the bloom filter Apache Hudi's BLOOM index reads from every candidate file
        footer.update({k.encode(): v.encode() for k, v in (bloom or bloom_footer(keys)).items()})
    # footer entries go straight into the parquet key/value metadata (not into the Arrow schema, which
    # pyarrow would store a second time, base64-encoded, under ARROW:schema)
    table = table.replace_schema_metadata(None)
    sink = pa.BufferOutputStream() if storage.scheme.write_transactional else None  # one PUT is atomic: the
    tmp = f"{rel}.inprogress"  # file is written whole, under its name; elsewhere under a temporary name, then moved
    with pq.ParquetWriter(storage.full(tmp) if sink is None else sink, table.schema,
                          filesystem=storage.fs if sink is None else None,
                          **writer_compression(ctx.compression, table)) as writer:
        if armed("mid_base_file", bucket):  # a crash half way through the file (in a sink: nothing reaches the store)
            writer.write_table(table.slice(0, table.num_rows // 2))
            die()
        writer.write_table(table)
        writer.add_key_value_metadata(footer)
    if sink is not None:
        data = sink.getvalue().to_pybytes()
        storage.write_atomic(rel, data)
        return len(data)
    storage.fs.move(storage.full(tmp), storage.full(rel))
    return storage.size(rel)


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly ``schema``'s columns (missing ones null), cast to its types."""
    cols = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def _fresh(data: pa.Table, ctx: HandleContext, task_partition: int, start: int, name: str,
           data_schema: pa.Schema) -> pa.Table:
    """New or updated rows: meta columns of this commit (sequence numbers from ``start``)."""
    n = data.num_rows
    meta = {COMMIT_TIME: _constant(ctx.instant, n),
            COMMIT_SEQNO: seqnos(ctx.instant, task_partition, start, n),
            RECORD_KEY: data.column(RECORD_KEY).cast(pa.string()).combine_chunks(),
            PARTITION_PATH: data.column(PARTITION_PATH).cast(pa.string()).combine_chunks(),
            FILE_NAME: _constant(name, n)}
    return _with_meta(data, meta, data_schema)


def run_handle(ctx: HandleContext, bucket: int, incoming: pa.Table, task_partition: int, write_token: str,
               data_schema: pa.Schema) -> list[dict[str, Any]]:
    """Write one bucket's files and return their write stats (camelCase, as in commit metadata)."""
    incoming = merge_actions(incoming, DELETE_FLAG)
    if ctx.buckets[bucket].kind == "append":
        return run_append_handle(ctx, bucket, incoming, task_partition, write_token, data_schema)
    return [run_base_handle(ctx, bucket, incoming, task_partition, write_token, data_schema)]


def run_base_handle(ctx: HandleContext, bucket: int, incoming: pa.Table, task_partition: int, write_token: str,
                    data_schema: pa.Schema) -> dict[str, Any]:
    """A create or merge handle: write one bucket's base file and return its write stat.

    A merge writes the rows in the order Hudi's ``HoodieMergeHandle`` does: the old base file's rows in
    file order, each touched key's merged record in its place (``write(oldRecord)``), then the incoming
    records no old row held (``writeIncomingRecords``); sequence numbers count the records this commit
    writes, in that order. Untouched rows are copied column-wise with their meta values (only
    ``_hoodie_file_name`` changes). Where every old row keeps its place, the new file's bloom filter is
    the old file's with the inserted keys added (``reference.io.bloom.extended_footer``): the bytes a filter
    of all its keys, in file order, has.
    """
    spec = ctx.buckets[bucket]
    storage = Storage(ctx.base_path)
    name = BaseFileName(spec.file_id, write_token, ctx.instant).format()
    rel = posixpath.join(spec.partition, name) if spec.partition else name
    # a direct marker before the data file, so a rollback of a killed write finds what it wrote
    storage.create_if_absent(marker_path(ctx.instant, rel, "MERGE" if spec.old_base else "CREATE"), b"")
    out_schema = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + list(data_schema))
    deleted = (incoming.column(DELETE_FLAG) if DELETE_FLAG in incoming.column_names
               else pa.array([False] * incoming.num_rows))
    # a create or concat handle writes no delete (``_hoodie_is_deleted``) and counts it, as Hudi's does
    # (``writeInsertRecord``; Apache Hudi 1.2.0 measured: a group whose records are all deletes gets an empty file)
    marked = pa.array(_is_delete(incoming), pa.bool_())
    new_inserts = incoming.filter(pc.invert(marked))
    merged: pa.Table | None = None
    old: pa.Table | None = None
    stored_footer: Mapping[bytes, bytes] | None = None
    kept_in_order = False  # the stored file's keys, every one in its place, start the new file
    updates, deletes = 0, int(pc.sum(marked).as_py() or 0)
    if spec.old_base is not None:
        stored = storage.parquet_file(spec.old_base)
        old, stored_footer = stored.read(), stored.metadata.metadata
        if ctx.concat:  # Hudi's HoodieConcatHandle: the old rows as they are, then every incoming record
            merged, kept_in_order = _conform(old, out_schema), True
        else:
            merged, new_inserts, updates, deletes, kept_in_order = _merge_with_stored(
                old, incoming, deleted, marked, ctx, task_partition, name, out_schema, data_schema)
    parts: list[pa.Table] = []
    if merged is not None:
        parts.append(merged.set_column(merged.schema.get_field_index(FILE_NAME), FILE_NAME,
                                       _constant(name, merged.num_rows)))
    if new_inserts.num_rows:  # sequence numbers after the merged records'
        parts.append(_fresh(new_inserts, ctx, task_partition, updates, name, data_schema))
    table = pa.concat_tables(parts) if parts else out_schema.empty_table()
    bloom = None
    if ctx.sort_by_key:
        table = table.sort_by([(PARTITION_PATH, "ascending"), (RECORD_KEY, "ascending")])
    elif kept_in_order and merged is not None:
        bloom = extended_footer(stored_footer, merged.num_rows, table.column(RECORD_KEY).slice(merged.num_rows))
    inserts = new_inserts.num_rows
    size = _write(storage, rel, table, ctx, bucket, bloom)
    stat: dict[str, Any] = {
        "fileId": spec.file_id, "path": rel, "prevCommit": spec.prev_commit, "numWrites": table.num_rows,
        "numDeletes": deletes, "numUpdateWrites": updates, "numInserts": inserts, "totalWriteBytes": size,
        "totalWriteErrors": 0, "partitionPath": spec.partition, "fileSizeInBytes": size,
    }
    if ctx.cdc_mode is not None and spec.old_base is not None and not ctx.concat:
        assert old is not None
        stat["cdcStats"] = write_cdc_log(storage, ctx.instant, ctx.cdc_mode, ctx.avro_schema_json, spec.partition,
                                         spec.file_id, write_token, old, table, ctx.table_version)
    return stat


def _merge_with_stored(old: pa.Table, incoming: pa.Table, deleted: pa.Array | pa.ChunkedArray,
                       marked: pa.Array, ctx: HandleContext, task_partition: int, name: str, out_schema: pa.Schema,
                       data_schema: pa.Schema) -> tuple[pa.Table, pa.Table, int, int, bool]:
    """The old base file's rows merged with the incoming records that touch their keys, in the old
    file's order (each result in the place of its key's first row), with the incoming records that are
    inserts (``deleted``: the delete operation's records; ``marked``: every delete, those and the records
    flagged ``_hoodie_is_deleted``). Returns (the merged rows, the inserts, the updates written, the deletes,
    whether every old row kept its place: no row removed or added)."""
    old_keys = old.column(RECORD_KEY).cast(pa.string()).combine_chunks()
    inc_keys = incoming.column(RECORD_KEY).cast(pa.string()).combine_chunks()
    touched = pc.is_in(old_keys, value_set=inc_keys)
    # the incoming keys the file holds: the touched keys (a set of those few, not of the whole file)
    hits = pc.is_in(inc_keys, value_set=old_keys.filter(touched))
    # a delete of a key the file never held (a bucket index sends it to its bucket's group: the delete operation,
    # or _hoodie_is_deleted) is not written and counts as a delete, as Hudi's merge handle counts it
    absent_deletes = pc.and_(pc.invert(hits), marked)
    inserts = incoming.filter(pc.and_(pc.invert(hits), pc.invert(marked)))
    contested, arriving, arriving_deleted = old.filter(touched), incoming.filter(hits), deleted.filter(hits)
    with_keys = pa.schema([*data_schema, pa.field(RECORD_KEY, pa.string()), pa.field(PARTITION_PATH, pa.string())])
    updates = 0
    deletes = int(pc.sum(absent_deletes).as_py() or 0)
    fast = _merge_columnwise(contested, arriving, arriving_deleted, ctx.rule)
    if fast is not None:
        stored_wins, incoming_wins = fast
        stored_wins, incoming_wins = _conform(stored_wins, out_schema), _conform(incoming_wins, with_keys)
        updates = incoming_wins.num_rows
    else:  # record by record (``spec.read.merge``)
        stored_by_key = {str(r[RECORD_KEY]): r for r in contested.to_pylist()}
        kept_rows: list[Mapping[str, Any]] = []
        fresh_rows: list[Mapping[str, Any]] = []
        for row, is_delete in zip(arriving.to_pylist(), arriving_deleted.to_pylist(), strict=True):
            stored = stored_by_key[str(row[RECORD_KEY])]
            if is_delete:  # the delete operation's: no ordering value, it removes the row
                deletes += 1
                continue
            version: Version = as_version(row, ctx.rule)
            if merge_handle_keeps_stored(stored, version, ctx.rule):
                kept_rows.append(stored)
            elif version.is_delete:
                deletes += 1
            else:
                updates += 1
                fresh_rows.append(row)
        stored_wins = _conform(pa.Table.from_pylist(kept_rows), out_schema) if kept_rows else out_schema.empty_table()
        incoming_wins = pa.Table.from_pylist([{c: r.get(c) for c in with_keys.names} for r in fresh_rows],
                                             schema=with_keys)
    untouched = np.flatnonzero(~np.asarray(touched.to_numpy(zero_copy_only=False), dtype=bool))

    def places(rows: pa.Table) -> _Array:
        return np.asarray(pc.index_in(rows.column(RECORD_KEY).cast(pa.string()), value_set=old_keys)
                          .to_numpy(zero_copy_only=False), dtype=np.int64)

    fresh_places = places(incoming_wins)
    in_order = np.argsort(fresh_places, kind="stable")  # sequence numbers follow the file's order
    fresh = _fresh(incoming_wins.take(pa.array(in_order)), ctx, task_partition, 0, name, data_schema)
    # one take from the old rows, the stored winners and the fresh rows, each row to its key's place
    at = np.concatenate([untouched, places(stored_wins), fresh_places[in_order]])
    rows = np.concatenate([untouched, old.num_rows + np.arange(stored_wins.num_rows + fresh.num_rows)])
    merged = pa.concat_tables([_conform(old, out_schema), stored_wins, fresh])
    merged = merged.take(pa.array(rows[np.argsort(at, kind="stable")]))
    kept_in_order = len(at) == old.num_rows and bool(np.array_equal(np.sort(at), np.arange(old.num_rows)))
    return merged, inserts, updates, deletes, kept_in_order


def _merge_columnwise(stored: pa.Table, incoming: pa.Table, deleted: pa.Array | pa.ChunkedArray,
                      rule: MergeRule) -> tuple[pa.Table, pa.Table] | None:
    """``merge_with_base`` for every contested key at once, where its outcome is a plain comparison:
    no deletes, and either the incoming record always wins (commit-time ordering, or v6's
    overwrite-with-latest payload) or both sides have a non-null integer, date or timestamp ordering
    value and the stored row wins only when its value is greater. Returns (stored rows that win, in
    incoming order; incoming rows that win), or None when the record-by-record rule must decide."""
    if incoming.num_rows == 0 or pc.any(deleted).as_py() or IS_DELETED_FIELD in incoming.column_names:
        return None
    at = pc.index_in(incoming.column(RECORD_KEY).cast(pa.string()),
                     value_set=stored.column(RECORD_KEY).cast(pa.string()).combine_chunks())
    if at.null_count:
        return None
    if rule.log_wins_over_base or rule.mode == MergeMode.COMMIT_TIME_ORDERING:
        base_wins = pa.array(np.zeros(incoming.num_rows, dtype=bool))
    else:
        field = rule.ordering_field
        if rule.mode != MergeMode.EVENT_TIME_ORDERING or not field or field not in incoming.column_names \
                or field not in stored.column_names:
            return None
        new_values, old_values = incoming.column(field), pc.take(stored.column(field), at)
        comparable = (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)
                      for t in (new_values.type, old_values.type))
        if not all(comparable) or new_values.null_count or old_values.null_count:
            return None
        if new_values.type != old_values.type:
            if not (pa.types.is_integer(new_values.type) and pa.types.is_integer(old_values.type)):
                return None
            new_values, old_values = new_values.cast(pa.int64()), old_values.cast(pa.int64())
        base_wins = pc.greater(old_values, new_values)
    return stored.take(pc.filter(at, base_wins)), incoming.filter(pc.invert(base_wins))


def _is_delete(incoming: pa.Table) -> list[bool]:
    """Per record: a delete (the delete operation, or ``_hoodie_is_deleted`` true)."""
    flags = (incoming.column(DELETE_FLAG).to_pylist() if DELETE_FLAG in incoming.column_names
             else [False] * incoming.num_rows)
    if IS_DELETED_FIELD in incoming.column_names:
        marked = incoming.column(IS_DELETED_FIELD).to_pylist()
        flags = [bool(f) or m is True for f, m in zip(flags, marked, strict=True)]
    return flags


def run_append_handle(ctx: HandleContext, bucket: int, incoming: pa.Table, task_partition: int,
                      write_token: str, data_schema: pa.Schema) -> list[dict[str, Any]]:
    """An append handle: one file group's records as log blocks, one write stat per log file.

    Records are taken in record-key order; ``spec.write.append_handle.plan_appends`` decides the blocks
    (data blocks flushed as the buffer fills, then the remaining data block and one delete block on
    close) and ``plan_log_files`` where the log rolls over, by the encoded size of each append.
    Data records carry the five meta fields (``_hoodie_file_name`` is the file id); a delete from the
    delete operation has a null ordering value (natural order: it always wins), a record marked
    ``_hoodie_is_deleted`` keeps its ordering value.
    """
    spec = ctx.buckets[bucket]
    storage = Storage(ctx.base_path)
    incoming = incoming.sort_by([(RECORD_KEY, "ascending")])
    keys = incoming.column(RECORD_KEY).cast(pa.string()).to_pylist()
    partitions = incoming.column(PARTITION_PATH).cast(pa.string()).to_pylist()
    deletes = _is_delete(incoming)
    ops_by_delete = DELETE_FLAG in incoming.column_names and incoming.column(DELETE_FLAG).to_pylist()
    located = (incoming.column("__file_id").to_pylist() if "__file_id" in incoming.column_names
               else [None] * incoming.num_rows)
    conformed = _conform(incoming, data_schema)
    ops = [LogRecordOp(k, d, ctx.record_size) for k, d in zip(keys, deletes, strict=True)]
    existing = [parse_log_file_name(n) for n in spec.existing_logs]
    first = first_log_file(spec.file_id, spec.base_instant or ctx.instant, ctx.instant, existing, write_token,
                           ctx.table_version)
    seq = 0
    encoded: dict[tuple[PlannedBlock, ...], bytes] = {}
    appends = list(plan_appends(ops, ctx.append))
    columnwise = _encode_columnwise(ctx, spec, incoming, appends, deletes, task_partition, data_schema)
    data = conformed.to_pylist() if columnwise is None else []
    field = ctx.ordering_field
    ordering_values = (conformed.column(field).to_pylist() if any(deletes) and field in conformed.column_names
                       else [None] * incoming.num_rows)
    for append in appends:
        blocks: list[LogBlock] = []
        for pb in append:
            if pb.kind == "data" and columnwise is not None:
                runs, position = columnwise
                content = block_content(runs, position[np.array(pb.records, dtype=np.int64)])
                blocks.append(replace(avro_data_block(ctx.instant, ctx.avro_schema_json, ()), content=content))
            elif pb.kind == "data":
                records = []
                for i in pb.records:
                    records.append({COMMIT_TIME: ctx.instant, COMMIT_SEQNO: seqno(ctx.instant, task_partition, seq),
                                    RECORD_KEY: keys[i], PARTITION_PATH: partitions[i], FILE_NAME: spec.file_id,
                                    **data[i]})
                    seq += 1
                blocks.append(avro_data_block(ctx.instant, ctx.avro_schema_json, records))
            else:
                dels = []
                for i in pb.records:
                    # the delete operation (and a table without an ordering field) writes Hudi's natural-order
                    # default, Integer 0 (``DeleteRecord.create``'s default, an ``EmptyHoodieRecordPayload``'s ordering
                    # value), never null: Apache Hudi 1.2.0's reader fails on a null one that follows a logged update
                    # of its key ("val2" is null, ``BufferedRecordMergerFactory.deltaMergeDeleteRecord``)
                    natural = bool(ops_by_delete and ops_by_delete[i]) or ctx.ordering_field is None
                    value = NATURAL_ORDERING if natural else ordering_values[i]
                    dels.append(delete_record(keys[i], partitions[i], value,
                                              INT_BRANCH if natural else 0 if value is None else ctx.ordering_branch))
                blocks.append(delete_block(ctx.instant, ctx.avro_schema_json, dels))
        encoded[append] = encode_blocks(blocks)
    planned = plan_log_files(list(encoded), first, lambda a: len(encoded[a]), ctx.append)
    def logs_of_slice(own: str) -> tuple[str, ...]:
        """``logFiles`` as Hudi 1.2.0 writes it: the own log, after the slice's logs (v6) and its CDC logs (CDC)."""
        cdc = slice_cdc_logs(storage, spec.partition, spec.file_id, spec.base_instant) if ctx.cdc_mode else None
        earlier = [n for n in spec.slice_logs if n != own] if cdc is not None or ctx.table_version < 8 else []
        return (*earlier, *(cdc or ()), own)
    stats = []
    for pf in planned:
        rel = posixpath.join(spec.partition, pf.name.format()) if spec.partition else pf.name.format()
        storage.create_if_absent(marker_path(ctx.instant, rel, "APPEND"), b"")
        offset = storage.size(rel) if storage.exists(rel) else 0
        payload = b"".join(encoded[a] for a in _appends_of(pf.blocks, encoded))
        if armed("mid_log_block", bucket):  # a crash half way through a block
            storage.append(rel, payload[: len(payload) // 2])
            die()
        storage.append(rel, payload)
        in_file = [i for b in pf.blocks for i in b.records]
        n_deletes = sum(1 for i in in_file if deletes[i])
        written = [i for i in in_file if not deletes[i]]
        updates = sum(1 for i in written if located[i] is not None)
        size = storage.size(rel)
        stats.append({
            "fileId": spec.file_id, "path": rel, "prevCommit": spec.base_instant or ctx.instant,
            "numWrites": len(written), "numDeletes": n_deletes, "numUpdateWrites": updates,
            "numInserts": len(written) - updates, "totalWriteBytes": len(payload), "totalWriteErrors": 0,
            "partitionPath": spec.partition, "fileSizeInBytes": size, "logVersion": pf.name.version,
            "logOffset": offset, "baseFile": spec.base_file_name or "", "logFiles": logs_of_slice(pf.name.format()),
        })
    return stats


def _encode_columnwise(ctx: HandleContext, spec: BucketSpec, incoming: pa.Table,
                       appends: Sequence[tuple[PlannedBlock, ...]], deletes: Sequence[bool], task_partition: int,
                       data_schema: pa.Schema) -> tuple[tuple[_Array, _Array], _Array] | None:
    """Every data record of the handle encoded at once (``reference.io.avro_columns``): the records'
    byte runs and, per incoming row, its position among them; None when the schema needs the
    record-by-record encoder. Sequence numbers follow the order records are written in blocks."""
    order = [i for append in appends for pb in append if pb.kind == "data" for i in pb.records]
    n = incoming.num_rows
    seq = np.zeros(n, dtype=np.int64)
    seq[np.array(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
    data_rows = np.flatnonzero(~np.array(deletes, dtype=bool))
    rows = incoming.take(pa.array(data_rows))
    meta = {COMMIT_TIME: _constant(ctx.instant, len(data_rows)),
            COMMIT_SEQNO: pc.binary_join_element_wise(f"{ctx.instant}_{task_partition}_",
                                                      pa.array(seq[data_rows]).cast(pa.string()), ""),
            RECORD_KEY: rows.column(RECORD_KEY).cast(pa.string()).combine_chunks(),
            PARTITION_PATH: rows.column(PARTITION_PATH).cast(pa.string()).combine_chunks(),
            FILE_NAME: _constant(spec.file_id, len(data_rows))}
    runs = encode_records(_with_meta(rows, meta, data_schema), ctx.avro_schema_json)
    if runs is None:
        return None
    position = np.full(n, -1, dtype=np.int64)
    position[data_rows] = np.arange(len(data_rows), dtype=np.int64)
    return runs, position


def _appends_of(blocks: Sequence[PlannedBlock], encoded: Mapping[tuple[PlannedBlock, ...], bytes]
                ) -> list[tuple[PlannedBlock, ...]]:
    """The appends (in order) whose blocks make up ``blocks``."""
    wanted = set(blocks)
    return [a for a in encoded if a and a[0] in wanted]
