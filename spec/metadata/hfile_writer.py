"""Writing HFiles: the bytes of an HFile from its key/values, meta blocks, file info and trailer fields.

The inverse of ``spec.metadata.hfile.parse_hfile`` for the single-level HFiles Hudi writes for its metadata
table: data blocks in key order, then meta blocks, then the load-on-open section (root data index,
root meta index, file info) and the 4096-byte trailer. Each block is its 33-byte header (its
previous block is the last one of the same type, -1 for the first), its payload compressed — GZ as
Hudi writes it: a 10-byte gzip header with no name and no time (``1f8b0800000000000000``), raw
deflate at level 6, then CRC32 and length, little-endian — and 4 checksum bytes per
``bytes_per_checksum`` bytes of header and payload (zero under checksum type 0, CRC32 under 1,
CRC32C under 2). Index
entries point at the blocks as laid out; the trailer's offsets and counts are those of the layout.
``build_hfile`` lays a new HFile out from key/values alone, as Hudi 1.1's own writer does (file info in
``java.util.HashMap`` order, ``spec.metadata.index_keys.java_hash_map_order``).

Source (Apache Hudi hudi-io and hudi-hadoop-common, the same layout in 0.15.x, 1.0.x and 1.1.x):
``HFileWriterImpl``, ``HFileBlock``, ``HFileRootIndexBlock``, ``HFileFileInfoBlock``,
``HFileTrailer``, ``HFileCompressionCodec`` and ``HoodieAvroHFileWriter``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence

from spec.errors import HFileFormatError
from spec.metadata.hfile import (
    BLOCK_HEADER_SIZE,
    CHECKSUMS,
    COMPRESSION_CODECS,
    PBUF_MAGIC,
    TRAILER_SIZE,
    BlockIndexEntry,
    HFile,
    HFileBlockType,
    HFileTrailer,
    KeyValue,
)
from spec.metadata.index_keys import java_hash_map_order

GZIP_HEADER = bytes.fromhex("1f8b0800000000000000")
"""The gzip header of a GZ block. Hudi compresses through ``java.util.zip.GZIPOutputStream`` (hudi-io's
``HoodieAirliftGzipCompressor``), whose last header byte, the OS, is the JDK's: 0 before JDK 16, 255 (unknown)
from JDK 16 (JDK-8244706). So Apache Hudi on Java 8 or 11 writes this header — as in every real table of the test
corpus — and on Java 17 ends it in ``ff``; readers ignore the byte. This writer writes 0."""
GZIP_LEVEL = 6
HBASE_MINOR_VERSION = 3
"""Trailer minor version of HFiles written through HBase's writer (Hudi 0.x and 1.0); Hudi 1.1's own writer
writes minor version 0. They differ in two things: HBase's index keys are whole HBase keys and its root
indexes chain their previous-block offsets; Hudi's index keys are the row (length and bytes) and each
load-on-open block has no previous block (-1)."""


# --8<-- [start:numbers]
def write_vlong(value: int) -> bytes:
    """A Hadoop ``WritableUtils`` variable-length long (the inverse of ``spec.metadata.hfile.read_vlong``)."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    first = -112
    if value < 0:
        value = ~value
        first = -120
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return struct.pack(">b", first - len(body)) + body


def write_varint(value: int) -> bytes:
    """A protobuf base-128 varint."""
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def write_protobuf(fields: Iterable[tuple[int, int | bytes]]) -> bytes:
    """A protobuf message of (field number, value): ints as varints, bytes length-delimited."""
    out = bytearray()
    for number, value in fields:
        if isinstance(value, bytes):
            out += write_varint(number << 3 | 2) + write_varint(len(value)) + value
        else:
            out += write_varint(number << 3) + write_varint(value)
    return bytes(out)
# --8<-- [end:numbers]


# --8<-- [start:blocks]
def compress(payload: bytes, codec: str) -> bytes:
    """A block payload compressed as Hudi's HFiles are: GZ (see the module docstring) or NONE."""
    if codec == "NONE":
        return payload
    if codec != "GZ":
        raise HFileFormatError(f"HFile compression {codec} is not specified here", hint="use GZ or NONE")
    deflate = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflate.compress(payload) + deflate.flush()
    return GZIP_HEADER + body + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


