"""The Spark engine: the write path's data steps as Spark jobs (Hudi's ``HoodieSparkEngineContext``).

Keys are Spark column expressions; the batch is deduplicated by a window on (partition, key) and
persisted for the jobs that read it; the index's (partition, key, file id) rows are joined in; the
workload profile is one aggregation; every record gets its bucket in a ``mapInArrow`` stage and one
Spark task a bucket runs its handle (``reference.engines.spark_arrow.apply_in_arrow``, Spark 4's
``groupBy(bucket).applyInArrow``). The local engine
(``local_engine.py``) runs the same steps on Arrow tables in one process.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from reference.engines.engine import Engine, Task
from reference.engines.spark_arrow import apply_in_arrow, arrow_to_spark, spark_to_arrow, to_arrow_schema
from reference.io.bulk_insert import BULK_INSERT_TASK
from reference.io.global_index import global_tag
from reference.io.handles import BUCKET, DELETE_FLAG, FILE_ID, HandleContext, run_handle
from reference.io.index import BUCKET_ID, BucketLookup, IndexLookup, base_files, lookup_partition
from reference.io.merge_actions import MERGE_ACTION
from reference.io.partitioning import route_batch, tag_buckets
from reference.transaction.object_store import adopt_env, object_store_env
from spec.config.table_config import TableConfig
from spec.errors import InvalidOperation, InvalidRecord
from spec.keygen.auto_record_key import PREPPED_COLUMNS
from spec.keygen.key_generators import check_record_keys, writes_complex_keys
from spec.keygen.partition_path import DEFAULT_PARTITION, ESCAPE_ORDER, check_partition_paths
from spec.schema.table_schema import META_FIELDS, PARTITION_PATH, RECORD_KEY
from spec.storage.hoodie_storage import Storage
from spec.write.partitioner import BucketAssignment

_INDEX_SCHEMA = "`_hoodie_partition_path` string, `_hoodie_record_key` string, `__file_id` string"


def key_columns(df: Any, table: TableConfig) -> Any:
    """Add ``_hoodie_record_key`` and ``_hoodie_partition_path`` by the table's key generator rules:
    one key field → its value; several → ``f1:v1,f2:v2`` (null ``__null__``, empty ``__empty__``);
    partition path → values joined by ``/``, ``field=value`` when hive-style, null or empty
    → ``__HIVE_DEFAULT_PARTITION__``, URL-escaped when ``hoodie.datasource.write.partitionpath.urlencode``."""
    from pyspark.sql import functions as F

    keys = table.record_key_fields
    if not keys:  # auto-generated keys: given (records read from the table) or generated with the instant
        return df if RECORD_KEY in df.columns else df.withColumn(PARTITION_PATH, partition_column(table))
    if not writes_complex_keys(keys, table.keygen_type, table.keygen_class):
        key = F.col(keys[0]).cast("string")
    else:
        parts = [F.concat(F.lit(f"{k}:"), F.when(F.col(k).isNull(), F.lit("__null__"))
                          .when(F.col(k).cast("string") == "", F.lit("__empty__"))
                          .otherwise(F.col(k).cast("string"))) for k in keys]
        key = F.concat_ws(",", *parts)
    return df.withColumn(RECORD_KEY, key).withColumn(PARTITION_PATH, partition_column(table))


ROW_ID_BITS = 33
"""``monotonically_increasing_id`` is the partition id shifted left by 33 bits plus the row's index in it."""


def auto_key_column(instant: str) -> Any:
    """``_hoodie_record_key`` generated for a table with no record key field (``spec.keygen.auto_record_key``),
    as Hudi's Spark writer forms it (``AutoRecordGenWrapperKeyGenerator``): ``<instant>_<Spark partition id>_<row
    index within that partition>``; the row index is the low 33 bits of ``monotonically_increasing_id``."""
    from pyspark.sql import functions as F

    row = F.monotonically_increasing_id().bitwiseAND(F.lit((1 << ROW_ID_BITS) - 1))
    return F.concat(F.lit(f"{instant}_"), F.spark_partition_id().cast("string"), F.lit("_"), row.cast("string"))


