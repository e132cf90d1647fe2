"""The schema a query's rows are read in, and how a file's columns are put in it.

- **The table schema** a query reads with is the writer schema of the latest completed commit that
  records one — at or before ``as_of`` for a time-travel query, else the latest. Incremental queries
  use the latest schema (``hoodie.datasource.read.schema.use.end.instanttime`` is false by default).
  None when no commit records a schema (``table_schema``, ``table_columns``).
- **Conforming** (``conform``): a column whose file wrote another physical type (an evolved column:
  int → long → float → double, or to string, at any depth of a struct, list or map) is cast to the
  table's type; a column of the schema a slice lacks reads as null, and so does a struct field; a
  value the cast cannot carry is a ``SchemaMismatch`` — the files disagree incompatibly (``cast_column``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieBaseRelation``
(``TableSchemaResolver.getTableAvroSchema(timestamp)`` for time travel, ``getTableAvroSchema()``
otherwise), ``IncrementalRelation`` (the latest schema), ``HoodieAvroUtils.rewriteRecordWithNewSchema``
and Spark's parquet schema evolution (a file's columns projected onto the table schema), in
hudi-spark-datasource/hudi-spark-common/src/main/scala/org/apache/hudi/ and hudi-common/…/hudi/avro/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa

from spec.errors import HudiSpecError, SchemaMismatch
from spec.schema.evolution import read_as
from spec.schema.table_schema import arrow_schema_from_avro
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import read_instant_content

_UNREADABLE = (HudiSpecError, ValueError, KeyError, TypeError)


# --8<-- [start:table_schema]
def commit_schemas(storage: Storage, timeline: Timeline, as_of: str | None = None) -> Iterator[str]:
    """The writer schemas (Avro JSON) completed commits record, latest first; only commits requested at
    or before ``as_of`` when given. A commit without readable metadata names no schema."""
    for inst in reversed(timeline.commits_timeline().completed().instants):
        if as_of is not None and inst.requested > as_of:
            continue
        try:
            md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))
        except _UNREADABLE:
            continue
        if md.schema:
            yield md.schema


def table_schema(storage: Storage, timeline: Timeline, as_of: str | None = None) -> pa.Schema | None:
    """The data columns of the table schema a query reads with (see the module docstring), as Arrow."""
    for text in commit_schemas(storage, timeline, as_of):
        try:
            return arrow_schema_from_avro(text)
        except _UNREADABLE:
            continue
    return None
# --8<-- [end:table_schema]


def table_columns(storage: Storage, timeline: Timeline) -> frozenset[str] | None:
    """The column names of the latest schema a completed commit records (None when none does)."""
    for text in commit_schemas(storage, timeline):
        try:
            return frozenset(f["name"] for f in json.loads(text)["fields"])
        except _UNREADABLE:
            continue
    return None


def conform(table: pa.Table, schema: pa.Schema | None, add_missing: bool = True) -> pa.Table:
    """A slice's rows in the query's table schema: the ``_hoodie_*`` meta columns first, then the schema's
    columns in its order, each cast to the schema's type (``cast_column``), a missing one null unless
    ``add_missing`` is False (a projection: its columns in its order, cast where they differ); columns the
    schema lacks stay, last."""
    if schema is None:
        return table
    names = frozenset(schema.names)  # each ``names`` of a schema or table is a new list: looked up once
    if not add_missing:
        return pa.Table.from_arrays(
            [cast_column(table.column(n), schema.field(n).type, n) if n in names else table.column(n)
             for n in table.column_names], names=table.column_names)
    arrays, fields = [], []
    meta = [f for f in table.schema if f.name not in names and f.name.startswith("_hoodie_")]
    for f in meta:
        arrays.append(table.column(f.name))
        fields.append(f)
    present = frozenset(table.column_names)
    for f in schema:
        if f.name in present:
            col = cast_column(table.column(f.name), f.type, f.name)
            arrays.append(col)
            fields.append(pa.field(f.name, col.type, nullable=True))
        else:
            arrays.append(pa.nulls(table.num_rows, f.type))
            fields.append(pa.field(f.name, f.type, nullable=True))
    meta_names = {f.name for f in meta}
    for f in table.schema:
        if f.name not in names and f.name not in meta_names:
            arrays.append(table.column(f.name))
            fields.append(f)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def cast_column(col: pa.ChunkedArray, to: pa.DataType, name: str) -> pa.ChunkedArray:
    """A column of one physical type read as the table schema's, at every depth (struct fields, list
    elements, map keys and values): allowed where each written primitive promotes to the table's
    (``spec.schema.evolution.read_as``; a struct field the file lacks reads as null), else ``SchemaMismatch``."""
    if col.type == to:
        return col
    read_as(name, col.type, to)
    try:
        return col.cast(to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise SchemaMismatch(f"column {name!r} was written as {col.type} in a file of this table, which does "
                             f"not read as the table schema's {to}: {err}",
                             hint="the table's files disagree incompatibly on this column: rewrite them, or "
                                  "write the column with a compatible type") from err
