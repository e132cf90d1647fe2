"""Log block content: how each block type's records are coded inside the framing of
``spec.file_group.log_file.log_format``.

- AVRO_DATA_BLOCK: ``int version=3, int count``, then per record ``int length`` and its Avro binary
  encoding under the block's SCHEMA header;
- DELETE_BLOCK: ``int version=3, int length``, then the Avro binary of a HoodieDeleteRecordList
  (``spec.file_group.log_file.delete_block``);
- COMMAND_BLOCK: no content; the header says what to do (a rollback of TARGET_INSTANT_TIME);
- PARQUET_DATA_BLOCK: a whole parquet file;
- HFILE_DATA_BLOCK and CDC_DATA_BLOCK: recognised, their content not decoded here (typed error).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieAvroDataBlock``
(``serializeRecords``, ``deserializeRecords``), ``HoodieCommandBlock``,
``HoodieParquetDataBlock``, ``HoodieHFileDataBlock`` and ``HoodieCDCDataBlock``
(``org.apache.hudi.common.table.log.block``).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spec.config.parquet_codec import parquet_compression
from spec.errors import CorruptBlock, LogFormatError, UnsupportedBlockContent
from spec.file_group.log_file.delete_block import decode_delete_records
from spec.file_group.log_file.log_format import (
    DATA_BLOCK_VERSION,
    BlockType,
    CommandType,
    HeaderKey,
    LogBlock,
    content_preamble,
)

if TYPE_CHECKING:
    import pyarrow as pa

_INT = struct.Struct(">i")


def _parse_schema(schema_json: str) -> Any:
    import json

    import fastavro

    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except Exception as err:  # fastavro raises several types for bad schemas
        raise LogFormatError(f"block schema is not a valid Avro schema: {err}",
                             hint="the SCHEMA header must hold the writer's Avro schema JSON") from err


# --8<-- [start:avro_block]
def encode_avro_records(records: Sequence[Mapping[str, Any]], schema_json: str) -> bytes:
    """Avro data block content: ``int version=3, int count``, then per record ``int length`` and the
    record's Avro binary encoding (no container, no sync markers) under the SCHEMA header's schema."""
    import fastavro

    schema = _parse_schema(schema_json)
    out = [_INT.pack(DATA_BLOCK_VERSION), _INT.pack(len(records))]
    for rec in records:
        b = io.BytesIO()
        fastavro.schemaless_writer(b, schema, dict(rec))
        data = b.getvalue()
        out += [_INT.pack(len(data)), data]
    return b"".join(out)


def decode_avro_records(block: LogBlock, reader_schema_json: str | None = None) -> list[dict[str, Any]]:
    """The records of an Avro data block, decoded with the block's SCHEMA header."""
    import fastavro

    if block.block_type != BlockType.AVRO_DATA_BLOCK:
        raise LogFormatError(f"{block.block_type.name} is not an Avro data block")
    if block.schema is None:
        raise CorruptBlock("Avro data block has no SCHEMA header", hint="every data block carries its schema")
    writer = _parse_schema(block.schema)
    reader = _parse_schema(reader_schema_json) if reader_schema_json else None
    content = block.content
    count = content_preamble(content, "Avro data block")
    pos = 8
    records: list[dict[str, Any]] = []
    for _ in range(count):
        if pos + 4 > len(content):
            raise CorruptBlock("Avro data block ends before its declared record count")
        (length,) = _INT.unpack_from(content, pos)
        pos += 4
        if length < 0 or pos + length > len(content):
            raise CorruptBlock("Avro record length runs past the block content")
        try:
            rec = fastavro.schemaless_reader(io.BytesIO(content[pos:pos + length]), writer, reader)
        except Exception as err:
            raise CorruptBlock(f"Avro record does not decode with the block schema: {err}") from err
        if not isinstance(rec, dict):
            raise CorruptBlock("an Avro data block record is not a record")
        records.append(rec)
        pos += length
    return records


