"""Table schemas: the meta columns, Avro ⇄ Arrow as Hudi's writers and readers map them, and
which schema a reader takes (whether one schema reads another's data: ``spec.schema.compatibility``).

Hudi states table schemas in Avro: ``extraMetadata.schema`` of commits (without meta fields),
the SCHEMA header of log blocks and ``parquet.avro.schema`` in base files (with them),
``hoodie.table.create.schema`` in hoodie.properties. Spark writers derive the Avro schema from
the DataFrame's schema with Spark's ``SchemaConverters`` conventions, which
``avro_schema_from_arrow`` states: the record is ``<table>_record`` in namespace
``hoodie.<table>`` (the table name sanitized, ``spec.timeline.avro_schemas.sanitize_avro_name``); a nested record is
named after
its field, in the namespace of the record holding it; a decimal is a ``fixed`` named ``fixed`` in
namespace ``<record>.<field>``, of the fewest bytes that hold its precision; every nullable field
is ``["null", T]`` with default null.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieRecord`` (meta
fields), ``HoodieAvroUtils`` (``addMetadataFields``, ``sanitizeName``), ``AvroConversionUtils`` with
Spark's ``SchemaConverters``, and ``TableSchemaResolver``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from spec.errors import SchemaMismatch
from spec.timeline.avro_schemas import sanitize_avro_name

# --8<-- [start:meta_fields]
COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_FIELDS: tuple[str, ...] = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
"""The five meta columns, always first and in this order, each ``["null","string"]``, doc ``""``."""
OPERATION_FIELD = "_hoodie_operation"
"""Optional sixth meta column (``hoodie.allow.operation.metadata.field=true``)."""


def meta_field(name: str) -> dict[str, Any]:
    """A meta column as Hudi declares it: ``["null","string"]``, doc ``""``, default null."""
    return {"name": name, "type": ["null", "string"], "doc": "", "default": None}


def record_name_for_table(table_name: str) -> tuple[str, str]:
    """(record name, namespace) of a table's Avro schema: ``<t>_record`` in ``hoodie.<t>``, where
    ``<t>`` is the table name sanitized (``sanitize_avro_name``), as Hudi's
    ``AvroSchemaUtils.getAvroRecordQualifiedName`` (hudi-common/src/main/java/org/apache/hudi/avro/
    AvroSchemaUtils.java) and Spark's ``AvroConversionUtils.getAvroRecordNameAndNamespace`` state it:
    a table named ``my-table`` has the record ``my__table_record`` in ``hoodie.my__table``."""
    name = sanitize_avro_name(table_name)
    return f"{name}_record", f"hoodie.{name}"
# --8<-- [end:meta_fields]


def record_schema(avro: str | Mapping[str, Any]) -> Mapping[str, Any]:
    """A table schema (JSON text or parsed) as parsed JSON; SchemaMismatch unless it is an Avro record."""
    if isinstance(avro, str):
        try:
            obj = json.loads(avro)
        except json.JSONDecodeError as err:
            raise SchemaMismatch(f"the schema is not JSON: {err}", hint="pass an Avro schema") from err
    else:
        obj = avro
    if not isinstance(obj, Mapping) or obj.get("type") != "record":
        raise SchemaMismatch("a table schema must be an Avro record",
                             hint="check the SCHEMA header or commit")
    return obj


def with_meta_fields(avro: str | Mapping[str, Any], operation_field: bool = False) -> dict[str, Any]:
    """The schema with the meta columns first (replacing any already present)."""
    obj = record_schema(avro)
    names = META_FIELDS + ((OPERATION_FIELD,) if operation_field else ())
    rest = [f for f in obj["fields"] if f["name"] not in names]
    return {**obj, "fields": [meta_field(n) for n in names] + rest}


def without_meta_fields(avro: str | Mapping[str, Any]) -> dict[str, Any]:
    """The schema without the meta columns (what a commit records as ``extraMetadata.schema``)."""
    obj = record_schema(avro)
    drop = set(META_FIELDS) | {OPERATION_FIELD}
    return {**obj, "fields": [f for f in obj["fields"] if f["name"] not in drop]}


# --- Avro to Arrow -----------------------------------------------------------------------------------

# --8<-- [start:avro_to_arrow]
_PRIMITIVES: dict[str, pa.DataType] = {
    "string": pa.string(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
    "double": pa.float64(), "boolean": pa.bool_(), "bytes": pa.binary(), "null": pa.null(),
}


def _logical(t: Mapping[str, Any]) -> pa.DataType | None:
    """Arrow type of an Avro logical type (parquet-avro / Spark conventions), None when not logical."""
    logical, base = t.get("logicalType"), t.get("type")
    if logical == "decimal" and base in ("fixed", "bytes"):
        precision, scale = int(t["precision"]), int(t.get("scale", 0))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    known: dict[tuple[str, str], pa.DataType] = {
        ("date", "int"): pa.date32(),
        ("time-millis", "int"): pa.time32("ms"), ("time-micros", "long"): pa.time64("us"),
        ("timestamp-millis", "long"): pa.timestamp("ms", tz="UTC"),
        ("timestamp-micros", "long"): pa.timestamp("us", tz="UTC"),
        ("local-timestamp-millis", "long"): pa.timestamp("ms"),
        ("local-timestamp-micros", "long"): pa.timestamp("us"),
        ("uuid", "string"): pa.string(),
    }
    return known.get((str(logical), str(base)))


HUDI_LOGICAL_TYPES: Mapping[str, str] = {"variant": "record", "vector": "fixed", "blob": "record"}
"""Hudi 1.2's own logical types and the Avro type they are laid on; this reader sees the physical type (``_logical``
knows them not), and writers refuse a table that has them (``spec.write.writer_utils.check_table_features``)."""


def hudi_logical_types(avro: Any) -> tuple[str, ...]:
    """The Hudi logical types (``HUDI_LOGICAL_TYPES``) used anywhere in an Avro schema (JSON text or parsed), each
    once, in the order first met."""
    found: list[str] = []

    def walk(t: Any) -> None:
        if isinstance(t, list):
            for branch in t:
                walk(branch)
        elif isinstance(t, Mapping):
            if t.get("logicalType") in HUDI_LOGICAL_TYPES and t["logicalType"] not in found:
                found.append(t["logicalType"])
            for f in t.get("fields", ()):
                walk(f.get("type"))
            for key in ("type", "items", "values"):
                if not isinstance(t.get(key), str):
                    walk(t.get(key))

    walk(json.loads(avro) if isinstance(avro, str) else avro)
    return tuple(found)


class _Names:
    """Named Avro types (records, enums, fixed) seen so far, by full name, for later references."""

    def __init__(self) -> None:
        self.types: dict[str, pa.DataType] = {}

    @staticmethod
    def full(name: str, namespace: str) -> str:
        return name if "." in name or not namespace else f"{namespace}.{name}"

    def lookup(self, name: str, namespace: str) -> pa.DataType:
        for candidate in (self.full(name, namespace), name):
            if candidate in self.types:
                return self.types[candidate]
        short = [v for k, v in self.types.items() if k.rsplit(".", 1)[-1] == name]
        if len(short) == 1:
            return short[0]
        raise SchemaMismatch(f"Avro type {name!r} is neither primitive nor defined earlier in the schema",
                             hint="define a named type before referring to it")


def _to_arrow(t: Any, names: _Names, namespace: str) -> tuple[pa.DataType, bool]:
    """Arrow type of an Avro type, and whether it is nullable."""
    if isinstance(t, list):
        branches = [b for b in t if b != "null"]
        nullable = len(branches) < len(t)
        if len(branches) == 1:
            return _to_arrow(branches[0], names, namespace)[0], nullable
        if not branches:
            return pa.null(), True
        # a union of several types: a struct with one field per branch (Spark's member0, member1 ...)
        members = [pa.field(f"member{i}", _to_arrow(b, names, namespace)[0]) for i, b in enumerate(branches)]
        return pa.struct(members), nullable
    if isinstance(t, str):
        if t in _PRIMITIVES:
            return _PRIMITIVES[t], False
        return names.lookup(t, namespace), False
    if not isinstance(t, Mapping):
        raise SchemaMismatch(f"Avro type {t!r} is not a type")
    kind = t.get("type")
    logical = _logical(t)
    if logical is not None:
        out: pa.DataType = logical
    elif kind == "record":
        ns = str(t.get("namespace", namespace))
        full = names.full(str(t["name"]), ns)
        child_ns = full.rsplit(".", 1)[0] if "." in full else ""
        out = pa.struct([_field(f, names, child_ns) for f in t["fields"]])
        names.types[full] = out
        return out, False
    elif kind == "array":
        item, nullable = _to_arrow(t["items"], names, namespace)
        out = pa.list_(pa.field("element", item, nullable=nullable))
    elif kind == "map":
        value, nullable = _to_arrow(t["values"], names, namespace)
        out = pa.map_(pa.string(), pa.field("value", value, nullable=nullable))
    elif kind == "enum":
        out = pa.string()
    elif kind == "fixed":
        out = pa.binary(int(t["size"]))
    elif isinstance(kind, str) and kind in _PRIMITIVES:
        out = _PRIMITIVES[kind]
    elif isinstance(kind, str | list | Mapping):
        return _to_arrow(kind, names, namespace)
    else:
        raise SchemaMismatch(f"Avro type {t!r} is not supported")
    if kind in ("enum", "fixed") and "name" in t:
        names.types[names.full(str(t["name"]), str(t.get("namespace", namespace)))] = out
    return out, False


def _field(f: Mapping[str, Any], names: _Names, namespace: str) -> pa.Field:
    typ, nullable = _to_arrow(f["type"], names, namespace)
    return pa.field(f["name"], typ, nullable=nullable)


def arrow_schema_from_avro(avro: str | Mapping[str, Any]) -> pa.Schema:
    """The Arrow schema of an Avro record schema.

    Unions ``[null, T]`` are nullable T; a union of several non-null types becomes a struct of
    ``member0 ... memberN`` (Spark's rule); enums are strings; non-decimal fixed is fixed-size
    binary; named types may be referred to by name after their definition.
    """
    obj = record_schema(avro)
    names = _Names()
    try:
        struct, _ = _to_arrow(obj, names, str(obj.get("namespace", "")))
    except (KeyError, TypeError, AttributeError, ValueError) as err:  # a malformed schema (a damaged header)
        raise SchemaMismatch(f"not a valid Avro schema: {type(err).__name__} {err}",
                             hint="a record schema needs a name and fields, each with a name and a type") from err
    return pa.schema(list(struct))
# --8<-- [end:avro_to_arrow]


# --- Arrow to Avro -----------------------------------------------------------------------------------

# --8<-- [start:arrow_to_avro]
def decimal_fixed_size(precision: int) -> int:
    """Bytes of the smallest two's-complement fixed that holds ``precision`` decimal digits."""
    n = 1
    while 2 ** (8 * n - 1) <= 10**precision:
        n += 1
    return n


def _to_avro(t: pa.DataType, name: str, namespace: str) -> Any:
    """Avro type of an Arrow type; ``name`` is the field's name, ``namespace`` the full name of its record."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_uint8(t) \
            or pa.types.is_uint16(t):
        return "int"
    if pa.types.is_integer(t):
        return "long"
    if pa.types.is_float32(t) or pa.types.is_float16(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_fixed_size_binary(t):
        return {"type": "fixed", "name": name, "namespace": namespace, "size": t.byte_width}
    if pa.types.is_decimal(t):
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}",
                "size": decimal_fixed_size(t.precision), "logicalType": "decimal",
                "precision": t.precision, "scale": t.scale}
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(t):
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_timestamp(t):
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        local = "" if t.tz else "local-"
        return {"type": "long", "logicalType": f"{local}timestamp-{unit}"}
    if pa.types.is_struct(t):
        child = f"{namespace}.{name}"
        return {"type": "record", "name": name, "namespace": namespace,
                "fields": [_avro_field(t.field(i), child) for i in range(t.num_fields)]}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        item = t.value_field
        return {"type": "array", "items": _maybe_null(_to_avro(item.type, name, namespace), item.nullable)}
    if pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise SchemaMismatch(f"map keys must be strings in Avro, not {t.key_type}", hint="cast the keys")
        item = t.item_field
        return {"type": "map", "values": _maybe_null(_to_avro(item.type, name, namespace), item.nullable)}
    if pa.types.is_null(t):  # what Arrow infers for a column whose every value is null (e.g. read from JSON)
        raise SchemaMismatch(f"column {name!r} has no type: every value in it is null (Arrow type null)",
                             hint=f"give {name!r} a type, e.g. cast it to int64 or string, or leave the column out")
    raise SchemaMismatch(f"column {name!r}: Arrow type {t} has no Avro equivalent in Hudi",
                         hint="cast the column first")


def _maybe_null(t: Any, nullable: bool) -> Any:
    return ["null", t] if nullable else t


def _avro_field(f: pa.Field, namespace: str) -> dict[str, Any]:
    t = _to_avro(f.type, f.name, namespace)
    if f.nullable:
        return {"name": f.name, "type": ["null", t], "default": None}
    return {"name": f.name, "type": t}


def avro_schema_from_arrow(schema: pa.Schema, record_name: str, namespace: str) -> dict[str, Any]:
    """The Avro record schema a Spark writer derives for ``schema`` (nullable fields ``["null", T]``,
    default null; non-nullable fields plain ``T``)."""
    full = f"{namespace}.{record_name}" if namespace else record_name
    return {"type": "record", "name": record_name, "namespace": namespace,
            "fields": [_avro_field(schema.field(i), full) for i in range(len(schema))]}
# --8<-- [end:arrow_to_avro]


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema with the five (nullable string) meta columns first."""
    rest = [f for f in schema if f.name not in META_FIELDS]
    return pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + rest)


