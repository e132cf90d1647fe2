"""The metadata table's ``files`` partition: the table's partitions and files, without listing storage.

The metadata table is a merge-on-read Hudi table at ``.hoodie/metadata`` (its own hoodie.properties,
timeline and file groups; payload ``HoodieMetadataPayload``, record key ``key``, HFile base files and
HFILE_DATA_BLOCK log blocks, see ``spec.metadata.hfile``). When the data table's
``hoodie.table.metadata.partitions`` names ``files``, readers list the table through it:

- each value is an Avro ``HoodieMetadataRecord`` (the writer schema is the HFile's ``schema`` file info,
  or the log block's SCHEMA header): ``key``, ``type`` and, for the files partition,
  ``filesystemMetadata`` — a map from name to ``HoodieMetadataFileInfo`` (``size``, ``isDeleted``);
- type 1 (partition list), key ``__all_partitions__``: the map's names are the partition paths
  (``.`` is the non-partitioned table's one partition);
- type 2 (file list), key = a partition path: the map's names are the partition's file names;
- the records of the latest file slice of the partition's file group are merged in order — base
  HFile, then the log blocks the log scanner applies (blocks of metadata instants that did not
  complete, or of data table instants that did not complete, are skipped; a delete block removes a
  key) — by ``HoodieMetadataPayload``'s rule: names of the newer record are added with the larger of
  the two sizes; a newer ``isDeleted`` removes the name, or is kept as a tombstone when the older
  record does not have it; tombstones are dropped from the final listing.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieBackedTableMetadata``
(``getAllPartitionPaths``, ``getAllFilesInPartition``, ``getValidInstantTimestamps``),
``HoodieMetadataPayload`` (``combineFileSystemMetadata``, ``RECORDKEY_PARTITION_LIST``),
``HoodieTableMetadata`` (``NON_PARTITIONED_NAME``) and ``MetadataPartitionType``.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from spec.config.table_config import TableConfig
from spec.errors import HFileFormatError, InvalidTable, MetadataFormatError
from spec.file_group.file_naming import is_base_file_name, is_log_file_name, parse_log_file_name
from spec.file_group.file_system_view import DataFile, FileSystemView, list_data_files
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock
from spec.file_group.log_file.scanner import scan_slice_logs
from spec.metadata.hfile import FILE_INFO_SCHEMA, parse_hfile
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_binary import SMALL_DATUM_BYTES, plain_reader
from spec.timeline.avro_binary import decode as avro_decode

METADATA_TABLE_PATH = ".hoodie/metadata"
FILES_PARTITION = "files"
ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."
TYPE_PARTITION_LIST = 1
TYPE_FILE_LIST = 2
FILES_FIELDS = ("key", "type", "filesystemMetadata")
"""The fields of a ``HoodieMetadataRecord`` the files partition's listing reads (the others are skipped)."""


# --8<-- [start:records]
@dataclass(frozen=True)
class FileInfo:
    """One name of a ``filesystemMetadata`` map: its size, or a tombstone."""

    size: int
    is_deleted: bool = False


Listing = Mapping[str, FileInfo]


def combine_file_infos(older: Listing, newer: Listing) -> dict[str, FileInfo]:
    """``HoodieMetadataPayload.combineFileSystemMetadata``: the newer record's names over the older's. A name in
    both keeps the larger size; a newer tombstone removes the name (a tombstone over a tombstone stays), and is
    kept when the older record lacks the name (it may be merged over older records later)."""
    out = dict(older)
    for name, info in newer.items():
        old = out.get(name)
        if old is None:
            out[name] = info
        elif info.is_deleted:
            if old.is_deleted:
                out[name] = info
            else:
                del out[name]
        else:
            out[name] = FileInfo(max(info.size, old.size), False)
    return out


