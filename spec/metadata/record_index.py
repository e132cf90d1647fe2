"""The record index (``record_index`` metadata partition): every record key of the table with the data partition and
file group that hold it, kept by the writer on every commit and read to tag incoming records.

- **Settings** (``HoodieMetadataConfig``, Apache Hudi 1.2.0, measured through py4j): the index is kept when
  ``hoodie.metadata.global.record.level.index.enable`` (its older name ``hoodie.metadata.record.index.enable``) is
  true; a new index's file group count comes from ``hoodie.metadata.global.record.level.index.min.filegroup.count``
  (10) and ``...max.filegroup.count`` (10000) (older names ``hoodie.metadata.record.index.min.filegroup.count``,
  ``...max.filegroup.count``), ``hoodie.metadata.record.index.growth.factor`` (2.0, a Java float) and
  ``hoodie.metadata.record.index.max.filegroup.size`` (1 GiB) (``estimate_file_group_count``, the count of the keys
  the table holds when the index is built: none when it is built with a new table's first write). 1.2.0 writes the
  global (not partitioned) form by default: its index definition says ``isPartitioned`` ``false`` and its file
  groups are ``record-index-0000-0`` onwards.
- **Initialization** (``HoodieBackedTableMetadataWriter.initializeFromFilesystem``,
  ``RecordIndexer.initialize``): at the instant after the ``files`` partition's (``00000000000000001`` on a new
  metadata table), every file group gets a log file holding an empty delete block and, when the table already holds
  keys, the keys of each latest file slice (``readRecordKeysFromFileSlices``: a key's instant is its file slice's
  base instant). Apache Hudi 1.2.0 initializes it with the table's first write (measured: ten file groups, empty
  delete blocks, then that write's keys in log files of its own deltacommit).
- **Records** (``HoodieMetadataPayload.createRecordIndexUpdate``): a key's record is ``type`` 5 with a
  ``HoodieRecordIndexInfo``: a file id ``<UUID>-<n>`` is written with ``fileIdEncoding`` 0 as the UUID's high and low
  64 bits (signed) and ``fileIndex`` ``n`` (-1 for a bare UUID), ``fileId`` empty; any other file id with encoding 1,
  the bits and index -1 and the file id as text. ``instantTime`` is the epoch milliseconds of the instant time read in
  the table's time zone (``hoodie.table.timeline.timezone``); ``position`` null.
- **Updates** (``HoodieBackedTableMetadataWriter.update``, measured on Apache Hudi 1.2.0): a commit writes a record
  for each key that it placed in a file group the index did not hold it in (an insert, or a key moved to another
  partition) with the commit's instant, and a delete for each key it removed (``createRecordIndexDelete``: a
  DELETE_BLOCK of the key, partition ``record_index``, ordering value the Integer 0, header INSTANT_TIME then
  SCHEMA); an update in place writes nothing (``record_index_changes``). Each file group's changes are one log file
  of the metadata deltacommit, key ``k`` going to file group ``mapRecordKeyToFileGroupIndex(k, n)``
  (``spec.metadata.index_keys.file_group_for_key``).

Source (Apache Hudi 1.2.0, measured; the table versions 8 and 9 it writes. 0.15.x, 1.0.x and 1.1.x, whose record
index has the same records and file groups, are not measured here): ``HoodieBackedTableMetadataWriter``,
``HoodieTableMetadataUtil`` (``estimateFileGroupCount``, ``mapRecordKeyToFileGroupIndex``,
``readRecordKeysFromFileSlices``), ``HoodieMetadataPayload`` (``createRecordIndexUpdate``,
``createRecordIndexDelete``), ``HoodieMetadataConfig`` and ``HoodieIndexConfig``
(``RECORD_INDEX_UPDATE_PARTITION_PATH_ENABLE``, false).
"""

from __future__ import annotations

import io
import math
import struct
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from spec.errors import InvalidConfig
from spec.metadata.index_keys import MISSING_FILE_INDEX, RecordLocation, file_group_for_key, record_location
from spec.storage.hoodie_storage import Storage