def decode_cdc_records(block: LogBlock) -> list[dict[str, Any]]:
    """The records of a CDC data block (a CDC log's, ``HoodieCDCDataBlock``): its content is laid out as an Avro
    data block's (``HoodieCDCDataBlock`` extends ``HoodieAvroDataBlock``), decoded with its SCHEMA header, the CDC
    record schema of the table's supplemental logging mode (``HoodieCDCUtils.schemaBySupplementalLoggingMode``)."""
    from dataclasses import replace

    if block.block_type != BlockType.CDC_DATA_BLOCK:
        raise LogFormatError(f"{block.block_type.name} is not a CDC data block")
    return decode_avro_records(replace(block, block_type=BlockType.AVRO_DATA_BLOCK))


def avro_record_count(block: LogBlock) -> int:
    """The declared record count of an Avro data block (without decoding records)."""
    return content_preamble(block.content, "Avro data block")


# --8<-- [end:avro_block]


# --- Avro data blocks read column-wise ------------------------------------------------------------

_PLAIN_TYPES = frozenset({"boolean", "int", "long", "float", "double", "string", "bytes"})
_LOGICAL_RANGES: dict[tuple[str, str], tuple[int, int]] = {
    # (logicalType, type): the raw values fastavro turns into a date, time or datetime (others it refuses)
    ("date", "int"): (-719_162, 2_932_896),
    ("time-millis", "int"): (0, 86_399_999),
    ("time-micros", "long"): (0, 86_399_999_999),
    ("timestamp-millis", "long"): (-62_135_596_800_000, 253_402_300_799_999),
    ("timestamp-micros", "long"): (-62_135_596_800_000_000, 253_402_300_799_999_999),
    ("local-timestamp-millis", "long"): (-62_135_596_800_000, 253_402_300_799_999),
    ("local-timestamp-micros", "long"): (-62_135_596_800_000_000, 253_402_300_799_999_999),
}


@dataclass(frozen=True)
class _PlainField:
    """A record field the column-wise decoder reads: its Avro type, logical type, and the union branch
    of null (None when the field is not a union with null)."""

    type: str
    logical: str | None
    null_branch: int | None


def _plain_field(t: Any) -> _PlainField | None:
    null_branch = None
    if isinstance(t, list):
        if len(t) != 2 or t.count("null") != 1:
            return None
        null_branch = t.index("null")
        t = t[1 - null_branch]
    if isinstance(t, str):
        return _PlainField(t, None, null_branch) if t in _PLAIN_TYPES else None
    if not isinstance(t, Mapping) or t.get("type") not in _PLAIN_TYPES:
        return None
    logical = t.get("logicalType")
    if logical is not None and (logical, t["type"]) not in _LOGICAL_RANGES:
        return None
    return _PlainField(t["type"], logical, null_branch)


def _record_bounds(content: bytes) -> tuple[list[int], list[int]] | None:
    """Where each record's bytes start and end, as ``decode_avro_records`` walks them; None where it would
    refuse the content."""
    if len(content) < 8 or struct.unpack_from(">i", content, 0)[0] != DATA_BLOCK_VERSION:
        return None
    count = struct.unpack_from(">i", content, 4)[0]
    starts, ends = [], []
    pos = 8
    for _ in range(count):
        if pos + 4 > len(content):
            return None
        (length,) = _INT.unpack_from(content, pos)
        pos += 4
        if length < 0 or pos + length > len(content):
            return None
        starts.append(pos)
        pos += length
        ends.append(pos)
    return starts, ends


