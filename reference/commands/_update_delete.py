"""Update and delete by a condition: Spark SQL's ``UPDATE t SET … WHERE …`` and ``DELETE FROM t WHERE …`` on
a Hudi table (Hudi's ``UpdateHoodieTableCommand`` and ``DeleteHoodieTableCommand``), on either engine.

Both read the table's snapshot (the spec reader, ``spec.read.reader.read_table``), keep the rows the condition
matches (``reference.commands._where``: comparisons, ``IN``, ``IS [NOT] NULL``, ``AND``, ``OR``, ``NOT``; a
null never matches, as in SQL), and write them through the write path of the table's engine:

- ``delete``: a ``delete`` of the matched rows;
- ``update``: an ``upsert`` of the matched rows with each column of SET (``column = literal``, by commas) set to
  its literal. The record key and partition fields cannot be set (a row would move to another key or
  partition: Hudi's ``UPDATE`` refuses to change a primary key, and we refuse both), nor a meta column
  (``_hoodie_*``, the writer's), nor the ordering field (a
  lower value would lose the upsert's merge to the row it updates, by the table's event-time ordering).

Like Spark SQL's commands, the rows carry their keys: on a table with auto-generated record keys (no record
key field, ``spec.keygen.auto_record_key``) the write takes each row's ``_hoodie_record_key`` and
``_hoodie_partition_path`` (Hudi's prepped writes); on any other table the keys come from the rows' fields, the
same keys. Every file group holding a matched row is written, and no other (an upsert of existing keys only).
The commit's ``operationType`` is ``UPSERT_PREPPED`` or ``DELETE_PREPPED``, as Hudi's commands write theirs
(Apache Hudi 1.2.0 measured).
A condition that matches no row writes nothing (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reference.commands._where import _typed
from spec.errors import InvalidOperation

if TYPE_CHECKING:
    import pyarrow as pa

    from reference.write.client import WriteClient, WriteResult


@dataclass(frozen=True)
class Assignment:
    """``column = literal`` of an update's SET (a literal as in the filter, or ``null``)."""

    column: str
    value: Any


def parse_set(text: str) -> tuple[Assignment, ...]:
    """An update's SET: ``column = literal`` joined by commas (``v = 'x', n = 2``); anything else, or a column
    set twice, is an InvalidOperation (``reference.commands._merge_clauses.parse_assignments``, literals alone)."""
    from reference.commands._merge_clauses import Literal, parse_assignments

    hint = ("write e.g. --set \"fare = 10, city = 'sf'\" (column = literal, by commas; "
            "strings in single quotes, numbers, true, false, null)")
    parsed = parse_assignments(text, "--set", hint, columns=False)
    assert parsed is not None  # None is ``*``, taken only where columns are
    out = []
    for column, value in parsed:
        assert isinstance(value, Literal)  # columns=False: literals alone
        out.append(Assignment(column, value.value))
    return tuple(out)


def assigned(table: pa.Table, assignments: tuple[Assignment, ...]) -> pa.Table:
    """``table`` with each assigned column set to its literal, as a value of the column's type (a literal of
    another kind, or a column the table lacks, is an InvalidOperation)."""
    import pyarrow as pa

    for a in assignments:
        if a.column not in table.column_names:
            raise InvalidOperation(f"--set names no column of the table: {a.column!r}",
                                   hint=f"columns are: {', '.join(table.column_names)}")
        i = table.schema.get_field_index(a.column)
        typ = table.schema.field(i).type
        try:
            value = None if a.value is None else _typed(a.column, typ, a.value)
        except InvalidOperation as err:
            raise InvalidOperation(f"--set {a.column!r}, of type {typ}, to {a.value!r}", hint=err.hint) from err
        if isinstance(value, float) and pa.types.is_integer(typ):
            raise InvalidOperation(f"--set {a.column!r}, of type {typ}, to {a.value!r}",
                                   hint="set an integer column to a whole number")
        table = table.set_column(i, table.schema.field(i), pa.array([value] * table.num_rows, type=typ))
    return table


def matched_rows(path: str, where: str) -> pa.Table:
    """The snapshot's rows the condition ``where`` matches, with their meta columns."""
    from reference.commands._where import filter_rows, parse_where
    from spec.read.reader import read_table

    node = parse_where(where)
    return filter_rows(read_table(path, "snapshot"), node)


def _rows_to_write(client: WriteClient, rows: pa.Table) -> pa.Table:
    """The rows as a write takes them: with their keys' meta columns on a table with auto-generated keys, else
    their fields alone."""
    from spec.keygen.auto_record_key import PREPPED_COLUMNS
    from spec.schema.table_schema import META_FIELDS

    table = client.table_config()
    assert table is not None
    keep = PREPPED_COLUMNS if not table.record_key_fields else ()
    return rows.select([c for c in rows.column_names if c not in META_FIELDS or c in keep])


def delete_where(client: WriteClient, where: str, options: Mapping[str, Any] | None = None) -> WriteResult | None:
    """Delete the rows ``where`` matches (module docstring); the write's result, or None when none matches."""
    rows = matched_rows(client.path, where)
    if rows.num_rows == 0:
        return None
    return client.write(_rows_to_write(client, rows), "delete", options, prepped=True)


