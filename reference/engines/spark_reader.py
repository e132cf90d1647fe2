"""The Spark reader: every query type of ``spec.read.reader`` as a Spark DataFrame.

``read_spark(spark, path, query, ...)`` answers the same queries as ``spec.read.reader.read_table`` —
snapshot, read-optimized, incremental ``(begin, end]`` and time travel (``as_of``), on
copy-on-write and merge-on-read tables — and returns a DataFrame with the same columns in the
same order and the same rows (row order is Spark's).

How a query runs:

1. **Planning, on the driver**: the table's config and timeline are loaded once and the query is
   planned by the spec reader's own planner (``spec.read.query_plan.plan_query``, through
   ``TableReader.plan``): its checks, then the file slices it reads — the latest visible slice of
   every file group (as of ``as_of`` for time travel), partition pruning, slices without a base
   file dropped for read-optimized, and for incremental only the file groups written by the
   completed instants of the window (from their commit metadata), read as of the window's last
   instant.
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
   per slice, spread one slice per partition; ``mapInArrow`` runs ``spec.file_group.log_file.scanner`` and
   ``spec.read.slice_merge`` (``TableReader.read_slice``) for its slice and yields Arrow batches. The work
   is distributed per file group; the driver never sees a row.
5. Incremental queries keep the rows whose ``_hoodie_commit_time`` is one of the window's
   instants (Spark filter), then ``columns`` are selected.

Bad input raises the spec reader's typed errors (``spec.errors.InvalidOperation``, from the same
checks: ``spec.read.query_plan``) on the driver, before any job runs: an unknown query type, a malformed
instant, ``as_of`` with an incremental query, a missing column, an incremental query on a table
without meta fields, and a merge the specification does not define (a custom payload or merge mode
with log blocks to apply).

One difference a lazy DataFrame cannot avoid: when file slices are chosen but no row survives
(an incremental window whose rows were all rewritten later), the DataFrame has the columns and no
rows, where ``read_table`` returns a table without columns. With no slice chosen, both have none.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from reference.engines.spark_arrow import to_arrow_schema
from reference.transaction.object_store import adopt_env, object_store_env
from spec.file_group.log_file.scanner import scan_slice_logs
from spec.read.merge import MergeMode
from spec.read.query_plan import PartitionFilter, QueryPlan, check_columns
from spec.read.reader import TableReader
from spec.schema.table_schema import COMMIT_TIME
from spec.storage.hoodie_storage import Storage

__all__ = ["conform", "plan_schema", "read_spark"]

# characters Hadoop's path globbing gives a meaning to; a path handed to spark.read escapes them
_GLOB_CHARS = "\\*?[]{}"


def _check_mergeable(reader: TableReader, plan: QueryPlan) -> None:
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


def _slice_rows(reader: TableReader, plan: QueryPlan, index: int) -> pa.Table | None:
    """The rows of one planned slice (runs inside Spark tasks)."""
    return reader.read_slice(plan.slices[index], plan.log_as_of, with_logs=plan.with_logs)


def plan_schema(spark: Any, reader: TableReader, plan: QueryPlan) -> pa.Schema:
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


def _log_only_schemas(spark: Any, reader: TableReader, plan: QueryPlan, indexes: list[int]) -> dict[int, pa.Schema]:
    """Schemas of slices without a base file: each task merges its slice's logs and returns the
    schema (serialized) when the merge leaves rows."""
    out_schema = pa.schema([("index", pa.int64()), ("schema", pa.binary())])
    env = object_store_env()

    def schemas(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        adopt_env(env)
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
    """Read a table with one query type as a Spark DataFrame (the rows ``spec.read.reader.read_table`` reads).

    ``query`` is ``snapshot`` (with ``as_of`` for time travel), ``read_optimized`` or ``incremental``
    (``begin`` exclusive, ``end`` inclusive); ``columns`` selects columns; ``partition_filter`` is a
    partition path, a list of them, or a predicate on partition paths.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructType

    reader = TableReader(path)
    plan = reader.plan(query, as_of, begin, end, partition_filter)
    spark.sparkContext.setJobDescription(_describe(reader, plan, as_of, begin, end))
    if not plan.slices:
        return spark.createDataFrame([], StructType([]))
    _check_mergeable(reader, plan)
    schema = plan_schema(spark, reader, plan)
    if not schema.names:
        return spark.createDataFrame([], StructType([]))
    check_columns(columns, schema.names)
    spark_schema = from_arrow_schema(schema)
    timezone = spark.conf.get("spark.sql.session.timeZone")
    arrow_schema = to_arrow_schema(spark_schema, timezone=timezone)

    parts = []
    base = plan.base_only()
    through_hadoop = not reader.storage.scheme.object_store  # object stores: pyarrow in the tasks, as written
    if base and through_hadoop:
        by_nulls: dict[tuple[str, ...], list[str]] = {}
        for k in base:  # TableReader.partition_values, on the base files Spark reads
            sl = plan.slices[k]
            nulls = tuple(c for c in reader.null_partition_columns(sl.partition_path) if c in schema.names)
            by_nulls.setdefault(nulls, []).append(_spark_path(reader.storage, sl.base_file.path))  # type: ignore[union-attr]
        for nulls, paths in by_nulls.items():
            frame = spark.read.schema(spark_schema).parquet(*paths)
            for c in nulls:
                frame = frame.withColumn(c, F.lit(None).cast(spark_schema[c].dataType))
            parts.append(frame)
    merged = plan.merged() + ([] if through_hadoop else base)
    if merged:
        parts.append(_merged_frame(spark, reader, plan, merged, arrow_schema, spark_schema))
    df = functools.reduce(lambda a, b: a.union(b), parts)
    if plan.window is not None:
        df = df.where(F.col(COMMIT_TIME).cast("string").isin(list(plan.window)))
    if columns:
        df = df.select(*[F.col(_quoted(c)) for c in columns])
    return df


# --8<-- [start:merged_frame]
def _merged_frame(spark: Any, reader: TableReader, plan: QueryPlan, indexes: list[int], arrow_schema: pa.Schema,
                  spark_schema: Any) -> Any:
    """The merged rows of the slices ``indexes``: one slice a partition, merged by ``spec`` in the task."""

    env = object_store_env()

    def merge(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        adopt_env(env)  # a task reaches the object store as the driver does
        for batch in batches:
            for k in batch.column(0).to_pylist():
                table = _slice_rows(reader, plan, k)
                if table is not None and table.num_rows:
                    yield from conform(table, arrow_schema).to_batches()

    return _one_per_partition(spark, indexes).mapInArrow(merge, spark_schema)
# --8<-- [end:merged_frame]


def _one_per_partition(spark: Any, indexes: list[int]) -> Any:
    """A DataFrame of the slice indexes, one row (one file slice) per partition, hence per task."""
    from pyspark.sql import functions as F

    n = len(indexes)
    position = F.col("id")
    index = F.element_at(F.array(*[F.lit(k) for k in indexes]), (position + 1).cast("int"))
    return spark.range(0, n, 1, n).select(index.cast("long").alias("index"))


def _describe(reader: TableReader, plan: QueryPlan, as_of: str | None, begin: str | None, end: str | None) -> str:
    """The Spark job description: ``hudi read <query> <table> ...``."""
    text = f"hudi read {plan.query} {reader.config.name or reader.storage.uri}"
    if as_of:
        text += f" as of {as_of}"
    if plan.query == "incremental":
        text += f" ({begin or '-'}, {end or 'latest'}]"
    return text + f" ({len(plan.slices)} file slices)"
