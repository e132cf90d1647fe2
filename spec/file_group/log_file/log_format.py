"""The log format: how blocks are framed in a log file, and how each block's content is coded.

A log file is a concatenation of blocks, with no file header or footer. All integers are
big-endian. The framing is the same in table versions 6 and 8; only the header keys a
writer may use differ (ordinals 7 and 8 exist since v8, and a reader that does not know an
ordinal fails, so v6 tables never carry them).

Hudi's website specification is wrong about this layout in four places (see the spec page);
the layout here was checked byte for byte on real files and re-encodes them exactly.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieLogFormat``
(``MAGIC``), ``HoodieLogFormatWriter.appendBlocks``, ``HoodieLogFileReader.readBlock`` and
``HoodieLogBlock`` (``HeaderMetadataType``, ``getLogMetadataBytes``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

from spec.errors import CorruptBlock, UnsupportedBlockContent

if TYPE_CHECKING:
    from spec.file_group.log_file.corrupt_block import CorruptRegion
    from spec.storage.hoodie_storage import Storage

# --8<-- [start:enums]
MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
"""Current ``HoodieLogFormatVersion`` (0 was a legacy layout without header, footer and lengths)."""
LOG_FORMAT_FEATURES: Mapping[int, frozenset[str]] = {
    0: frozenset({"magic", "content", "content length", "ordinal"}),
    1: frozenset({"magic", "content", "content length", "ordinal", "header", "footer", "block length"}),
}
"""``HoodieLogFormatVersion``'s feature flags (``hasMagicHeader``, ``hasContent``, ``hasContentLength``,
``hasOrdinal``, ``hasHeader``, ``hasFooter``, ``hasLogBlockLength``) per version. Version 0 predates Hudi 0.5: no
table of version 6, 8 or 9 has such a block, and this reader reports one as a corrupt region."""


class BlockType(IntEnum):
    """``HoodieLogBlockType``: the on-disk ordinal of each block type."""

    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2  # never written; what a reader reports for a broken region
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6


class HeaderKey(IntEnum):
    """``HeaderMetadataType``: header map keys by ordinal (an unknown ordinal makes Hudi's reader fail)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


HEADER_KEY_SINCE_TABLE_VERSION: Mapping[HeaderKey, int] = {
    HeaderKey.INSTANT_TIME: 1, HeaderKey.TARGET_INSTANT_TIME: 1, HeaderKey.SCHEMA: 1,
    HeaderKey.COMMAND_BLOCK_TYPE: 1, HeaderKey.COMPACTED_BLOCK_TIMES: 5, HeaderKey.RECORD_POSITIONS: 6,
    HeaderKey.BLOCK_IDENTIFIER: 6, HeaderKey.IS_PARTIAL: 8, HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS: 8,
}
"""The table version each header key exists since: never write a key newer than the table."""


class CommandType(IntEnum):
    """``HoodieCommandBlockTypeEnum``: the only command is a rollback."""

    ROLLBACK_BLOCK = 0


DATA_BLOCK_VERSION = 3
"""Version of the Avro data block and delete block content layouts (1 and 2 used Java serialization)."""


def content_preamble(content: bytes, what: str) -> int:
    """Avro and delete block content start ``int version, int n``: check the version (3; 1 and 2
    used Java serialization), return ``n`` (the record count, or the length of the record list)."""
    if len(content) < 8:
        raise CorruptBlock(f"{what} content is shorter than its 8-byte preamble")
    version, n = struct.unpack_from(">ii", content, 0)
    if version != DATA_BLOCK_VERSION:
        raise UnsupportedBlockContent(f"{what} version {version} is not supported",
                                      hint="only version 3 (Avro, Hudi 0.7 and later) is defined here")
    return int(n)
# --8<-- [end:enums]


@dataclass(frozen=True)
class LogBlock:
    """One block: type, header and footer maps (ordered, for byte-exact re-encoding), content."""

    block_type: BlockType
    header: tuple[tuple[int, str], ...] = ()
    content: bytes = b""
    footer: tuple[tuple[int, str], ...] = ()
    format_version: int = LOG_FORMAT_VERSION

    def header_value(self, key: HeaderKey) -> str | None:
        """The header value of ``key``, or None when the block's header does not have it."""
        for k, v in self.header:
            if k == key:
                return v
        return None

    @property
    def header_map(self) -> dict[HeaderKey | int, str]:
        """The header as a mapping; keys this specification knows as HeaderKey, others as their number."""
        return {(HeaderKey(k) if k in HeaderKey._value2member_map_ else k): v for k, v in self.header}

    @property
    def instant_time(self) -> str | None:
        """``INSTANT_TIME``: the instant that wrote the block."""
        return self.header_value(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        """``TARGET_INSTANT_TIME``: for a rollback command block, the instant whose blocks it rolls back."""
        return self.header_value(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """``SCHEMA``: the Avro writer schema of a data or delete block, as JSON."""
        return self.header_value(HeaderKey.SCHEMA)

    @property
    def is_rollback(self) -> bool:
        """Whether this is a command block whose command is a rollback."""
        return (self.block_type == BlockType.COMMAND_BLOCK
                and self.header_value(HeaderKey.COMMAND_BLOCK_TYPE) == str(int(CommandType.ROLLBACK_BLOCK)))

    @property
    def is_data(self) -> bool:
        """Whether this is a data block (Avro, parquet or HFile content)."""
        return self.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK,
                                   BlockType.HFILE_DATA_BLOCK)


# --8<-- [start:framing]
_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")


def encode_metadata(entries: Sequence[tuple[int, str]]) -> bytes:
    """Header/footer map: ``int count``, then per entry ``int key ordinal, int length, UTF-8 bytes``."""
    out = [_INT.pack(len(entries))]
    for key, value in entries:
        data = value.encode("utf-8")
        out += [_INT.pack(int(key)), _INT.pack(len(data)), data]
    return b"".join(out)


@dataclass(frozen=True)
class BlockField:
    """One field of a block's frame: its name, size in bytes (None: variable) and what it holds."""

    name: str
    size: int | None
    value: str


BLOCK_FIELDS: tuple[BlockField, ...] = (
    BlockField("magic", 6, "``#HUDI#``"),
    BlockField("block size", 8, "bytes after this field up to and including the reverse pointer (total − 14)"),
    BlockField("log format version", 4, "1"),
    BlockField("block type", 4, "``BlockType`` ordinal"),
    BlockField("header", None, "metadata map"),
    BlockField("content length", 8, "N"),
    BlockField("content", None, "N bytes, coded per block type"),
    BlockField("footer", None, "metadata map (empty: ``00 00 00 00``)"),
    BlockField("reverse pointer", 8, "bytes of this block before this field (total − 8)"),
)
"""A block's fields, in order: the table ``block_parts`` (and so ``encode_block``) follows."""


def block_parts(block: LogBlock) -> tuple[tuple[BlockField, bytes], ...]:
    """Each field of ``BLOCK_FIELDS`` with its bytes for ``block``; joined they are the block."""
    known = {
        "magic": MAGIC,
        "log format version": _INT.pack(block.format_version),
        "block type": _INT.pack(int(block.block_type)),
        "header": encode_metadata(block.header),
        "content length": _LONG.pack(len(block.content)),
        "content": block.content,
        "footer": encode_metadata(block.footer),
    }
    total = sum(len(known[f.name]) if f.name in known else (f.size or 0) for f in BLOCK_FIELDS)
    known["block size"] = _LONG.pack(total - len(MAGIC) - 8)
    known["reverse pointer"] = _LONG.pack(total - 8)
    parts = tuple((f, known[f.name]) for f in BLOCK_FIELDS)
    for f, data in parts:
        if f.size is not None and len(data) != f.size:
            raise ValueError(f"{f.name} is {f.size} bytes, not {len(data)}")
    return parts


def encode_block(block: LogBlock) -> bytes:
    """A block's bytes: the fields of ``BLOCK_FIELDS`` in order.

    | field | size | value |
    |---|---|---|
    | magic | 6 | ``#HUDI#`` |
    | block size | 8 | bytes after this field up to and including the reverse pointer (total − 14) |
    | log format version | 4 | 1 |
    | block type | 4 | ``BlockType`` ordinal |
    | header | var | metadata map |
    | content length | 8 | N |
    | content | N | per block type |
    | footer | var | metadata map (empty: ``00 00 00 00``) |
    | reverse pointer | 8 | bytes of this block before this field (total − 8) |
    """
    return b"".join(data for _, data in block_parts(block))


def encode_blocks(blocks: Sequence[LogBlock]) -> bytes:
    """The bytes of ``blocks`` framed one after another, as a log file (or one append to it) holds them."""
    return b"".join(encode_block(b) for b in blocks)
# --8<-- [end:framing]


@dataclass(frozen=True)
class BlockRecord:
    """One step of reading a log file: a block or a corrupt region, at ``offset`` for ``length`` bytes."""

    offset: int
    length: int
    block: LogBlock | None = None
    corrupt: CorruptRegion | None = field(default=None)

    @property
    def is_corrupt(self) -> bool:
        """Whether this step of the log is a corrupt region rather than a block."""
        return self.corrupt is not None


class _Truncated(Exception):
    """Internal: a field ran past the end of the block."""


def _read_metadata(buf: bytes, pos: int, end: int) -> tuple[tuple[tuple[int, str], ...], int]:
    if pos + 4 > end:
        raise _Truncated
    (count,) = _INT.unpack_from(buf, pos)
    pos += 4
    if count < 0 or count * 8 > end - pos:
        raise _Truncated
    entries = []
    for _ in range(count):
        if pos + 8 > end:
            raise _Truncated
        key, length = struct.unpack_from(">ii", buf, pos)
        pos += 8
        if length < 0 or pos + length > end:
            raise _Truncated
        try:
            value = buf[pos:pos + length].decode("utf-8")
        except UnicodeDecodeError as err:
            raise _Truncated from err
        entries.append((key, value))
        pos += length
    return tuple(entries), pos


def _parse_body(buf: bytes, start: int, end: int) -> LogBlock:
    """Decode fields 3-8 of a block held in ``buf[start:end]`` (``end`` excludes the reverse pointer)."""
    if start + 8 > end:
        raise _Truncated
    version, type_ordinal = struct.unpack_from(">ii", buf, start)
    if type_ordinal not in BlockType._value2member_map_ or type_ordinal == BlockType.CORRUPT_BLOCK:
        raise _Truncated
    pos = start + 8
    if version == 0:
        raise _Truncated  # legacy layout without header: not written since Hudi 0.5, not supported
    header, pos = _read_metadata(buf, pos, end)
    if pos + 8 > end:
        raise _Truncated
    content_len = _java_int(_LONG.unpack_from(buf, pos)[0])
    pos += 8
    if content_len < 0 or pos + content_len > end:
        raise _Truncated
    content = buf[pos:pos + content_len]
    pos += content_len
    footer, pos = _read_metadata(buf, pos, end)
    if pos != end:
        raise _Truncated
    return LogBlock(BlockType(type_ordinal), header, content, footer, version)


# --8<-- [start:corrupt]
def _java_int(value: int) -> int:
    """Hudi reads the block size and the content length as longs and keeps an ``int`` (Java's
    narrowing cast: the low 32 bits, signed)."""
    low = value & 0xFFFFFFFF
    return low - (1 << 32) if low & 0x80000000 else low


def _frame_ok(buf: bytes, pos: int) -> int | None:
    """If a sound block starts at ``pos`` (where a magic is), return its total length.

    Hudi's ``HoodieLogFileReader`` calls a block corrupt when: the block size (as an ``int``) is
    not positive; the block would run past the end of the file; the reverse pointer at its end
    does not equal block size + 6; or the 6 bytes after it are a full 6 bytes but not a magic.
    (Fewer than 6 bytes after the block read as end of file: the block is sound.)
    """
    n = len(buf)
    size_at = pos + len(MAGIC)
    if size_at + 8 > n:
        return None
    block_size = _java_int(_LONG.unpack_from(buf, size_at)[0])
    if block_size <= 0 or block_size > n - size_at - 8:
        return None
    end = size_at + 8 + block_size
    (pointer,) = _LONG.unpack_from(buf, end - 8)
    if pointer - len(MAGIC) != block_size:
        return None
    if n - end >= len(MAGIC) and buf[end:end + len(MAGIC)] != MAGIC:
        return None
    return int(end - pos)


def read_blocks(data: bytes) -> Iterator[BlockRecord]:
    """Read blocks forward. A region that does not frame as a block is reported as corrupt, from its
    start up to the next magic (searched from after its own magic, as Hudi does) or the end, and
    reading resumes there. Never reads past the data, never allocates more than it, always
    advances: it terminates on any input.

    Stricter than Hudi, never silent: bytes before the first magic (Hudi's reader throws), a
    trailing piece shorter than a magic (Hudi stops as at end of file) and a block whose inner
    fields do not fit its frame (Hudi misreads the rest of the file) are corrupt regions too.
    """
    buf = bytes(data)
    n = len(buf)
    pos = 0
    while pos < n:
        at_magic = buf.startswith(MAGIC, pos)
        if not at_magic:
            reason = ("trailing bytes shorter than a magic" if n - pos < len(MAGIC)
                      else "no magic at block start")
        else:
            reason = "inconsistent block lengths"
        total = _frame_ok(buf, pos) if at_magic else None
        block = None
        if total is not None:
            try:
                block = _parse_body(buf, pos + len(MAGIC) + 8, pos + total - 8)
            except _Truncated:
                reason = "block fields do not fit the block size"
        if block is not None and total is not None:
            yield BlockRecord(pos, total, block)
            pos += total
            continue
        from spec.file_group.log_file.corrupt_block import CorruptRegion  # loaded by the first corrupt region

        nxt = buf.find(MAGIC, pos + (len(MAGIC) if at_magic else 1))
        end = n if nxt < 0 else nxt
        yield BlockRecord(pos, end - pos, corrupt=CorruptRegion(reason))
        pos = end
# --8<-- [end:corrupt]


def read_log_file(storage: Storage, rel_path: str) -> list[BlockRecord]:
    """All blocks and corrupt regions of one log file."""
    return list(read_blocks(storage.read(rel_path)))


def append_blocks(storage: Storage, rel_path: str, blocks: Sequence[LogBlock]) -> int:
    """Append encoded blocks to a log file (creating it); returns the offset they start at."""
    return storage.append(rel_path, encode_blocks(blocks))