RECORD_INDEX_PARTITION: Final = "record_index"
AVERAGE_RECORD_SIZE: Final = 48
"""``RECORD_INDEX_AVERAGE_RECORD_SIZE``: the bytes an entry is taken to need when the file groups are counted."""
RECORD_TYPE: Final = 5
"""``HoodieMetadataRecord.type`` of a record index entry (``MetadataPartitionType.RECORD_INDEX``)."""
DELETE_ORDERING_VALUE: Final = 0
"""A record index delete's ordering value, the Integer 0 (``EmptyHoodieRecordPayload``'s), as Hudi writes it."""


@dataclass(frozen=True)
class Sizing:
    """The settings that size a new record index, Apache Hudi 1.2.0's defaults (``HoodieMetadataConfig``,
    measured): fewest and most file groups, the growth expected of the keys (a Java float) and the bytes a file
    group is to hold (at least ``AVERAGE_RECORD_SIZE``: below, Hudi's estimate divides by zero, and the writer's
    option refuses it)."""

    min_file_groups: int = 10
    max_file_groups: int = 10000
    growth_factor: float = 2.0
    max_file_group_size: int = 1 << 30


# --8<-- [start:count]
def _java_float(value: float) -> float:
    """``value`` rounded to a 32-bit float (Java's ``float``)."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def estimate_file_group_count(record_count: int, sizing: Sizing = Sizing()) -> int:
    """``HoodieTableMetadataUtil.estimateFileGroupCount`` for the record index (average record size 48, as
    ``HoodieBackedTableMetadataWriter`` calls it when it builds the index): min and max equal (and not 0) fix the
    count; otherwise the records expected, ``ceil(count * growth)`` multiplied in Java floats, divided (integer
    division) by the records a file group holds, ``max size // 48``; at least max gives max, at most min gives min,
    else that estimate."""
    lo, hi = sizing.min_file_groups, sizing.max_file_groups
    if lo == hi and lo != 0:
        return lo
    expected = math.ceil(_java_float(_java_float(float(record_count)) * _java_float(sizing.growth_factor)))
    per_group = sizing.max_file_group_size // AVERAGE_RECORD_SIZE
    if per_group == 0:
        raise InvalidConfig(f"a record index file group of {sizing.max_file_group_size} bytes holds no entry "
                            f"({AVERAGE_RECORD_SIZE} bytes each)",
                            hint="set hoodie.metadata.record.index.max.filegroup.size to 48 or more")
    estimated = expected // per_group
    if estimated >= hi:
        return hi
    if estimated <= lo:
        return lo
    return max(1, estimated)
# --8<-- [end:count]


# --8<-- [start:info]
def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def instant_millis(instant: str, timezone: str) -> int:
    """``parseDateFromInstantTime(...).getTime()``: the instant time's epoch milliseconds, the time read in the
    table's time zone (``UTC``, or ``LOCAL``: this machine's, as the writer's JVM reads it)."""
    naive = datetime.strptime(instant[:14], "%Y%m%d%H%M%S")
    moment = naive.replace(tzinfo=UTC) if timezone.upper() == "UTC" else naive.astimezone()
    return int(moment.timestamp()) * 1000 + int(instant[14:17] or 0)


def _uuid_and_index(file_id: str) -> tuple[uuid.UUID, int] | None:
    """A file id's UUID and file index (``<UUID>-<n>``; a bare UUID has index -1), None for another form."""
    head, _, tail = file_id.rpartition("-")
    text, index = (file_id, MISSING_FILE_INDEX) if len(file_id) == 36 else (head, int(tail) if tail.isdigit() else -2)
    if len(text) != 36 or index == -2:
        return None
    try:
        return uuid.UUID(text), index
    except ValueError:
        return None


def record_index_info(partition: str, file_id: str, instant: str, timezone: str = "UTC") -> dict[str, Any]:
    """The ``HoodieRecordIndexInfo`` of a key in ``file_id`` of data partition ``partition`` written at ``instant``."""
    millis = instant_millis(instant, timezone)
    parsed = _uuid_and_index(file_id)
    if parsed is None:
        return {"partitionName": partition, "fileIdHighBits": -1, "fileIdLowBits": -1, "fileIndex": -1,
                "fileId": file_id, "instantTime": millis, "fileIdEncoding": 1, "position": None}
    value, index = parsed
    return {"partitionName": partition, "fileIdHighBits": _signed(value.int >> 64),
            "fileIdLowBits": _signed(value.int & ((1 << 64) - 1)), "fileIndex": index, "fileId": "",
            "instantTime": millis, "fileIdEncoding": 0, "position": None}