def file_infos(record: Mapping[str, Any]) -> dict[str, FileInfo]:
    """The ``filesystemMetadata`` of a decoded ``HoodieMetadataRecord`` (empty when it has none)."""
    fs = record.get("filesystemMetadata") or {}
    return {name: FileInfo(int(v.get("size") or 0), bool(v.get("isDeleted"))) for name, v in fs.items()}


@lru_cache(maxsize=32)
def _schema(text: str) -> Any:
    import fastavro  # a table without a metadata table never needs Avro here

    try:
        return fastavro.parse_schema(json.loads(text))
    except (ValueError, fastavro.schema.SchemaParseException) as err:
        raise MetadataFormatError(f"a metadata table schema does not parse: {err}",
                                  hint="the HFile's schema file info or the block's SCHEMA header is damaged") from err


def decode_metadata_record(value: bytes, schema_json: str, fields: Sequence[str] | None = None,
                           small: bool | None = None) -> dict[str, Any]:
    """One HFile value: Avro binary of a ``HoodieMetadataRecord`` under the writer schema ``schema_json``; only
    the fields ``fields`` names when given (``FILES_FIELDS``: what the files partition's listing needs). A small
    value (``small``, by default: at most ``SMALL_DATUM_BYTES``) whose returned fields hold no logical type is
    decoded by ``spec.timeline.avro_binary``, any other (or one that does not decode there) by fastavro: the same
    values."""
    read = plain_reader(schema_json, None if fields is None else tuple(fields))
    if read is not None and (len(value) <= SMALL_DATUM_BYTES if small is None else small):
        with contextlib.suppress(EOFError, ValueError, IndexError, KeyError, TypeError):
            record = avro_decode(value, read)
            if isinstance(record, dict):
                return record
    record = _decode_fastavro(value, schema_json)
    return record if fields is None else {k: v for k, v in record.items() if k in fields}


def _decode_fastavro(value: bytes, schema_json: str) -> dict[str, Any]:
    import fastavro

    try:
        record = fastavro.schemaless_reader(io.BytesIO(value), _schema(schema_json), None)
    except (EOFError, ValueError, IndexError, TypeError, UnicodeDecodeError) as err:
        raise MetadataFormatError(f"a metadata record does not decode: {err}",
                                  hint="the value is not a HoodieMetadataRecord under the file's schema") from err
    if not isinstance(record, dict):
        raise MetadataFormatError("a metadata record is not an Avro record", hint="the file's schema is not a record")
    return record


