"""Sample tables: a tiny merge-on-read trips table written from the specification's rules alone.

``build_table`` writes, without Spark, one insert (a base file in ``city=san_francisco``) and then
an update and a delete (an Avro data block and a delete block in a log file), each instant walked
through its timeline states. Tests of the table services and of the CLI start from it, and the
documentation's examples run on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.file_group.file_naming import BaseFileName, LogFileName
from spec.file_group.log_file.delete_block import delete_block, delete_record
from spec.file_group.log_file.log_blocks import avro_data_block
from spec.file_group.log_file.log_format import encode_blocks
from spec.file_group.partition_metadata import PartitionMetadata, partition_depth
from spec.schema.table_schema import META_FIELDS, avro_schema_from_arrow, record_name_for_table, with_meta_fields
from spec.storage.hoodie_storage import Storage
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata, write_stat
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import format_instant_file_name, timeline_dir

TABLE = "trips"
FILE_ID = "5f0c6a5e-2c1a-4d3b-9a1e-7b3f0d2a9c41-0"
TOKEN = "0-1-1"
INSERT_T, INSERT_DONE = "20250101080000000", "20250101080001000"
UPDATE_T, UPDATE_DONE = "20250101090000000", "20250101090001000"

SCHEMA = pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("rider", pa.string()), ("fare", pa.float64()),
                    ("city", pa.string())])
TRIPS = [
    {"uuid": "t1", "ts": 1, "rider": "rider-A", "fare": 19.10, "city": "san_francisco"},
    {"uuid": "t2", "ts": 1, "rider": "rider-B", "fare": 27.70, "city": "san_francisco"},
    {"uuid": "t3", "ts": 1, "rider": "rider-C", "fare": 33.90, "city": "san_francisco"},
    {"uuid": "t4", "ts": 1, "rider": "rider-D", "fare": 93.50, "city": "san_francisco"},
]


def _instant_files(storage: Storage, layout: int, requested: str, action: str, completed: str,
                   metadata: CommitMetadata, version: int) -> None:
    """Walk one instant through its states, leaving the files the timeline rules require."""
    folder = timeline_dir(layout)
    inst = Instant(requested, action, State.REQUESTED)
    storage.create_if_absent(f"{folder}/{format_instant_file_name(inst, layout)}", b"")
    inst = inst.transition(State.INFLIGHT)
    storage.create_if_absent(f"{folder}/{format_instant_file_name(inst, layout)}", b"")
    done = inst.transition(State.COMPLETED, completed=completed if layout == 2 else None)
    storage.create_if_absent(f"{folder}/{format_instant_file_name(done, layout)}",
                             format_commit_metadata(metadata, version))


def build_table(base: Path, version: int) -> Path:
    """Write the demo table: one insert (a base file), then updates and a delete (log blocks)."""
    storage = Storage(base)
    avro = avro_schema_from_arrow(SCHEMA, *record_name_for_table(TABLE))
    cfg = TableConfig.create(TABLE, MERGE_ON_READ, version, ("uuid",), "ts", ("city",), "SIMPLE",
                             hive_style_partitioning=True, create_schema=json.dumps(avro))
    for folder in (".hoodie/.temp", ".hoodie/.aux/.bootstrap/.partitions", ".hoodie/.aux/.bootstrap/.fileids",
                   ".hoodie/.schema", timeline_dir(cfg.timeline_layout),
                   ".hoodie/archived" if version < 8 else ".hoodie/timeline/history"):
        storage.mkdirs(folder)
    storage.write_atomic(".hoodie/hoodie.properties", cfg.to_bytes())
    layout = cfg.timeline_layout
    partition = "city=san_francisco"

    base_name = BaseFileName(FILE_ID, TOKEN, INSERT_T).format()
    rows = [dict(zip(META_FIELDS, (INSERT_T, f"{INSERT_T}_0_{i}", r["uuid"], partition, base_name), strict=True), **r)
            for i, r in enumerate(TRIPS)]
    full = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + list(SCHEMA))
    storage.write_atomic(f"{partition}/.hoodie_partition_metadata",
                         PartitionMetadata(INSERT_T, partition_depth(partition)).format())
    pq.write_table(pa.Table.from_pylist(rows, schema=full), storage.full(f"{partition}/{base_name}"))
    size = storage.size(f"{partition}/{base_name}")
    stat = write_stat(fileId=FILE_ID, path=f"{partition}/{base_name}", partitionPath=partition, numWrites=4,
                      numInserts=4, totalWriteBytes=size, fileSizeInBytes=size)
    md = CommitMetadata({partition: (stat,)}, False, {"schema": json.dumps(avro)}, "UPSERT")
    _instant_files(storage, layout, INSERT_T, Action.DELTA_COMMIT, INSERT_DONE, md, version)

    log = LogFileName(FILE_ID, INSERT_T if version < 8 else UPDATE_T, 1, TOKEN)
    schema_json = json.dumps(with_meta_fields(avro))
    update = {**TRIPS[0], "ts": 2, "fare": 25.00}
    record = {"_hoodie_commit_time": UPDATE_T, "_hoodie_commit_seqno": f"{UPDATE_T}_0_1",
              "_hoodie_record_key": "t1", "_hoodie_partition_path": partition, "_hoodie_file_name": FILE_ID, **update}
    blocks = [avro_data_block(UPDATE_T, schema_json, [record]),
              delete_block(UPDATE_T, schema_json, [delete_record("t2", partition, 2)])]
    data = encode_blocks(blocks)
    storage.write_atomic(f"{partition}/{log.format()}", data)
    stat = write_stat(fileId=FILE_ID, path=f"{partition}/{log.format()}", partitionPath=partition,
                      prevCommit=INSERT_T, numWrites=1, numUpdateWrites=1, numDeletes=1, totalWriteBytes=len(data),
                      fileSizeInBytes=len(data), logVersion=1, logOffset=0,
                      baseFile=base_name if version < 8 else "", logFiles=[log.format()])
    md = CommitMetadata({partition: (stat,)}, False, {"schema": json.dumps(avro)}, "UPSERT")
    _instant_files(storage, layout, UPDATE_T, Action.DELTA_COMMIT, UPDATE_DONE, md, version)
    return base
