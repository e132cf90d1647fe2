"""HFile (version 3), the base file and log-block format of Hudi's metadata table.

An HFile is a sequence of blocks followed by a fixed-size trailer. All integers are big-endian.

- **Block**: a 33-byte header — magic (8 bytes: ``DATABLK*`` data, ``IDXROOT2`` root index,
  ``IDXLEAF2`` leaf index, ``IDXINTE2`` intermediate index, ``METABLKc`` meta, ``FILEINF2`` file
  info), on-disk size without header (int32), uncompressed size without header (int32), offset of
  the previous block of the same type (int64, -1 for none), checksum type (1 byte: 0 none, 1 CRC32,
  2 CRC32C), bytes per checksum (int32), on-disk data size with header (int32) — then the payload,
  compressed with the trailer's codec (GZ or NONE as Hudi writes), then one 4-byte checksum per
  ``bytes per checksum`` bytes of header and payload (zeros under checksum type 0, which Hudi 1.1's
  own writer writes; CRC32C under type 2, which HBase's writer — Hudi 0.x and 1.0 — writes).
- **Data block**: key/values back to back: key length (int32), value length (int32), the key, the
  value, and a memstore timestamp (a Hadoop variable-length long, ``0x00`` as Hudi writes it). The
  key is HBase's: row length (int16), the row (Hudi's record key, UTF-8), family length (1 byte) and
  family, qualifier (the rest), timestamp (int64), key type (1 byte: 4 = Put). Keys are sorted by row.
- **Load-on-open section** (at the trailer's ``load_on_open_data_offset``): the root data index
  (per data block: offset int64, on-disk size int32, first key as a variable-length-int length and
  the key bytes), for deeper indexes the intermediate/leaf levels it points to, the root meta index
  (the same entries, keyed by meta block name), then the file info block: ``PBUF`` and a
  length-delimited protobuf ``InfoProto`` of (name, value) byte pairs (``hfile.LASTKEY``, Hudi's
  ``schema``, ``hfile.MAX_MEMSTORE_TS_KEY``...).
- **Trailer**: the last 4096 bytes: magic ``TRABLK"$``, a length-delimited protobuf
  ``FileTrailerProto`` (offsets, counts, index levels, comparator, codec), zero padding, and the
  version as 4 bytes: minor version (1 byte) and major version (3 bytes; must be 3).

Source (Apache Hudi hudi-io, the same reader in 0.15.x, 1.0.x and 1.1.x): ``HFileReaderImpl``,
``HFileTrailer``, ``HFileBlock``, ``HFileBlockType``, ``HFileDataBlock``, ``HFileRootIndexBlock``,
``HFileLeafIndexBlock``, ``HFileFileInfoBlock``, ``HFileCompressionCodec``, ``KeyValue`` and ``Key``.
"""

from __future__ import annotations

import functools
import itertools
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from spec.errors import HFileFormatError

TRAILER_SIZE = 4096
BLOCK_HEADER_SIZE = 33
PBUF_MAGIC = b"PBUF"
KEY_TYPE_PUT = 4
FILE_INFO_LAST_KEY = "hfile.LASTKEY"
FILE_INFO_SCHEMA = "schema"


# --8<-- [start:blocks]
class HFileBlockType(Enum):
    """The block types by magic (``HFileBlockType``)."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    TRAILER = b'TRABLK"$'


COMPRESSION_CODECS = ("LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD")
"""Compression codec by the ordinal the trailer stores (``HFileCompressionCodec``); Hudi writes GZ or NONE."""


@dataclass(frozen=True)
class BlockHeader:
    """The 33-byte header of a block."""

    block_type: HFileBlockType
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size(self) -> int:
        """The block's bytes on disk: header, payload and checksums."""
        return BLOCK_HEADER_SIZE + self.on_disk_size_without_header
# --8<-- [end:blocks]


def _int(data: bytes, at: int, size: int, what: str) -> int:
    if at < 0 or at + size > len(data):
        raise HFileFormatError(f"the HFile ends inside {what} (byte {at} of {len(data)})",
                               hint="the file is truncated or not an HFile")
    return int.from_bytes(data[at:at + size], "big", signed=True)