def encode_record_index_record(info: Mapping[str, Any], schema: Any) -> bytes:
    """The Avro binary of a record index ``HoodieMetadataRecord`` (``key`` empty, type 5) under the parsed metadata
    record ``schema``."""
    import fastavro

    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, {"key": "", "type": RECORD_TYPE, "recordIndexMetadata": dict(info)})
    return out.getvalue()
# --8<-- [end:info]


# --8<-- [start:changes]
def record_index_changes(held: Mapping[str, tuple[str, str]], placed: Mapping[str, tuple[str, str]],
                         removed: Mapping[str, tuple[str, str]]) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """What a commit changes in the index: ``held`` is where the index holds each key before it, ``placed`` the
    (partition, file id) each key the commit wrote is now in, ``removed`` the location each key the commit took out
    of a file group was taken from. Upserts: the placed keys the index does not already hold there; deletes: the
    removed keys the index holds at that location and the commit did not place elsewhere."""
    upserts = {k: loc for k, loc in placed.items() if held.get(k) != loc}
    deletes = {k for k, loc in removed.items() if held.get(k) == loc and k not in placed}
    return upserts, deletes


def by_file_group(keys: Sequence[str], file_groups: int) -> dict[int, list[str]]:
    """Keys grouped by the record index file group they go to (``mapRecordKeyToFileGroupIndex``), sorted."""
    out: dict[int, list[str]] = {}
    for k in sorted(keys):
        out.setdefault(file_group_for_key(k, file_groups), []).append(k)
    return out
# --8<-- [end:changes]


# --8<-- [start:read]
def merged_slices(mdt: Storage, cfg: Any, timeline: Any) -> list[tuple[Any, dict[str, dict[str, Any]]]]:
    """Each record index file group's latest slice in the metadata table at ``mdt`` (its config ``cfg``, its
    timeline ``timeline``), with its records merged: the base HFile, then the log blocks in order (a record sets
    the key's entry, a delete removes it), the blocks of instants the timeline does not complete skipped
    (``spec.file_group.log_file.scanner``)."""
    from spec.file_group.file_system_view import FileSystemView, list_data_files
    from spec.file_group.log_file.scanner import scan_slice_logs
    from spec.metadata.metadata_table import block_changes, hfile_records

    files = [f for f in list_data_files(mdt) if f.partition_path == RECORD_INDEX_PARTITION]
    out = []
    for sl in FileSystemView.build(files, timeline, cfg).latest_slices([RECORD_INDEX_PARTITION]):
        merged: dict[str, dict[str, Any]] = dict(hfile_records(mdt.read(sl.base_file.path))) if sl.base_file else {}
        blocks, _ = scan_slice_logs(mdt, [f.path for f in sl.log_files], timeline, None, cfg.table_version)
        for block in blocks:
            for key, record in block_changes(block):
                if record is None:
                    merged.pop(key, None)
                else:
                    merged[key] = record
        out.append((sl, merged))
    return out


def record_index_entries(storage: Storage) -> list[tuple[str, RecordLocation]]:
    """Every entry of the record index of the table at ``storage`` (the data table), global or partitioned, merged:
    each file group's latest slice, its base HFile then its log blocks in order (``merged_slices``), as (record key,
    location). Instant times are read in the table's time zone. Empty when the table has no record index."""
    from spec.config.table_config import TableConfig
    from spec.metadata.metadata_table import metadata_storage
    from spec.timeline.active_timeline import Timeline

    table = TableConfig.load(storage)
    if RECORD_INDEX_PARTITION not in table.metadata_partitions:
        return []
    zone = UTC if table.timezone.upper() == "UTC" else datetime.now().astimezone().tzinfo or UTC
    mdt = metadata_storage(storage)
    cfg = TableConfig.load(mdt)
    timeline = Timeline.load(mdt, cfg.timeline_layout)
    return [(k, record_location(r["recordIndexMetadata"], zone))
            for _, merged in merged_slices(mdt, cfg, timeline) for k, r in merged.items()]


def read_record_index(storage: Storage) -> dict[str, RecordLocation]:
    """The global record index of the table at ``storage`` by record key (``record_index_entries``); an empty map
    when the table has no record index."""
    return dict(record_index_entries(storage))
# --8<-- [end:read]
