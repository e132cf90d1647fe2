"""Table schemas: the meta columns, and Avro ⇄ Arrow as Hudi's writers and readers map them.

Hudi states schemas in Avro (the SCHEMA header of log blocks, ``extraMetadata.schema`` of
commits, ``parquet.avro.schema`` in base files). Every field of a data table's schema is
nullable, written as the union ``["null", T]`` with default null. The five meta columns come
first, all ``["null", "string"]``.

Type mapping (parquet-avro conventions): string ⇄ utf8, int ⇄ int32, long ⇄ int64,
float ⇄ float32, double ⇄ float64, boolean ⇄ bool, bytes ⇄ binary, fixed+decimal ⇄ decimal128,
int+date ⇄ date32, long+timestamp-micros ⇄ timestamp[us, UTC], long+timestamp-millis ⇄
timestamp[ms, UTC], record ⇄ struct, array ⇄ list, map ⇄ map<utf8, T>.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from spec.errors import SchemaMismatch

# --8<-- [start:meta_fields]
COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_FIELDS: tuple[str, ...] = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
"""The five meta columns, always first and in this order."""
OPERATION_FIELD = "_hoodie_operation"
# --8<-- [end:meta_fields]


def record_name_for_table(table_name: str) -> tuple[str, str]:
    """(record name, namespace) of a table's Avro schema: ``<table>_record`` in ``hoodie.<table>``."""
    return f"{table_name}_record", f"hoodie.{table_name}"


# --8<-- [start:avro_to_arrow]
def _avro_to_arrow_type(t: Any) -> tuple[pa.DataType, bool]:
    """Arrow type of an Avro type, and whether it is nullable."""
    if isinstance(t, list):
        branches = [b for b in t if b != "null"]
        if len(branches) != 1:
            raise SchemaMismatch(f"Avro union {t} has no Arrow equivalent", hint="use [\"null\", T] unions only")
        inner, _ = _avro_to_arrow_type(branches[0])
        return inner, "null" in t
    if isinstance(t, str):
        simple = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
                  "double": pa.float64(), "boolean": pa.bool_(), "bytes": pa.binary(), "null": pa.null()}
        if t not in simple:
            raise SchemaMismatch(f"named Avro type {t!r} is not supported here", hint="inline the type")
        return simple[t], False
    logical = t.get("logicalType")
    kind = t.get("type")
    if logical == "decimal":
        return pa.decimal128(int(t["precision"]), int(t.get("scale", 0))), False
    if logical == "date":
        return pa.date32(), False
    if logical == "timestamp-micros":
        return pa.timestamp("us", tz="UTC"), False
    if logical == "timestamp-millis":
        return pa.timestamp("ms", tz="UTC"), False
    if logical in ("local-timestamp-micros",):
        return pa.timestamp("us"), False
    if logical in ("local-timestamp-millis",):
        return pa.timestamp("ms"), False
    if kind == "record":
        return pa.struct([_field(f) for f in t["fields"]]), False
    if kind == "array":
        item, nullable = _avro_to_arrow_type(t["items"])
        return pa.list_(pa.field("element", item, nullable=nullable)), False
    if kind == "map":
        value, nullable = _avro_to_arrow_type(t["values"])
        return pa.map_(pa.string(), pa.field("value", value, nullable=nullable)), False
    if kind == "enum":
        return pa.string(), False
    if kind == "fixed":
        return pa.binary(int(t["size"])), False
    if isinstance(kind, str | list | dict):
        return _avro_to_arrow_type(kind)
    raise SchemaMismatch(f"Avro type {t!r} is not supported here")


def _field(f: Mapping[str, Any]) -> pa.Field:
    typ, nullable = _avro_to_arrow_type(f["type"])
    return pa.field(f["name"], typ, nullable=nullable)


def arrow_schema_from_avro(avro: str | Mapping[str, Any]) -> pa.Schema:
    """The Arrow schema of an Avro record schema."""
    obj = json.loads(avro) if isinstance(avro, str) else avro
    if obj.get("type") != "record":
        raise SchemaMismatch("a table schema must be an Avro record", hint="check the SCHEMA header or commit")
    return pa.schema([_field(f) for f in obj["fields"]])
# --8<-- [end:avro_to_arrow]


