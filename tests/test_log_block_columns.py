"""Avro data blocks read column-wise (``decode_avro_columns``) give the table the record-by-record decoder
gives (``decode_avro_records``, then ``rows_to_arrow``), or None: on generated schemas and records, with
the values at the edges of each type, and on damaged content, where the column-wise reader must never
read what the row decoder refuses or reads otherwise."""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime, time
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec.errors import HudiSpecError
from spec.file_group.log_file.log_blocks import avro_data_block, decode_avro_columns, decode_avro_records
from spec.file_group.log_file.log_format import LogBlock
from spec.schema.table_schema import arrow_schema_from_avro, rows_to_arrow

INSTANT = "20240101000000000"


def _micros(t: time) -> time:
    return t


def _millis_time(t: time) -> time:
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def _millis_datetime(d: datetime) -> datetime:
    return d.replace(microsecond=d.microsecond // 1000 * 1000)


utc_datetimes = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
    lambda d: d.replace(tzinfo=UTC))
# Avro type -> values fastavro writes for it
TYPES: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "boolean": ("boolean", st.booleans()),
    "int": ("int", st.integers(-(2**31), 2**31 - 1)),
    "long": ("long", st.integers(-(2**63), 2**63 - 1)),
    "float": ("float", st.floats(width=32)),
    "double": ("double", st.floats()),
    "string": ("string", st.text()),
    "bytes": ("bytes", st.binary()),
    "date": ({"type": "int", "logicalType": "date"}, st.dates()),
    "time-millis": ({"type": "int", "logicalType": "time-millis"}, st.times().map(_millis_time)),
    "time-micros": ({"type": "long", "logicalType": "time-micros"}, st.times()),
    "timestamp-millis": ({"type": "long", "logicalType": "timestamp-millis"}, utc_datetimes.map(_millis_datetime)),
    "timestamp-micros": ({"type": "long", "logicalType": "timestamp-micros"}, utc_datetimes),
    "local-timestamp-millis": ({"type": "long", "logicalType": "local-timestamp-millis"},
                               st.datetimes(min_value=datetime(1, 1, 2)).map(_millis_datetime)),
    "local-timestamp-micros": ({"type": "long", "logicalType": "local-timestamp-micros"},
                               st.datetimes(min_value=datetime(1, 1, 2))),
}


@st.composite
def blocks(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """An Avro record schema of plain fields (alone, or in a union with null first or last) and records of it."""
    kinds = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=6))
    fields, values = [], []
    for i, kind in enumerate(kinds):
        avro, strategy = TYPES[kind]
        wrap = draw(st.sampled_from(["plain", "null first", "null last"]))
        if wrap == "null first":
            fields.append({"name": f"f{i}", "type": ["null", avro], "default": None})
        elif wrap == "null last":
            fields.append({"name": f"f{i}", "type": [avro, "null"]})
        else:
            fields.append({"name": f"f{i}", "type": avro})
        values.append(strategy if wrap == "plain" else st.one_of(st.none(), strategy))
    schema = json.dumps({"type": "record", "name": "r", "namespace": "hoodie.t", "fields": fields})
    records = draw(st.lists(st.tuples(*values), max_size=20))
    return schema, [{f"f{i}": v for i, v in enumerate(rec)} for rec in records]


def _rows_table(block: LogBlock) -> pa.Table:
    return rows_to_arrow(decode_avro_records(block), arrow_schema_from_avro(block.schema or ""))


def _same(a: pa.Table, b: pa.Table) -> None:
    assert a.schema == b.schema
    assert repr(a.to_pylist()) == repr(b.to_pylist())  # repr: NaN equals NaN, -0.0 differs from 0.0


@settings(max_examples=300, deadline=None)
@given(case=blocks())
def test_columns_are_the_decoded_records(case: tuple[str, list[dict[str, Any]]]) -> None:
    schema, records = case
    block = avro_data_block(INSTANT, schema, records)
    columns = decode_avro_columns(block)
    assert columns is not None
    _same(columns, _rows_table(block))


@settings(max_examples=300, deadline=None)
@given(case=blocks(), damage=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
       cut=st.integers(0, 3))
