"""Delete blocks: the keys a log file deletes, and the ordering value each delete carries.

A DELETE_BLOCK's content is ``int version=3, int length``, then the Avro binary of a
``HoodieDeleteRecordList``: per deleted record its key, its partition path and its ordering value,
a union of *wrapper records* (``BooleanWrapper``, ``IntWrapper``, ``LongWrapper``, ...: one field
``value`` each) whose branch index is on disk (``ORDERING_BRANCHES``). A wrapper's binary is its value's,
so the branch index alone tells an ``Integer 0`` (branch 2) from a ``Long 0`` (branch 3). Hudi writes the
block with its INSTANT_TIME and SCHEMA header.

The union is the same, in the same order, in every release that writes table versions 6, 8 and 9 (Hudi
0.15's and 1.2's ``HoodieDeleteRecordList`` schemas, read from their jars; 1.x appends ``ArrayWrapper``,
a list of wrapped values, at the end, so older blocks decode under it unchanged). An earlier statement of
this rule had the bare types (``null, int, long, ...``) as branches, one index short from ``boolean`` on:
it decoded the ``IntWrapper(0)`` of Spark SQL's DELETE as a long, and Apache Hudi 1.2's ``LongWrapper``
ordering values (branch 3, case ``insert-upsert-delete-mor-v8`` of the corpus run through ``--impl
hudi_spark``) as floats.

Source: ``HoodieDeleteBlock`` (``serializeV3``, ``deserialize``), ``DeleteRecord``,
``HoodieAvroUtils.wrapValueIntoAvro`` / ``unwrapAvroValueWrapper`` and the ``HoodieDeleteRecordList`` Avro
model (Apache Hudi 0.15.x for table version 6; 1.0.x, 1.1.x and 1.2.0 for 8 and 9).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from spec.errors import CorruptBlock, LogFormatError
from spec.file_group.log_file.log_format import DATA_BLOCK_VERSION, BlockType, HeaderKey, LogBlock, content_preamble

# --8<-- [start:delete_block]
WRAPPED_TYPES: tuple[tuple[str, Any], ...] = (
    ("BooleanWrapper", "boolean"),
    ("IntWrapper", "int"),
    ("LongWrapper", "long"),
    ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"),
    ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"),
    ("DateWrapper", {"type": "int", "logicalType": "date"}),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", {"type": "long", "logicalType": "timestamp-micros"}),
)
"""The wrapper records of the union after its ``null``, in order: (record name, type of its ``value``).
(``DateWrapper`` and ``TimestampMicrosWrapper`` hold a bare int / long on disk, days and microseconds
since the epoch; Hudi unwraps them to a date and an instant, as the logical types here do.)"""


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": "org.apache.hudi.avro.model",
            "fields": [{"name": "value", "type": value_type}]}


ARRAY_WRAPPER: dict[str, Any] = {
    "type": "record", "name": "ArrayWrapper", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "wrappedValues", "default": None, "type": ["null", {"type": "array", "items": [
        "null", *(_wrapper(n, t) for n, t in WRAPPED_TYPES),
        _wrapper("LocalDateWrapper", {"type": "int", "logicalType": "date"})]}]}],
}
"""Hudi 1.x's last branch: an ordering value made of several values (each wrapped, or null)."""

ORDERING_BRANCHES: tuple[Any, ...] = ("null", *(_wrapper(n, t) for n, t in WRAPPED_TYPES), ARRAY_WRAPPER)
"""The ``orderingVal`` union of HoodieDeleteRecord, in order: the branch index is on disk
(0 null, 1 boolean, 2 int, 3 long, 4 float, 5 double, 6 bytes, 7 string, 8 date, 9 decimal, 10 time-micros,
11 timestamp-micros, 12 array)."""

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
                {"name": "orderingVal", "type": ["null", *ORDERING_BRANCHES[1:-1],
                                                 {**ARRAY_WRAPPER, "fields": [{
                                                     "name": "wrappedValues", "default": None, "type": [
                                                         "null", {"type": "array", "items": [
                                                             "null", *(n for n, _ in WRAPPED_TYPES),
                                                             ARRAY_WRAPPER["fields"][0]["type"][1]["items"][-1]]}]}]}],
                 "default": None},
            ],
        }},
    }],
}
"""The whole ``HoodieDeleteRecordList`` schema (Hudi 1.x's), for readers that decode the block in one go."""