def parse_block_header(data: bytes, offset: int) -> BlockHeader:
    """The header of the block at ``offset``."""
    magic = data[offset:offset + 8]
    try:
        block_type = HFileBlockType(magic)
    except ValueError as err:
        raise HFileFormatError(f"no HFile block magic at byte {offset}: {magic!r}",
                               hint="a block index or the trailer points at the wrong offset") from err
    h = BlockHeader(block_type, _int(data, offset + 8, 4, "a block header"), _int(data, offset + 12, 4, "a header"),
                    _int(data, offset + 16, 8, "a header"), data[offset + 24], _int(data, offset + 25, 4, "a header"),
                    _int(data, offset + 29, 4, "a header"))
    if (h.on_disk_size_without_header < 0 or offset + h.on_disk_size > len(data)
            or not BLOCK_HEADER_SIZE <= h.on_disk_data_size_with_header <= h.on_disk_size):
        raise HFileFormatError(f"the {h.block_type.name} block at byte {offset} has impossible sizes",
                               hint="the file is truncated or damaged")
    return h


@functools.cache
def _crc32c_table() -> tuple[int, ...]:
    """The CRC-32C lookup table (reflected polynomial 0x82F63B78), made on the first checksum of that type."""
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as HBase's writer checksums blocks under checksum type 2."""
    table = _crc32c_table()
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


CHECKSUMS: Mapping[int, Callable[[bytes], int]] = {1: zlib.crc32, 2: crc32c}
"""Checksum functions by checksum type (0 is none: Hudi's own writer leaves the bytes zero)."""


def _checksums(header: BlockHeader, block: bytes) -> None:
    """Check the block's checksums: 4 bytes per ``bytes_per_checksum`` chunk of header and payload, whatever the
    type; zero under type 0 (none, as Hudi's own writer leaves them), CRC32 under 1, CRC32C under 2 (HBase's
    writer, Hudi 0.x and 1.0)."""
    n_sums = header.on_disk_size - header.on_disk_data_size_with_header
    data_end = header.on_disk_data_size_with_header
    chunks = range(0, data_end, max(1, header.bytes_per_checksum))
    if n_sums != 4 * len(chunks):
        raise HFileFormatError("a block's checksum bytes do not match its size", hint="the file is damaged")
    fn = CHECKSUMS.get(header.checksum_type)
    for k, start in enumerate(chunks):
        want = int.from_bytes(block[data_end + 4 * k:data_end + 4 * k + 4], "big")
        if (fn(block[start:min(start + header.bytes_per_checksum, data_end)]) if fn else 0) != want:
            raise HFileFormatError(f"checksum mismatch in a {header.block_type.name} block (type "
                                   f"{header.checksum_type})", hint="the file is damaged")


def _decompress(payload: bytes, codec: str, size: int) -> bytes:
    if codec == "NONE":
        out = payload
    elif codec == "GZ":
        try:
            out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload)
        except zlib.error as err:
            raise HFileFormatError(f"a GZ block does not decompress: {err}", hint="the file is damaged") from err
    else:
        raise HFileFormatError(f"HFile compression {codec} is not specified here",
                               hint="Hudi writes its metadata table's HFiles with GZ or NONE")
    if len(out) != size:
        raise HFileFormatError(f"a block decompresses to {len(out)} bytes, its header says {size}",
                               hint="the file is damaged")
    return out


def read_block(data: bytes, offset: int, codec: str, expect: tuple[HFileBlockType, ...]) -> tuple[BlockHeader, bytes]:
    """The header and uncompressed payload of the block at ``offset``, which must be of a type in ``expect``."""
    h = parse_block_header(data, offset)
    if h.block_type not in expect:
        raise HFileFormatError(f"expected a {' or '.join(t.name for t in expect)} block at byte {offset}, "
                               f"found {h.block_type.name}", hint="the trailer or an index points at the wrong block")
    block = data[offset:offset + h.on_disk_size]
    _checksums(h, block)
    payload = block[BLOCK_HEADER_SIZE:h.on_disk_data_size_with_header]
    return h, _decompress(payload, codec, h.uncompressed_size_without_header)