# --- values ------------------------------------------------------------------------------------------

# --8<-- [start:values]
def to_arrow_value(value: Any, t: pa.DataType) -> Any:
    """An Avro-decoded value (fastavro, logical types converted) as Arrow's ``from_pylist`` takes it:
    maps become key/value pairs, a value of a multi-type union goes to its ``member<i>`` field."""
    if value is None:
        return None
    if pa.types.is_map(t):
        pairs = value.items() if isinstance(value, Mapping) else value
        return [(k, to_arrow_value(v, t.item_type)) for k, v in pairs]
    if pa.types.is_struct(t):
        if t.num_fields and all(t.field(i).name == f"member{i}" for i in range(t.num_fields)):
            return _union_to_members(value, t)
        return {t.field(i).name: to_arrow_value(value.get(t.field(i).name), t.field(i).type)
                for i in range(t.num_fields)}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [to_arrow_value(v, t.value_type) for v in value]
    return value


def _fits(value: Any, t: pa.DataType) -> bool:
    if pa.types.is_struct(t):
        names = {t.field(i).name for i in range(t.num_fields)}
        return isinstance(value, Mapping) and set(value) <= names
    try:
        pa.array([value], type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return False
    return True


def _union_to_members(value: Any, t: pa.StructType) -> dict[str, Any]:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):  # (record name, value)
        value = value[1]
    out: dict[str, Any] = {t.field(i).name: None for i in range(t.num_fields)}
    for i in range(t.num_fields):
        if _fits(value, t.field(i).type):
            out[t.field(i).name] = to_arrow_value(value, t.field(i).type)
            return out
    raise SchemaMismatch(f"value {value!r} fits no branch of the union {t}")


