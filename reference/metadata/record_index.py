"""The record index kept by the writer (``spec.metadata.record_index``): created in the metadata table, changed by
every data commit in the commit's own metadata deltacommit, and read to tag records (``RECORD_INDEX``).

A commit's changes are found from the files it wrote (its write stats): a base file holds every key of its file
group after the commit — keys the index held there and the file lacks were deleted —, a log file's data blocks the
keys written to the group and its delete blocks the keys deleted from it, and a replacecommit's replaced file groups
(insert_overwrite, delete_partition, clustering) lose the keys the commit did not place elsewhere.
``spec.metadata.record_index``'s ``record_index_changes`` turns them into the records Apache Hudi writes
(``HoodieBackedTableMetadataWriter.update`` from its write statuses).
"""

from __future__ import annotations

import io
import json
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow.parquet as pq

from spec.config.table_config import TableConfig
from spec.errors import UnsupportedOption
from spec.file_group.file_naming import is_base_file_name
from spec.file_group.file_system_view import FileSystemView, list_data_files
from spec.file_group.log_file.delete_block import delete_block, delete_record
from spec.file_group.log_file.log_blocks import decode_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock, encode_blocks, read_blocks
from spec.file_group.partition_metadata import PartitionMetadata
from spec.metadata.hfile import KeyValue
from spec.metadata.hfile_writer import build_hfile
from spec.metadata.index_definition import format_index_definitions, parse_index_definitions
from spec.metadata.metadata_table import metadata_storage
from spec.metadata.partition_type import RECORD_INDEX as RECORD_INDEX_TYPE
from spec.metadata.partition_type import file_group_id
from spec.metadata.partitioned_record_index import check_index_form, definition, is_partitioned
from spec.metadata.record_index import (
    DELETE_ORDERING_VALUE,
    RECORD_INDEX_PARTITION,
    Sizing,
    by_file_group,
    encode_record_index_record,
    estimate_file_group_count,
    read_record_index,
    record_index_changes,
    record_index_info,
)
from spec.metadata.writer import WRITE_TOKEN, init_log_block, metadata_record_schema
from spec.read.reader import TableReader
from spec.schema.table_schema import RECORD_KEY
from spec.storage.hoodie_storage import Storage
from spec.timeline.commit_metadata import CommitMetadata, write_stat

Location = tuple[str, str]
DEFINITIONS_PATH = ".hoodie/.index_defs/index.json"
"""Where Apache Hudi 1.2.0 keeps index definitions (``hoodie.table.index.defs.path``)."""


@dataclass(frozen=True)
class WrittenFile:
    """A file the metadata table's deltacommit wrote: partition, file group, name, size, records."""

    partition: str
    file_id: str
    name: str
    size: int
    records: int


@lru_cache(maxsize=4)
def _schema(table_version: int) -> Any:
    return fastavro.parse_schema(json.loads(metadata_record_schema(table_version)))


def defined_form(storage: Storage, table: TableConfig) -> bool | None:
    """The form the table's ``record_index`` definition names (in ``.hoodie/.index_defs/index.json``): True for
    the partitioned one (``isPartitioned`` true), False for the global one, None when there is no definition."""
    path = table.get("hoodie.table.index.defs.path")
    if not path or not storage.exists(path):
        return None
    found = parse_index_definitions(storage.read(path).decode()).get(RECORD_INDEX_PARTITION)
    return None if found is None else is_partitioned(found)


def partitioned(storage: Storage, table: TableConfig) -> bool:
    """Whether the table has a record index and it is the partitioned one
    (``spec.metadata.partitioned_record_index``)."""
    return RECORD_INDEX_PARTITION in table.metadata_partitions and defined_form(storage, table) is True


def check_record_index_write(storage: Storage, table: TableConfig, keep: bool, partitioned_index: bool = False) -> None:
    """Before anything is written: what the record index is not kept through here is refused — a table version
    below 8 (its metadata table is not written here), a keyless table or one without meta fields (keys read from
    the files), a write asking for the other form than the table's index (``check_index_form``)."""
    if not keep:
        return  # the write drops the record index (both hoodie.metadata.*record*.index.enable false or unset)
    if table.table_version < 8:
        raise UnsupportedOption(f"the record index is kept on table versions 8 and 9, not {table.table_version}",
                                hint="write without hoodie.metadata.record.index.enable, or upgrade the table")
    if RECORD_INDEX_PARTITION in table.metadata_partitions:
        check_index_form(defined_form(storage, table) is True, partitioned_index)
    if not table.record_key_fields or table.get("hoodie.populate.meta.fields") == "false":
        raise UnsupportedOption("the record index needs record key fields and meta fields",
                                hint="name hoodie.datasource.write.recordkey.field")