def hfile_records(data: bytes, schema_json: str | None = None,
                  fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """The decoded records of an HFile by key (only ``fields`` of each, when given); the writer schema is
    ``schema_json`` or the file's own."""
    hf = parse_hfile(data)
    schema = schema_json or hf.file_info.get(FILE_INFO_SCHEMA, b"").decode()
    if hf.entries and not schema:
        raise HFileFormatError("a metadata HFile names no schema", hint="Hudi stores it as the 'schema' file info")
    small = len(data) <= SMALL_DATUM_BYTES  # a large file's many values: fastavro, whose import then costs little
    return {e.key: decode_metadata_record(e.value, schema, fields, small) for e in hf.entries}
# --8<-- [end:records]


def block_changes(block: LogBlock, fields: Sequence[str] | None = None) -> Iterable[tuple[str, dict[str, Any] | None]]:
    """(key, record) for an HFILE data block (only ``fields`` of each record, when given), (key, None) for a
    delete block; other blocks change nothing."""
    if block.block_type == BlockType.HFILE_DATA_BLOCK:
        yield from hfile_records(block.content, block.header_value(HeaderKey.SCHEMA), fields).items()
    elif block.block_type == BlockType.DELETE_BLOCK:
        from spec.file_group.log_file.delete_block import decode_delete_records

        yield from ((d.record_key or "", None) for d in decode_delete_records(block))


# --8<-- [start:partition]
def merge_partition(base: Mapping[str, dict[str, Any]], blocks: Sequence[LogBlock]) -> dict[str, Listing]:
    """The merged ``filesystemMetadata`` of every key of a files-partition slice: base records, then the blocks
    in order (a delete removes the key)."""
    merged: dict[str, Listing] = {k: file_infos(r) for k, r in base.items()}
    for block in blocks:
        for key, record in block_changes(block, FILES_FIELDS):
            if record is None:
                merged.pop(key, None)
            else:
                merged[key] = combine_file_infos(merged.get(key, {}), file_infos(record))
    return merged


def _live(listing: Listing) -> dict[str, int]:
    return {name: info.size for name, info in listing.items() if not info.is_deleted}


def files_from_records(merged: Mapping[str, Listing]) -> list[DataFile]:
    """The data files the merged records list: every partition of ``__all_partitions__``, its file list, only the
    base and (unsuffixed) log files, as a file system listing would give them."""
    out = []
    for partition in sorted(_live(merged.get(ALL_PARTITIONS_KEY, {}))):
        path = "" if partition == NON_PARTITIONED_NAME else partition
        for name, size in sorted(_live(merged.get(partition, {})).items()):
            if is_base_file_name(name) or (is_log_file_name(name) and not parse_log_file_name(name).suffix):
                out.append(DataFile(path, name, size))
    return out
# --8<-- [end:partition]


# --8<-- [start:read]
def metadata_storage(storage: Storage) -> Storage:
    """The metadata table's base path (``.hoodie/metadata``) on the data table's file system."""
    return Storage(storage.full(METADATA_TABLE_PATH), None if storage.local else storage.fs)


def uses_metadata_table(config: TableConfig) -> bool:
    """Whether readers list the table through its metadata table: its ``files`` partition is complete."""
    return FILES_PARTITION in config.metadata_partitions


def read_files_partition(storage: Storage, data_timeline: Timeline) -> dict[str, Listing]:
    """The merged records of the metadata table's ``files`` partition (key → name → FileInfo)."""
    mdt = metadata_storage(storage)
    try:
        cfg = TableConfig.load(mdt)
    except InvalidTable as err:
        raise InvalidTable(
            f"the table lists its files through its metadata table ({METADATA_TABLE_PATH}, named complete in "
            f"hoodie.table.metadata.partitions), which is missing or damaged: {err.message}",
            hint="read it listing storage (TableReader(..., use_metadata_table=False), `hudi-spec read "
                 "--list-file-system`); the next write builds the metadata table again") from err
    if not cfg.is_metadata_table:
        raise InvalidTable(f"{METADATA_TABLE_PATH} is not a metadata table (its payload is not HoodieMetadataPayload)",
                           hint="list the file system instead")
    timeline = Timeline.load(mdt, cfg.timeline_layout)
    files = [f for f in list_data_files(mdt) if f.partition_path == FILES_PARTITION]
    view = FileSystemView.build(files, timeline, cfg)
    slices = view.latest_slices([FILES_PARTITION])
    merged: dict[str, Listing] = {}
    pending = {i.requested for i in data_timeline.instants if not i.is_completed}
    for sl in slices:
        base = hfile_records(mdt.read(sl.base_file.path), None, FILES_FIELDS) if sl.base_file else {}
        blocks, _ = scan_slice_logs(mdt, [f.path for f in sl.log_files], timeline, None, cfg.table_version)
        valid = [b for b in blocks if b.instant_time not in pending]  # a data write that did not complete
        merged.update(merge_partition(base, valid))
    return merged


def list_table_files(storage: Storage, config: TableConfig, timeline: Timeline,
                     use_metadata_table: bool = True) -> list[DataFile]:
    """The table's data files: from the metadata table's ``files`` partition where the table says it is
    complete (unless ``use_metadata_table`` is False), else by listing storage."""
    if use_metadata_table and uses_metadata_table(config):
        return files_from_records(read_files_partition(storage, timeline))
    return list_data_files(storage)
# --8<-- [end:read]