def _nested(t: pa.DataType) -> bool:
    """Whether ``to_arrow_value`` changes values of type ``t`` (maps, structs, lists); of any other type it
    passes them through as they are."""
    return bool(pa.types.is_map(t) or pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t))


def rows_to_arrow(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows (dicts, e.g. decoded Avro records) as an Arrow table of ``schema``; missing columns null.
    Each column is built with one ``pa.array`` call, its values through ``to_arrow_value``."""
    try:
        columns = {f.name: [to_arrow_value(r.get(f.name), f.type) for r in rows] if _nested(f.type)
                   else [r.get(f.name) for r in rows] for f in schema}
        return pa.table({f.name: pa.array(columns[f.name], type=f.type) for f in schema}, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError, AttributeError) as err:
        raise SchemaMismatch(f"records do not fit the table schema: {err}",
                             hint="the log records' schema is incompatible with the base file's") from err


def avro_records_to_arrow(records: Sequence[Mapping[str, Any]],
                          avro_schema: str | Mapping[str, Any]) -> pa.Table:
    """Decoded Avro records (fastavro, logical types converted) as an Arrow table of the schema's
    Arrow form."""
    return rows_to_arrow(records, arrow_schema_from_avro(avro_schema))


def _to_avro_value(value: Any, t: Any) -> Any:
    """An Arrow ``to_pylist`` value as fastavro writes it under Avro type ``t``."""
    if value is None:
        return None
    if isinstance(t, list):
        branches = [b for b in t if b != "null"]
        if len(branches) == 1:
            return _to_avro_value(value, branches[0])
        members = value.values() if isinstance(value, Mapping) else ()
        chosen = [(i, v) for i, v in enumerate(members) if v is not None]
        if not chosen:
            raise SchemaMismatch(f"a value of union {t} has no member set: {value!r}")
        i, v = chosen[0]
        return _to_avro_value(v, branches[i])
    if isinstance(t, Mapping):
        kind = t.get("type")
        if kind == "record":
            return {f["name"]: _to_avro_value(value.get(f["name"]), f["type"]) for f in t["fields"]}
        if kind == "array":
            return [_to_avro_value(v, t["items"]) for v in value]
        if kind == "map":
            pairs = value.items() if isinstance(value, Mapping) else value
            return {k: _to_avro_value(v, t["values"]) for k, v in pairs}
        if isinstance(kind, list | Mapping):
            return _to_avro_value(value, kind)
    return value


def arrow_to_avro_records(table: pa.Table, avro_schema: str | Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of ``table`` as fastavro-ready records of ``avro_schema`` (maps as dicts; datetimes,
    dates, decimals and times left for fastavro's logical-type encoders)."""
    obj = record_schema(avro_schema)
    missing = [f["name"] for f in obj["fields"] if f["name"] not in table.column_names
               and not (isinstance(f["type"], list) and "null" in f["type"])]
    if missing:
        raise SchemaMismatch(f"the table lacks non-nullable field(s) {', '.join(missing)}")
    return [{f["name"]: _to_avro_value(row.get(f["name"]), f["type"]) for f in obj["fields"]}
            for row in table.to_pylist()]
# --8<-- [end:values]


# --- which schema readers use ----------------------------------------------------------------------

# --8<-- [start:resolve]
def resolve_table_schema(commit_schemas: Sequence[str | None], data_file_schema: pa.Schema | None,
                         create_schema: str | None, include_meta_fields: bool = True) -> pa.Schema | None:
    """The table schema readers use (Hudi's ``TableSchemaResolver``):

    1. the schema of the latest completed commit-like instant that recorded one
       (``commit_schemas`` in timeline order, oldest first; None/"" where an instant has none);
    2. else the schema of a data file (which carries the meta columns);
    3. else ``hoodie.table.create.schema``;

    with the meta columns first when ``include_meta_fields`` (Hudi passes the table's
    ``hoodie.populate.meta.fields``), without them otherwise. None when nothing states a schema.
    """
    def finish(schema: pa.Schema) -> pa.Schema:
        if include_meta_fields:
            return with_meta_columns(schema)
        return pa.schema([f for f in schema if f.name not in META_FIELDS])

    for s in reversed(commit_schemas):
        if s:
            return finish(arrow_schema_from_avro(s))
    if data_file_schema is not None:
        return finish(data_file_schema)
    if create_schema:
        return finish(arrow_schema_from_avro(create_schema))
    return None
# --8<-- [end:resolve]