def commit_placements(storage: Storage, md: CommitMetadata, instant: str, held: Iterable[tuple[str, Location]]
                      ) -> tuple[list[tuple[str, Location]], list[tuple[str, Location]]]:
    """The keys a commit placed and removed, each with its (partition, file id), from the files its write stats
    name: ``held`` is each key the index holds with its location (a key twice for a partitioned index)."""
    placed: list[tuple[str, Location]] = []
    removed: list[tuple[str, Location]] = []
    by_location: dict[Location, set[str]] = {}
    for k, loc in held:
        by_location.setdefault(loc, set()).add(k)
    for partition, fids in (md.partition_to_replace_file_ids or {}).items():
        for fid in fids:  # a replaced file group's keys leave the index unless the commit placed them elsewhere
            removed.extend((k, (partition, fid)) for k in by_location.get((partition, fid), set()))
    for partition, stats in md.partition_to_write_stats.items():
        for s in stats:
            if not s.path:
                continue
            loc = (partition, s.file_id or "")
            name = posixpath.basename(s.path)
            if is_base_file_name(name):
                keys = pq.read_table(io.BytesIO(storage.read(s.path)), columns=[RECORD_KEY]).column(0).to_pylist()
                present = {str(k) for k in keys}
                placed.extend((k, loc) for k in present)
                removed.extend((k, loc) for k in by_location.get(loc, set()) - present)
                continue
            for rec in read_blocks(storage.read(s.path)):
                block = rec.block
                if block is None or block.header_value(HeaderKey.INSTANT_TIME) != instant:
                    continue
                if block.block_type == BlockType.DELETE_BLOCK:
                    from spec.file_group.log_file.delete_block import decode_delete_records

                    removed.extend((d.record_key or "", loc) for d in decode_delete_records(block))
                elif block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK,
                                          BlockType.HFILE_DATA_BLOCK):
                    placed.extend((str(r[RECORD_KEY]), loc) for r in decode_records(block))
    return placed, removed


def commit_changes(storage: Storage, md: CommitMetadata, instant: str,
                   held: Mapping[str, Location]) -> tuple[dict[str, Location], set[str]]:
    """The record index changes of a commit (``record_index_changes``), from the files its write stats name."""
    placed, removed = commit_placements(storage, md, instant, held.items())
    return record_index_changes(held, dict(placed), dict(removed))


def _records_hfile(instant: str, upserts: Mapping[str, Location], keys: Sequence[str], table: TableConfig,
                   create_time_ms: int, table_version: int, instants: Mapping[str, str] | None = None) -> bytes:
    """An HFile of the records of ``keys`` (sorted) at their locations, written at ``instant`` (or each key's
    instant in ``instants``)."""
    entries = [KeyValue(k.encode(), encode_record_index_record(
        record_index_info(upserts[k][0], upserts[k][1], (instants or {}).get(k, instant), table.timezone),
        _schema(table_version))) for k in keys]
    return build_hfile(entries, [("schema", metadata_record_schema(table_version).encode())], [], create_time_ms)