# --8<-- [start:arrow_to_avro]
def _arrow_to_avro_type(t: pa.DataType, name: str, namespace: str) -> Any:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_uint8(t) \
            or pa.types.is_uint16(t):
        return "int"
    if pa.types.is_integer(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_floating(t):
        return "double"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_fixed_size_binary(t):
        return {"type": "fixed", "name": name, "namespace": namespace, "size": t.byte_width}
    if pa.types.is_decimal(t):
        size = _decimal_bytes(t.precision)
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}", "size": size,
                "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(t):
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        return {"type": "long", "logicalType": f"timestamp-{unit}"}
    if pa.types.is_struct(t):
        return {"type": "record", "name": name, "namespace": namespace,
                "fields": [_avro_field(t.field(i), f"{namespace}.{name}") for i in range(t.num_fields)]}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "items": _nullable(_arrow_to_avro_type(t.value_type, name, namespace))}
    if pa.types.is_map(t):
        return {"type": "map", "values": _nullable(_arrow_to_avro_type(t.item_type, name, namespace))}
    raise SchemaMismatch(f"Arrow type {t} has no Avro equivalent in Hudi", hint="cast the column first")


def _decimal_bytes(precision: int) -> int:
    """Bytes of the smallest fixed that holds a decimal of this precision (parquet-avro's rule)."""
    n = 1
    while 2 ** (8 * n - 1) <= 10**precision:
        n += 1
    return n


def _nullable(t: Any) -> list[Any]:
    return ["null", t]


def _avro_field(f: pa.Field, namespace: str) -> dict[str, Any]:
    return {"name": f.name, "type": _nullable(_arrow_to_avro_type(f.type, f.name, namespace)), "default": None}


def avro_schema_from_arrow(schema: pa.Schema, record_name: str, namespace: str) -> dict[str, Any]:
    """The Avro record schema of an Arrow schema: every field ``["null", T]`` with default null."""
    ns = namespace
    return {"type": "record", "name": record_name, "namespace": ns,
            "fields": [_avro_field(schema.field(i), ns) for i in range(len(schema))]}
# --8<-- [end:arrow_to_avro]


def with_meta_fields(avro: Mapping[str, Any]) -> dict[str, Any]:
    """The schema with the five meta columns first (replacing any that are present)."""
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELDS]
    rest = [f for f in avro["fields"] if f["name"] not in META_FIELDS]
    return {**avro, "fields": meta + rest}


def without_meta_fields(avro: Mapping[str, Any]) -> dict[str, Any]:
    return {**avro, "fields": [f for f in avro["fields"] if f["name"] not in META_FIELDS]}


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema with the five string meta columns first."""
    rest = [f for f in schema if f.name not in META_FIELDS]
    return pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + rest)


# --8<-- [start:values]
def to_arrow_value(value: Any, t: pa.DataType) -> Any:
    """An Avro-decoded value as Arrow's ``from_pylist`` takes it (maps become key/value pairs)."""
    if value is None:
        return None
    if pa.types.is_map(t):
        pairs = value.items() if isinstance(value, Mapping) else value
        return [(k, to_arrow_value(v, t.item_type)) for k, v in pairs]
    if pa.types.is_struct(t):
        return {t.field(i).name: to_arrow_value(value.get(t.field(i).name), t.field(i).type)
                for i in range(t.num_fields)}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [to_arrow_value(v, t.value_type) for v in value]
    return value


def rows_to_arrow(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows (as dicts, e.g. decoded Avro records) as an Arrow table of ``schema``; missing columns null."""
    columns = {f.name: [to_arrow_value(r.get(f.name), f.type) for r in rows] for f in schema}
    try:
        return pa.table({f.name: pa.array(columns[f.name], type=f.type) for f in schema}, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as err:
        raise SchemaMismatch(f"records do not fit the table schema: {err}",
                             hint="the log records' schema is incompatible with the base file's") from err
# --8<-- [end:values]


def resolve_table_schema(commit_schemas: Sequence[str | None], base_file_schema: pa.Schema | None,
                         create_schema: str | None) -> pa.Schema | None:
    """The table schema readers use: the latest commit's schema (given newest last) with meta
    columns; else a base file's schema; else ``hoodie.table.create.schema``."""
    for s in reversed(commit_schemas):
        if s:
            return with_meta_columns(arrow_schema_from_avro(s))
    if base_file_schema is not None:
        return base_file_schema
    if create_schema:
        return with_meta_columns(arrow_schema_from_avro(create_schema))
    return None