def decode_avro_columns(block: LogBlock) -> pa.Table | None:
    """The records of an Avro data block as an Arrow table, read one field at a time for all records at
    once: the table ``rows_to_arrow(decode_avro_records(block), arrow_schema_from_avro(block.schema))``.

    It reads records whose fields are each a boolean, int, long, float, double, string or bytes, or a
    date, time or timestamp logical type, alone or in a union with null. None for other schemas, and for
    content the record-by-record decoder would refuse or read otherwise (a union branch, boolean or
    string that is not valid, an int out of range, a value fastavro has no date or time for, a record
    shorter than its fields), so that ``decode_avro_records`` reads it and says what is wrong.
    """
    import json

    import pyarrow as pa

    from spec.errors import SchemaMismatch
    from spec.schema.table_schema import arrow_schema_from_avro

    if block.block_type != BlockType.AVRO_DATA_BLOCK or not block.schema:
        return None
    try:
        _parse_schema(block.schema)
        obj = json.loads(block.schema)
        fields = [_plain_field(f.get("type")) for f in obj["fields"]]
        if not all(fields):
            return None
        schema = arrow_schema_from_avro(obj)
    except (LogFormatError, SchemaMismatch, KeyError, TypeError, AttributeError):
        return None
    if len(set(schema.names)) < len(schema.names) or len(fields) != len(schema):
        return None
    bounds = _record_bounds(block.content)
    if bounds is None:
        return None
    try:
        columns = _AvroColumns(block.content, *bounds).read([f for f in fields if f is not None], schema)
    except (pa.ArrowInvalid, pa.ArrowIndexError, pa.ArrowNotImplementedError):
        return None
    return None if columns is None else pa.Table.from_arrays(columns, schema=schema)


