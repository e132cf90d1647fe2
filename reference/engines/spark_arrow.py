"""Arrow between Python and Spark, on the Spark line the project runs (3.5) as on Spark 4.

Spark 4 added the public ``spark.createDataFrame(pyarrow.Table)``, ``DataFrame.toArrow()`` and
``GroupedData.applyInArrow``; Spark 3.5 (the newest line Apache Hudi's Spark bundle is published for, and so
the project's) has none of them. These functions give each one on both: on Spark 4 the public call, on 3.5
the same Arrow streams that pyspark's own pandas conversions use, without pandas in between, so no value
changes type on the way (a nullable integer stays an integer, a timestamp keeps its microseconds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc


def _spark4() -> bool:
    import pyspark

    return int(pyspark.__version__.split(".")[0]) >= 4


def to_arrow_schema(schema: Any, timezone: str = "UTC") -> pa.Schema:
    """The Arrow schema of a Spark ``StructType`` (timestamps in ``timezone``; pyspark 3.5 always uses UTC)."""
    from pyspark.sql.pandas.types import to_arrow_schema as convert

    return convert(schema, timezone=timezone) if _spark4() else convert(schema)  # type: ignore[call-arg]


def arrow_to_spark(spark: Any, table: pa.Table) -> Any:
    """A Spark DataFrame of an Arrow table's rows, its schema Spark's type for each Arrow type
    (``from_arrow_schema``); on 3.5 one Arrow stream, read by the JVM as ``createDataFrame`` reads pandas."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if _spark4():
        return spark.createDataFrame(table)
    schema = from_arrow_schema(table.schema)
    if not table.num_rows:
        return spark.createDataFrame([], schema)
    table = table.cast(to_arrow_schema(schema))
    step = int(spark._jconf.arrowMaxRecordsPerBatch())
    batches = table.to_batches(max_chunksize=step if step > 0 else None)
    return _from_batches(spark, batches, schema)


def _from_batches(spark: Any, batches: list[pa.RecordBatch], schema: Any) -> Any:
    """The JVM side of pyspark 3.5's ``_create_from_pandas_with_arrow``, fed Arrow batches as they are."""
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer

    jvm = spark._jvm
    jiter = spark.sparkContext._serialize_to_jvm(
        batches, ArrowStreamSerializer(), lambda f: jvm.PythonSQLUtils.readArrowStreamFromFile(f),
        lambda: jvm.ArrowIteratorServer())
    return DataFrame(jvm.PythonSQLUtils.toDataFrame(jiter, schema.json(), spark._jsparkSession), spark)


def spark_to_arrow(df: Any) -> pa.Table:
    """A Spark DataFrame's rows collected as one Arrow table (``DataFrame.toArrow`` of Spark 4)."""
    if _spark4():
        return df.toArrow()
    schema = to_arrow_schema(df.schema)
    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()


def apply_in_arrow(df: Any, key: str, func: Callable[[pa.Table], pa.Table], schema: str) -> Any:
    """``df.groupBy(key).applyInArrow(func, schema)``: ``func`` called once per value of the column ``key``
    with that group's rows as one Arrow table, its rows the output. On 3.5 the rows are shuffled by ``key``
    into the session's shuffle partitions and sorted by it, as Spark's grouped map does, and each task cuts
    its sorted stream into the groups (``groups``)."""
    if _spark4():
        return df.groupBy(key).applyInArrow(func, schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for group in groups(batches, key):
            yield from func(group).to_batches()

    return df.repartition(key).sortWithinPartitions(key).mapInArrow(run, schema)


def groups(batches: Iterator[pa.RecordBatch], key: str) -> Iterator[pa.Table]:
    """The runs of equal ``key`` values of a stream sorted by ``key``, each as one table (nulls one run)."""
    pending: list[pa.RecordBatch] = []
    current: Any = None
    for batch in batches:
        if not batch.num_rows:
            continue
        runs = pc.run_end_encode(batch.column(key))
        start = 0
        for value, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist(), strict=True):
            if pending and value != current:
                yield pa.Table.from_batches(pending)
                pending = []
            current = value
            pending.append(batch.slice(start, end - start))
            start = end
    if pending:
        yield pa.Table.from_batches(pending)