def partition_column(table: TableConfig) -> Any:
    """``_hoodie_partition_path`` by the table's key generator."""
    from pyspark.sql import functions as F

    segments = []
    for field in table.partition_fields:
        value = F.col(field).cast("string")
        value = F.when(value.isNull() | (value == ""), F.lit(DEFAULT_PARTITION)).otherwise(value)
        if table.url_encode_partitions:  # spec.keygen.partition_path.escape_path_name, "%" first
            for c in ESCAPE_ORDER:
                value = F.replace(value, F.lit(c), F.lit(f"%{ord(c):02X}"))
        segments.append(F.concat(F.lit(f"{field}="), value) if table.hive_style_partitioning else value)
    return F.concat_ws("/", *segments) if segments else F.lit("")


def validate_keys(df: Any, table: TableConfig) -> None:
    """A null or empty record key (``spec.keygen.key_generators.check_record_keys``), or a partition path
    ``spec.keygen.partition_path.check_partition_paths`` refuses, is refused: one Spark job brings the distinct
    partition
    paths and whether any key is bad to the driver."""
    from pyspark.sql import functions as F

    _check_rows(table, df.groupBy(PARTITION_PATH).agg(F.max(_bad_key().cast("int")).alias("bad")).collect())


def _bad_key() -> Any:
    """The column: this record's key is null or empty (the keys ``spec.keygen.key_generators.check_record_keys``
    refuses)."""
    from pyspark.sql import functions as F

    return F.col(RECORD_KEY).isNull() | (F.col(RECORD_KEY) == "")


def _check_rows(table: TableConfig, rows: list[Any]) -> None:
    """The key checks of ``spec.keygen.key_generators`` on the rows of one aggregation: per group its partition path and
    whether (``bad``) it holds a bad key."""
    check_record_keys([None for r in rows if r["bad"]][:1], table.record_key_fields)
    check_partition_paths([r[PARTITION_PATH] for r in rows], table.partition_fields)


def _joined(frame: Any, index: Any, delete: bool) -> Any:
    """``frame`` left-joined with the index's (partition, key, file id) rows; a delete keeps only the
    records found."""
    from pyspark.sql import functions as F

    frame = frame.join(index, on=[PARTITION_PATH, RECORD_KEY], how="left")
    if delete:
        frame = frame.filter(F.col(FILE_ID).isNotNull())
    return frame.withColumn(DELETE_FLAG, F.lit(delete))


def arrow_schema(df: Any) -> pa.Schema:
    """The Arrow schema of a Spark DataFrame's columns (internal columns excluded)."""
    from pyspark.sql.types import StructType

    fields = [f for f in df.schema.fields if not f.name.startswith("__") and f.name not in META_FIELDS]
    return to_arrow_schema(StructType(fields))


