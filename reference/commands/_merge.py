"""Spark SQL's ``MERGE INTO t USING s ON … WHEN MATCHED … WHEN NOT MATCHED …`` on a Hudi table with a record key
field, as Apache Hudi 1.2.0's ``MergeIntoHoodieTableCommand`` runs it, on either engine.

Hudi's statement is one ``upsert`` of the whole source: every source record is routed by the index like an upsert's
(to the file group holding its key, or as an insert to a small file group or a new one), and Hudi's
``ExpressionPayload`` decides in the handle what each one becomes:

- a source record whose key the table holds (in its partition) takes the first ``WHEN MATCHED [AND cond] THEN
  UPDATE`` clause whose condition holds — ``UPDATE SET *`` (the source's columns) or ``UPDATE SET col = expr, …``
  (the other columns keep the stored values) —, else the ``DELETE`` clause if its condition holds (the stored row
  goes, whatever its ordering value). The updates come first wherever the ``DELETE`` stands, unlike Spark SQL's
  first-clause-wins (Hudi's ``ExpressionPayload``; measured: ``WHEN MATCHED AND s.v = 'x' THEN DELETE WHEN MATCHED
  THEN UPDATE SET *`` updated the rows whose ``s.v`` is ``'x'``);
- any other source record takes the first ``WHEN NOT MATCHED [AND cond]`` clause whose condition holds:
  ``INSERT *`` or ``INSERT (cols) VALUES (exprs)`` (the other columns null);
- a record no clause takes is written nowhere, yet the file group it was routed to is still written: a merge handle
  rewrites its base file with the stored row unchanged (counted as no update), and on merge-on-read an append handle
  left with no record writes nothing (Apache Hudi 1.2.0 measured, copy-on-write and merge-on-read). We route and
  write the same way: the records go through the upsert with an internal action each
  (``reference.io.merge_actions.MERGE_ACTION``), so the same file groups are written with the same counts.

Source records with one key are deduplicated by the ordering field first, as in any upsert (Hudi's
``hoodie.combine.before.upsert``), and an updated record whose ordering value is below the stored row's loses to it.

Expressions are literals (as in ``--where``: ``'text'``, numbers, ``true``, ``false``, ``null``) and columns of the
source (``s.col``) or the target (``t.col``); conditions are the ``--where`` grammar over such columns compared
with literals. Forms Hudi refuses, or runs with results of its own, are refused (``InvalidOperation``), each naming
what Hudi does:

- ``ON`` must equate every record key field of the target (``t.id = s.id``), and may equate partition fields:
  Hudi 1.2.0 matches by the record key whatever ``ON`` says (measured: ``ON t.v = s.v`` updated rows by their key);
- a second ``DELETE`` clause (Hudi: "Only one deleting action is supported in MERGE INTO statement");
- an ``UPDATE SET`` or ``INSERT`` that does not assign the ordering field, an ``INSERT`` that does not assign the
  record key (Hudi: "No matching assignment found for target table ordering field");
- a record key or partition field assigned anything but the source's own column: Hudi keeps the record in the key
  and file group of the source row, and writes the new value into the column (measured: ``SET id = s.id + 10``
  wrote a row whose ``id`` is not its key; ``SET p = 'c'`` left the row in partition ``a`` with ``p = 'c'``);
- merge-on-read: a target column in an ``UPDATE`` value (Hudi: "Target table's field … cannot be the right-value
  of the update clause for MOR table"), an ``UPDATE SET`` of some columns only (Hudi writes partial-update log
  blocks), a ``WHEN MATCHED`` condition on a target column (measured: a record routed to a log file is not
  compared with its stored row; ``WHEN MATCHED AND t.v = 'three'`` left the row whose ``v`` is ``'three'``
  unchanged);
- only ``WHEN NOT MATCHED`` clauses on a table without an ordering field: Hudi runs that statement as an
  ``insert`` (``MergeIntoHoodieTableCommand.getOperationType``), no record matched (measured: ``WHEN NOT MATCHED
  THEN INSERT *`` wrote a second row of each key the source shares with the table).

Not offered: a table without a record key field (Hudi joins source and target there), a global index
(``UnsupportedOption``: records are matched within their partition here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reference.commands._merge_clauses import (
    CLAUSE_HINT,
    SOURCE,
    TARGET,
    Column,
    Delete,
    Expression,
    Insert,
    Literal,
    MatchedClause,
    Update,
    column_ref,
    parse_assignments,
    parse_clause,
    parse_on,
)
from spec.errors import InvalidOperation

if TYPE_CHECKING:
    import pyarrow as pa

    from reference.commands._where import Node
    from reference.write.client import WriteClient, WriteResult
    from spec.config.table_config import TableConfig


@dataclass(frozen=True)
class MergePlan:
    """A checked statement: the source columns each target key field is matched with, the clauses with their
    parsed conditions and assignments (``matched`` in the order Hudi tries them: the updates, then the delete)."""

    on: tuple[tuple[str, str], ...]
    matched: tuple[tuple[MatchedClause, Node | None, tuple[tuple[str, Expression], ...] | None], ...]
    not_matched: tuple[tuple[Insert, Node | None, tuple[tuple[str, Expression], ...] | None], ...]


def _as_clause(c: Any, matched: bool) -> MatchedClause | Insert:
    if isinstance(c, str):
        return parse_clause(c, matched)
    if (matched and isinstance(c, Update | Delete)) or (not matched and isinstance(c, Insert)):
        return c
    kinds = "Update or Delete" if matched else "Insert"
    raise InvalidOperation(f"a {'WHEN MATCHED' if matched else 'WHEN NOT MATCHED'} clause must be a {kinds} or its "
                           f"SQL text, not {c!r}", hint=CLAUSE_HINT)


def plan_merge(config: TableConfig, columns: Sequence[str], on: str | None, when_matched: Sequence[Any],
               when_not_matched: Sequence[Any]) -> MergePlan:
    """The statement checked against the table (``config``, its data ``columns``): every refusal of the module
    docstring, before anything is read or written."""
    from reference.commands._where import columns_of, parse_where

    keys, partitions, ordering = config.record_key_fields, config.partition_fields, config.ordering_field
    mor = config.table_type == "MERGE_ON_READ"
    if not keys:
        raise InvalidOperation("merge matches rows by the table's record key: the table has none",
                               hint="merge into a table with a record key field, or insert into this one")
    pairs = parse_on(on) if on is not None else tuple((k, k) for k in keys)
    named = {t for t, _ in pairs}
    stray = sorted(named - set(keys) - set(partitions))
    missing = [k for k in keys if k not in named]
    if stray or missing:
        raise InvalidOperation(
            f"--on {on!r}: " + (f"{', '.join(stray)} is no record key or partition field" if stray else
                                f"the record key field {', '.join(missing)} is not matched"),
            hint="ON equates the target's record key fields with source columns (t.id = s.id), and may equate its "
                 "partition fields: Apache Hudi 1.2.0 matches records by their key whatever ON says")
    if not when_matched and not when_not_matched:
        raise InvalidOperation("a merge needs a WHEN MATCHED or WHEN NOT MATCHED clause",
                               hint="e.g. --when-matched \"UPDATE SET *\" --when-not-matched \"INSERT *\"")
    matched_clauses = [c for c in (_as_clause(c, True) for c in when_matched) if not isinstance(c, Insert)]
    inserts = [_as_clause(c, False) for c in when_not_matched]
    if sum(isinstance(c, Delete) for c in matched_clauses) > 1:
        raise InvalidOperation("Only one deleting action is supported in MERGE INTO statement (Apache Hudi 1.2.0)",
                               hint="join the DELETE clauses' conditions with OR")
    if not ordering and not any(isinstance(c, Update) for c in matched_clauses):
        raise InvalidOperation("a merge without an UPDATE clause on a table without an ordering field: Apache Hudi "
                               "1.2.0 runs it as an insert (MergeIntoHoodieTableCommand.getOperationType), which "
                               "writes a source record whose key the table holds a second time (measured: WHEN NOT "
                               "MATCHED THEN INSERT * left two rows of such a key)",
                               hint="add a WHEN MATCHED … THEN UPDATE clause, or insert the rows")
    source_of = dict(pairs)
    matched: list[tuple[MatchedClause, Node | None, tuple[tuple[str, Expression], ...] | None]] = []
    for c in matched_clauses:
        what = "--when-matched"
        node = parse_where(c.condition) if c.condition else None
        sides = {column_ref(n, what, c.condition or "", CLAUSE_HINT).side for n in columns_of(node)} if node else set()
        if mor and TARGET in sides:
            raise InvalidOperation(
                f"{what} condition {c.condition!r} names a target column: on merge-on-read Apache Hudi 1.2.0 does not "
                "compare a record routed to a log file with its stored row (measured: WHEN MATCHED AND t.v = 'three' "
                "left the row whose v is 'three' unchanged)", hint="name source columns (s.col) in the condition")
        assigned = parse_assignments(c.set, what) if isinstance(c, Update) else None
        if isinstance(c, Update) and assigned is not None:
            _check_assigned(assigned, columns, config, source_of, what, update=True)
            if mor and any(isinstance(v, Column) and v.side == TARGET for _, v in assigned):
                names = ",".join(v.name for _, v in assigned if isinstance(v, Column) and v.side == TARGET)
                raise InvalidOperation(f"Target table's field({names}) cannot be the right-value of the update clause "
                                       "for MOR table (Apache Hudi 1.2.0)", hint="assign source columns or literals")
            left = [col for col in columns if col not in {a for a, _ in assigned}]
            if mor and left:
                raise InvalidOperation(
                    f"{what} {c.set!r} leaves {', '.join(left)} unassigned: on merge-on-read Apache Hudi 1.2.0 writes "
                    "such an update as a partial-update log block (hoodie.spark.sql.merge.into.partial.updates)",
                    hint="assign every column, or UPDATE SET *")
        matched.append((c, node, assigned))
    not_matched: list[tuple[Insert, Node | None, tuple[tuple[str, Expression], ...] | None]] = []
    for ins in inserts:
        assert isinstance(ins, Insert)
        what = "--when-not-matched"
        node = parse_where(ins.condition) if ins.condition else None
        for n in columns_of(node) if node else ():
            if column_ref(n, what, ins.condition or "", CLAUSE_HINT).side == TARGET:
                raise InvalidOperation(f"{what} condition {ins.condition!r} names a target column: a record no row "
                                       "matched has none", hint="name source columns (s.col)")
        assigned = parse_assignments(ins.values, what)
        if assigned is not None:
            if any(isinstance(v, Column) and v.side == TARGET for _, v in assigned):
                raise InvalidOperation(f"{what} {ins.values!r}: Expressions in insert clause of the MERGE INTO "
                                       "statement can only reference source table attributes (Apache Hudi 1.2.0)",
                                       hint="insert source columns (s.col) or literals")
            _check_assigned(assigned, columns, config, source_of, what, update=False)
        not_matched.append((ins, node, assigned))
    # Hudi's ExpressionPayload tries the UPDATE clauses, in order, before the DELETE clause wherever it stands
    updates_first = [m for m in matched if isinstance(m[0], Update)] + [m for m in matched if isinstance(m[0], Delete)]
    return MergePlan(pairs, tuple(updates_first), tuple(not_matched))


def _check_assigned(assigned: tuple[tuple[str, Expression], ...], columns: Sequence[str], config: TableConfig,
                    source_of: Mapping[str, str], what: str, update: bool) -> None:
    """Columns the table has; the ordering field (and an insert's record key) assigned, as Hudi requires; a record
    key or partition field only to the source's own column."""
    from spec.schema.table_schema import META_FIELDS

    names = {c for c, _ in assigned}
    for c in names:
        if c in META_FIELDS:
            raise InvalidOperation(f"{what} assigns {c!r}: the writer fills Hudi's meta columns",
                                   hint="assign columns of the table's own schema")
        if c not in columns:
            raise InvalidOperation(f"{what} assigns {c!r}, no column of the table",
                                   hint=f"columns are: {', '.join(columns)}")
    required: list[tuple[str, str]] = [("ordering field", config.ordering_field)] if config.ordering_field else []
    if not update:
        required += [("record key field", k) for k in config.record_key_fields]
    for needed, field in required:
        if field not in names:
            raise InvalidOperation(f"{what}: No matching assignment found for target table {needed} `{field}` "
                                   "(Apache Hudi 1.2.0)", hint=f"assign {field} (e.g. {field} = s.{field}), or use *")
    for c, value in assigned:
        kind: str | None = ("record key" if c in config.record_key_fields else "partition"
                if c in config.partition_fields else None)
        if kind is None:
            continue
        own = Column(SOURCE, source_of.get(c, c))
        if value != own:
            raise InvalidOperation(
                f"{what} assigns the {kind} field {c!r} from {_show(value)}: Apache Hudi 1.2.0 keeps the record in the "
                f"{'key' if kind == 'record key' else 'partition'} of the source row and writes the value into the "
                "column alone (measured: SET id = s.id + 10 wrote a row whose id is not its key; SET p = 'c' left the "
                "row in partition a)", hint=f"assign {c} = s.{own.name}, or leave it out")


def _show(e: Expression) -> str:
    return f"{e.side}.{e.name}" if isinstance(e, Column) else repr(e.value)


# --- running a plan -------------------------------------------------------------------------------------------


def merge_rows(config: TableConfig, plan: MergePlan, source: pa.Table, target: pa.Table) -> pa.Table:
    """The records the merge's upsert writes: one per source record, with the table's data columns and the
    action of each (``reference.io.merge_actions.MERGE_ACTION``). ``target``: the snapshot's rows, meta columns
    included; a source record matches the row of its key in its partition."""
    import pyarrow as pa

    from reference.engines.local import normalize, with_keys
    from reference.io.merge_actions import MERGE_ACTION, MERGE_DELETE, MERGE_SKIP, MERGE_WRITE
    from spec.schema.table_schema import META_FIELDS, PARTITION_PATH, RECORD_KEY

    data_fields = [f for f in target.schema if f.name not in META_FIELDS]
    columns = [f.name for f in data_fields]
    source = normalize(source)
    for t_col, s_col in plan.on:  # Hudi aliases the ON's source side as the key column when the source lacks it
        if s_col not in source.column_names:
            raise InvalidOperation(f"--on names s.{s_col}, no column of the source",
                                   hint=f"source columns are: {', '.join(source.column_names)}")
        if t_col not in source.column_names:
            source = source.append_column(t_col, source.column(s_col))
    keyed = with_keys(source, config)
    stored = {(p, k): i for i, (p, k) in enumerate(zip(target.column(PARTITION_PATH).to_pylist(),
                                                       target.column(RECORD_KEY).to_pylist(), strict=True))}
    at = [stored.get((p, k)) for p, k in zip(keyed.column(PARTITION_PATH).to_pylist(),
                                             keyed.column(RECORD_KEY).to_pylist(), strict=True)]
    taken = target.select(columns).take(pa.array(at, pa.int64()))
    joined = pa.table({**{f"{SOURCE}.{c}": source.column(c) for c in source.column_names},
                       **{f"{TARGET}.{c}": taken.column(c) for c in columns}})
    is_match = [i is not None for i in at]
    n = source.num_rows
    actions = [MERGE_SKIP] * n
    chosen: list[int | None] = [None] * n  # the clause that took each record

    def holds(node: Node | None) -> list[bool]:
        if node is None:
            return [True] * n
        try:
            values = _evaluate(joined, node)
        except InvalidOperation as err:
            raise InvalidOperation(str(err).replace("--where", "a clause's condition"), hint=err.hint) from err
        return [v is True for v in values.to_pylist()]

    for k, (clause, node, _) in enumerate(plan.matched):
        for i, ok in enumerate(holds(node)):
            if ok and is_match[i] and chosen[i] is None:
                chosen[i], actions[i] = k, MERGE_DELETE if isinstance(clause, Delete) else MERGE_WRITE
    offset = len(plan.matched)
    for k, (_, node, _) in enumerate(plan.not_matched):
        for i, ok in enumerate(holds(node)):
            if ok and not is_match[i] and chosen[i] is None:
                chosen[i], actions[i] = offset + k, MERGE_WRITE
    rows = joined.to_pylist()
    ordering = config.ordering_field
    out: dict[str, list[Any]] = {c: [] for c in columns}
    for i, row in enumerate(rows):
        at_clause = chosen[i]
        assigned: tuple[tuple[str, Expression], ...] | None
        if at_clause is None or actions[i] == MERGE_DELETE:
            # written nowhere: the key's columns (and the source's ordering value, which deduplicates) suffice
            base = {c: row.get(f"{TARGET if is_match[i] else SOURCE}.{c}") for c in columns}
            if ordering and f"{SOURCE}.{ordering}" in row:
                base[ordering] = row[f"{SOURCE}.{ordering}"]
            for c in (*config.record_key_fields, *config.partition_fields):
                base[c] = row.get(f"{SOURCE}.{c}")
            values = base
        else:
            update = at_clause < offset
            assigned = plan.matched[at_clause][2] if update else plan.not_matched[at_clause - offset][2]
            if assigned is None:  # * : the source's columns by name
                absent = [c for c in columns if f"{SOURCE}.{c}" not in row]
                if absent:
                    raise InvalidOperation(f"{'UPDATE SET' if update else 'INSERT'} * takes every column from the "
                                           f"source, which lacks {', '.join(absent)}",
                                           hint="assign the columns (col = s.other), or add them to the source")
                values = {c: row[f"{SOURCE}.{c}"] for c in columns}
            else:
                given = dict(assigned)
                values = {}
                for c in columns:
                    e = given.get(c)
                    if e is None:
                        values[c] = row[f"{TARGET}.{c}"] if update else None
                    elif isinstance(e, Literal):
                        values[c] = e.value
                    else:
                        ref = f"{e.side}.{e.name}"
                        if ref not in row:
                            side = "source" if e.side == SOURCE else "table"
                            raise InvalidOperation(f"{ref} is no column of the {side}",
                                                   hint=f"source columns are: {', '.join(source.column_names)}")
                        values[c] = row[ref]
        for c in columns:
            out[c].append(values[c])
    arrays = []
    for f in data_fields:
        try:
            arrays.append(_typed_array(out[f.name], f.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as err:
            raise InvalidOperation(f"a value for {f.name!r}, of type {f.type}, is of another type: {err}",
                                   hint="give the column values of its type (a string in quotes, a number)") from err
    table = pa.Table.from_arrays(arrays, schema=pa.schema(data_fields))
    return table.append_column(MERGE_ACTION, pa.array(actions, pa.int8()))


def _typed_array(values: list[Any], typ: pa.DataType) -> pa.Array:
    import pyarrow as pa

    try:
        return pa.array(values, type=typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(values).cast(typ)


def _evaluate(table: pa.Table, node: Node) -> pa.ChunkedArray:
    """The condition's value on each row (null where SQL's is unknown)."""
    import pyarrow.dataset as ds

    from reference.commands._where import expression

    return ds.dataset(table).to_table(columns={"v": expression(node, table.schema)}).column("v")


def merge_into(client: WriteClient, source: Any, on: str | None, when_matched: Sequence[Any],
               when_not_matched: Sequence[Any], options: Mapping[str, Any] | None = None) -> WriteResult | None:
    """Run the statement (module docstring): one ``upsert``; None when the source has no record."""
    from reference.config.options import parse_options
    from reference.engines.local import LocalEngine
    from reference.io.global_index import global_index_of
    from spec.errors import UnsupportedOption
    from spec.read.reader import read_table
    from spec.schema.query_schema import table_schema
    from spec.schema.table_schema import META_FIELDS
    from spec.timeline.active_timeline import Timeline

    config = client.table_config()
    if config is None:
        raise InvalidOperation(f"{client.path} is not a Hudi table", hint="write data first")
    if global_index_of(parse_options(dict(options or {})), config) is not None:
        raise UnsupportedOption(f"merge with the global index {parse_options(dict(options or {})).index_type}: a "
                                "source record is matched with the stored row of its key in its own partition only",
                                hint="merge with a partition-scoped index (BLOOM, SIMPLE, BUCKET)")
    # the statement is checked against the schema the commits record, before any row is read
    schema = table_schema(client.storage, Timeline.load(client.storage))
    target = read_table(client.path, "snapshot") if schema is None else None
    names = schema.names if schema is not None else target.column_names  # type: ignore[union-attr]
    plan = plan_merge(config, [c for c in names if c not in META_FIELDS], on, when_matched, when_not_matched)
    target = read_table(client.path, "snapshot") if target is None else target
    rows = LocalEngine().frame(source)
    if rows.num_rows == 0:
        return None
    return client.write(merge_rows(config, plan, rows, target), "upsert", options)


__all__ = ["Delete", "Insert", "MergePlan", "Update", "merge_into", "merge_rows", "plan_merge"]