def change_files(mdt: Storage, table: TableConfig, instant: str, upserts: Mapping[str, Location],
                 deletes: set[str], file_groups: int, table_version: int, create_time_ms: int) -> list[WrittenFile]:
    """One log file per record index file group the changes reach (``.record-index-NNNN-0_<instant>.log.1_0-0-0``):
    an HFILE data block of the upserted keys' records (header INSTANT_TIME, SCHEMA), then a delete block of the
    deleted keys (partition ``record_index``, ordering value the Integer 0)."""
    schema_json = metadata_record_schema(table_version)
    ups = by_file_group(list(upserts), file_groups)
    dels = by_file_group(list(deletes), file_groups)
    out = []
    for index in sorted(set(ups) | set(dels)):
        blocks = []
        if index in ups:
            header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.SCHEMA), schema_json))
            blocks.append(LogBlock(BlockType.HFILE_DATA_BLOCK, header, _records_hfile(
                instant, upserts, ups[index], table, create_time_ms, table_version)))
        if index in dels:
            blocks.append(delete_block(instant, schema_json, [
                delete_record(k, RECORD_INDEX_PARTITION, DELETE_ORDERING_VALUE) for k in dels[index]]))
        fid = file_group_id(RECORD_INDEX_PARTITION, index)
        name = f".{fid}_{instant}.log.1_{WRITE_TOKEN}"
        data = encode_blocks(blocks)
        mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{name}", data)
        out.append(WrittenFile(RECORD_INDEX_PARTITION, fid, name, len(data), len(ups.get(index, ()))
                               + len(dels.get(index, ()))))
    return out


def file_group_count(mdt: Storage) -> int:
    """The record index's file groups, as its files name them."""
    names = {f.name.lstrip(".").split("_")[0] for f in mdt.list(RECORD_INDEX_PARTITION)
             if f.name.lstrip(".").startswith(RECORD_INDEX_TYPE.file_id_prefix)}
    return len(names)


def current_keys(storage: Storage) -> dict[str, Location]:
    """Every key of the table with the (partition, file group) a snapshot reads it from, and the base instant of
    that file slice (``readRecordKeysFromFileSlices``)."""
    reader = TableReader(storage)
    out: dict[str, Location] = {}
    for sl in reader.view().latest_slices(None):
        rows = reader.read_slice(sl)
        if rows is not None:
            for k in rows.column(RECORD_KEY).to_pylist():
                out[str(k)] = (sl.partition_path, sl.file_id)
    return out


def current_keys_by_partition(storage: Storage) -> dict[tuple[str, str], str]:
    """Every (partition, key) of the table with the file group a snapshot reads it from."""
    reader = TableReader(storage)
    out: dict[tuple[str, str], str] = {}
    for sl in reader.view().latest_slices(None):
        rows = reader.read_slice(sl)
        if rows is not None:
            for k in rows.column(RECORD_KEY).to_pylist():
                out[(sl.partition_path, str(k))] = sl.file_id
    return out


def base_instants(storage: Storage) -> dict[Location, str]:
    """The base instant of each latest file slice of the table."""
    table = TableConfig.load(storage)
    view = FileSystemView.load(storage, table)
    return {(sl.partition_path, sl.file_id): sl.base_instant for sl in view.latest_slices(None)}


def initialization_files(storage: Storage, instant: str, create_time_ms: int,
                         sizing: Sizing | None = None) -> tuple[list[WrittenFile], int]:
    """The record index's first files (``RecordIndexer``): its file group count estimated from the table's keys
    under ``sizing`` (Hudi's defaults when None; ``estimate_file_group_count``),
    each file group's log file with an empty delete block, and a base HFile of the keys that go to it (a key's
    instant, its file slice's base instant). The files written and the number of keys."""
    table = TableConfig.load(storage)
    mdt = metadata_storage(storage)
    keys = current_keys(storage) if list_data_files(storage) else {}
    instants = base_instants(storage) if keys else {}
    count = estimate_file_group_count(len(keys), sizing or Sizing())
    mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/.hoodie_partition_metadata", PartitionMetadata(instant, 1).format())
    version = TableConfig.load(mdt).table_version
    groups = by_file_group(list(keys), count)
    out = []
    for index in range(count):
        fid = file_group_id(RECORD_INDEX_PARTITION, index)
        log_name = f".{fid}_{instant}.log.1_{WRITE_TOKEN}"
        log = encode_blocks([init_log_block(instant)])
        mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{log_name}", log)
        out.append(WrittenFile(RECORD_INDEX_PARTITION, fid, log_name, len(log), 0))
        if index in groups:
            entries = [KeyValue(k.encode(), encode_record_index_record(record_index_info(
                keys[k][0], keys[k][1], instants[keys[k]], table.timezone), _schema(version))) for k in groups[index]]
            base_name = f"{fid}_{WRITE_TOKEN}_{instant}.hfile"
            data = build_hfile(entries, [("schema", metadata_record_schema(version).encode())], [], create_time_ms)
            mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{base_name}", data)
            out.append(WrittenFile(RECORD_INDEX_PARTITION, fid, base_name, len(data), len(groups[index])))
    return out, len(keys)


