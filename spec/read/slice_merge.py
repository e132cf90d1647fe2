"""Merging a file slice: its base file's rows with the records of its log blocks, in Arrow.

A slice's log blocks (those ``spec.file_group.log_file.scanner`` applies) are decoded once each; per record key the
versions are folded in block order (``spec.read.merge.combine_logs``); a base row whose key the logs touch
is merged with its key's log version (``spec.read.merge.merge_with_base``), base rows the logs do not touch
are kept as they are, then the log versions of keys not in the base file follow. Deletes keep no row.
The merged rows follow the kept base rows, in base order, then the log-only keys in the order they
first appear in the logs. ``SliceMerge.merge`` computes the same rows column-wise where Arrow can
(``columnar``); the record-by-record path is the rule.

Columns: a column whose type evolved after the base file was written reads as the type the later log
blocks carry (``spec.schema.query_schema.cast_column``); a column a later writer added to the table's schema
is read from the log blocks that carry it, and only if the table's schema has it.

A row's record key is its ``_hoodie_record_key``, else rebuilt from the key fields (``record_key_of``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``HoodieMergedLogRecordScanner`` and ``HoodieMergeOnReadRDD`` (0.15.x), ``HoodieFileGroupReader`` and
``HoodieKeyBasedFileGroupRecordBuffer`` (1.x), ``KeyGenUtils`` (a key rebuilt from its fields), in
hudi-common/…/hudi/common/table/log/, hudi-common/…/hudi/common/table/read/ and
hudi-spark-datasource/hudi-spark-common/src/main/scala/org/apache/hudi/.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from spec.config.table_config import TableConfig
from spec.errors import InvalidOperation, SchemaMismatch
from spec.file_group.log_file.delete_block import ORDERING_BRANCHES, DeleteRecord, decode_delete_records
from spec.file_group.log_file.log_blocks import decode_avro_columns, decode_avro_records, decode_parquet_records
from spec.file_group.log_file.log_format import BlockType, LogBlock
from spec.read.merge import (
    IS_DELETED_FIELD,
    MergeMode,
    MergeRule,
    Version,
    as_version,
    combine_logs,
    delete_version,
    merge_with_base,
)
from spec.read.partial_update import (
    check_partial_block,
    is_partial,
    log_read_schema,
    record_after_delete,
    unfilled_partial_record,
)
from spec.schema.query_schema import cast_column
from spec.schema.table_schema import RECORD_KEY, arrow_schema_from_avro, rows_to_arrow

_ARROW_JAVA_TYPES = {pa.int8(): "int", pa.int16(): "int", pa.int32(): "int", pa.int64(): "long",
                     pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
                     pa.large_string(): "string",
                     pa.binary(): "bytes", pa.date32(): "int"}
_BRANCH_TYPES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string", "int", "decimal",
                 "long", "long", "array")
assert len(_BRANCH_TYPES) == len(ORDERING_BRANCHES)


def _java_type(t: pa.DataType | None) -> str | None:
    if t is None:
        return None
    if pa.types.is_timestamp(t):
        return "long"
    if pa.types.is_decimal(t):
        return "decimal"
    return _ARROW_JAVA_TYPES.get(t)


def record_key_of(row: Mapping[str, Any], cfg: TableConfig) -> str:
    """A row's record key: the meta column when populated, else rebuilt from the key fields
    (one field: its value; several: ``f1:v1,f2:v2``)."""
    key = row.get(RECORD_KEY)
    if key is not None:
        return str(key)
    fields = cfg.record_key_fields
    if len(fields) == 1:
        return _java_string(row.get(fields[0]))
    return ",".join(f"{f}:{_java_string(row.get(f))}" for f in fields)


def _java_string(value: Any) -> str:
    if value is None:
        return "__null__"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)



# --8<-- [start:fold_log_versions]
def fold_log_versions(versions: Iterable[tuple[str, Version]], rule: MergeRule) -> dict[str, Version]:
    """Per record key, the version that survives a slice's log records, given as ``(key, version)`` in the
    order the blocks are applied (oldest first): each key's versions combined in that order
    (``spec.read.merge.combine_logs``); keys in the order they first appear."""
    merged: dict[str, Version] = {}
    for key, new in versions:
        merged[key] = combine_logs(merged[key], new, rule) if key in merged else new
    return merged
# --8<-- [end:fold_log_versions]


class _LogPart:
    """The decoded records of one applied log block: a data block's records and their Arrow schema
    (``schema``), or a delete block's delete records (``schema`` None); ``partial``: a partial-update block
    (``IS_PARTIAL``), whose records hold some of the table's columns (``spec.read.merge.merge_partial``).

    A data block's records are decoded once, as rows (dicts) or as an Arrow table of ``schema``
    (``table``); the rows of a table are its ``to_pylist()``, made when first asked for.
    """

    def __init__(self, schema: pa.Schema | None, rows: list[dict[str, Any]] | None = None,
                 table: pa.Table | None = None, deletes: Sequence[DeleteRecord] = (), partial: bool = False) -> None:
        self.schema = schema
        self.partial = partial
        self.table = table
        self.deletes = deletes
        self._rows = rows

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The data records as dicts (none for a delete block)."""
        if self._rows is None:
            self._rows = [] if self.table is None else self.table.to_pylist()
        return self._rows

    def __len__(self) -> int:
        if self._rows is not None:
            return len(self._rows)
        return 0 if self.table is None else self.table.num_rows

    def row(self, i: int) -> dict[str, Any]:
        """Data record ``i`` as a dict."""
        if self._rows is None and self.table is not None:
            return dict(self.table.slice(i, 1).to_pylist()[0])
        return self.rows[i]


