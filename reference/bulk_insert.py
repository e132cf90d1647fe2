"""bulk_insert on the reference: a create handle per file ``spec.bulk_insert`` names for the input
partitions the batch came in (a Spark DataFrame's partitions; the local engine's table is one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from reference.local_engine import FILE_ID
from spec.bulk_insert import bulk_insert_files
from spec.partitioner import Bucket, BucketAssignment
from spec.schema import PARTITION_PATH

if TYPE_CHECKING:
    from reference.local_engine import LocalEngine
    from reference.spark_engine import SparkEngine


BULK_INSERT_TASK = "bulk_insert:"
"""The routing token a bulk insert's records carry in the file id column: ``bulk_insert:<input
partition>:<partition path>`` (never written: each token names the create handle that writes it)."""


def with_input_partition(engine: SparkEngine | LocalEngine, frame: Any) -> Any:
    """A bulk insert's records tagged with their input partition and partition path
    (``BULK_INSERT_TASK``): the Spark partition they came in, or 0 for the local engine's one batch."""
    if engine.name == "local":
        tokens = pc.binary_join_element_wise(f"{BULK_INSERT_TASK}0:", frame.column(PARTITION_PATH).cast(pa.string()),
                                             "")
        return frame.set_column(frame.schema.get_field_index(FILE_ID), FILE_ID, tokens)
    from pyspark.sql import functions as F

    return frame.withColumn(FILE_ID, F.concat(F.lit(BULK_INSERT_TASK), F.spark_partition_id().cast("string"),
                                              F.lit(":"), F.col(PARTITION_PATH)))


def bulk_insert_assignment(counts: Mapping[tuple[str, str | None], int], sort_mode: str,
                           new_file_id: Callable[[], str]) -> BucketAssignment:
    """A bulk insert's buckets by ``spec.bulk_insert``: a create handle per file
    ``bulk_insert_files`` names for the input partitions the records came in (their tokens, from
    ``with_input_partition``); every token routes to the bucket of its file."""
    tokens = sorted((str(fid), p) for p, fid in counts if counts[(p, fid)])
    tasks = sorted({int(t.removeprefix(BULK_INSERT_TASK).split(":", 1)[0]) for t, _ in tokens})
    inputs = [[p for t, p in tokens if int(t.removeprefix(BULK_INSERT_TASK).split(":", 1)[0]) == task]
              for task in tasks]
    buckets: list[Bucket] = []
    update_bucket: dict[str, int] = {}
    expected: dict[int, int] = {}
    for f in bulk_insert_files(inputs, sort_mode):
        number = len(buckets)
        buckets.append(Bucket(number, "INSERT", f.partition_path, new_file_id()))
        for i, j in f.records:
            token = f"{BULK_INSERT_TASK}{tasks[i]}:{inputs[i][j]}"
            update_bucket[token] = number
            expected[number] = expected.get(number, 0) + counts[(inputs[i][j], token)]
    return BucketAssignment(tuple(buckets), update_bucket, {}, {}, expected)
