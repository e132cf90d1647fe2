"""Schema on write: how an incoming batch's column types meet the table's, at every depth.

A write's schema is checked against the table's latest schema before anything is written. The rules
hold for every top-level column and, below it, for every struct field, list element and map key and
value (a field's *path* names it: ``s.b``, ``l.element.b``, ``m.value``):

- **drops**: every field of the table is in the batch. A batch may not drop a column or a struct
  field at any depth (``AvroSchemaUtils.checkValidEvolution`` finds them with
  ``findAnyMissingFields``; refused while ``hoodie.datasource.write.schema.allow.auto.evolution.column.drop``
  is false, its default) — the rows a merge rewrites would lose the field's values;
- **new fields** (a column or a struct field the table lacks) are nullable: rows written before read
  them as null. A new non-null field is refused: Avro's reader-writer check needs a default for a
  reader field the writer lacks (``AvroSchemaCompatibility``, ``READER_FIELD_MISSING_DEFAULT_VALUE``);
- **nullability** of a field the table has may differ: a non-null batch field is written into a
  nullable table field, and a nullable one widens a non-null table field
  (``AvroSchemaEvolutionUtils.reconcileSchemaRequirements`` aligns the nullability);
- **kinds**: a struct stays a struct, a list a list, a map a map, a primitive a primitive (Avro:
  ``TYPE_MISMATCH``);
- **primitive types** (Avro primitive type names), at any depth:

  - the same type: nothing changes;
  - the incoming type *promotes* to the table's (``int → long → float → double``, and each of those
    and ``date`` to ``string``): the incoming values are written as the table's type — Hudi reconciles
    the batch's schema to the table's (``AvroSchemaEvolutionUtils.reconcileSchemaRequirements``,
    hudi-common/src/main/java/org/apache/hudi/internal/schema/utils/AvroSchemaEvolutionUtils.java);
  - the table's type promotes to the incoming one: the field evolves to the incoming type, and files
    written before are read by casting to it (``spec.schema.query_schema.conform``);
  - otherwise (``boolean`` against a number, ``string`` against a number the table holds, ...): the
    write is refused with ``SchemaMismatch`` and the table is left as it was.

  Two logical types of one family (two timestamps, two decimals) are left to the batch.

Which type promotes to which is ``SchemaChangeUtils.isTypeUpdateAllow``
(hudi-common/src/main/java/org/apache/hudi/internal/schema/action/SchemaChangeUtils.java, 0.15.x
and 1.0.x).

Apache Hudi with its defaults (``hoodie.avro.schema.validate`` false) does not refuse a
non-promotable change up front: the write fails only where a merge handle must rewrite a stored
row into the new type, and a write of new file groups only can commit such a change. This
specification refuses it before anything is written, as Hudi does with
``hoodie.avro.schema.validate=true`` (``AvroSchemaUtils.isSchemaCompatible``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``SchemaChangeUtils``
(``isTypeUpdateAllow``), ``AvroSchemaUtils`` (``checkValidEvolution``, ``findAnyMissingFields``,
``checkSchemaCompatibility``, ``isSchemaCompatible``), ``AvroSchemaCompatibility``,
``AvroSchemaEvolutionUtils.reconcileSchemaRequirements`` and ``HoodieSchemaUtils.deduceWriterSchema``
(hudi-spark-datasource/hudi-spark-common).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pyarrow as pa

from spec.errors import SchemaMismatch

# --8<-- [start:promotions]
PROMOTIONS: Final[Mapping[str, frozenset[str]]] = {
    "int": frozenset({"long", "float", "double", "string"}),
    "long": frozenset({"float", "double", "string"}),
    "float": frozenset({"double", "string"}),
    "double": frozenset({"string"}),
    "date": frozenset({"string"}),
    "string": frozenset(),
    "boolean": frozenset(),
    "bytes": frozenset(),
}
"""``SchemaChangeUtils.isTypeUpdateAllow``: the types each primitive type may change into (decimal
targets left out: the case language has no decimals)."""


def promotes(source: str, target: str) -> bool:
    """Whether values of Avro type ``source`` may be read and written as ``target``."""
    return source == target or target in PROMOTIONS.get(source, frozenset())


def reconcile_type(column: str, table_type: str, incoming_type: str) -> str:
    """The column's type after a write: the table's when the incoming type promotes to it (the
    values are written as the table's type), the incoming type when the table's promotes to it
    (the column evolves), else ``SchemaMismatch`` naming both types."""
    if promotes(incoming_type, table_type):
        return table_type
    if promotes(table_type, incoming_type):
        return incoming_type
    raise SchemaMismatch(f"column {column!r} is {table_type} in the table and {incoming_type} in the batch; "
                         f"{incoming_type} neither promotes to {table_type} nor {table_type} to {incoming_type}",
                         hint="write the column as " + table_type
                              + " (allowed changes: int → long → float → double, a number or date → string)")
# --8<-- [end:promotions]


_ARROW_PRIMITIVES: Final = ((pa.types.is_int8, "int"), (pa.types.is_int16, "int"), (pa.types.is_int32, "int"),
                            (pa.types.is_int64, "long"), (pa.types.is_float32, "float"),
                            (pa.types.is_float64, "double"), (pa.types.is_string, "string"),
                            (pa.types.is_large_string, "string"), (pa.types.is_boolean, "boolean"),
                            (pa.types.is_binary, "bytes"), (pa.types.is_large_binary, "bytes"),
                            (pa.types.is_date32, "date"))


def avro_primitive(arrow_type: pa.DataType) -> str | None:
    """The Avro primitive type an Arrow type stands for in a Hudi file (None for the others)."""
    return next((name for test, name in _ARROW_PRIMITIVES if test(arrow_type)), None)



# --8<-- [start:every_depth]
_FAMILIES: Final = (pa.types.is_timestamp, pa.types.is_decimal, pa.types.is_time, pa.types.is_date,
                    pa.types.is_fixed_size_binary, pa.types.is_duration)


def _kind(t: pa.DataType) -> str:
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_map(t):
        return "map"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list"
    return "primitive"


def _refuse_kind(path: str, table: pa.DataType, incoming: pa.DataType) -> SchemaMismatch:
    return SchemaMismatch(f"{_named(path)} is {table} in the table and {incoming} in the batch: a "
                          f"{_kind(table)} cannot become a {_kind(incoming)}" if _kind(table) != _kind(incoming) else
                          f"{_named(path)} is {table} in the table and {incoming} in the batch, which do not convert",
                          hint=f"write {path} as the table's {table} (a field's type may only widen: "
                               "int → long → float → double, a number or date → string)")


def _named(path: str) -> str:
    return f"column {path!r}" if "." not in path else f"field {path!r}"


def written_type(path: str, table: pa.DataType, incoming: pa.DataType) -> pa.DataType:
    """The type the batch's ``incoming`` values at ``path`` are written as, against the table's type
    ``table`` (the module's rules, recursively): ``incoming`` unchanged, or with the fields that promote
    to the table's type cast to it. Raises ``SchemaMismatch`` naming the path of a dropped field, a new
    non-null field, a changed kind or a primitive change neither way promotes."""
    if table == incoming or pa.types.is_null(incoming):  # a column of nulls only is refused where it is typed
        return incoming
    kind = _kind(table)
    if kind != _kind(incoming):
        raise _refuse_kind(path, table, incoming)
    if kind == "struct":
        return pa.struct(_written_fields(path, list(table), list(incoming)))
    if kind == "map":
        key = written_type(f"{path}.key", table.key_type, incoming.key_type)
        item = incoming.item_field
        return pa.map_(key, item.with_type(written_type(f"{path}.value", table.item_type, item.type)))
    if kind == "list":
        item = incoming.value_field
        value = item.with_type(written_type(f"{path}.element", table.value_type, item.type))
        return pa.large_list(value) if pa.types.is_large_list(incoming) else pa.list_(value)
    old, new = avro_primitive(table), avro_primitive(incoming)
    if old is not None and new is not None:
        if old == new:
            return incoming
        return table if reconcile_type(path, old, new) == old else incoming
    if any(same(table) and same(incoming) for same in _FAMILIES):
        return incoming
    raise _refuse_kind(path, table, incoming)


def _written_fields(path: str, table: list[pa.Field], incoming: list[pa.Field]) -> list[pa.Field]:
    """The batch's fields of a record at ``path`` (the top level when empty) as they are written."""
    given = {f.name for f in incoming}
    dropped = [f.name for f in table if f.name not in given]
    if dropped:
        names = ", ".join(f"{path}.{n}" if path else n for n in dropped)
        raise SchemaMismatch(f"the batch drops {'field' if path else 'column'}(s) {names} of the table's schema",
                             hint="write every field of the table (null where unknown); dropping one would lose "
                                  "its values in every row a merge rewrites")
    known = {f.name: f for f in table}
    out = []
    for f in incoming:
        where = f"{path}.{f.name}" if path else f.name
        if f.name not in known:
            if not f.nullable:
                raise SchemaMismatch(f"{_named(where)} is new and declared non-null: the rows the table already "
                                     "holds have no value for it",
                                     hint=f"make {where} nullable (rows written before read it as null)")
            out.append(f)
        else:
            out.append(f.with_type(written_type(where, known[f.name].type, f.type)))
    return out


def evolve_schema(table: pa.Schema, incoming: pa.Schema) -> dict[str, pa.DataType]:
    """The columns of a batch (its user columns) whose values must be cast before they are written, with
    the type to cast to, against the table's latest schema (its data columns); ``SchemaMismatch`` for a
    change the module's rules refuse, at any depth."""
    fields = _written_fields("", list(table), list(incoming))
    return {f.name: f.type for f, given in zip(fields, incoming, strict=True) if f.type != given.type}


def read_as(path: str, written: pa.DataType, table: pa.DataType) -> None:
    """Whether values a file wrote as ``written`` read as the table schema's ``table`` at ``path``: the same
    kinds at every depth, each primitive promoting to the table's (struct fields the file lacks read as
    null; fields only the file has are left out). Raises ``SchemaMismatch`` naming the path otherwise."""
    if written == table:
        return
    kind = _kind(table)
    if kind != _kind(written):
        raise SchemaMismatch(f"{_named(path)} was written as {written} in a file of this table, which does not "
                             f"read as the table schema's {table}",
                             hint="the table's files disagree incompatibly on this field: rewrite them, or write "
                                  "the field with a compatible type")
    if kind == "struct":
        have = {f.name: f for f in written}
        for f in table:
            if f.name in have:
                read_as(f"{path}.{f.name}", have[f.name].type, f.type)
    elif kind == "map":
        read_as(f"{path}.key", written.key_type, table.key_type)
        read_as(f"{path}.value", written.item_type, table.item_type)
    elif kind == "list":
        read_as(f"{path}.element", written.value_type, table.value_type)
    else:
        old, new = avro_primitive(written), avro_primitive(table)
        if old is not None and new is not None and not promotes(old, new):
            raise SchemaMismatch(f"{_named(path)} was written as {old} in a file of this table, and {old} does not "
                                 f"promote to the table schema's {new}",
                                 hint="the table's files disagree incompatibly on this field (see "
                                      "spec.schema.evolution): rewrite the file, or evolve the field compatibly")
# --8<-- [end:every_depth]