@dataclass(frozen=True)
class DeleteRecord:
    """A deleted key with its ordering value, kept with its union branch index (byte-exact coding).

    ``ordering_branch`` indexes ``ORDERING_BRANCHES`` (0 null, 2 int, 3 long, ...). Spark SQL's DELETE
    writes ``IntWrapper(0)`` (branch 2, ``DeleteRecord.create(key)``'s ``Integer 0``); a datasource delete
    writes the record's ordering value in its own type's branch.
    """

    record_key: str | None
    partition_path: str | None
    ordering_value: Any = None
    ordering_branch: int = 0


INT_BRANCH = 2
LONG_BRANCH = 3
NATURAL_ORDERING = 0
"""The ordering value a delete without one is written with: ``Integer`` 0 in the int branch (``DeleteRecord.create``
without an ordering value; the delete operation's records, whose payload is empty). Apache Hudi 1.2.0 writes it so
for a datasource delete on every table version (measured), and its reader fails on a null one that follows a logged
update of the same key."""


def _branch_for(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return INT_BRANCH if -(2**31) <= value < 2**31 else LONG_BRANCH
    if isinstance(value, float):
        return 5
    if isinstance(value, bytes):
        return 6
    if isinstance(value, str):
        return 7
    if isinstance(value, datetime):
        return 11
    if isinstance(value, date):
        return 8
    if isinstance(value, Decimal):
        return 9
    raise LogFormatError(f"ordering value {value!r} has no branch in HoodieDeleteRecord.orderingVal",
                         hint="use an int, long, double, string, bytes, date, timestamp or decimal ordering field")


def delete_record(record_key: str, partition_path: str, ordering_value: Any = None,
                  branch: int | None = None) -> DeleteRecord:
    """A delete record, choosing the union branch from the value's type unless given."""
    return DeleteRecord(record_key, partition_path, ordering_value,
                        _branch_for(ordering_value) if branch is None else branch)


def _branch_schema(branch: int) -> Any:
    import fastavro

    return fastavro.parse_schema({"type": "record", "name": "O", "fields": [
        {"name": "v", "type": ORDERING_BRANCHES[branch]}]})


def _wrap(branch: int, value: Any) -> Any:
    if branch == 0:
        return None
    if branch == len(ORDERING_BRANCHES) - 1:
        return {"wrappedValues": None if value is None else [
            None if v is None else (f"org.apache.hudi.avro.model.{WRAPPED_TYPES[_branch_for(v) - 1][0]}",
                                    {"value": v}) for v in value]}
    return {"value": value}


def _unwrap(branch: int, decoded: Any) -> Any:
    if branch == 0 or decoded is None:
        return None
    if branch == len(ORDERING_BRANCHES) - 1:
        values = decoded.get("wrappedValues")
        return None if values is None else tuple(None if v is None else v["value"] for v in values)
    return decoded["value"]


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

    if not 0 <= branch < len(ORDERING_BRANCHES):
        raise LogFormatError(f"no orderingVal union branch {branch}", hint="branches are 0 to "
                             f"{len(ORDERING_BRANCHES) - 1} (ORDERING_BRANCHES)")
    b = io.BytesIO()
    fastavro.schemaless_writer(b, _branch_schema(branch), {"v": _wrap(branch, value)})
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
            value = None
            if branch != 0:  # branch 0 is null: no bytes, no value (fastavro is imported only for a value)
                import fastavro

                stream = io.BytesIO(buf[pos:])
                try:
                    decoded: Any = fastavro.schemaless_reader(stream, _branch_schema(branch), None)
                    value = _unwrap(branch, decoded["v"])
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
