"""The keys of the metadata table's index partitions, and the file group each key is written to.

**Hashed keys.** Column statistics, partition statistics and bloom filters are keyed by hashes of names, each hash
Base64-encoded (standard alphabet, padded) and the encodings concatenated:

- a column name or a partition name: XXH64 with seed ``0xdabadaba`` — a Java ``int``, sign-extended to the ``long``
  seed, so ``0xffffffffdabadaba`` —, its 8 bytes big-endian (12 Base64 characters);
- a file name: its MD5 digest, 16 bytes (24 Base64 characters);
- the partition of a non-partitioned table is named ``.``;
- ``column_stats``: column + partition + file; ``partition_stats``: column + partition; ``bloom_filters``:
  partition + file.

Hudi's specification page writes these as ``str_concat(hash(...), ...)`` without saying which hashes or how they are
printed; every key of the real tables is the one built here.

**Secondary index keys** are ``<secondary value>$<record key>``, each part escaped: a ``\\``, ``$`` or NUL character
gets a ``\\`` in front; a null value is written as a lone NUL (unescaped). The value is the column's value as text,
as it is (no lower-casing: Hudi's page shows ``chennai$id1`` for ``Chennai``, the real tables keep the case).

**File groups.** A key goes to file group ``abs(abs(h) % n)`` of the ``n`` file groups of its partition, ``h`` the
Java ``String.hashCode`` (31-polynomial over UTF-16 code units, 32-bit signed) of:

- the whole key, for every partition — except
- a ``V2`` secondary index (the version its definition carries, ``spec.metadata.partition_type``), which hashes only
  the escaped secondary value with its ``$`` (``<secondary value>$``), so every entry of one value lands in one file
  group and a lookup by value reads one file group. A ``V1`` secondary index hashes the whole
  ``<secondary value>$<record key>`` key.

Hudi's specification page first said the opposite for ``V2`` (sharded by the record key); its later revision, its
code and every secondary index of the real tables agree with the rule here.

**Record index values** (``HoodieRecordIndexInfo``) locate a key's file group: with ``fileIdEncoding`` 0 the file id
is the UUID whose high and low 64 bits are ``fileIdHighBits`` and ``fileIdLowBits``, then ``-<fileIndex>`` (none
when ``fileIndex`` is -1); with 1 it is ``fileId`` as written. ``instantTime`` is the epoch milliseconds of the
instant time read in the writer's time zone (``hoodie.table.timeline.timezone``: ``LOCAL`` is the writer machine's).

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; 0.15.x, table version 6, has the hashed keys and record
index as here): ``HashID`` (``hash``, ``HASH_SEED``), ``ColumnIndexID``, ``PartitionIndexID``, ``FileIndexID``,
``HoodieMetadataPayload`` (``getColumnStatsIndexKey``, ``getPartitionStatsIndexKey``, ``getBloomFilterIndexKey``),
``SecondaryIndexKeyUtils`` (``constructSecondaryIndexKey``, ``escapeSpecialChars``, ``unescapeSpecialChars``),
``HoodieTableMetadataUtil`` (``mapRecordKeyToFileGroupIndex``, ``getSecondaryKeyToFileGroupMappingFunction``,
``getColumnStatsIndexPartitionIdentifier``, ``getLocationFromRecordIndexInfo``) and ``HoodieInstantTimeGenerator``.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from spec.errors import MetadataFormatError
from spec.metadata.partition_type import SECONDARY_INDEX, V1, V2, partition_type
from spec.timeline.instant import format_instant_time

# --8<-- [start:hash]
_M64 = (1 << 64) - 1
_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
HASH_SEED = 0xDABADABA - (1 << 32)
"""``HashID.HASH_SEED``: the Java int ``0xdabadaba``, negative, as the long seed it is widened to."""


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxh64(data: bytes, seed: int = 0) -> int:
    """The XXH64 hash of ``data`` (the algorithm of the xxHash specification, as lz4-java's ``XXHash64``)."""
    n, i, seed = len(data), 0, seed & _M64
    if n >= 32:
        acc = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
        while i + 32 <= n:
            for k in range(4):
                acc[k] = _round(acc[k], int.from_bytes(data[i:i + 8], "little"))
                i += 8
        h = (_rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)) & _M64
        for a in acc:
            h = ((h ^ _round(0, a)) * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, int.from_bytes(data[i:i + 8], "little")), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((int.from_bytes(data[i:i + 4], "little") * _P1) & _M64), 23) * _P2 + _P3) & _M64
        i += 4
    for b in data[i:]:
        h = (_rotl(h ^ ((b * _P5) & _M64), 11) * _P1) & _M64
    h = ((h ^ (h >> 33)) * _P2) & _M64
    h = ((h ^ (h >> 29)) * _P3) & _M64
    return h ^ (h >> 32)