def encode_block(block_type: HFileBlockType, payload: bytes, prev_offset: int, codec: str, checksum_type: int,
                 bytes_per_checksum: int) -> bytes:
    """One block: header, compressed payload, checksums."""
    body = compress(payload, codec)
    data_size = BLOCK_HEADER_SIZE + len(body)
    n_sums = -(-data_size // bytes_per_checksum)
    header = block_type.value + struct.pack(">iiqBii", len(body) + 4 * n_sums, len(payload), prev_offset,
                                            checksum_type, bytes_per_checksum, data_size)
    block = header + body
    fn = CHECKSUMS.get(checksum_type)
    sums = b"".join(struct.pack(">I", fn(block[i:i + bytes_per_checksum]) if fn else 0)
                    for i in range(0, data_size, bytes_per_checksum))
    return block + sums


def encode_key(kv: KeyValue) -> bytes:
    """The HBase key of an entry: row length and row, family length and family, qualifier, timestamp, type."""
    return (struct.pack(">h", len(kv.row)) + kv.row + struct.pack(">B", len(kv.family)) + kv.family + kv.qualifier
            + struct.pack(">qB", kv.timestamp, kv.key_type))


def encode_data_block(entries: Sequence[KeyValue]) -> bytes:
    """A data block payload: per entry key length, value length, key, value, memstore timestamp."""
    out = bytearray()
    for kv in entries:
        key = encode_key(kv)
        out += struct.pack(">ii", len(key), len(kv.value)) + key + kv.value + write_vlong(kv.memstore_ts)
    return bytes(out)


def encode_root_index(entries: Iterable[tuple[int, int, bytes]]) -> bytes:
    """A root index payload: per block its offset, on-disk size and key (vlong length, bytes)."""
    return b"".join(struct.pack(">qi", off, size) + write_vlong(len(key)) + key for off, size, key in entries)


def encode_file_info(info: Iterable[tuple[str, bytes]]) -> bytes:
    """The file info payload: ``PBUF``, then the length-delimited ``InfoProto`` of (name, value) pairs."""
    proto = write_protobuf((1, write_protobuf([(1, name.encode()), (2, value)])) for name, value in info)
    return PBUF_MAGIC + write_varint(len(proto)) + proto
# --8<-- [end:blocks]


# --8<-- [start:trailer]
def encode_trailer(t: HFileTrailer) -> bytes:
    """The 4096-byte trailer: magic, the length-delimited trailer protobuf (the fields ``t.present`` names, in
    number order), zero padding, minor version (1 byte) and major version (3 bytes)."""
    codec = COMPRESSION_CODECS.index(t.compression_codec)
    values: dict[int, int | bytes] = {
        1: t.file_info_offset, 2: t.load_on_open_data_offset, 3: t.uncompressed_data_index_size,
        4: t.total_uncompressed_bytes, 5: t.data_index_count, 6: t.meta_index_count, 7: t.entry_count,
        8: t.num_data_index_levels, 9: t.first_data_block_offset, 10: t.last_data_block_offset,
        11: t.comparator_class_name.encode(), 12: codec, 13: t.encryption_key}
    proto = write_protobuf((n, values[n]) for n in sorted(t.present))
    head = HFileBlockType.TRAILER.value + write_varint(len(proto)) + proto
    if len(head) > TRAILER_SIZE - 4:
        raise HFileFormatError("the trailer protobuf does not fit in 4096 bytes", hint="shorten the comparator name")
    return head + bytes(TRAILER_SIZE - 4 - len(head)) + bytes([t.minor_version]) + t.major_version.to_bytes(3, "big")
# --8<-- [end:trailer]


# --8<-- [start:hfile]
def format_hfile(hf: HFile) -> bytes:
    """The bytes of ``hf`` laid out as Hudi writes it. The index entries, the file info's last key and the
    trailer's offsets must be those of this layout: a parsed HFile re-encodes to its own bytes."""
    if hf.trailer.num_data_index_levels != 1:
        raise HFileFormatError("only single-level data indexes are written", hint="Hudi writes one level")
    codec, ck, bpc = hf.trailer.compression_codec, hf.checksum_type, hf.bytes_per_checksum
    out = bytearray()
    prev: dict[HFileBlockType, int] = {}

    def put(block_type: HFileBlockType, payload: bytes, chained: bool = True) -> tuple[int, int]:
        at = len(out)
        out.extend(encode_block(block_type, payload, prev.get(block_type, -1) if chained else -1, codec, ck, bpc))
        prev[block_type] = at
        return at, len(out) - at

    hbase = hf.trailer.minor_version >= HBASE_MINOR_VERSION
    index, start = [], 0
    for count in hf.block_counts:
        block = hf.entries[start:start + count]
        at, size = put(HFileBlockType.DATA, encode_data_block(block))
        first = encode_key(block[0]) if hbase else struct.pack(">h", len(block[0].row)) + block[0].row
        index.append((at, size, first))
        start += count
    metas = [(*put(HFileBlockType.META, payload), m.first_key) for payload, m in zip(hf.meta_blocks, hf.meta_index,
                                                                                strict=True)]
    load_on_open = len(out)
    put(HFileBlockType.ROOT_INDEX, encode_root_index(index), chained=hbase)
    put(HFileBlockType.ROOT_INDEX, encode_root_index(metas), chained=hbase)
    file_info_at, _ = put(HFileBlockType.FILE_INFO, encode_file_info(hf.file_info.items()), chained=False)
    t = hf.trailer
    if (t.load_on_open_data_offset, t.file_info_offset, t.data_index_count, t.meta_index_count) != (
            load_on_open, file_info_at, len(index), len(metas)):
        raise HFileFormatError("the trailer's offsets or counts are not those of the layout",
                               hint="build the trailer from the blocks as laid out")
    return bytes(out) + encode_trailer(t)
# --8<-- [end:hfile]


# --8<-- [start:build]
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
HUDI_TRAILER_FIELDS = frozenset({1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12})
"""The trailer fields Hudi 1.1's own writer serializes (no total uncompressed bytes, no encryption key)."""
DEFAULT_BLOCK_SIZE = 1024 * 1024
"""Hudi's HFile block size: a data block is closed once it holds at least this many uncompressed bytes."""


def build_hfile(entries: Sequence[KeyValue], user_info: Sequence[tuple[str, bytes]] = (),
                meta_blocks: Sequence[tuple[bytes, bytes]] = (), create_time_ms: int = 0,
                block_size: int = DEFAULT_BLOCK_SIZE) -> bytes:
    """An HFile as Hudi 1.1's writer (``HFileWriterImpl``) lays one out: the entries (sorted by row) in GZ data
    blocks of about ``block_size`` uncompressed bytes, the named meta blocks, a root data index keyed by each
    block's first row, the file info — ``user_info`` (e.g. ``schema``) then ``hfile.LASTKEY``,
    ``hfile.AVG_KEY_LEN`` / ``hfile.AVG_VALUE_LEN`` (integer means of the row and value lengths),
    ``KEY_VALUE_VERSION`` 1, ``MAX_MEMSTORE_TS_KEY`` 0 and ``hfile.CREATE_TIME_TS``, in ``HashMap`` order — and a
    minor-version-0 trailer whose ``uncompressed_data_index_size`` is the data blocks' uncompressed size (as
    Hudi 1.1 writes it)."""
    ordered = sorted(entries, key=lambda e: e.row)
    counts: list[int] = []
    size = 0
    for e in ordered:
        if not counts or size >= block_size:
            counts.append(0)
            size = 0
        counts[-1] += 1
        size += 8 + len(encode_key(e)) + len(e.value) + 1
    codec, ck, bpc = "GZ", 0, 16384
    at, start, index, data_bytes = 0, 0, [], 0
    for count in counts:
        payload = encode_data_block(ordered[start:start + count])
        data_bytes += len(payload)
        block = encode_block(HFileBlockType.DATA, payload, -1, codec, ck, bpc)
        index.append((at, len(block), struct.pack(">h", len(ordered[start].row)) + ordered[start].row))
        at += len(block)
        start += count
    metas = []
    for name, payload in meta_blocks:
        block = encode_block(HFileBlockType.META, payload, -1, codec, ck, bpc)
        metas.append((at, len(block), name))
        at += len(block)
    load_on_open = at
    at += len(encode_block(HFileBlockType.ROOT_INDEX, encode_root_index(index), -1, codec, ck, bpc))
    at += len(encode_block(HFileBlockType.ROOT_INDEX, encode_root_index(metas), -1, codec, ck, bpc))
    n = len(ordered)
    last = ordered[-1].row if ordered else b""
    auto = [("hfile.LASTKEY", struct.pack(">h", len(last)) + last if ordered else b""),
            ("hfile.AVG_KEY_LEN", struct.pack(">i", sum(len(e.row) for e in ordered) // n if n else 0)),
            ("hfile.AVG_VALUE_LEN", struct.pack(">i", sum(len(e.value) for e in ordered) // n if n else 0)),
            ("KEY_VALUE_VERSION", struct.pack(">i", 1)), ("MAX_MEMSTORE_TS_KEY", struct.pack(">q", 0)),
            ("hfile.CREATE_TIME_TS", struct.pack(">q", create_time_ms))]
    info = dict([*user_info, *auto])
    names = list(info)
    trailer = HFileTrailer(3, 0, file_info_offset=at, load_on_open_data_offset=load_on_open,
                           uncompressed_data_index_size=data_bytes, data_index_count=len(index),
                           meta_index_count=len(metas), entry_count=n, num_data_index_levels=1,
                           comparator_class_name=HUDI_COMPARATOR, compression_codec=codec,
                           present=HUDI_TRAILER_FIELDS)
    hf = HFile(trailer, tuple(BlockIndexEntry(o, s, k) for o, s, k in index),
               tuple(BlockIndexEntry(o, s, k) for o, s, k in metas),
               {names[i]: info[names[i]] for i in java_hash_map_order(names)}, tuple(ordered), tuple(counts),
               tuple(p for _, p in meta_blocks), ck, bpc)
    return format_hfile(hf)
# --8<-- [end:build]
