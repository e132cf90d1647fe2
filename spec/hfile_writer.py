"""Writing HFiles: the bytes of an HFile from its key/values, meta blocks, file info and trailer fields.

The inverse of ``spec.hfile.parse_hfile`` for the single-level HFiles Hudi writes for its metadata
table: data blocks in key order, then meta blocks, then the load-on-open section (root data index,
root meta index, file info) and the 4096-byte trailer. Each block is its 33-byte header (its
previous block is the last one of the same type, -1 for the first), its payload compressed — GZ as
Hudi writes it: a 10-byte gzip header with no name, time or OS (``1f8b0800000000000000``), raw
deflate at level 6, then CRC32 and length, little-endian — and 4 checksum bytes per
``bytes_per_checksum`` bytes of header and payload (zero under checksum type 0, CRC32 under 1,
CRC32C under 2). Index
entries point at the blocks as laid out; the trailer's offsets and counts are those of the layout.

Source (Apache Hudi hudi-io and hudi-hadoop-common, the same layout in 0.15.x, 1.0.x and 1.1.x):
``HFileWriterImpl``, ``HFileBlock``, ``HFileRootIndexBlock``, ``HFileFileInfoBlock``,
``HFileTrailer``, ``HFileCompressionCodec`` and ``HoodieAvroHFileWriter``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence

from spec.errors import HFileFormatError
from spec.hfile import (
    BLOCK_HEADER_SIZE,
    CHECKSUMS,
    COMPRESSION_CODECS,
    PBUF_MAGIC,
    TRAILER_SIZE,
    BlockType,
    HFile,
    HFileTrailer,
    KeyValue,
)

GZIP_HEADER = bytes.fromhex("1f8b0800000000000000")
GZIP_LEVEL = 6
HBASE_MINOR_VERSION = 3
"""Trailer minor version of HFiles written through HBase's writer (Hudi 0.x and 1.0); Hudi 1.1's own writer
writes minor version 0. They differ in two things: HBase's index keys are whole HBase keys and its root
indexes chain their previous-block offsets; Hudi's index keys are the row (length and bytes) and each
load-on-open block has no previous block (-1)."""


# --8<-- [start:numbers]
def write_vlong(value: int) -> bytes:
    """A Hadoop ``WritableUtils`` variable-length long (the inverse of ``spec.hfile.read_vlong``)."""
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


def encode_block(block_type: BlockType, payload: bytes, prev_offset: int, codec: str, checksum_type: int,
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
    head = BlockType.TRAILER.value + write_varint(len(proto)) + proto
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
    prev: dict[BlockType, int] = {}

    def put(block_type: BlockType, payload: bytes, chained: bool = True) -> tuple[int, int]:
        at = len(out)
        out.extend(encode_block(block_type, payload, prev.get(block_type, -1) if chained else -1, codec, ck, bpc))
        prev[block_type] = at
        return at, len(out) - at

    hbase = hf.trailer.minor_version >= HBASE_MINOR_VERSION
    index, start = [], 0
    for count in hf.block_counts:
        block = hf.entries[start:start + count]
        at, size = put(BlockType.DATA, encode_data_block(block))
        first = encode_key(block[0]) if hbase else struct.pack(">h", len(block[0].row)) + block[0].row
        index.append((at, size, first))
        start += count
    metas = [(*put(BlockType.META, payload), m.first_key) for payload, m in zip(hf.meta_blocks, hf.meta_index,
                                                                                strict=True)]
    load_on_open = len(out)
    put(BlockType.ROOT_INDEX, encode_root_index(index), chained=hbase)
    put(BlockType.ROOT_INDEX, encode_root_index(metas), chained=hbase)
    file_info_at, _ = put(BlockType.FILE_INFO, encode_file_info(hf.file_info.items()), chained=False)
    t = hf.trailer
    if (t.load_on_open_data_offset, t.file_info_offset, t.data_index_count, t.meta_index_count) != (
            load_on_open, file_info_at, len(index), len(metas)):
        raise HFileFormatError("the trailer's offsets or counts are not those of the layout",
                               hint="build the trailer from the blocks as laid out")
    return bytes(out) + encode_trailer(t)
# --8<-- [end:hfile]