def name_id(name: str) -> str:
    """``ColumnIndexID`` / ``PartitionIndexID``: Base64 of the 8 big-endian bytes of XXH64(UTF-8, ``HASH_SEED``)."""
    return base64.b64encode(xxh64(name.encode("utf-8"), HASH_SEED).to_bytes(8, "big")).decode("ascii")


def file_id_hash(file_name: str) -> str:
    """``FileIndexID``: Base64 of the MD5 digest of the file name's UTF-8 bytes."""
    return base64.b64encode(hashlib.md5(file_name.encode("utf-8")).digest()).decode("ascii")
# --8<-- [end:hash]


# --8<-- [start:keys]
NON_PARTITIONED_NAME = "."


def partition_identifier(partition_path: str) -> str:
    """The name a data partition is hashed by: its path, ``.`` for the non-partitioned table's one partition."""
    return partition_path or NON_PARTITIONED_NAME


def column_stats_key(column: str, partition_path: str, file_name: str) -> str:
    """A ``column_stats`` record's key: column, partition and file ids, concatenated."""
    return name_id(column) + name_id(partition_identifier(partition_path)) + file_id_hash(file_name)


def partition_stats_key(column: str, partition_path: str) -> str:
    """A ``partition_stats`` record's key: column and partition ids."""
    return name_id(column) + name_id(partition_identifier(partition_path))


def bloom_filter_key(partition_path: str, file_name: str) -> str:
    """A ``bloom_filters`` record's key: partition and file ids."""
    return name_id(partition_identifier(partition_path)) + file_id_hash(file_name)
# --8<-- [end:keys]


# --8<-- [start:secondary]
ESCAPE = "\\"
SEPARATOR = "$"
NULL_CHAR = "\0"


def escape(value: str | None) -> str:
    """``escapeSpecialChars``: ``\\``, ``$`` and NUL get a ``\\`` in front; None is a lone NUL."""
    if value is None:
        return NULL_CHAR
    return "".join(ESCAPE + c if c in (ESCAPE, SEPARATOR, NULL_CHAR) else c for c in value)


def unescape(text: str) -> str | None:
    """``unescapeSpecialChars``, the inverse of ``escape``: a lone NUL is None, ``\\x`` is ``x``."""
    if text == NULL_CHAR:
        return None
    out, pending = [], False
    for c in text:
        if pending or c != ESCAPE:
            out.append(c)
            pending = False
        else:
            pending = True
    return "".join(out)


def secondary_index_key(secondary_value: str | None, record_key: str) -> str:
    """``constructSecondaryIndexKey``: ``<escaped secondary value>$<escaped record key>``."""
    return escape(secondary_value) + SEPARATOR + escape(record_key)


def separator_position(key: str) -> int:
    """Where the first unescaped ``$`` of a secondary index key is; a key without one raises
    ``MetadataFormatError``."""
    pending = False
    for i, c in enumerate(key):
        if c == ESCAPE and not pending:
            pending = True
        elif c == SEPARATOR and not pending:
            return i
        else:
            pending = False
    raise MetadataFormatError(f"secondary index key {key!r} has no unescaped '$'",
                              hint="secondary index keys are <escaped value>$<escaped record key>")