class _ByRule(Exception):
    """The columnar merge does not apply to a slice: the rule's record-by-record path reads it."""


@dataclass(frozen=True)
class SliceMerge:
    """How one table's file slices are merged: its merge rule and config; ``columnar``: merge column-wise
    where that gives the rule's rows (``_merge_columnar``), else record by record (``_merge_by_rule``);
    ``table_columns``: the columns of the table's schema (``spec.schema.query_schema.table_columns``), asked
    only when a log block carries a column the base file lacks."""

    rule: MergeRule
    config: TableConfig
    table_columns: Callable[[], frozenset[str] | None]
    columnar: bool = True

    def merge(self, base: pa.Table | None, blocks: Sequence[LogBlock]) -> pa.Table | None:
        """A slice's base rows (``base``, None without a base file) merged with its applied log blocks: the rows
        of ``_merge_by_rule``, computed on columns where ``_merge_columnar`` applies (unless ``columnar`` is
        off). Under a custom merge (its Java code decides) the merge is not specified: ``InvalidOperation``."""
        if self.rule.mode == MergeMode.CUSTOM:
            raise InvalidOperation(
                f"merging log records under a custom merge (payload {self.rule.payload_class}, merge mode "
                f"{self.config.merge_mode or '-'}) is not specified: its Java code decides",
                hint="read_optimized queries read base files only; compact the table to read it fully")
        ordering = self.rule.ordering_field
        ordering_type = None
        if base is not None and ordering and ordering in base.column_names:
            ordering_type = _java_type(base.schema.field(ordering).type)
        parts = self._decode_logs(blocks)
        log_schema = log_read_schema([(p.schema, p.partial) for p in parts])
        if ordering_type is None and ordering and log_schema is not None and ordering in log_schema.names:
            # a slice of log files alone: the ordering values are of the type its data blocks declare (a Long
            # record ordering value against a delete's Long is compared, not a type mismatch the delete wins)
            ordering_type = _java_type(log_schema.field(ordering).type)
        if base is not None and log_schema is not None:
            # a column whose type evolved after the base file was written: the base values read as the
            # type the later log blocks carry (``cast_column``)
            base = pa.Table.from_arrays(
                [cast_column(base.column(f.name), log_schema.field(f.name).type, f.name)
                 if f.name in log_schema.names else base.column(f.name) for f in base.schema],
                names=base.column_names)
        out_schema = base.schema if base is not None else log_schema
        if base is not None and log_schema is not None:
            # a column a later writer added to the table's schema (schema evolution) is read from the
            # log blocks that carry it
            known = self.table_columns()
            added = [f for f in log_schema if f.name not in base.schema.names and (known is None or f.name in known)]
            if added:
                out_schema = pa.schema([*base.schema, *added])
        if out_schema is None:
            return base
        if self.columnar and not any(p.partial for p in parts):
            try:
                return self._merge_columnar(base, parts, out_schema, ordering_type)
            except _ByRule:
                pass
        return self._merge_by_rule(base, parts, out_schema, log_schema, ordering_type)

    def _decode_logs(self, blocks: Sequence[LogBlock]) -> list[_LogPart]:
        """The records of the slice's applied blocks, each block decoded once, in application order: Avro
        blocks by ``decode_avro_records``, or column-wise by ``decode_avro_columns`` (the same values) where
        it reads them and ``columnar`` is on."""
        parts: list[_LogPart] = []
        schemas: dict[str, pa.Schema] = {}
        for block in blocks:
            if block.block_type == BlockType.DELETE_BLOCK:
                parts.append(_LogPart(None, deletes=decode_delete_records(block)))
            elif block.block_type == BlockType.AVRO_DATA_BLOCK:
                columns = decode_avro_columns(block) if self.columnar else None
                rows = decode_avro_records(block) if columns is None else None
                text = block.schema or ""
                if text not in schemas:
                    schemas[text] = arrow_schema_from_avro(text)
                parts.append(_LogPart(schemas[text], rows, columns, partial=is_partial(block)))
            elif block.block_type == BlockType.PARQUET_DATA_BLOCK:
                table = decode_parquet_records(block)
                parts.append(_LogPart(table.schema, table=table, partial=is_partial(block)))
            if parts and parts[-1].partial and parts[-1].schema is not None:
                check_partial_block(parts[-1].schema, block, self.rule)
        return parts

    def _log_versions(self, parts: Sequence[_LogPart], ordering_type: str | None) -> dict[str, Version]:
        """Per record key, the version that survives the slice's log blocks (``fold_log_versions``)."""

        commit_time = self.rule.mode == MergeMode.COMMIT_TIME_ORDERING
        deleted: set[str] = set()  # commit-time ordering: the keys whose latest log record is a delete

        def versions() -> Iterator[tuple[str, Version]]:
            partial_read = False
            for part in parts:
                for d in part.deletes:
                    deleted.add(d.record_key or "")
                    yield d.record_key or "", delete_version(d.ordering_value, _BRANCH_TYPES[d.ordering_branch],
                                                             self.rule)
                partial_read = partial_read or part.partial
                for row in part.rows:
                    key = record_key_of(row, self.config)
                    if commit_time and partial_read and key in deleted:
                        raise record_after_delete(key)
                    deleted.discard(key)
                    yield key, as_version(row, self.rule, ordering_type, part.partial)

        return fold_log_versions(versions(), self.rule)

    def _merge_by_rule(self, base: pa.Table | None, parts: Sequence[_LogPart], out_schema: pa.Schema,
                       log_schema: pa.Schema | None, ordering_type: str | None) -> pa.Table | None:
        """The rule, record by record: each base row whose key the logs touch is merged with the key's log
        version (``merge_with_base``); base rows the logs do not touch are kept as they are; then the log
        versions of keys not in the base file. Deletes keep no row. The merged rows follow the kept base rows,
        in base order, then the log-only keys in the order they first appear in the logs."""
        logs = self._log_versions(parts, ordering_type)
        kept_base = base
        merged_rows: list[Mapping[str, Any]] = []
        if base is not None:
            base_keys = self._keys_of(base)
            in_logs = pc.is_in(base_keys, value_set=pa.array(list(logs), type=pa.string()))
            kept_base = base.filter(pc.invert(in_logs))
            for row in base.filter(in_logs).to_pylist():
                key = record_key_of(row, self.config)
                result = merge_with_base(as_version(row, self.rule, ordering_type), logs.pop(key), self.rule)
                if result.row is not None:
                    merged_rows.append(result.row)
        for key, v in logs.items():
            if v.partial and v.row is not None:
                raise unfilled_partial_record(key)
        merged_rows.extend(v.row for v in logs.values() if v.row is not None)
        if not merged_rows:
            return kept_base
        try:
            extra = rows_to_arrow(merged_rows, out_schema)
        except SchemaMismatch:
            written = out_schema if log_schema is None else log_schema
            extra = rows_to_arrow(merged_rows, written).cast(out_schema)
        if kept_base is None:
            return extra
        return pa.concat_tables([kept_base, extra], promote_options="permissive")

    def _merge_columnar(self, base: pa.Table | None, parts: Sequence[_LogPart], out_schema: pa.Schema,
                        ordering_type: str | None) -> pa.Table | None:
        """The rows of ``_merge_by_rule``, in the same order, computed column-wise.

        The log rows become one Arrow table of ``out_schema`` (``_part_columns``). When no delete block
        applies and no key is logged twice, each logged key's version is its one log row; otherwise the
        versions are the rule's (``_log_versions``). A base row the logs touch is decided on columns when
        its key's version is a data row: the log row wins (``log_wins_over_base``, commit-time ordering),
        or the base row wins when its ordering value is greater (``_greater_columns``), where a base row
        flagged ``_hoodie_is_deleted`` is dropped. Other touched rows (the key's version is a delete, or
        the ordering values do not compare on columns) are decided by ``merge_with_base`` itself.

        Raises ``_ByRule`` where the record-by-record path could build other values: a base column
        whose values ``to_pylist`` does not give back exactly, log rows that do not convert to
        ``out_schema``, or a key that is twice in the base file.
        """
        rule = self.rule
        if base is not None and not (len(set(base.column_names)) == base.num_columns
                                     and all(_round_trips(f.type) for f in base.schema)):
            raise _ByRule
        data = [p for p in parts if p.schema is not None]
        try:
            logs = pa.concat_tables([_part_columns(p, out_schema) for p in data]) if data \
                else out_schema.empty_table()
        except SchemaMismatch:
            raise _ByRule from None
        keys = self._log_keys(logs, data)
        # the version of each logged key, in the order keys first appear: its log row (null: a delete)
        versions: Callable[[int], Version]
        if not any(p.deletes for p in parts) and pc.count_distinct(keys).as_py() == len(keys):
            survivor_keys = keys
            flagged = pa.concat_arrays([_deleted_flags(p) for p in data]) if data else pa.array([], pa.bool_())
            survivor_rows = pc.if_else(flagged, pa.scalar(None, pa.int64()),
                                       pa.array(range(len(keys)), type=pa.int64()))

            def versions(i: int) -> Version:
                for p in data:
                    if i < len(p):
                        return as_version(p.row(i), rule, ordering_type)
                    i -= len(p)
                raise IndexError(i)
        else:
            merged = self._log_versions(parts, ordering_type)
            row_of = {id(r): i for i, r in enumerate(r for p in data for r in p.rows)}
            survivors = list(merged.values())
            survivor_keys = pa.array(list(merged), type=pa.string())
            survivor_rows = pa.array([None if v.row is None else row_of[id(v.row)] for v in survivors],
                                     type=pa.int64())
            versions = survivors.__getitem__
        if base is None:
            taken = survivor_rows.drop_null()
            return logs.take(taken) if len(taken) else None
        base_keys = self._keys_of(base)
        in_logs = pc.is_in(base_keys, value_set=survivor_keys)
        kept_base = base.filter(pc.invert(in_logs))
        touched = base.filter(in_logs)
        touched_keys = base_keys.filter(in_logs)
        if pc.count_distinct(touched_keys).as_py() != len(touched_keys):
            raise _ByRule
        position = pc.index_in(touched_keys, value_set=survivor_keys)
        log_row = pc.take(survivor_rows, position)
        n = touched.num_rows
        # per touched row: its index in ``touched`` (the base row is read), n + its log row, or None (no row)
        chosen = self._choose(touched, logs, log_row, parts, ordering_type)
        by_rule = [j for j, c in enumerate(chosen) if c is _UNDECIDED]
        if by_rule:
            cols = [c for c in (rule.ordering_field, IS_DELETED_FIELD) if c and c in touched.column_names]
            # (a table of no column has no rows to list: a table without ordering field nor _hoodie_is_deleted)
            small = (touched.select(cols).take(pa.array(by_rule, type=pa.int64())).to_pylist() if cols
                     else [{} for _ in by_rule])
            pos = position.take(pa.array(by_rule, type=pa.int64())).to_pylist()
            logged = log_row.take(pa.array(by_rule, type=pa.int64())).to_pylist()
            for j, row, p, lr in zip(by_rule, small, pos, logged, strict=True):
                base_version = as_version(row, rule, ordering_type)
                result = merge_with_base(base_version, versions(p), rule)
                if result.row is None:
                    chosen[j] = None  # a delete, or a base row flagged _hoodie_is_deleted
                elif result is base_version:
                    chosen[j] = j
                else:
                    chosen[j] = n + lr
        log_only = survivor_rows.filter(pc.invert(pc.is_in(survivor_keys, value_set=touched_keys))).drop_null()
        taken = pa.concat_arrays([pa.array(chosen, type=pa.int64()).drop_null(), pc.add(log_only, n)])
        if not len(taken):
            return kept_base
        touched_out = pa.Table.from_arrays(
            [touched.column(f.name) if f.name in touched.column_names else pa.nulls(n, f.type) for f in out_schema],
            schema=out_schema)
        extra = pa.concat_tables([touched_out, logs]).take(taken)
        return pa.concat_tables([kept_base, extra], promote_options="permissive")

    def _choose(self, touched: pa.Table, logs: pa.Table, log_row: pa.Array, parts: Sequence[_LogPart],
                ordering_type: str | None) -> list[Any]:
        """For each touched base row whose key's version is a log data row, the row that is read: its
        index in ``touched`` or ``len(touched)`` + its log row, None for none; ``_UNDECIDED`` where
        ``merge_with_base`` decides (the version is a delete, or the ordering values do not compare on
        columns)."""
        rule = self.rule
        n = touched.num_rows
        ordering = rule.ordering_field
        base_greater: pa.Array | None
        if rule.log_wins_over_base or rule.mode == MergeMode.COMMIT_TIME_ORDERING \
                or not ordering or ordering not in touched.column_names:
            base_greater = pa.repeat(False, n)  # the log row always wins, or the base row has no ordering value
        else:
            base_type = touched.schema.field(ordering).type
            same_type = all(p.schema is None or ordering not in p.schema.names
                            or p.schema.field(ordering).type == base_type for p in parts)
            logged = logs.column(ordering).take(log_row.fill_null(0)) if len(logs) else None
            base_greater = _greater_columns(touched.column(ordering), logged) \
                if same_type and logged is not None else None
        if base_greater is None:
            return [_UNDECIDED] * n
        flagged = touched.column(IS_DELETED_FIELD) if IS_DELETED_FIELD in touched.column_names else None
        if flagged is not None and pa.types.is_boolean(flagged.type):
            base_row = pc.if_else(pc.fill_null(flagged, False), pa.scalar(None, pa.int64()),
                                  pa.array(range(n), type=pa.int64()))
        else:
            base_row = pa.array(range(n), type=pa.int64())
        chosen = pc.if_else(base_greater, base_row, pc.add(log_row, n))
        return [_UNDECIDED if lr is None else c for c, lr in zip(chosen.to_pylist(), log_row.to_pylist(), strict=True)]

    def _log_keys(self, logs: pa.Table, data: Sequence[_LogPart]) -> pa.Array:
        """The record key of each log row (``record_key_of``): the key meta column where every block has it as
        a string and no row leaves it null, else rebuilt row by row."""
        strings = (pa.string(), pa.large_string())
        if RECORD_KEY in logs.column_names and logs.schema.field(RECORD_KEY).type in strings \
                and all(p.schema is not None and RECORD_KEY in p.schema.names
                        and p.schema.field(RECORD_KEY).type in strings for p in data):
            column = logs.column(RECORD_KEY)
            if column.null_count == 0:
                return column.combine_chunks().cast(pa.string())
        return pa.array([record_key_of(r, self.config) for p in data for r in p.rows], type=pa.string())

    def _keys_of(self, table: pa.Table) -> pa.Array:
        if RECORD_KEY in table.column_names and table.column(RECORD_KEY).null_count == 0:
            return table.column(RECORD_KEY).combine_chunks().cast(pa.string())
        return pa.array([record_key_of(r, self.config) for r in table.to_pylist()], type=pa.string())


