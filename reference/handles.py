"""Write handles: the work of one bucket, run inside a Spark task (or directly, without Spark).

- create handle: a new file group — every incoming record becomes a row of a new base file;
- merge handle: an existing file group — the old base file's rows merged with the incoming
  records (updates replace or lose to the stored row per ``spec.merge``, deletes remove it,
  inserts routed to this small file are added), written as the group's next base file.

Every row gets the five meta columns; rows copied unchanged keep their commit time and
sequence number (only ``_hoodie_file_name`` changes), as Hudi's merge handle does.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spec.commit_metadata import NULL_COMMIT
from spec.file_naming import BaseFileName
from spec.merge import MergeRule, Version, as_version, merge_with_base
from spec.schema import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_FIELDS, PARTITION_PATH, RECORD_KEY
from spec.storage import Storage

DELETE_FLAG = "__hudi_spec_is_delete"
BUCKET = "__hudi_spec_bucket"


@dataclass(frozen=True)
class BucketSpec:
    """What one handle writes: a new or existing file group in a partition."""

    bucket: int
    kind: str  # "insert" (new file group) or "update" (existing group, incl. a small file taking inserts)
    partition: str
    file_id: str
    old_base: str | None = None  # path of the group's current base file (update buckets)
    prev_commit: str = NULL_COMMIT


@dataclass(frozen=True)
class HandleContext:
    """Everything a handle needs, shipped to the Spark task."""

    base_path: str
    instant: str
    data_schema_json: str  # Arrow schema of the user columns, as IPC-free JSON (name, type string)
    avro_schema_json: str  # Avro schema with meta fields, for the parquet footer
    rule: MergeRule
    compression: str
    buckets: Mapping[int, BucketSpec]


def seqno(instant: str, task_partition: int, index: int) -> str:
    """``_hoodie_commit_seqno``: ``<instant>_<task partition id>_<record index in the task>``."""
    return f"{instant}_{task_partition}_{index}"


def _with_meta(table: pa.Table, meta: Mapping[str, Sequence[Any]], data_schema: pa.Schema) -> pa.Table:
    cols = [pa.array(meta[n], type=pa.string()) for n in META_FIELDS]
    data = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
            for f in data_schema]
    schema = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + list(data_schema))
    return pa.Table.from_arrays(cols + data, schema=schema)


def _write(storage: Storage, rel: str, table: pa.Table, ctx: HandleContext) -> int:
    keys = table.column(RECORD_KEY)
    footer = {b"parquet.avro.schema": ctx.avro_schema_json.encode(), b"writer.model.name": b"avro"}
    if table.num_rows:
        footer[b"hoodie_min_record_key"] = str(pc.min(keys).as_py()).encode()
        footer[b"hoodie_max_record_key"] = str(pc.max(keys).as_py()).encode()
    table = table.replace_schema_metadata(footer)
    tmp = f"{rel}.inprogress"
    pq.write_table(table, storage.full(tmp), filesystem=storage.fs, compression=ctx.compression)
    storage.fs.move(storage.full(tmp), storage.full(rel))
    return storage.size(rel)


def run_handle(ctx: HandleContext, bucket: int, incoming: pa.Table, task_partition: int, write_token: str,
               data_schema: pa.Schema) -> dict[str, Any]:
    """Write one bucket's file and return its write stat (camelCase, as in commit metadata)."""
    spec = ctx.buckets[bucket]
    storage = Storage(ctx.base_path)
    name = BaseFileName(spec.file_id, write_token, ctx.instant).format()
    rel = posixpath.join(spec.partition, name) if spec.partition else name
    is_delete = incoming.column(DELETE_FLAG).to_pylist() if DELETE_FLAG in incoming.column_names else [False] * \
        incoming.num_rows
    rows_in = incoming.to_pylist()
    inserts = updates = deletes = 0
    meta: dict[str, list[Any]] = {n: [] for n in META_FIELDS}
    out_rows: list[Mapping[str, Any]] = []
    counter = 0

    def emit(row: Mapping[str, Any], fresh: bool) -> None:
        nonlocal counter
        if fresh:
            meta[COMMIT_TIME].append(ctx.instant)
            meta[COMMIT_SEQNO].append(seqno(ctx.instant, task_partition, counter))
            counter += 1
        else:
            meta[COMMIT_TIME].append(row[COMMIT_TIME])
            meta[COMMIT_SEQNO].append(row[COMMIT_SEQNO])
        meta[RECORD_KEY].append(row[RECORD_KEY])
        meta[PARTITION_PATH].append(row[PARTITION_PATH])
        meta[FILE_NAME].append(name)
        out_rows.append(row)

    incoming_by_key: dict[str, tuple[Mapping[str, Any], bool]] = {
        str(r[RECORD_KEY]): (r, bool(d)) for r, d in zip(rows_in, is_delete, strict=True)}
    if spec.old_base is not None:
        old = pq.read_table(storage.full(spec.old_base), filesystem=storage.fs)
        for row in old.to_pylist():
            key = str(row[RECORD_KEY])
            hit = incoming_by_key.pop(key, None)
            if hit is None:
                emit(row, fresh=False)
                continue
            new_row, deleted = hit
            if deleted:
                deletes += 1
                continue
            stored = as_version(row, ctx.rule)
            result: Version = merge_with_base(stored, as_version(new_row, ctx.rule), ctx.rule)
            if result.row is None:
                deletes += 1
            elif result.row is new_row:
                updates += 1
                emit(new_row, fresh=True)
            else:
                emit(row, fresh=False)
    for new_row, deleted in incoming_by_key.values():
        if deleted:
            continue  # deleting a key this group does not hold: nothing to do
        inserts += 1
        emit(new_row, fresh=True)
    data = pa.Table.from_pylist([{f.name: r.get(f.name) for f in data_schema} for r in out_rows],
                                schema=data_schema) if out_rows else data_schema.empty_table()
    table = _with_meta(data, meta, data_schema)
    size = _write(storage, rel, table, ctx)
    return {
        "fileId": spec.file_id, "path": rel, "prevCommit": spec.prev_commit, "numWrites": table.num_rows,
        "numDeletes": deletes, "numUpdateWrites": updates, "numInserts": inserts, "totalWriteBytes": size,
        "totalWriteErrors": 0, "partitionPath": spec.partition, "fileSizeInBytes": size,
    }


def stats_to_json(stats: Mapping[str, Any]) -> str:
    return json.dumps(stats, sort_keys=True)