def write_stats(files: Sequence[WrittenFile]) -> list[Any]:
    """The metadata deltacommit's write stats of ``files``."""
    return [write_stat(fileId=f.file_id, path=f"{f.partition}/{f.name}", partitionPath=f.partition,
                       numWrites=f.records, numInserts=f.records if f.name.endswith(".hfile") else 0,
                       totalWriteBytes=f.size, fileSizeInBytes=f.size, prevCommit="00000000000000000")
            for f in files]


def add_definition(storage: Storage, table: TableConfig, partitioned_index: bool = False) -> TableConfig:
    """The record index's definition in ``.hoodie/.index_defs/index.json`` (``isPartitioned`` false, or true for
    the partitioned form, version V1),
    named by ``hoodie.table.index.defs.path``, as Apache Hudi 1.2.0 writes both on table versions 9 and 8
    (measured). The table's config with the property."""
    if table.table_version < 8:
        return table
    path = table.get("hoodie.table.index.defs.path") or DEFINITIONS_PATH
    defs = parse_index_definitions(storage.read(path).decode()) if storage.exists(path) else {}
    defs[RECORD_INDEX_PARTITION] = definition(partitioned_index)
    storage.write_atomic(path, format_index_definitions(defs).encode())
    return table if table.get("hoodie.table.index.defs.path") else table.with_props(
        **{"hoodie.table.index.defs.path": path})


__all__ = [
    "WrittenFile",
    "add_definition",
    "change_files",
    "check_record_index_write",
    "commit_changes",
    "commit_placements",
    "defined_form",
    "file_group_count",
    "initialization_files",
    "partitioned",
    "read_record_index",
    "write_stats",
]


def compaction_slices(mdt: Storage, cfg: TableConfig, timeline: Any) -> list[tuple[Any, dict[str, dict[str, Any]]]]:
    """Each record index file group's latest slice with its merged records (``spec.metadata.record_index.
    merged_slices``), for a metadata compaction (``HoodieBackedTableMetadataWriter``'s compaction takes every file
    group of every partition)."""
    from spec.metadata.record_index import merged_slices

    return merged_slices(mdt, cfg, timeline)


def compacted_base(mdt: Storage, file_id: str, instant: str, records: Mapping[str, Mapping[str, Any]],
                   table_version: int, create_time_ms: int) -> WrittenFile:
    """A record index file group's base HFile written by a metadata compaction (``<file id>_0-0-0_<instant>.hfile``):
    its records sorted by key, each naming the file in ``_hoodie_file_name``, with the keys' DYNAMIC_V0 bloom filter
    and ``minRecordKey`` / ``maxRecordKey`` as every metadata base HFile (``spec.metadata.writer.records_hfile``)."""
    import base64

    from spec.file_group.bloom_filter import DynamicBloomFilter
    from spec.metadata.writer import BLOOM_FILTER_ENTRIES, BLOOM_FILTER_FPP, BLOOM_FILTER_META, BLOOM_FILTER_TYPE

    name = f"{file_id}_{WRITE_TOKEN}_{instant}.hfile"
    keys = sorted(records)
    entries = []
    for k in keys:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, _schema(table_version), {
            "key": "", "type": records[k]["type"], "recordIndexMetadata": records[k]["recordIndexMetadata"],
            "_hoodie_file_name": name})
        entries.append(KeyValue(k.encode(), out.getvalue()))
    bloom = DynamicBloomFilter(row_entries=BLOOM_FILTER_ENTRIES, fpp=BLOOM_FILTER_FPP)
    for k in keys:
        bloom.add(k)
    bounds = keys or [""]
    info = [("schema", metadata_record_schema(table_version).encode()),
            ("bloomFilterTypeCode", BLOOM_FILTER_TYPE.encode()), ("minRecordKey", bounds[0].encode()),
            ("maxRecordKey", bounds[-1].encode())]
    data = build_hfile(entries, info, [(BLOOM_FILTER_META, base64.b64encode(bloom.serialize()))], create_time_ms)
    mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{name}", data)
    return WrittenFile(RECORD_INDEX_PARTITION, file_id, name, len(data), len(keys))