def test_damaged_content_is_never_read_otherwise(case: tuple[str, list[dict[str, Any]]],
                                                 damage: list[tuple[int, int]], cut: int) -> None:
    """Bytes changed (and perhaps the tail cut): the column-wise reader reads what the row decoder reads,
    or leaves the block to it (None); it never reads a block the row decoder refuses."""
    schema, records = case
    block = avro_data_block(INSTANT, schema, records)
    content = bytearray(block.content)
    if len(content) <= 8:
        return
    for where, value in damage:
        content[8 + where % (len(content) - 8)] = value
    damaged = LogBlock(block.block_type, block.header, bytes(content[:len(content) - cut]))
    columns = decode_avro_columns(damaged)
    try:
        expected = _rows_table(damaged)
    except HudiSpecError:
        assert columns is None
        return
    if columns is not None:
        _same(columns, expected)


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_values_at_the_edges_of_each_type(kind: str) -> None:
    edges: dict[str, list[Any]] = {
        "int": [-(2**31), -1, 0, 1, 63, 64, -64, -65, 2**31 - 1],
        "long": [-(2**63), -(2**31) - 1, 2**31, 2**62, 2**63 - 1, 0, -1],
        "float": [float("nan"), float("inf"), -0.0, 1.5, -3.4e38],
        "double": [float("nan"), float("-inf"), -0.0, 5e-324, 1.7976931348623157e308],
        "string": ["", "a" * 300, "\U0001f600\ue000", "\x00"],
        "bytes": [b"", b"\x00\xff" * 100],
        "date": [datetime(1, 1, 1).date(), datetime(9999, 12, 31).date(), datetime(1970, 1, 1).date()],
        "time-millis": [time(0), time(23, 59, 59, 999000)],
        "time-micros": [time(0), time(23, 59, 59, 999999)],
        "timestamp-micros": [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)],
        "timestamp-millis": [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)],
    }
    values = edges.get(kind, [])
    schema = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "a", "type": ["null", TYPES[kind][0]]}, {"name": "b", "type": "string"}]})
    block = avro_data_block(INSTANT, schema, [{"a": v, "b": str(i)} for i, v in enumerate([*values, None])])
    columns = decode_avro_columns(block)
    assert columns is not None
    _same(columns, _rows_table(block))


def test_values_fastavro_has_no_date_for_are_left_to_the_row_decoder() -> None:
    """A date or timestamp beyond Python's years 1..9999 (written as a plain int or long) is refused by the
    row decoder; the column-wise reader leaves the block to it."""
    raw = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]})
    for logical, value in (("timestamp-micros", 253_402_300_800_000_000), ("timestamp-millis", -62_135_596_800_001)):
        block = avro_data_block(INSTANT, raw, [{"a": value}])
        schema = json.dumps({"type": "record", "name": "r", "fields": [
            {"name": "a", "type": {"type": "long", "logicalType": logical}}]})
        relabelled = LogBlock(block.block_type, ((block.header[0]), (block.header[1][0], schema)), block.content)
        assert decode_avro_columns(relabelled) is None
        with pytest.raises(HudiSpecError):
            decode_avro_records(relabelled)


def _one_record(avro: Any, body: bytes) -> LogBlock:
    """A block of one record whose bytes are ``body`` (whatever they encode)."""
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": avro}]})
    block = avro_data_block(INSTANT, schema, [])
    return LogBlock(block.block_type, block.header, struct.pack(">iii", 3, 1, len(body)) + body)


@pytest.mark.parametrize(("avro", "body"), [
    ("boolean", b"\x02"),  # fastavro reads any byte but 0 as true
    ("boolean", b"\xff"),
    ("long", b"\xff" * 9 + b"\x7f"),  # more than 64 bits
    ("long", b"\xff" * 10 + b"\x01"),  # more than 10 bytes
    ("long", b"\x80" * 9 + b"\x02"),
    ("int", b"\x80\x80\x80\x80\x10"),  # beyond the int range
    (["null", "long"], b"\x04\x02"),  # no union branch 2
    (["null", "long"], b"\x01\x02"),  # a negative union branch
    ("string", b"\x01a"),  # a negative length
    ("string", b"\x04\xff\xfe"),  # not UTF-8
    ("string", b"\x06\xed\xa0\x80"),  # a UTF-8 coded surrogate
    ("string", b"\x06ab"),  # the record ends inside the string
    ("double", b"\x00" * 7),
    ({"type": "int", "logicalType": "time-millis"}, b"\x80\xb4\xcc\x52"),  # 24:00
    ({"type": "int", "logicalType": "date"}, b"\x01"),  # -1: 1969-12-31
])
def test_unusual_bytes_are_read_as_the_row_decoder_reads_them(avro: Any, body: bytes) -> None:
    block = _one_record(avro, body)
    columns = decode_avro_columns(block)
    try:
        expected = _rows_table(block)
    except HudiSpecError:
        assert columns is None
        return
    if columns is not None:
        _same(columns, expected)


@pytest.mark.parametrize("avro", [
    {"type": "record", "name": "n", "fields": [{"name": "x", "type": "int"}]},
    {"type": "enum", "name": "e", "symbols": ["A", "B"]},
    {"type": "array", "items": "int"},
    {"type": "map", "values": "long"},
    {"type": "fixed", "name": "f", "size": 4},
    {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
    {"type": "string", "logicalType": "uuid"},
    ["null", "int", "string"],
    ["int", "string"],
    "null",
])
def test_other_field_types_are_left_to_the_row_decoder(avro: Any) -> None:
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": avro}]})
    block = avro_data_block(INSTANT, schema, [])
    assert decode_avro_columns(block) is None