def update_where(client: WriteClient, where: str, set_: str,
                 options: Mapping[str, Any] | None = None) -> WriteResult | None:
    """Set the columns of ``set_`` in the rows ``where`` matches (module docstring); the write's result, or None
    when none matches."""
    assignments = parse_set(set_)
    table = client.table_config()
    if table is None:
        raise InvalidOperation(f"{client.path} is not a Hudi table", hint="write data first")
    fixed = {"a record key": table.record_key_fields, "a partition": table.partition_fields,
             "the ordering": (table.ordering_field,) if table.ordering_field else ()}
    from spec.schema.table_schema import META_FIELDS

    for a in assignments:
        if a.column in META_FIELDS:
            raise InvalidOperation(f"--set {a.column!r}: the writer fills Hudi's meta columns",
                                   hint="set columns of the table's own schema")
        kind = next((k for k, cols in fixed.items() if a.column in cols), None)
        if kind is not None:
            raise InvalidOperation(f"--set {a.column!r}: an update cannot change {kind} field",
                                   hint="delete the rows and insert them anew with the new value")
    rows = matched_rows(client.path, where)
    if rows.num_rows == 0:
        return None
    return client.write(_rows_to_write(client, assigned(rows, assignments)), "upsert", options, prepped=True)




def merge_source(client: WriteClient, source: Any, options: Mapping[str, Any] | None = None) -> WriteResult:
    """Spark SQL's ``MERGE INTO t USING source ON <t's record key> = <source's> WHEN MATCHED THEN UPDATE SET *
    WHEN NOT MATCHED THEN INSERT *`` on a table with a record key field: one ``upsert`` of the source. Apache
    Hudi 1.2.0's statement (measured, copy-on-write and merge-on-read) records ``UPSERT`` with the same write
    stats and leaves the same rows, a source row whose ordering value is below the stored row's losing as in an
    upsert; its columns come out in the catalog's order (partition columns last), ours in the table's. Every other
    form of the statement: ``reference.commands._merge``."""
    table = client.table_config()
    if table is None or not table.record_key_fields:
        raise InvalidOperation("merge matches rows by the table's record key: the table has none"
                               if table is not None else f"{client.path} is not a Hudi table",
                               hint="merge into a table with a record key field, or insert into this one")
    return client.write(source, "upsert", options)


# --- the command line: `hudi-spec update` and `hudi-spec delete` -------------------------------------------


def add_arguments(p: Any) -> None:
    """The arguments ``update`` and ``delete`` share: ``--where``, ``--engine``, ``--option``."""
    from reference.commands import _output

    p.add_argument("--where", required=True, metavar="CONDITION",
                   help="the rows: comparisons of a column with a literal (=, !=, <, <=, >, >=), IN (...), IS [NOT] "
                        "NULL, joined by AND, OR, NOT and parentheses; strings in single quotes")
    _output.add_engine_option(p)
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="any hoodie.* write option")


def emit(args: Any, verb: str, result: WriteResult | None, inserts: bool = False) -> int:
    """The command's output: the instant written and its totals (``inserts`` too when asked), or that no row
    matched (nothing written)."""
    from reference.commands import _output

    if result is None:
        summary: dict[str, Any] = {"instant": None, "rows_matched": 0, "engine": args.engine}
    else:
        stats = list(result.metadata.all_write_stats())
        summary = {"instant": result.instant, "action": result.action, "operation": result.operation,
                   "files": len(stats), "updates": sum(s.num_updates for s in stats),
                   "deletes": sum(s.num_deletes for s in stats), "engine": args.engine}
        if inserts:
            summary = {**summary, "inserts": sum(s.num_inserts for s in stats)}
    if args.output == "json":
        _output.emit_json(summary)
    elif args.output == "csv":
        _output.emit_csv(list(summary), [list(summary.values())])
    else:
        title = f"{verb} {args.table}" + ("" if result is not None else ": no row matched, nothing written")
        _output.emit_mapping(title, summary, "what", "value")
    return 0


def options_of(args: Any) -> dict[str, str]:
    """``--option KEY=VALUE`` as write options."""
    from spec.errors import InvalidConfig

    options: dict[str, str] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidConfig(f"--option {item!r} is not KEY=VALUE", hint="write --option hoodie.KEY=VALUE")
        options[key] = value
    return options


def client_of(args: Any) -> WriteClient:
    """The write client of the command's table and engine (the table must exist)."""
    from reference.write.client import WriteClient
    from spec.errors import InvalidTable
    from spec.storage.hoodie_storage import Storage

    if not Storage(args.table).exists(".hoodie/hoodie.properties"):
        raise InvalidTable(f"{args.table} is not a Hudi table", hint="give the base path of a table")
    return WriteClient(args.table, engine=args.engine)


__all__ = ["Assignment", "add_arguments", "assigned", "client_of", "delete_where", "emit", "matched_rows",
           "merge_source", "options_of", "parse_set", "update_where"]