class _AvroColumns:
    """The decoding state: the block content as bytes, and for each record the position of its next field."""

    def __init__(self, content: bytes, starts: list[int], ends: list[int]) -> None:
        import pyarrow as pa

        padded = content + bytes(16)  # a value read at a record's end reads no further than these
        self.buf = pa.Array.from_buffers(pa.uint8(), len(padded), [None, pa.py_buffer(padded)])
        self.data = pa.py_buffer(padded)
        self.n = len(starts)
        self.pos = pa.array(starts, type=pa.int64())
        self.end = pa.array(ends, type=pa.int64())
        self._interleave: pa.Array | None = None
        self._evens: pa.Array | None = None

    def byte(self, k: int = 0) -> pa.Array:
        """The byte ``k`` past each record's position."""
        import pyarrow as pa
        import pyarrow.compute as pc

        return pc.take(self.buf, pc.add(self.pos, pa.scalar(k, pa.int64())) if k else self.pos)

    def read(self, fields: Sequence[_PlainField], schema: pa.Schema) -> list[pa.Array] | None:
        """Every field's column, or None where a record holds what this reader does not decode."""
        import pyarrow as pa
        import pyarrow.compute as pc

        columns = []
        for field, target in zip(fields, schema, strict=True):
            present = pa.repeat(pa.scalar(True), self.n)
            if field.null_branch is not None:
                branch = self.byte()
                valid = pc.or_(pc.equal(branch, pa.scalar(0, pa.uint8())), pc.equal(branch, pa.scalar(2, pa.uint8())))
                if not pc.all(valid).as_py() and self.n:
                    return None
                # a union index is a zigzag long: branch 0 is the byte 0, branch 1 the byte 2
                present = pc.equal(branch, pa.scalar(2 * (1 - field.null_branch), pa.uint8()))
                self.pos = pc.add(self.pos, pa.scalar(1, pa.int64()))
            column = self.value(field, present)
            if column is None or pc.any(pc.greater(self.pos, self.end)).as_py():
                return None
            column = pc.if_else(present, column, pa.scalar(None, column.type))
            if field.logical is not None:
                low, high = _LOGICAL_RANGES[(field.logical, field.type)]
                bounds = pc.min_max(column)
                if bounds["min"].is_valid and (bounds["min"].as_py() < low or bounds["max"].as_py() > high):
                    return None
            columns.append(column.cast(target.type) if column.type != target.type else column)
        return columns

    def value(self, field: _PlainField, present: pa.Array) -> pa.Array | None:
        """The values of one field where ``present`` (other records: any value), advancing their positions."""
        import pyarrow as pa
        import pyarrow.compute as pc

        int64 = pa.int64()
        if field.type == "boolean":
            b = self.byte()
            if pc.any(pc.and_(present, pc.greater(b, pa.scalar(1, pa.uint8())))).as_py():
                return None
            self.pos = pc.add(self.pos, present.cast(int64))
            return pc.equal(b, pa.scalar(1, pa.uint8()))
        if field.type in ("float", "double"):
            width, bits, out = (4, pa.uint32(), pa.float32()) if field.type == "float" \
                else (8, pa.uint64(), pa.float64())
            word = self.byte(0).cast(bits)
            for k in range(1, width):  # little-endian
                word = pc.bit_wise_or(word, pc.shift_left(self.byte(k).cast(bits), pa.scalar(8 * k, bits)))
            self.pos = pc.add(self.pos, pc.multiply(present.cast(int64), pa.scalar(width, int64)))
            return word.view(out)
        number = self.long(present)
        if number is None:
            return None
        if field.type == "int":  # the cast refuses a value out of the int range (ArrowInvalid)
            return pc.if_else(present, number, pa.scalar(0, int64)).cast(pa.int32())
        if field.type == "long":
            return number
        # string, bytes: a long length, then that many bytes
        if pc.any(pc.and_(present, pc.less(number, pa.scalar(0, int64)))).as_py():
            return None
        length = pc.if_else(present, number, pa.scalar(0, int64))
        start = self.pos
        self.pos = pc.add(self.pos, length)
        if pc.any(pc.greater(self.pos, self.end)).as_py():
            return None
        values = self.slices(start, self.pos)
        return values.cast(pa.string()) if field.type == "string" else values

    def long(self, present: pa.Array) -> pa.Array | None:
        """A zigzag varint (at most 10 bytes) where ``present``, as int64; None for a longer one."""
        import pyarrow as pa
        import pyarrow.compute as pc

        u64, int64 = pa.uint64(), pa.int64()
        value = pa.repeat(pa.scalar(0, u64), self.n)
        size = pa.repeat(pa.scalar(0, int64), self.n)
        more = present
        for k in range(10):
            b = self.byte(k)
            low = pc.bit_wise_and(b, pa.scalar(0x7F, pa.uint8())).cast(u64)
            if k == 9 and pc.any(pc.and_(more, pc.greater(low, pa.scalar(1, u64)))).as_py():
                return None  # more than 64 bits
            value = pc.if_else(more, pc.bit_wise_or(value, pc.shift_left(low, pa.scalar(7 * k, u64))), value)
            size = pc.add(size, more.cast(int64))
            more = pc.and_(more, pc.greater_equal(b, pa.scalar(0x80, pa.uint8())))
            if not pc.any(more).as_py():
                self.pos = pc.add(self.pos, size)
                half = pc.shift_right(value, pa.scalar(1, u64))
                odd = pc.equal(pc.bit_wise_and(value, pa.scalar(1, u64)), pa.scalar(1, u64))
                return pc.if_else(odd, pc.bit_wise_not(half), half).view(int64)
        return None

    def slices(self, start: pa.Array, stop: pa.Array) -> pa.Array:
        """The bytes ``[start, stop)`` of each record as a binary array: a binary array over the content whose
        offsets are each record's start and stop in turn, of which every other value is taken."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self.n:
            return pa.array([], type=pa.binary())
        int64 = pa.int64()
        if self._interleave is None:
            i = pa.array(range(2 * self.n), type=int64)
            # offset 2r is record r's start, offset 2r + 1 its stop; values 0, 2, 4 ... are the records'
            self._interleave = pc.add(pc.shift_right(i, pa.scalar(1, int64)),
                                      pc.multiply(pc.bit_wise_and(i, pa.scalar(1, int64)), pa.scalar(self.n, int64)))
            self._evens = pc.multiply(pa.array(range(self.n), type=int64), pa.scalar(2, int64))
        offsets = pc.take(pa.concat_arrays([start, stop]), self._interleave)
        large = len(self.data) >= 2**31
        kind, width = (pa.large_binary(), int64) if large else (pa.binary(), pa.int32())
        offsets = offsets.cast(width)
        spread = pa.Array.from_buffers(kind, 2 * self.n - 1, [None, offsets.buffers()[1], self.data])
        taken: pa.Array = pc.take(spread, self._evens)
        return taken.cast(pa.binary()) if large else taken


# --8<-- [start:builders]
def avro_data_block(instant: str, schema_json: str, records: Sequence[Mapping[str, Any]],
                    extra_header: Sequence[tuple[int, str]] = ()) -> LogBlock:
    """An Avro data block as Spark writes it: header {INSTANT_TIME, SCHEMA}."""
    header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.SCHEMA), schema_json), *extra_header)
    return LogBlock(BlockType.AVRO_DATA_BLOCK, tuple(header), encode_avro_records(records, schema_json))


def rollback_command_block(instant: str, target_instant: str) -> LogBlock:
    """A rollback command block: no content; header {INSTANT_TIME = the rollback,
    TARGET_INSTANT_TIME = the instant rolled back, COMMAND_BLOCK_TYPE = "0"}."""
    header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.TARGET_INSTANT_TIME), target_instant),
              (int(HeaderKey.COMMAND_BLOCK_TYPE), str(int(CommandType.ROLLBACK_BLOCK))))
    return LogBlock(BlockType.COMMAND_BLOCK, header, b"")


def parquet_data_block(instant: str, schema_json: str, table: pa.Table, compression: str = "gzip") -> LogBlock:
    """A parquet data block: the content is a whole parquet file of the records, compressed with
    ``hoodie.parquet.compression.codec`` (``compression``) at the level parquet-mr uses
    (``spec.config.parquet_codec``), the columns parquet-mr keeps dictionary-encoded
    (``spec.config.parquet_dictionary``) dictionary-encoded, the others plain."""
    import pyarrow.parquet as pq

    from spec.config.parquet_dictionary import dictionary_columns

    codec = parquet_compression(compression)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression=codec.codec, compression_level=codec.level,
                   use_dictionary=dictionary_columns(table))
    header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.SCHEMA), schema_json))
    return LogBlock(BlockType.PARQUET_DATA_BLOCK, header, sink.getvalue())
# --8<-- [end:builders]


def decode_parquet_records(block: LogBlock) -> pa.Table:
    """The records of a parquet data block as an Arrow table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if block.block_type != BlockType.PARQUET_DATA_BLOCK:
        raise LogFormatError(f"{block.block_type.name} is not a parquet data block")
    try:
        # decoded in this thread: ParquetFile.read with use_threads=False runs no task on pyarrow's pools, while
        # the dataset scan behind pq.read_table does even with use_threads=False, and its pool thread enters the
        # interpreter behind the caller's back (caught crashing a process whose tracemalloc was stopping)
        return pq.ParquetFile(pa.BufferReader(block.content)).read(use_threads=False)
    except Exception as err:  # pyarrow raises ArrowInvalid, OSError, UnicodeDecodeError... on damaged files
        raise CorruptBlock(f"parquet data block content is not a parquet file: {err}") from err