def task_token() -> tuple[int, str]:
    """In a Spark task: its partition id, and its write token ``<partition>-<stage>-<attempt id>``."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    assert ctx is not None, "called outside a Spark task"
    return ctx.partitionId(), f"{ctx.partitionId()}-{ctx.stageId()}-{ctx.taskAttemptId()}"


def run_buckets(spark: Any, tagged: Any, ctx: HandleContext, user_schema: pa.Schema) -> list[dict[str, Any]]:
    """Step 6: one Spark task per bucket (the ``BUCKET`` column) runs its handle; the write stats."""
    schema_bytes = user_schema.serialize().to_pybytes()
    env = object_store_env()

    def write_bucket(table_in: pa.Table) -> pa.Table:
        adopt_env(env)
        partition, token = task_token()
        data_schema = pa.ipc.read_schema(pa.py_buffer(schema_bytes))
        first = table_in.column(BUCKET)[0].as_py()
        if first is None:
            raise InvalidRecord("a record was routed to no bucket",
                                hint="count every record in the workload profile before assigning buckets")
        bucket = int(first)
        stats = run_handle(ctx, bucket, table_in, partition, token, data_schema)
        return pa.table({"stat": [json.dumps(s) for s in stats]})

    spark.sparkContext.setJobDescription(f"hudi commit {ctx.instant}: write {len(ctx.buckets)} buckets")
    rows = apply_in_arrow(tagged, BUCKET, write_bucket, "stat string").collect()
    return [json.loads(r["stat"]) for r in rows]


class SparkEngine(Engine):
    """The write path's data steps as Spark jobs (see the module docstring)."""

    name = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self._persisted: list[Any] = []
        self._config: TableConfig | None = None

    def frame(self, data: Any) -> Any:
        """The input as a Spark DataFrame: a DataFrame as is, a pyarrow Table through Arrow."""
        if isinstance(data, pa.Table):
            return arrow_to_spark(self.spark, data)
        if hasattr(data, "sparkSession") and hasattr(data, "schema"):
            return data
        raise InvalidOperation(f"cannot write a {type(data).__name__}", hint="pass a Spark DataFrame or pyarrow Table")

    def columns(self, frame: Any) -> list[str]:
        return list(frame.columns)

    def user_schema(self, frame: Any) -> pa.Schema:
        return arrow_schema(frame)

    def has_null(self, frame: Any, column: str) -> bool:
        from pyspark.sql import functions as F

        return bool(frame.filter(F.col(column).isNull()).limit(1).count())

    def cast(self, frame: Any, casts: Mapping[str, pa.DataType]) -> Any:
        from pyspark.sql import functions as F
        from pyspark.sql.pandas.types import from_arrow_type

        for name, to in casts.items():  # a struct is cast field by field in order: the batch's order is kept
            frame = frame.withColumn(name, F.col(name).cast(from_arrow_type(to)))
        return frame

    def with_keys(self, frame: Any, config: TableConfig) -> Any:
        """The key columns; they are checked (``spec.keygen.key_generators.check_record_keys``,
        ``check_partition_paths``)
        by the first job that reads them — the index's key collection, or the workload profile — not by
        a job of their own."""
        self._config = config
        return key_columns(frame, config)

    def prepped_frame(self, data: Any) -> Any:
        """Rows read from the table: the meta columns other than the keys dropped."""
        frame = self.frame(data)
        return frame.drop(*[c for c in META_FIELDS if c not in PREPPED_COLUMNS and c in frame.columns])

    def with_auto_keys(self, frame: Any, instant: str) -> Any:
        """The generated keys (``auto_key_column``), persisted: a key is computed once, by the job that first
        reads the batch, whatever reads it again."""
        keyed = frame.withColumn(RECORD_KEY, auto_key_column(instant))
        return self.persist(keyed.select(*[c for c in keyed.columns if c != PARTITION_PATH], PARTITION_PATH))

    def dedupe(self, frame: Any, ordering: str | None, by_key: bool = False) -> Any:
        """One record per (partition, key), per key alone under a global index (``by_key``)."""
        from pyspark.sql import functions as F
        from pyspark.sql.window import Window

        frame = frame.withColumn("__seq", F.monotonically_increasing_id())
        order = [F.col("__seq").desc()]
        if ordering:
            order.insert(0, F.col(ordering).desc_nulls_last())
        keys = (RECORD_KEY,) if by_key else (PARTITION_PATH, RECORD_KEY)
        w = Window.partitionBy(*keys).orderBy(*order)
        return frame.withColumn("__rn", F.row_number().over(w)).filter("__rn = 1").drop("__rn")

    def persist(self, frame: Any) -> Any:
        """Persist the prepared batch: the index lookup, the workload profile and the handles read it."""
        frame = frame.persist()
        self._persisted.append(frame)
        return frame

    def tag_location(self, frame: Any, lookup: IndexLookup | None, dedupe: bool,
                     ordering: str | None, by_key: bool = False) -> tuple[Any, None]:
        """Deduplicated by a window, persisted, then looked up in Spark tasks (``locate``): no key of the batch or
        the table reaches the driver, and the workload profile is counted by its own aggregation."""
        if by_key and dedupe and (lookup is None or lookup.global_index is None):  # a global index's insert
            frame, dedupe = self.dedupe(frame, ordering, by_key=True), False
        from pyspark.sql import functions as F

        if lookup is not None and lookup.global_index is not None:
            # a global index's tagging (``reference.io.global_index``) runs on the batch's rows at the driver
            frame = self.dedupe(frame, ordering, by_key=True) if dedupe else frame
            tagged = global_tag(spark_to_arrow(frame), lookup.global_index, lookup.delete)
            return self.persist(arrow_to_spark(self.spark, tagged)), None
        if dedupe:
            frame = self.dedupe(frame, ordering)
        if dedupe or lookup is not None:
            frame = self.persist(frame)  # read by the index lookup, the workload profile and the handles
        if lookup is not None and lookup.bucket is not None:
            return self.tag_buckets(frame, lookup.bucket, lookup.delete), None
        if lookup is None:
            return frame.withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE_FLAG, F.lit(False)), None
        return self.locate(frame, lookup), None

    def locate(self, frame: Any, lookup: IndexLookup) -> Any:
        """The batch tagged with each record's file group, looked up in one Spark task per partition
        (``reference.io.index.lookup_partition``: BLOOM footer pruning, or SIMPLE): the driver ships each
        partition's (file id, base file) list, as Hudi's driver holds the partitions' file listings, and
        never holds a key. The located rows are persisted (and computed here, so the lookup's time is its
        own step's): the profile and the handles join them."""
        if lookup.located is not None:  # the partitioned record index, read at the driver
            return _joined(frame, self.persist(arrow_to_spark(self.spark, lookup.located)), lookup.delete)
        view, base_path, bloom = lookup.view, lookup.base_path, lookup.bloom
        files = {p: base_files(view, p) for p in {g.partition_path for g in view.groups}}
        env = object_store_env()

        def lookup_keys(keys: pa.Table) -> pa.Table:
            adopt_env(env)
            partition = keys.column(PARTITION_PATH)[0].as_py()
            return lookup_partition(Storage(base_path), files.get(partition, []), partition,
                                    keys.column(RECORD_KEY).combine_chunks(), bloom)

        located = self.persist(apply_in_arrow(frame.select(PARTITION_PATH, RECORD_KEY), PARTITION_PATH, lookup_keys,
                                              _INDEX_SCHEMA))
        located.count()  # the lookup runs now, in its own job (its time is the index lookup's, not the profile's)
        return _joined(frame, located, lookup.delete)

    def tag_buckets(self, frame: Any, bucket: BucketLookup, delete: bool) -> Any:
        """The bucket index's tags in a ``mapInArrow`` stage (``reference.io.partitioning.tag_buckets``: no file is
        read, the driver ships each partition's file ids), persisted for the profile and the handles."""
        from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

        schema = StructType([*frame.schema.fields, StructField(FILE_ID, StringType()),
                             StructField(DELETE_FLAG, BooleanType()), StructField(BUCKET_ID, IntegerType())])

        def add_tags(batches: Any) -> Any:
            for batch in batches:
                yield from tag_buckets(pa.Table.from_batches([batch]), bucket, delete).to_batches()

        return self.persist(frame.mapInArrow(add_tags, schema))

    def new_buckets(self, frame: Any) -> set[tuple[str, int]]:
        from pyspark.sql import functions as F

        rows = frame.filter(F.col(FILE_ID).isNull()).select(PARTITION_PATH, BUCKET_ID).distinct().collect()
        return {(r[PARTITION_PATH], int(r[BUCKET_ID])) for r in rows}

    def keys_in_two_partitions(self, frame: Any) -> list[str]:
        from pyspark.sql import functions as F

        twice = (frame.groupBy(RECORD_KEY).agg(F.countDistinct(PARTITION_PATH).alias("n")).filter(F.col("n") > 1)
                 .select(RECORD_KEY).orderBy(RECORD_KEY).limit(10).collect())
        return [str(r[0]) for r in twice]

    def partitions(self, frame: Any) -> set[str]:
        return {r[0] for r in frame.select(PARTITION_PATH).distinct().collect()}

    def with_input_partition(self, frame: Any) -> Any:
        """Each record's input partition is the Spark partition it came in."""
        from pyspark.sql import functions as F

        return frame.withColumn(FILE_ID, F.concat(F.lit(BULK_INSERT_TASK), F.spark_partition_id().cast("string"),
                                                  F.lit(":"), F.col(PARTITION_PATH)))

    def counts(self, frame: Any) -> Mapping[tuple[str, str | None], int]:
        """Records per (partition, file group), and in the same job the count of bad keys."""
        from pyspark.sql import functions as F

        rows = frame.groupBy(PARTITION_PATH, FILE_ID).agg(F.count(F.lit(1)).alias("n"),
                                                            F.sum(_bad_key().cast("int")).alias("bad")).collect()
        assert self._config is not None, "with_keys first"
        _check_rows(self._config, rows)
        return {(r[PARTITION_PATH], r[FILE_ID]): r["n"] for r in rows}

    def write_buckets(self, frame: Any, ctx: HandleContext, user_schema: pa.Schema,
                      assignment: BucketAssignment) -> list[dict[str, Any]]:
        from pyspark.sql.types import IntegerType, StructField, StructType

        columns = [*user_schema.names, RECORD_KEY, PARTITION_PATH, DELETE_FLAG, FILE_ID,
                   *([MERGE_ACTION] if MERGE_ACTION in frame.columns else [])]
        by_bucket = assignment.bucket_of is not None  # a bucket index routes by each record's bucket number
        routing = assignment

        def add_bucket(batches: Any) -> Any:
            for batch in batches:
                numbers = batch.column(BUCKET_ID) if by_bucket else None
                buckets = route_batch(batch.column(RECORD_KEY), batch.column(PARTITION_PATH),
                                      batch.column(FILE_ID), routing, numbers)
                if by_bucket:
                    batch = batch.drop_columns([BUCKET_ID])
                yield batch.append_column(BUCKET, pa.array(buckets, pa.int32()))

        selected = frame.select(*columns, *([BUCKET_ID] if by_bucket else []))
        if not by_bucket and all(len(targets) == 1 for targets in assignment.insert_buckets.values()):
            # every partition has one insert bucket, so no insert needs its hash: the bucket is a lookup
            # of the file id (updates) or the partition (inserts), done in the JVM without a Python pass
            from pyspark.sql import functions as F

            def lookup(pairs: list[tuple[str, int]]) -> Any:
                return F.create_map(*[F.lit(x) for pair in pairs for x in pair]) if pairs else None

            updates = lookup(list(assignment.update_bucket.items()))
            inserts = lookup([(p, targets[0].bucket) for p, targets in assignment.insert_buckets.items()])
            by_file = updates[F.col(FILE_ID)] if updates is not None else F.lit(None)
            by_partition = inserts[F.col(PARTITION_PATH)] if inserts is not None else F.lit(None)
            bucket = F.when(F.col(FILE_ID).isNotNull(), by_file).otherwise(by_partition).cast("int")
            return run_buckets(self.spark, selected.withColumn(BUCKET, bucket), ctx, user_schema)
        tagged_schema = StructType([*frame.select(*columns).schema.fields, StructField(BUCKET, IntegerType())])
        return run_buckets(self.spark, selected.mapInArrow(add_bucket, tagged_schema), ctx, user_schema)

    def write_routed(self, frame: Any, ctx: HandleContext, user_schema: pa.Schema) -> list[dict[str, Any]]:
        return run_buckets(self.spark, frame, ctx, user_schema)

    def run_tasks(self, task: Task, payloads: Sequence[str], description: str) -> list[dict[str, Any]]:
        """The payloads spread over up to 64 Spark partitions; a task's write token names its Spark task."""
        env = object_store_env()

        def run(batches: Any) -> Any:
            adopt_env(env)
            token = task_token()[1]
            for batch in batches:
                out = [json.dumps(task(p, token)) for p in batch.column(0).to_pylist()]
                yield pa.record_batch([pa.array(out, pa.string())], names=["stat"])

        self.spark.sparkContext.setJobDescription(description)
        df = self.spark.createDataFrame([(p,) for p in payloads], "op string").repartition(min(len(payloads), 64))
        return [json.loads(r["stat"]) for r in df.mapInArrow(run, "stat string").collect()]

    def release(self) -> None:
        """Unpersist what this write cached."""
        while self._persisted:
            self._persisted.pop().unpersist()


class SparkEngineContext:
    """Writes on Spark (Hudi's ``HoodieSparkEngineContext``): a fresh ``SparkEngine`` each, on ``spark`` or, when
    None, on the process's session, started at the first write that needs it; a job's status is its Spark job
    description."""

    name = "spark"

    def __init__(self, spark: Any = None) -> None:
        self._spark = spark

    @property
    def spark(self) -> Any:
        """The Spark session, started when there is none yet."""
        if self._spark is None:
            from reference.engines.spark_session import get_or_create_session

            self._spark = get_or_create_session()
        return self._spark

    def engine(self) -> SparkEngine:
        return SparkEngine(self.spark)

    def set_job_status(self, description: str) -> None:
        """The description of the Spark jobs that follow, once a session runs (none is started for it)."""
        if self._spark is not None:
            self._spark.sparkContext.setJobDescription(description)


__all__ = ["SparkEngine", "SparkEngineContext", "arrow_schema", "key_columns", "run_buckets", "validate_keys"]