def _part_columns(part: _LogPart, schema: pa.Schema) -> pa.Table:
    """A data block's records as a table of ``schema`` (``rows_to_arrow``; missing columns null): its decoded
    table's columns where they have the schema's types, else built from its rows."""
    t = part.table
    if t is not None and len(set(t.column_names)) == t.num_columns and all(
            f.name not in t.column_names or (t.schema.field(f.name).type == f.type and _round_trips(f.type))
            for f in schema):
        return pa.Table.from_arrays([t.column(f.name) if f.name in t.column_names else pa.nulls(t.num_rows, f.type)
                                     for f in schema], schema=schema)
    return rows_to_arrow(part.rows, schema)


def _deleted_flags(part: _LogPart) -> pa.Array:
    """For each data record of a block, whether its ``_hoodie_is_deleted`` is true."""
    t = part.table
    if part.schema is None or IS_DELETED_FIELD not in part.schema.names:
        return pa.repeat(pa.scalar(False), len(part))
    if t is not None and t.schema.field(IS_DELETED_FIELD).type == pa.bool_():
        flags: pa.Array = pc.fill_null(t.column(IS_DELETED_FIELD).combine_chunks(), False)
        return flags
    return pa.array([r.get(IS_DELETED_FIELD) is True for r in part.rows], type=pa.bool_())