def parse_secondary_index_key(key: str) -> tuple[str | None, str]:
    """The secondary value and the record key of a secondary index key (``getSecondaryKeyRecordKeyPair``)."""
    at = separator_position(key)
    record_key = unescape(key[at + 1:])
    if record_key is None:
        raise MetadataFormatError(f"secondary index key {key!r} has a null record key",
                                  hint="record keys are never null")
    return unescape(key[:at]), record_key
# --8<-- [end:secondary]


# --8<-- [start:file_group]
def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode``: ``31 * h + c`` over the UTF-16 code units, as a signed 32-bit int."""
    units = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_hash_map_order(keys: Sequence[str]) -> list[int]:
    """The positions of ``keys`` (distinct, in put order) in the iteration order of a ``java.util.HashMap``: by
    bucket — ``String.hashCode`` (``java_string_hash``) spread by its high half (``h ^ (h >>> 16)``), modulo the
    table size: 16, doubled while the map holds more than three quarters of it — then put order within a bucket
    (a resize splits a bucket keeping its order). Hudi serializes the HFile file info, the metadata records'
    ``filesystemMetadata`` maps and a merge handle's CDC records in this order."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(i: int) -> int:
        h = java_string_hash(keys[i]) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(range(len(keys)), key=lambda i: (bucket(i), i))


def file_group_for_key(key: str, file_groups: int) -> int:
    """``mapRecordKeyToFileGroupIndex``: the file group of ``key`` among ``file_groups``."""
    if file_groups <= 0:
        raise MetadataFormatError(f"a metadata partition has {file_groups} file groups", hint="it has at least one")
    return abs(abs(java_string_hash(key)) % file_groups)


def sharding_key(partition: str, key: str, index_version: str = V1) -> str:
    """The part of a record key of ``partition`` that picks its file group: the whole key, but for a ``V2``
    secondary index the escaped secondary value with its ``$``."""
    if partition_type(partition) is SECONDARY_INDEX and index_version == V2:
        return key[:separator_position(key) + 1]
    return key


def file_group_of(partition: str, key: str, file_groups: int, index_version: str = V1) -> int:
    """The file group a record of ``partition`` with ``key`` is written to (and looked up in)."""
    return file_group_for_key(sharding_key(partition, key, index_version), file_groups)
# --8<-- [end:file_group]


# --8<-- [start:record_index]
MISSING_FILE_INDEX = -1
"""``RECORD_INDEX_MISSING_FILEINDEX_FALLBACK``: a UUID file id without a ``-<index>`` suffix."""


@dataclass(frozen=True)
class RecordLocation:
    """Where the record index says a key is: data partition, file id, and the instant that wrote it."""

    partition_path: str
    file_id: str
    instant_time: str


def record_location(info: Mapping[str, Any], zone: tzinfo = UTC) -> RecordLocation:
    """``getLocationFromRecordIndexInfo`` of a ``HoodieRecordIndexInfo`` (the ``recordIndexMetadata`` field);
    ``zone`` is the time zone the writer's instant times are in."""
    encoding = info.get("fileIdEncoding", 0)
    if encoding == 0:
        high, low = info["fileIdHighBits"] & ((1 << 64) - 1), info["fileIdLowBits"] & ((1 << 64) - 1)
        file_id = str(uuid.UUID(int=(high << 64) | low))
        if info["fileIndex"] != MISSING_FILE_INDEX:
            file_id += f"-{info['fileIndex']}"
    elif encoding == 1:
        file_id = info["fileId"]
    else:
        raise MetadataFormatError(f"record index fileIdEncoding {encoding} is unknown",
                                  hint="0 (UUID in two longs) or 1 (the file id as a string)")
    millis = info["instantTime"]
    local = (datetime.fromtimestamp(millis // 1000, zone) + timedelta(milliseconds=millis % 1000)).replace(tzinfo=None)
    return RecordLocation(info["partitionName"], file_id, format_instant_time(local))
# --8<-- [end:record_index]
