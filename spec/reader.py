"""How any table on disk is read: snapshot, read-optimized, incremental and time travel.

This reader is the normative statement of what a table means. It reads tables written by
anyone (Apache Hudi, this project's reference writer, any other implementation), one file
slice at a time, so memory is bounded by a slice, not by the table.

Query types:

- **snapshot** (as of the latest instant, or ``as_of`` for time travel): per file group, the
  latest visible slice, its base file merged with its log records (``spec.merge``);
- **read-optimized**: the base files of the latest slices only, logs ignored (for copy-on-write
  tables the same as snapshot);
- **incremental** ``(begin, end]``: the rows written by completed instants in the window: the
  file groups those instants wrote, read as a snapshot as of ``end``, keeping rows whose
  ``_hoodie_commit_time`` is in the window.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``MergeOnReadSnapshotRelation`` and ``IncrementalRelation`` / ``MergeOnReadIncrementalRelation``
(Spark datasource), ``HoodieFileGroupReader`` (1.x) and ``TableSchemaResolver``.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from spec.commit_metadata import parse_commit_metadata
from spec.delete_block import ORDERING_BRANCHES, DeleteRecord, decode_delete_records
from spec.errors import HudiSpecError, InvalidOperation, SchemaMismatch
from spec.file_system_view import DataFile, FileSlice, FileSystemView
from spec.log_blocks import decode_avro_columns, decode_avro_records, decode_parquet_records
from spec.log_format import BlockType, LogBlock
from spec.log_scanner import SkippedBlock, scan_slice_logs
from spec.merge import (
    IS_DELETED_FIELD,
    MergeMode,
    MergeRule,
    Version,
    as_version,
    combine_logs,
    delete_version,
    merge_with_base,
)
from spec.metadata_table import list_table_files, uses_metadata_table
from spec.schema import COMMIT_TIME, RECORD_KEY, arrow_schema_from_avro, rows_to_arrow
from spec.schema_evolution import avro_primitive, promotes
from spec.storage import Storage
from spec.table_config import TableConfig
from spec.timeline import Timeline
from spec.timeline_layout import read_instant_content

QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
T = TypeVar("T")
R = TypeVar("R")

_ARROW_JAVA_TYPES = {pa.int8(): "int", pa.int16(): "int", pa.int32(): "int", pa.int64(): "long",
                     pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
                     pa.large_string(): "string",
                     pa.binary(): "bytes", pa.date32(): "int"}
_BRANCH_TYPES = ("null", "int", "long", "float", "double", "bytes", "string", "decimal", "int",
                 "int", "long", "long", "long")
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


@dataclass(frozen=True)
class SliceRead:
    """The rows of one file slice, and what was read to make them."""

    slice: FileSlice
    table: pa.Table


class _LogPart:
    """The decoded records of one applied log block: a data block's records and their Arrow schema
    (``schema``), or a delete block's delete records (``schema`` None).

    A data block's records are decoded once, as rows (dicts) or as an Arrow table of ``schema``
    (``table``); the rows of a table are its ``to_pylist()``, made when first asked for.
    """

    def __init__(self, schema: pa.Schema | None, rows: list[dict[str, Any]] | None = None,
                 table: pa.Table | None = None, deletes: Sequence[DeleteRecord] = ()) -> None:
        self.schema = schema
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


class TableReader:
    """Reads one table. Loads the config and timeline once; each query builds its file system view."""

    def __init__(self, path: str | Storage, workers: int | None = None, use_metadata_table: bool = True) -> None:
        """``workers``: how many file slices a query reads at once (default: the CPUs, at most 4); 1
        reads one slice at a time. ``use_metadata_table``: list files through the metadata table's ``files``
        partition where the table has one (as Apache Hudi and hudi-rs do); False lists storage."""
        self.workers = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))
        self.storage = path if isinstance(path, Storage) else Storage(path)
        self.config = TableConfig.load(self.storage)
        self.timeline = Timeline.load(self.storage, self.config.timeline_layout)
        self.rule = MergeRule.from_config(self.config)
        self.use_metadata_table = use_metadata_table
        self._listing: list[DataFile] | None = None
        self._table_columns: frozenset[str] | None = None
        self._schemas: dict[str, pa.Schema | None] = {}
        self._table_columns_known = False
        self.columnar_merge = True
        """Merge slices column-wise where that gives the rule's rows (``_merge_columnar``); False: record by record."""
        self.skipped: list[SkippedBlock] = []
        """The corrupt log regions the slices read so far skipped (``spec.log_scanner`` rule 3), file by file:
        a reader does not stop at them, as Hudi's does not, but says what it left out."""

    def table_schema(self, as_of: str | None = None) -> pa.Schema | None:
        """The data columns of the table's schema a query reads with: the writer schema of the latest
        completed commit that records one — at or before ``as_of`` for a time-travel query, else the
        latest (Hudi's ``HoodieBaseRelation``: ``TableSchemaResolver.getTableAvroSchema(timestamp)``
        for time travel, ``getTableAvroSchema()`` otherwise; incremental queries use the latest schema
        while ``hoodie.datasource.read.schema.use.end.instanttime`` is false, its default:
        hudi-spark-datasource/hudi-spark-common/src/main/scala/org/apache/hudi/IncrementalRelation.scala).
        None when no commit records a schema."""
        key = as_of or ""
        if key not in self._schemas:
            found: pa.Schema | None = None
            for inst in reversed(self.timeline.commits_timeline().completed().instants):
                if as_of is not None and inst.requested > as_of:
                    continue
                try:
                    md = parse_commit_metadata(read_instant_content(self.storage, inst, self.timeline.layout))
                    if md.schema:
                        found = arrow_schema_from_avro(md.schema)
                        break
                except (HudiSpecError, ValueError, KeyError, TypeError):
                    continue  # a commit without readable metadata names no schema
            self._schemas[key] = found
        return self._schemas[key]

    def conform(self, table: pa.Table, as_of: str | None, add_missing: bool = True) -> pa.Table:
        """A slice's rows in the query's table schema (``table_schema``): a column whose files wrote
        another physical type (an evolved column: int → long → float → double, or to string) is cast to
        the table's type, as Hudi's readers do (its file readers project each file onto the table
        schema: ``HoodieAvroUtils.rewriteRecordWithNewSchema`` on Avro, Spark's parquet schema
        evolution on rows); a column of the schema the slice lacks reads as null. A value the cast
        cannot carry is a ``SchemaMismatch`` — the files disagree incompatibly."""
        schema = self.table_schema(as_of)
        if schema is None:
            return table
        if not add_missing:  # a projection: its columns in its order, cast where they differ
            return pa.Table.from_arrays(
                [self._cast(table.column(n), schema.field(n).type, n) if n in schema.names else table.column(n)
                 for n in table.column_names], names=table.column_names)
        arrays, fields = [], []
        meta = [f for f in table.schema if f.name not in schema.names and f.name.startswith("_hoodie_")]
        for f in meta:
            arrays.append(table.column(f.name))
            fields.append(f)
        for f in schema:
            if f.name in table.column_names:
                col = self._cast(table.column(f.name), f.type, f.name)
                arrays.append(col)
                fields.append(pa.field(f.name, col.type, nullable=True))
            elif add_missing:
                arrays.append(pa.nulls(table.num_rows, f.type))
                fields.append(pa.field(f.name, f.type, nullable=True))
        for f in table.schema:
            if f.name not in schema.names and f not in meta:
                arrays.append(table.column(f.name))
                fields.append(f)
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    @staticmethod
    def _cast(col: pa.ChunkedArray, to: pa.DataType, name: str) -> pa.ChunkedArray:
        """A column of one physical type read as the table schema's (primitive types only)."""
        if col.type == to or pa.types.is_nested(col.type) or pa.types.is_nested(to):
            return col
        written, table = avro_primitive(col.type), avro_primitive(to)
        if written is not None and table is not None and not promotes(written, table):
            raise SchemaMismatch(f"column {name!r} was written as {written} in a file of this table, and {written} "
                                 f"does not promote to the table schema's {table}",
                                 hint="the table's files disagree incompatibly on this column (see "
                                      "spec.schema_evolution): rewrite the file, or evolve the column compatibly")
        try:
            return col.cast(to)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
            raise SchemaMismatch(f"column {name!r} was written as {col.type} in a file of this table, which does "
                                 f"not read as the table schema's {to}: {err}",
                                 hint="the table's files disagree incompatibly on this column: rewrite them, or "
                                      "write the column with a compatible type") from err

    def table_columns(self) -> frozenset[str] | None:
        """The columns of the table's schema: the writer schema of its latest completed commit that
        records one (None when none does)."""
        if not self._table_columns_known:
            # slices are read on several threads: the answer is stored before it is marked known (two threads
            # may both work it out, to the same answer)
            for inst in reversed(self.timeline.commits_timeline().completed().instants):
                try:
                    md = parse_commit_metadata(read_instant_content(self.storage, inst, self.timeline.layout))
                    if md.schema:
                        self._table_columns = frozenset(f["name"] for f in json.loads(md.schema)["fields"])
                        break
                except (HudiSpecError, ValueError, KeyError, TypeError):
                    continue  # a commit without readable metadata names no schema
            self._table_columns_known = True
        return self._table_columns

    # --- one slice ---------------------------------------------------------------------------

    def _read_base(self, sl: FileSlice, columns: Sequence[str] | None) -> pa.Table | None:
        if sl.base_file is None:
            return None
        table = self.storage.read_parquet(sl.base_file.path)
        return _project(table, columns)

    def _decode_logs(self, blocks: Sequence[LogBlock]) -> list[_LogPart]:
        """The records of the slice's applied blocks, each block decoded once, in application order: Avro
        blocks by ``decode_avro_records``, or column-wise by ``decode_avro_columns`` (the same values) where
        it reads them and ``columnar_merge`` is on."""
        parts: list[_LogPart] = []
        schemas: dict[str, pa.Schema] = {}
        for block in blocks:
            if block.block_type == BlockType.DELETE_BLOCK:
                parts.append(_LogPart(None, deletes=decode_delete_records(block)))
            elif block.block_type == BlockType.AVRO_DATA_BLOCK:
                columns = decode_avro_columns(block) if self.columnar_merge else None
                rows = decode_avro_records(block) if columns is None else None
                text = block.schema or ""
                if text not in schemas:
                    schemas[text] = arrow_schema_from_avro(text)
                parts.append(_LogPart(schemas[text], rows, columns))
            elif block.block_type == BlockType.PARQUET_DATA_BLOCK:
                table = decode_parquet_records(block)
                parts.append(_LogPart(table.schema, table=table))
        return parts

    def _log_versions(self, parts: Sequence[_LogPart], ordering_type: str | None) -> dict[str, Version]:
        """Per record key, the version that survives the slice's log blocks (applied oldest first)."""
        merged: dict[str, Version] = {}
        for part in parts:
            for d in part.deletes:
                key = d.record_key or ""
                new = delete_version(d.ordering_value, _BRANCH_TYPES[d.ordering_branch], self.rule)
                merged[key] = combine_logs(merged[key], new, self.rule) if key in merged else new
            for row in part.rows:
                key = record_key_of(row, self.config)
                new = as_version(row, self.rule, ordering_type)
                merged[key] = combine_logs(merged[key], new, self.rule) if key in merged else new
        return merged

    def read_slice(self, sl: FileSlice, as_of: str | None = None, with_logs: bool = True,
                   columns: Sequence[str] | None = None) -> pa.Table | None:
        """The rows of one slice: its base file merged with its log records (or the base file alone),
        only ``columns`` if given (merging reads every column, then projects)."""
        if not with_logs or not sl.log_files:
            return self._read_base(sl, columns)
        blocks, stats = scan_slice_logs(self.storage, [f.path for f in sl.log_files], self.timeline,
                                        as_of or self.latest_instant(), self.config.table_version)
        self.skipped.extend(stats.skipped)
        if not blocks:
            return self._read_base(sl, columns)
        merged = self._merge_slice(sl, blocks)
        return None if merged is None else _project(merged, columns)

    def _merge_slice(self, sl: FileSlice, blocks: Sequence[LogBlock]) -> pa.Table | None:
        """The slice's base rows merged with its log blocks: the rows of ``_merge_by_rule``, computed on columns
        where ``_merge_columnar`` applies (unless ``columnar_merge`` is off)."""
        if self.rule.mode == MergeMode.CUSTOM:
            raise InvalidOperation(
                f"merging log records under a custom merge (payload {self.rule.payload_class}, merge mode "
                f"{self.config.merge_mode or '-'}) is not specified: its Java code decides",
                hint="read_optimized queries read base files only; compact the table to read it fully")
        base = self._read_base(sl, None)
        ordering = self.rule.ordering_field
        ordering_type = None
        if base is not None and ordering and ordering in base.column_names:
            ordering_type = _java_type(base.schema.field(ordering).type)
        parts = self._decode_logs(blocks)
        log_schema = next((p.schema for p in reversed(parts) if p.schema is not None), None)
        if base is not None and log_schema is not None:
            # a column whose type evolved after the base file was written: the base values read as the
            # type the later log blocks carry (``conform``'s casting rule)
            base = pa.Table.from_arrays(
                [self._cast(base.column(f.name), log_schema.field(f.name).type, f.name)
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
        if self.columnar_merge:
            try:
                return self._merge_columnar(base, parts, out_schema, ordering_type)
            except _ByRule:
                pass
        return self._merge_by_rule(base, parts, out_schema, log_schema, ordering_type)

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
            small = touched.select(cols).take(pa.array(by_rule, type=pa.int64())).to_pylist()
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

    def latest_instant(self) -> str | None:
        """The instant a query without ``as_of`` reads as of: the latest completed write (by requested time).
        Log blocks of later instants are not applied."""
        done = self.timeline.commits_timeline().completed().instants
        return max((i.requested for i in done), default=None)

    # --- queries -----------------------------------------------------------------------------

    def view(self, as_of: str | None = None) -> FileSystemView:
        """The file system view of the table, as of ``as_of`` (time travel) or of its whole timeline, over the
        files the metadata table lists (read once per reader) or, without one, a listing of storage."""
        if self.use_metadata_table and uses_metadata_table(self.config):
            if self._listing is None:
                self._listing = list_table_files(self.storage, self.config, self.timeline)
            return FileSystemView.load(self.storage, self.config, self.timeline, as_of, self._listing)
        return FileSystemView.load(self.storage, self.config, self.timeline, as_of)

    def _check_instant(self, t: str | None, what: str) -> None:
        if t is not None and not (t.isdigit() and len(t) in (14, 17)):
            raise InvalidOperation(f"{what} {t!r} is not an instant time", hint="use yyyyMMddHHmmssSSS")

    def iter_snapshot(self, as_of: str | None = None, read_optimized: bool = False,
                      partition_filter: PartitionFilter = None,
                      columns: Sequence[str] | None = None) -> Iterator[SliceRead]:
        """Snapshot (or read-optimized) rows, one file slice at a time."""
        self._check_instant(as_of, "as_of")
        if as_of is not None and self.timeline.latest_completed() is None:
            return
        view = self.view(as_of)
        slices = [sl for sl in view.latest_slices(select_partitions(view.partitions(), partition_filter))
                  if not (read_optimized and sl.base_file is None)]

        def read(sl: FileSlice) -> pa.Table | None:
            return self.read_slice(sl, as_of, with_logs=not read_optimized, columns=columns)

        for sl, table in in_order(read, slices, self.workers):
            if table is not None and table.num_rows:
                yield SliceRead(sl, self.conform(table, as_of, add_missing=not columns))

    def commits_in_range(self, begin: str | None, end: str | None) -> list[str]:
        """Completed data-writing instants whose completion time is in ``(begin, end]``.

        Layout 1 has no completion times: the requested time stands in. Layout 2 (Hudi 1.x)
        windows incremental queries by completion time, so an instant that started before
        ``begin`` but completed inside the window is in it.
        """
        out = []
        for inst in self.timeline.commits_timeline().instants:
            done = inst.completed or inst.requested
            if (begin is None or done > begin) and (end is None or done <= end):
                out.append(inst.requested)
        return out

    def iter_incremental(self, begin: str | None, end: str | None = None,
                         partition_filter: PartitionFilter = None,
                         columns: Sequence[str] | None = None) -> Iterator[SliceRead]:
        """Rows written by completed instants in ``(begin, end]``, one file slice at a time."""
        self._check_instant(begin, "begin")
        self._check_instant(end, "end")
        if not self.config.populate_meta_fields:
            raise InvalidOperation("incremental queries need the commit time meta column, which this table "
                                   "does not populate (hoodie.populate.meta.fields=false)",
                                   hint="use a snapshot or time-travel query")
        window = self.commits_in_range(begin, end)
        if not window:
            return
        upto = [i.requested for i in self.timeline.commits_timeline().instants
                if end is None or (i.completed or i.requested) <= end]
        as_of = max(upto)
        touched: set[tuple[str, str]] = set()
        layout = self.timeline.layout
        for t in window:
            inst = self.timeline.get(t)
            assert inst is not None
            data = read_instant_content(self.storage, inst, layout)
            touched |= parse_commit_metadata(data).file_ids_written()
        allowed = pa.array(window, type=pa.string())
        view = self.view(as_of)
        for sl in view.latest_slices(select_partitions(view.partitions(), partition_filter)):
            if (sl.partition_path, sl.file_id) not in touched:
                continue
            table = self.read_slice(sl, as_of)
            if table is None:
                continue
            table = table.filter(pc.is_in(table.column(COMMIT_TIME).cast(pa.string()), value_set=allowed))
            if table.num_rows:
                yield SliceRead(sl, _project(self.conform(table, None), columns))


def in_order(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[tuple[T, R]]:
    """``(item, fn(item))`` for every item, in order, with up to ``workers`` calls running at once on
    threads (reading and merging a slice is mostly pyarrow, which releases the GIL). At most ``workers``
    results wait for the consumer; an error is raised where its item comes."""
    if workers <= 1 or len(items) <= 1:
        for item in items:
            yield item, fn(item)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hudi-read") as pool:
        pending: deque[tuple[T, Future[R]]] = deque()
        for item in items:
            pending.append((item, pool.submit(fn, item)))
            if len(pending) >= workers:
                first, result = pending.popleft()
                yield first, result.result()
        while pending:
            first, result = pending.popleft()
            yield first, result.result()


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


def _project(table: pa.Table, columns: Sequence[str] | None) -> pa.Table:
    if not columns:
        return table
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InvalidOperation(f"no column {', '.join(map(repr, missing))} in the table",
                               hint=f"columns are: {', '.join(table.column_names)}")
    return table.select(list(columns))


# --8<-- [start:partitions]
PartitionFilter = Sequence[str] | Callable[[str], bool] | None


def select_partitions(partitions: Sequence[str], partition_filter: PartitionFilter) -> list[str] | None:
    """Partition pruning: the partition paths a query reads — all (None), those listed, or those the
    predicate accepts. Pruning only skips file groups; it never changes a row that is read."""
    if partition_filter is None:
        return None
    if callable(partition_filter):
        return [p for p in partitions if partition_filter(p)]
    if isinstance(partition_filter, str):
        return [partition_filter]
    return list(partition_filter)
# --8<-- [end:partitions]


def _parts(reader: TableReader, query: str, as_of: str | None, begin: str | None, end: str | None,
           columns: Sequence[str] | None, partition_filter: PartitionFilter) -> Iterator[SliceRead]:
    if query not in QUERY_TYPES:
        raise InvalidOperation(f"unknown query type {query!r}", hint=f"use one of {', '.join(QUERY_TYPES)}")
    if query == "incremental":
        if as_of is not None:
            raise InvalidOperation("an incremental query has no as_of", hint="use begin and end")
        return reader.iter_incremental(begin, end, partition_filter, columns)
    if begin is not None or end is not None:
        raise InvalidOperation(f"begin/end apply to incremental queries, not {query}",
                               hint="use --query incremental, or as_of for time travel")
    return reader.iter_snapshot(as_of, query == "read_optimized", partition_filter, columns)


# --8<-- [start:read_table]
def read_table(path: str | Storage, query: str = "snapshot", as_of: str | None = None,
               begin: str | None = None, end: str | None = None, columns: Sequence[str] | None = None,
               partition_filter: PartitionFilter = None, skipped: list[SkippedBlock] | None = None,
               use_metadata_table: bool = True) -> pa.Table:
    """Read a table with one query type; an empty table (no columns) when nothing is visible. Files are listed
    through the metadata table where there is one, unless ``use_metadata_table`` is False. ``skipped``, if
    given, receives the corrupt log regions the read skipped."""
    reader = TableReader(path, use_metadata_table=use_metadata_table)
    tables = [p.table for p in _parts(reader, query, as_of, begin, end, columns, partition_filter)]
    if skipped is not None:
        skipped.extend(reader.skipped)
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="permissive")
# --8<-- [end:read_table]


def iter_table(path: str | Storage, query: str = "snapshot", as_of: str | None = None,
               begin: str | None = None, end: str | None = None, columns: Sequence[str] | None = None,
               partition_filter: PartitionFilter = None) -> Iterator[pa.Table]:
    """The same query, one Arrow table per file slice (memory bounded by a few slices: those being read,
    at most as many as the reader's workers, and the one the caller holds)."""
    for p in _parts(TableReader(path), query, as_of, begin, end, columns, partition_filter):
        yield p.table