_UNDECIDED = object()
"""A touched base row that ``merge_with_base`` decides."""


def _round_trips(t: pa.DataType) -> bool:
    """Whether ``rows_to_arrow`` gives values of type ``t`` back exactly as they were from ``to_pylist()``:
    not nanosecond times, 64-bit dates, half floats, durations, dictionaries or unions, nor structs of
    ``member<i>`` fields (read as Avro unions)."""
    if pa.types.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        if len(set(names)) < len(names) or (names and all(n == f"member{i}" for i, n in enumerate(names))):
            return False
        return all(_round_trips(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _round_trips(t.value_type)
    if pa.types.is_map(t):
        return _round_trips(t.key_type) and _round_trips(t.item_type)
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return bool(t.unit != "ns")
    return bool(pa.types.is_integer(t) or pa.types.is_float32(t) or pa.types.is_float64(t) or pa.types.is_boolean(t)
            or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t)
            or pa.types.is_date32(t) or pa.types.is_time32(t) or pa.types.is_null(t))


def _greater_columns(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> pa.Array | None:
    """Whether ``java_compare(a[i], b[i]) == 1``, for each i, where Arrow orders the values as Java's
    ``compareTo`` does: two columns of one integer, boolean, decimal, date, time or timestamp type, or of
    ASCII strings (UTF-16 code units and UTF-8 bytes order them alike). A null is never greater. None for
    other columns (floats: ``Double.compare`` orders NaN and -0.0 otherwise)."""
    t = a.type
    if t != b.type:
        return None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        if any(pc.all(pc.string_is_ascii(c)).as_py() is False for c in (a, b)):
            return None
    elif not (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t) or pa.types.is_date(t)
              or pa.types.is_time(t) or pa.types.is_timestamp(t)):
        return None
    greater: pa.Array | pa.ChunkedArray = pc.fill_null(pc.greater(a, b), False)
    return greater.combine_chunks() if isinstance(greater, pa.ChunkedArray) else greater