# --8<-- [start:numbers]
def read_vlong(data: bytes, at: int) -> tuple[int, int]:
    """A Hadoop ``WritableUtils`` variable-length long at ``at``: (value, bytes used). One byte from -112 to
    127 is the value; otherwise the first byte gives the sign and the count of big-endian bytes that follow."""
    first = _int(data, at, 1, "a variable-length number")
    if first >= -112:
        return first, 1
    negative = first < -120
    n = (-119 - first) if negative else (-111 - first)
    value = int.from_bytes(data[at + 1:at + n], "big") if n > 1 else 0
    if at + n > len(data):
        raise HFileFormatError("the HFile ends inside a variable-length number", hint="the file is truncated")
    return (~value if negative else value), n


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    """A protobuf base-128 varint at ``at``: (value, offset after it)."""
    value = shift = 0
    while True:
        if at >= len(data):
            raise HFileFormatError("a protobuf varint runs past its data", hint="the file is damaged")
        b = data[at]
        value |= (b & 0x7F) << shift
        at += 1
        if not b & 0x80:
            return value, at
        shift += 7


def parse_protobuf(data: bytes) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of a protobuf message: varints as ints, length-delimited fields as bytes."""
    fields: list[tuple[int, int | bytes]] = []
    at = 0
    while at < len(data):
        tag, at = read_varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = read_varint(data, at)
            fields.append((number, value))
        elif wire == 2:
            size, at = read_varint(data, at)
            if at + size > len(data):
                raise HFileFormatError("a protobuf field runs past its message", hint="the file is damaged")
            fields.append((number, data[at:at + size]))
            at += size
        else:
            raise HFileFormatError(f"protobuf wire type {wire} is not used by HFile metadata",
                                   hint="the file is damaged")
    return fields
# --8<-- [end:numbers]


# --8<-- [start:trailer]
TRAILER_FIELDS = {
    1: "file_info_offset", 2: "load_on_open_data_offset", 3: "uncompressed_data_index_size",
    4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count", 7: "entry_count",
    8: "num_data_index_levels", 9: "first_data_block_offset", 10: "last_data_block_offset",
    11: "comparator_class_name", 12: "compression_codec", 13: "encryption_key",
}
"""``FileTrailerProto`` field numbers."""


@dataclass(frozen=True)
class HFileTrailer:
    """The trailer: where the load-on-open section is, how many entries and blocks, the codec and version."""

    major_version: int
    minor_version: int
    file_info_offset: int = 0
    load_on_open_data_offset: int = 0
    uncompressed_data_index_size: int = 0
    total_uncompressed_bytes: int = 0
    data_index_count: int = 0
    meta_index_count: int = 0
    entry_count: int = 0
    num_data_index_levels: int = 1
    first_data_block_offset: int = 0
    last_data_block_offset: int = 0
    comparator_class_name: str = ""
    compression_codec: str = "NONE"
    encryption_key: bytes = b""
    present: frozenset[int] = frozenset()
    """The field numbers the trailer's protobuf holds (a writer serializes exactly these, in number order)."""


def parse_trailer(data: bytes) -> HFileTrailer:
    """The trailer of an HFile's bytes; HFileFormatError unless it is an HFile of major version 3."""
    if len(data) < TRAILER_SIZE or data[-TRAILER_SIZE:-TRAILER_SIZE + 8] != HFileBlockType.TRAILER.value:
        raise HFileFormatError("not an HFile: no trailer magic 4096 bytes before the end",
                               hint="metadata table base files and HFILE_DATA_BLOCK contents are HFiles")
    t = data[-TRAILER_SIZE:]
    minor, major = t[-4], int.from_bytes(t[-3:], "big")
    if major != 3:
        raise HFileFormatError(f"HFile version {major}.{minor} is not specified here", hint="Hudi 1.x writes version 3")
    size, at = read_varint(t, 8)
    fields = parse_protobuf(t[at:at + size])
    values: dict[str, object] = {"present": frozenset(n for n, _ in fields)}
    for number, value in fields:
        name = TRAILER_FIELDS.get(number)
        if name == "comparator_class_name" and isinstance(value, bytes):
            values[name] = value.decode()
        elif name == "compression_codec" and isinstance(value, int):
            values[name] = COMPRESSION_CODECS[value] if value < len(COMPRESSION_CODECS) else f"#{value}"
        elif name:
            values[name] = value
    return HFileTrailer(major, minor, **values)  # type: ignore[arg-type]
# --8<-- [end:trailer]


