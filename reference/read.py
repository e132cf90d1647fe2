"""Spark readers for Hudi tables: every query type of ``spec.reader`` as a Spark DataFrame.

``read_spark(spark, path, query, ...)`` answers the same queries as ``spec.reader.read_table`` —
snapshot, read-optimized, incremental ``(begin, end]`` and time travel (``as_of``), on
copy-on-write and merge-on-read tables — and returns a DataFrame with the same columns in the
same order and the same rows (row order is Spark's).

How a query runs:

1. **Planning, on the driver** (``plan_read``): the table's config and timeline are loaded once
   and ``spec.file_system_view`` chooses the file slices, exactly as the spec reader plans:
   the latest visible slice of every file group (as of ``as_of`` for time travel), partition
   pruning by ``spec.reader.select_partitions``, slices without a base file dropped for
   read-optimized, and for incremental only the file groups written by the completed instants
   of the window (from their commit metadata), read as of the window's last instant.
2. **Schema, on the driver** (``plan_schema``): the result's columns are those of the chosen
   slices' base files (parquet footers only), unified in slice order as the spec reader's
   ``concat_tables(promote_options="permissive")`` does; a slice with only log files contributes
   the schema its merge produces (one small Spark job reads those slices).
3. **Base files, by Spark**: a slice whose rows are its base file alone (copy-on-write, any
   read-optimized query, a merge-on-read slice without log files) is read by
   ``spark.read.parquet`` with that schema. On an object store (``s3://``, ``gs://``) Spark's
   readers would need Hadoop's connector for the scheme (``hadoop-aws`` and its AWS SDK), which
   pyspark does not ship; there every slice is read as in step 4, through pyarrow inside the tasks,
   the way the writer reaches the store (the driver's ``AWS_*`` settings go with the tasks).
4. **Merging, in Spark tasks**: merge-on-read slices with log files become a DataFrame of one row
   per slice, spread one slice per partition; ``mapInArrow`` runs ``spec.log_scanner`` and
   ``spec.merge`` (``TableReader.read_slice``) for its slice and yields Arrow batches. The work
   is distributed per file group; the driver never sees a row.
5. Incremental queries keep the rows whose ``_hoodie_commit_time`` is one of the window's
   instants (Spark filter), then ``columns`` are selected.

Bad input raises the spec reader's typed errors (``spec.errors.InvalidOperation``) on the
driver, before any job runs: an unknown query type, a malformed instant, ``as_of`` with an
incremental query, a missing column, an incremental query on a table without meta fields, and a
merge the specification does not define (a custom payload or merge mode with log blocks to apply).

One difference a lazy DataFrame cannot avoid: when file slices are chosen but no row survives
(an incremental window whose rows were all rewritten later), the DataFrame has the columns and no
rows, where ``read_table`` returns a table without columns. With no slice chosen, both have none.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from spec.commit_metadata import parse_commit_metadata
from spec.errors import InvalidOperation
from spec.file_system_view import FileSlice
from spec.log_scanner import scan_slice_logs
from spec.merge import MergeMode
from spec.reader import QUERY_TYPES, PartitionFilter, TableReader, select_partitions
from spec.schema import COMMIT_TIME
from spec.storage import Storage
from spec.timeline_layout import read_instant_content

__all__ = ["ReadPlan", "check_query", "conform", "plan_read", "plan_schema", "read_spark"]

# characters Hadoop's path globbing gives a meaning to; a path handed to spark.read escapes them
_GLOB_CHARS = "\\*?[]{}"


@dataclass(frozen=True)
class ReadPlan:
    """What a query reads: the file slices in the spec reader's order, and how each is read.

    ``with_logs`` is False for read-optimized queries (base files only); ``log_as_of`` is the
    instant log blocks are applied as of; ``window`` is the incremental query's commit times
    (None for other queries).
    """

    query: str
    slices: tuple[FileSlice, ...]
    with_logs: bool
    log_as_of: str | None
    window: tuple[str, ...] | None = None

    def merged(self) -> list[int]:
        """Indexes of the slices whose base file is merged with log files (inside Spark tasks)."""
        return [k for k, sl in enumerate(self.slices) if self.with_logs and sl.log_files]

    def base_only(self) -> list[int]:
        """Indexes of the slices that are their base file alone (read by ``spark.read.parquet``)."""
        merged = set(self.merged())
        return [k for k, sl in enumerate(self.slices) if k not in merged and sl.base_file is not None]


def _check_instant(t: str | None, what: str) -> None:
    """An instant argument is 14 or 17 digits (yyyyMMddHHmmss[SSS]), as the spec reader requires."""
    if t is not None and not (t.isdigit() and len(t) in (14, 17)):
        raise InvalidOperation(f"{what} {t!r} is not an instant time", hint="use yyyyMMddHHmmssSSS")


def check_query(query: str, as_of: str | None, begin: str | None, end: str | None) -> None:
    """A query type is one of ``QUERY_TYPES``; only incremental takes begin/end, and it takes no as_of."""
    if query not in QUERY_TYPES:
        raise InvalidOperation(f"unknown query type {query!r}", hint=f"use one of {', '.join(QUERY_TYPES)}")
    if query == "incremental":
        if as_of is not None:
            raise InvalidOperation("an incremental query has no as_of", hint="use begin and end")
        _check_instant(begin, "begin")
        _check_instant(end, "end")
        return
    if begin is not None or end is not None:
        raise InvalidOperation(f"begin/end apply to incremental queries, not {query}",
                               hint="use --query incremental, or as_of for time travel")
    _check_instant(as_of, "as_of")


# --8<-- [start:plan_read]
def plan_read(reader: TableReader, query: str = "snapshot", as_of: str | None = None, begin: str | None = None,
              end: str | None = None, partition_filter: PartitionFilter = None) -> ReadPlan:
    """Choose the file slices a query reads, as the spec reader does (see the module docstring)."""
    check_query(query, as_of, begin, end)
    if query == "incremental":
        return _plan_incremental(reader, begin, end, partition_filter)
    if as_of is not None and reader.timeline.latest_completed() is None:
        return ReadPlan(query, (), False, None)
    read_optimized = query == "read_optimized"
    view = reader.view(as_of)
    slices = view.latest_slices(select_partitions(view.partitions(), partition_filter))
    if read_optimized:
        slices = [sl for sl in slices if sl.base_file is not None]
    return ReadPlan(query, tuple(slices), not read_optimized, as_of or reader.latest_instant())
# --8<-- [end:plan_read]


def _plan_incremental(reader: TableReader, begin: str | None, end: str | None,
                      partition_filter: PartitionFilter) -> ReadPlan:
    """The file groups written by the window's completed instants, as a snapshot as of the last
    data-writing instant completed by ``end``."""
    if not reader.config.populate_meta_fields:
        raise InvalidOperation("incremental queries need the commit time meta column, which this table "
                               "does not populate (hoodie.populate.meta.fields=false)",
                               hint="use a snapshot or time-travel query")
    window = reader.commits_in_range(begin, end)
    if not window:
        return ReadPlan("incremental", (), True, None, ())
    upto = [i.requested for i in reader.timeline.commits_timeline().instants
            if end is None or (i.completed or i.requested) <= end]
    as_of = max(upto)
    touched: set[tuple[str, str]] = set()
    for t in window:
        inst = reader.timeline.get(t)
        if inst is None:  # commits_in_range only names instants of the timeline
            continue
        touched |= parse_commit_metadata(read_instant_content(reader.storage, inst, reader.timeline.layout)
                                         ).file_ids_written()
    view = reader.view(as_of)
    slices = [sl for sl in view.latest_slices(select_partitions(view.partitions(), partition_filter))
              if (sl.partition_path, sl.file_id) in touched]
    return ReadPlan("incremental", tuple(slices), True, as_of, tuple(window))


def _check_mergeable(reader: TableReader, plan: ReadPlan) -> None:
    """Under a custom merge (its Java code decides) a slice with log blocks to apply cannot be read:
    raise the spec reader's error on the driver rather than inside a task."""
    if reader.rule.mode != MergeMode.CUSTOM:
        return
    for k in plan.merged():
        sl = plan.slices[k]
        blocks, _ = scan_slice_logs(reader.storage, [f.path for f in sl.log_files], reader.timeline,
                                    plan.log_as_of, reader.config.table_version)
        if blocks:
            reader.read_slice(sl, plan.log_as_of)  # raises InvalidOperation, as read_table does


