"""Schema on write: how an incoming batch's column types meet the table's.

A write's schema is checked against the table's latest schema before anything is written. Per
column (Avro primitive type names):

- the same type: nothing changes;
- the incoming type *promotes* to the table's (``int → long → float → double``, and each of those
  and ``date`` to ``string``): the incoming values are written as the table's type — Hudi reconciles
  the batch's schema to the table's (``AvroSchemaEvolutionUtils.reconcileSchemaRequirements``,
  hudi-common/src/main/java/org/apache/hudi/internal/schema/utils/AvroSchemaEvolutionUtils.java);
- the table's type promotes to the incoming one: the column evolves to the incoming type, and files
  written before are read by casting to it (``spec.schema.query_schema.conform``);
- otherwise (``boolean`` against a number, ``string`` against a number the table holds, ...): the
  write is refused with ``SchemaMismatch`` and the table is left as it was.

Which type promotes to which is ``SchemaChangeUtils.isTypeUpdateAllow``
(hudi-common/src/main/java/org/apache/hudi/internal/schema/action/SchemaChangeUtils.java, 0.15.x
and 1.0.x). New columns are allowed (nullable, read as null in older rows); a batch may not drop a
column of the table (``AvroSchemaUtils.checkSchemaCompatibility`` refuses it while
``hoodie.datasource.write.schema.allow.auto.evolution.column.drop`` is false, its default).

Apache Hudi with its defaults (``hoodie.avro.schema.validate`` false) does not refuse a
non-promotable change up front: the write fails only where a merge handle must rewrite a stored
row into the new type, and a write of new file groups only can commit such a change. This
specification refuses it before anything is written, as Hudi does with
``hoodie.avro.schema.validate=true`` (``AvroSchemaUtils.isSchemaCompatible``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``SchemaChangeUtils``
(``isTypeUpdateAllow``), ``AvroSchemaUtils`` (``checkSchemaCompatibility``, ``isSchemaCompatible``),
``HoodieSchemaUtils``.
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