# --8<-- [start:keyvalue]
@dataclass(frozen=True)
class KeyValue:
    """One entry: the HBase key's parts and the value. Hudi's key is the row (the record key)."""

    row: bytes
    value: bytes
    family: bytes = b""
    qualifier: bytes = b""
    timestamp: int = 0x7FFFFFFFFFFFFFFF
    key_type: int = KEY_TYPE_PUT
    memstore_ts: int = 0

    @property
    def key(self) -> str:
        """The row as text (Hudi's record key)."""
        return self.row.decode()


def parse_key(key: bytes) -> tuple[bytes, bytes, bytes, int, int]:
    """An HBase key: (row, family, qualifier, timestamp, key type)."""
    row_len = _int(key, 0, 2, "a key")
    fam_at = 2 + row_len
    fam_len = _int(key, fam_at, 1, "a key") & 0xFF
    qual_at = fam_at + 1 + fam_len
    if qual_at + 9 > len(key):
        raise HFileFormatError("an HFile key is shorter than its row and family", hint="the file is damaged")
    return (key[2:fam_at], key[fam_at + 1:qual_at], key[qual_at:-9], _int(key, len(key) - 9, 8, "a key"),
            key[-1])


def key_row(key: bytes) -> bytes:
    """The row of a key as an index entry or the file info's last key holds it: row length (int16), row, and
    possibly the rest of an HBase key."""
    row_len = _int(key, 0, 2, "a key")
    if 2 + row_len > len(key):
        raise HFileFormatError("an index key is shorter than its row", hint="the file is damaged")
    return key[2:2 + row_len]


def parse_data_block(payload: bytes) -> list[KeyValue]:
    """The key/values of a data block's uncompressed payload."""
    out: list[KeyValue] = []
    at = 0
    while at < len(payload):
        key_len, val_len = _int(payload, at, 4, "a key/value"), _int(payload, at + 4, 4, "a key/value")
        key_at = at + 8
        val_at = key_at + key_len
        if key_len < 12 or val_len < 0 or val_at + val_len >= len(payload) + (0 if val_len else 1):
            raise HFileFormatError(f"a key/value at byte {at} of a data block has impossible lengths",
                                   hint="the file is damaged")
        row, family, qualifier, ts, key_type = parse_key(payload[key_at:val_at])
        mvcc, used = read_vlong(payload, val_at + val_len)
        out.append(KeyValue(row, payload[val_at:val_at + val_len], family, qualifier, ts, key_type, mvcc))
        at = val_at + val_len + used
    return out
# --8<-- [end:keyvalue]


@dataclass(frozen=True)
class BlockIndexEntry:
    """A block index entry: the block's offset and on-disk size, and its first key (the row for data blocks,
    the name for meta blocks)."""

    offset: int
    size: int
    first_key: bytes


def parse_root_index(payload: bytes, count: int, full_keys: bool) -> tuple[list[BlockIndexEntry], int]:
    """``count`` root index entries (offset int64, size int32, vint-length key); with ``full_keys`` the key is a
    data key (row length and row) and its row is kept. Returns the entries and the bytes they took."""
    entries = []
    at = 0
    for _ in range(count):
        offset, size = _int(payload, at, 8, "an index entry"), _int(payload, at + 8, 4, "an index entry")
        key_len, used = read_vlong(payload, at + 12)
        key = payload[at + 12 + used:at + 12 + used + key_len]
        at += 12 + used + key_len
        entries.append(BlockIndexEntry(offset, size, key_row(key) if full_keys else key))
    return entries, at


def parse_nonroot_index(payload: bytes) -> list[BlockIndexEntry]:
    """A leaf or intermediate index block: entry count, count+1 relative offsets (int32), then per entry the
    block's offset (int64), size (int32) and first key (to the next relative offset)."""
    n = _int(payload, 0, 4, "an index block")
    rel = [_int(payload, 4 + 4 * i, 4, "an index block") for i in range(n + 1)]
    base = 4 + 4 * (n + 1)
    out = []
    for i in range(n):
        at = base + rel[i]
        key = payload[at + 12:base + rel[i + 1]]
        out.append(BlockIndexEntry(_int(payload, at, 8, "an index entry"), _int(payload, at + 8, 4, "an index entry"),
                                   key_row(key)))
    return out


