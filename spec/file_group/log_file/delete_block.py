"""Delete blocks: the keys a log file deletes, and the ordering value each delete carries.

A DELETE_BLOCK's content is ``int version=3, int length``, then the Avro binary of a
``HoodieDeleteRecordList``: per deleted record its key, its partition path and its ordering value,
a union whose branch index is on disk (``ORDERING_BRANCHES``). Hudi writes it with the block's
INSTANT_TIME and SCHEMA header.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieDeleteBlock``
(``serializeV3``, ``deserialize``), ``DeleteRecord`` and the ``HoodieDeleteRecordList`` /
``HoodieDeleteRecord`` Avro models.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spec.errors import CorruptBlock, LogFormatError
from spec.file_group.log_file.log_format import DATA_BLOCK_VERSION, BlockType, HeaderKey, LogBlock, content_preamble

# --8<-- [start:delete_block]
ORDERING_BRANCHES: tuple[Any, ...] = (
    "null", "int", "long", "float", "double", "bytes", "string",
    {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
    {"type": "int", "logicalType": "date"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "time-micros"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-micros"},
)
"""The ``orderingVal`` union of HoodieDeleteRecord, in order: the branch index is on disk."""

DELETE_RECORD_LIST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [{
        "name": "deleteRecordList",
        "type": {"type": "array", "items": {
            "type": "record",
            "name": "HoodieDeleteRecord",
            "fields": [
                {"name": "recordKey", "type": ["null", "string"], "default": None},
                {"name": "partitionPath", "type": ["null", "string"], "default": None},
                {"name": "orderingVal", "type": list(ORDERING_BRANCHES), "default": None},
            ],
        }},
    }],
}


@dataclass(frozen=True)
class DeleteRecord:
    """A deleted key with its ordering value, kept with its union branch index (byte-exact coding).

    ``ordering_branch`` indexes ``ORDERING_BRANCHES`` (0 null, 1 int, 2 long, ...). Spark's DELETE
    writes ``0`` in the ``long`` branch for a long ordering field.
    """

    record_key: str | None
    partition_path: str | None
    ordering_value: Any = None
    ordering_branch: int = 0


def _branch_for(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise LogFormatError("a boolean cannot be an ordering value of a delete record")
    if isinstance(value, int):
        return 1 if -(2**31) <= value < 2**31 else 2
    if isinstance(value, float):
        return 4
    if isinstance(value, bytes):
        return 5
    if isinstance(value, str):
        return 6
    raise LogFormatError(f"ordering value {value!r} has no branch in HoodieDeleteRecord.orderingVal",
                         hint="use an int, long, double, string or bytes ordering field")


def delete_record(record_key: str, partition_path: str, ordering_value: Any = None,
                  branch: int | None = None) -> DeleteRecord:
    """A delete record, choosing the union branch from the value's type unless given."""
    return DeleteRecord(record_key, partition_path, ordering_value,
                        _branch_for(ordering_value) if branch is None else branch)


def _zigzag(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_long(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise CorruptBlock("delete block content ends inside a number")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def _encode_ordering(branch: int, value: Any) -> bytes:
    """The Avro binary of one ``orderingVal`` union value in the given branch."""
    import fastavro

    b = io.BytesIO()
    schema = fastavro.parse_schema({"type": "record", "name": "O", "fields": [
        {"name": "v", "type": ORDERING_BRANCHES[branch]}]})
    fastavro.schemaless_writer(b, schema, {"v": value})
    return _zigzag(branch) + b.getvalue()


def encode_delete_records(deletes: Sequence[DeleteRecord]) -> bytes:
    """Delete block content: ``int version=3, int length``, then the Avro binary of a
    HoodieDeleteRecordList (no container)."""
    body = bytearray()
    if deletes:
        body += _zigzag(len(deletes))
        for d in deletes:
            for text in (d.record_key, d.partition_path):
                if text is None:
                    body += _zigzag(0)
                else:
                    raw = text.encode("utf-8")
                    body += _zigzag(1) + _zigzag(len(raw)) + raw
            body += _encode_ordering(d.ordering_branch, d.ordering_value)
    body += _zigzag(0)
    return struct.pack(">ii", DATA_BLOCK_VERSION, len(body)) + bytes(body)


def decode_delete_records(block: LogBlock) -> list[DeleteRecord]:
    """The delete records of a delete block, each with the union branch of its ordering value."""
    return delete_records_span(block)[0]


def delete_records_span(block: LogBlock) -> tuple[list[DeleteRecord], int, int]:
    """The delete records of a delete block, where their list ends in the content and where the content
    ends (they differ only in a damaged block: ``spec.file_group.log_file.block_checks``)."""
    import fastavro

    if block.block_type != BlockType.DELETE_BLOCK:
        raise LogFormatError(f"{block.block_type.name} is not a delete block")
    content = block.content
    length = content_preamble(content, "delete block")
    if length < 0 or 8 + length > len(content):
        raise CorruptBlock("delete block length runs past its content")
    buf = content[8:8 + length]
    pos = 0
    out: list[DeleteRecord] = []
    while True:
        count, pos = _read_long(buf, pos)
        if count == 0:
            break
        if count < 0:
            _, pos = _read_long(buf, pos)
            count = -count
        if count > len(buf):
            raise CorruptBlock("delete block declares more records than it has bytes")
        for _ in range(count):
            fields: list[str | None] = []
            for _f in range(2):
                idx, pos = _read_long(buf, pos)
                if idx == 0:
                    fields.append(None)
                elif idx == 1:
                    n, pos = _read_long(buf, pos)
                    if n < 0 or pos + n > len(buf):
                        raise CorruptBlock("delete record string runs past the block")
                    try:
                        fields.append(buf[pos:pos + n].decode("utf-8"))
                    except UnicodeDecodeError as err:
                        raise CorruptBlock("delete record key or partition is not UTF-8") from err
                    pos += n
                else:
                    raise CorruptBlock(f"bad union index {idx} in a delete record")
            branch, pos = _read_long(buf, pos)
            if not 0 <= branch < len(ORDERING_BRANCHES):
                raise CorruptBlock(f"bad orderingVal union index {branch}")
            schema = fastavro.parse_schema({"type": "record", "name": "O", "fields": [
                {"name": "v", "type": ORDERING_BRANCHES[branch]}]})
            stream = io.BytesIO(buf[pos:])
            try:
                value = fastavro.schemaless_reader(stream, schema, None)["v"]  # type: ignore[call-overload,index]
            except Exception as err:
                raise CorruptBlock(f"delete record ordering value does not decode: {err}") from err
            pos += stream.tell()
            out.append(DeleteRecord(fields[0], fields[1], value, branch))
    return out, 8 + pos, len(content)
# --8<-- [end:delete_block]


def delete_block(instant: str, schema_json: str, deletes: Sequence[DeleteRecord]) -> LogBlock:
    """A delete block: header {INSTANT_TIME, SCHEMA} (the SCHEMA is carried though unused)."""
    header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.SCHEMA), schema_json))
    return LogBlock(BlockType.DELETE_BLOCK, header, encode_delete_records(deletes))