def block_record_count(block: LogBlock) -> int:
    """How many records a block holds (0 for command blocks); typed error for HFILE and CDC."""
    if block.block_type == BlockType.AVRO_DATA_BLOCK:
        return avro_record_count(block)
    if block.block_type == BlockType.DELETE_BLOCK:
        return len(decode_delete_records(block))
    if block.block_type == BlockType.PARQUET_DATA_BLOCK:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(pa.BufferReader(block.content)).metadata.num_rows)
        except Exception as err:  # damaged parquet surfaces as several exception types
            raise CorruptBlock(f"parquet data block content is not a parquet file: {err}") from err
    if block.block_type == BlockType.COMMAND_BLOCK:
        return 0
    raise UnsupportedBlockContent(f"{block.block_type.name} content is not decoded by this specification",
                                  hint="HFILE blocks appear only in the metadata table; CDC blocks in CDC logs")


def decode_records(block: LogBlock) -> list[dict[str, Any]]:
    """Records of any data block as dicts (Avro or parquet); typed error for other kinds."""
    if block.block_type == BlockType.AVRO_DATA_BLOCK:
        return decode_avro_records(block)
    if block.block_type == BlockType.PARQUET_DATA_BLOCK:
        rows: list[dict[str, Any]] = decode_parquet_records(block).to_pylist()
        return rows
    if block.block_type == BlockType.DELETE_BLOCK:
        return [{"recordKey": d.record_key, "partitionPath": d.partition_path, "orderingVal": d.ordering_value}
                for d in decode_delete_records(block)]
    if block.block_type == BlockType.COMMAND_BLOCK:
        return []
    raise UnsupportedBlockContent(f"{block.block_type.name} content is not decoded by this specification",
                                  hint="HFILE blocks appear only in the metadata table; CDC blocks in CDC logs")