def parse_file_info(payload: bytes) -> dict[str, bytes]:
    """The file info block: ``PBUF`` then a length-delimited ``InfoProto`` of ``BytesBytesPair`` entries."""
    if payload[:4] != PBUF_MAGIC:
        raise HFileFormatError("the file info block does not start with PBUF", hint="the file is damaged")
    size, at = read_varint(payload, 4)
    info: dict[str, bytes] = {}
    for number, pair in parse_protobuf(payload[at:at + size]):
        if number == 1 and isinstance(pair, bytes):
            kv = dict(parse_protobuf(pair))
            name, value = kv.get(1, b""), kv.get(2, b"")
            if isinstance(name, bytes) and isinstance(value, bytes):
                info[name.decode()] = value
    return info


# --8<-- [start:hfile]
@dataclass(frozen=True)
class HFile:
    """A parsed HFile: trailer, data and meta indexes, file info and every key/value in key order."""

    trailer: HFileTrailer
    data_index: tuple[BlockIndexEntry, ...]
    meta_index: tuple[BlockIndexEntry, ...]
    file_info: Mapping[str, bytes]
    entries: tuple[KeyValue, ...]
    block_counts: tuple[int, ...] = ()
    """Entries per data block, in file order."""
    meta_blocks: tuple[bytes, ...] = ()
    """The uncompressed payload of each meta block, in meta index order (Hudi's bloom filter)."""
    checksum_type: int = 0
    bytes_per_checksum: int = 16384

    def get(self, key: str) -> KeyValue | None:
        """The entry whose row is ``key``, or None."""
        want = key.encode()
        return next((e for e in self.entries if e.row == want), None)


def parse_hfile(data: bytes) -> HFile:
    """Parse every block of an HFile reachable from its trailer, checking the index against the blocks, the key
    count against the trailer, the order of the keys and the last key against the file info."""
    t = parse_trailer(data)
    codec = t.compression_codec
    at = t.load_on_open_data_offset
    h, payload = read_block(data, at, codec, (HFileBlockType.ROOT_INDEX,))
    data_index, _ = parse_root_index(payload, t.data_index_count, full_keys=t.num_data_index_levels == 1)
    at += h.on_disk_size
    for _level in range(t.num_data_index_levels - 1):  # multi-level: follow the index down to the leaves
        data_index = [e for entry in data_index for e in parse_nonroot_index(
            read_block(data, entry.offset, codec, (HFileBlockType.INTERMEDIATE_INDEX, HFileBlockType.LEAF_INDEX))[1])]
    h, payload = read_block(data, at, codec, (HFileBlockType.ROOT_INDEX,))
    meta_index, _ = parse_root_index(payload, t.meta_index_count, full_keys=False)
    at += h.on_disk_size
    _, payload = read_block(data, at, codec, (HFileBlockType.FILE_INFO,))
    info = parse_file_info(payload)
    entries: list[KeyValue] = []
    counts: list[int] = []
    headers: list[BlockHeader] = []
    for entry in data_index:
        bh, block = read_block(data, entry.offset, codec, (HFileBlockType.DATA,))
        headers.append(bh)
        if bh.on_disk_size != entry.size:
            raise HFileFormatError(f"the data index says {entry.size} bytes at {entry.offset}, the block has "
                                   f"{bh.on_disk_size}", hint="the file is damaged")
        kvs = parse_data_block(block)
        if not kvs or kvs[0].row != entry.first_key:
            raise HFileFormatError(f"the data block at {entry.offset} does not start with its index key",
                                   hint="the file is damaged")
        entries.extend(kvs)
        counts.append(len(kvs))
    metas = tuple(read_block(data, m.offset, codec, (HFileBlockType.META,))[1] for m in meta_index)
    if len(entries) != t.entry_count:
        raise HFileFormatError(f"the HFile holds {len(entries)} entries, its trailer says {t.entry_count}",
                               hint="the file is damaged")
    if any(a.row > b.row for a, b in itertools.pairwise(entries)):
        raise HFileFormatError("the HFile's keys are not in ascending order", hint="the file is damaged")
    last = info.get(FILE_INFO_LAST_KEY)
    if entries and last is not None and key_row(last) != entries[-1].row:
        raise HFileFormatError("the file info's last key is not the last entry's key", hint="the file is damaged")
    first = headers[0] if headers else parse_block_header(data, t.load_on_open_data_offset)
    return HFile(t, tuple(data_index), tuple(meta_index), info, tuple(entries), tuple(counts), metas,
                 first.checksum_type, first.bytes_per_checksum)
# --8<-- [end:hfile]