# --- schema ------------------------------------------------------------------------------------


def _slice_rows(reader: TableReader, plan: ReadPlan, index: int) -> pa.Table | None:
    """The rows of one planned slice (runs inside Spark tasks)."""
    return reader.read_slice(plan.slices[index], plan.log_as_of, with_logs=plan.with_logs)


def plan_schema(spark: Any, reader: TableReader, plan: ReadPlan) -> pa.Schema:
    """The Arrow schema of the query's rows before projection: the slices' schemas unified in slice
    order (permissive promotion, as ``read_table`` concatenates). Base files give theirs from the
    parquet footer; log-only slices are merged by a Spark job that returns only their schemas."""
    per_slice: dict[int, pa.Schema] = {}
    log_only = []
    for k, sl in enumerate(plan.slices):
        if sl.base_file is not None:
            per_slice[k] = reader.storage.parquet_file(sl.base_file.path).schema_arrow.remove_metadata()
        elif plan.with_logs and sl.log_files:
            log_only.append(k)
    if log_only:
        per_slice.update(_log_only_schemas(spark, reader, plan, log_only))
    schemas = [per_slice[k] for k in sorted(per_slice)]
    if not schemas:
        return pa.schema([])
    return pa.unify_schemas(schemas, promote_options="permissive")


def _log_only_schemas(spark: Any, reader: TableReader, plan: ReadPlan, indexes: list[int]) -> dict[int, pa.Schema]:
    """Schemas of slices without a base file: each task merges its slice's logs and returns the
    schema (serialized) when the merge leaves rows."""
    out_schema = pa.schema([("index", pa.int64()), ("schema", pa.binary())])

    def schemas(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            found: list[tuple[int, bytes]] = []
            for k in batch.column(0).to_pylist():
                table = _slice_rows(reader, plan, k)
                if table is not None and table.num_rows:
                    found.append((k, table.schema.remove_metadata().serialize().to_pybytes()))
            yield pa.record_batch([pa.array([f[0] for f in found], pa.int64()),
                                   pa.array([f[1] for f in found], pa.binary())], schema=out_schema)

    rows = _one_per_partition(spark, indexes).mapInArrow(schemas, "index long, schema binary").collect()
    return {int(r["index"]): pa.ipc.read_schema(pa.py_buffer(bytes(r["schema"]))) for r in rows}


def _project_schema(schema: pa.Schema, columns: Sequence[str] | None) -> None:
    """Every requested column exists (the spec reader's message and hint)."""
    if not columns:
        return
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise InvalidOperation(f"no column {', '.join(map(repr, missing))} in the table",
                               hint=f"columns are: {', '.join(schema.names)}")


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A slice's rows in the query's schema: its columns in schema order, cast to the schema's types,
    a column the slice lacks all null (what permissive concatenation gives)."""
    columns = [table.column(f.name).cast(f.type) if f.name in table.column_names
               else pa.nulls(table.num_rows, f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


# --- Spark -------------------------------------------------------------------------------------


def _spark_path(storage: Storage, rel: str) -> str:
    """A file's path as Spark's readers take it: a URI, with glob characters escaped."""
    full = storage.uri.rstrip("/") + "/" + rel if "://" in storage.uri else "file://" + storage.full(rel)
    return "".join("\\" + c if c in _GLOB_CHARS else c for c in full)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read_spark(spark: Any, path: str | Storage, query: str = "snapshot", as_of: str | None = None,
               begin: str | None = None, end: str | None = None, columns: Sequence[str] | None = None,
               partition_filter: PartitionFilter = None) -> Any:
    """Read a table with one query type as a Spark DataFrame (the rows ``spec.reader.read_table`` reads).

    ``query`` is ``snapshot`` (with ``as_of`` for time travel), ``read_optimized`` or ``incremental``
    (``begin`` exclusive, ``end`` inclusive); ``columns`` selects columns; ``partition_filter`` is a
    partition path, a list of them, or a predicate on partition paths.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import StructType

    reader = TableReader(path)
    plan = plan_read(reader, query, as_of, begin, end, partition_filter)
    spark.sparkContext.setJobDescription(_describe(reader, plan, as_of, begin, end))
    if not plan.slices:
        return spark.createDataFrame([], StructType([]))
    _check_mergeable(reader, plan)
    schema = plan_schema(spark, reader, plan)
    if not schema.names:
        return spark.createDataFrame([], StructType([]))
    _project_schema(schema, columns)
    spark_schema = from_arrow_schema(schema)
    timezone = spark.conf.get("spark.sql.session.timeZone")
    arrow_schema = to_arrow_schema(spark_schema, timezone=timezone)

    parts = []
    base = plan.base_only()
    through_hadoop = not reader.storage.scheme.object_store  # object stores: pyarrow in the tasks, as written
    if base and through_hadoop:
        paths = [_spark_path(reader.storage, plan.slices[k].base_file.path)  # type: ignore[union-attr]
                 for k in base]
        parts.append(spark.read.schema(spark_schema).parquet(*paths))
    merged = plan.merged() + ([] if through_hadoop else base)
    if merged:
        parts.append(_merged_frame(spark, reader, plan, merged, arrow_schema, spark_schema))
    df = parts[0] if len(parts) == 1 else parts[0].union(parts[1])
    if plan.window is not None:
        df = df.where(F.col(COMMIT_TIME).cast("string").isin(list(plan.window)))
    if columns:
        df = df.select(*[F.col(_quoted(c)) for c in columns])
    return df


# --8<-- [start:merged_frame]
def _merged_frame(spark: Any, reader: TableReader, plan: ReadPlan, indexes: list[int], arrow_schema: pa.Schema,
                  spark_schema: Any) -> Any:
    """The merged rows of the slices ``indexes``: one slice a partition, merged by ``spec`` in the task."""

    env = _object_store_env()

    def merge(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for key, value in env.items():  # a task reaches the object store as the driver does
            os.environ.setdefault(key, value)
        for batch in batches:
            for k in batch.column(0).to_pylist():
                table = _slice_rows(reader, plan, k)
                if table is not None and table.num_rows:
                    yield from conform(table, arrow_schema).to_batches()

    return _one_per_partition(spark, indexes).mapInArrow(merge, spark_schema)
# --8<-- [end:merged_frame]


def _object_store_env() -> dict[str, str]:
    """The driver's AWS settings (endpoint, region, keys) for tasks whose environment lacks them."""
    return {k: v for k, v in os.environ.items() if k.startswith("AWS_")}


def _one_per_partition(spark: Any, indexes: list[int]) -> Any:
    """A DataFrame of the slice indexes, one row (one file slice) per partition, hence per task."""
    from pyspark.sql import functions as F

    n = len(indexes)
    position = F.col("id")
    index = F.element_at(F.array(*[F.lit(k) for k in indexes]), (position + 1).cast("int"))
    return spark.range(0, n, 1, n).select(index.cast("long").alias("index"))


def _describe(reader: TableReader, plan: ReadPlan, as_of: str | None, begin: str | None, end: str | None) -> str:
    """The Spark job description: ``hudi read <query> <table> ...``."""
    text = f"hudi read {plan.query} {reader.config.name or reader.storage.uri}"
    if as_of:
        text += f" as of {as_of}"
    if plan.query == "incremental":
        text += f" ({begin or '-'}, {end or 'latest'}]"
    return text + f" ({len(plan.slices)} file slices)"
