"""bulk_insert: how many base files a bulk insert writes, and which records each holds.

A bulk insert builds no ``WorkloadProfile``: it looks up no index, takes no small files and sizes no
insert buckets. Its input is repartitioned by the ``BulkInsertPartitioner`` of
``hoodie.bulkinsert.sort.mode`` (``NONE`` by default in 0.15.x and 1.0.x), then each Spark
partition is written by one task, which keeps one open create handle per partition path it meets:
the first record of a partition path opens a new file group (file id ``<task prefix>-<n>``, ``n``
counting the files the task opened), and a handle that reaches ``hoodie.parquet.max.file.size`` is
closed and the next record opens another. So a bulk insert writes, per Spark partition *after*
repartitioning, one file per partition path it holds (plus one per size rollover):

- ``NONE`` — the input partitions as they are (``NonSortPartitionerWithRows``, no shuffle);
- ``PARTITION_SORT`` — the input partitions, each sorted by (partition path, record key)
  (``PartitionSortPartitionerWithRows``): the same files, rows in key order;
- ``GLOBAL_SORT`` — sorted by (partition path, record key) into range partitions
  (``GlobalSortPartitionerWithRows``): a partition path spread over several ranges gets a file per
  range; the ranges come from Spark's sampling, so only one output partition is deterministic;
- ``PARTITION_PATH_REPARTITION`` — repartitioned by partition path
  (``PartitionPathRepartitionPartitioner``): every partition path in one Spark partition, so one
  file per partition path.

The files, in 0.15.x and 1.0.x: hudi-client/hudi-spark-client/src/main/java/org/apache/hudi/execution/
bulkinsert/BulkInsertInternalPartitionerWithRowsFactory.java (the partitioner per mode),
hudi-client/hudi-spark-client/src/main/java/org/apache/hudi/table/action/commit/
BulkInsertDataInternalWriterHelper.java (the handle per partition path, the rollover) and
hudi-client/hudi-spark-client/src/main/java/org/apache/hudi/table/action/commit/SparkBulkInsertHelper.java
(the same grouping when the row writer is off). ``bulk_insert_files`` states the rule for input
partitions given as lists of partition paths; the size rollover is left to the writer (it depends on
the bytes a parquet writer produced).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``BulkInsertSortMode``,
``BulkInsertInternalPartitionerWithRowsFactory``, ``BulkInsertDataInternalWriterHelper``,
``SparkBulkInsertHelper``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from spec.errors import InvalidConfig

SORT_MODES: Final = ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION")
DEFAULT_SORT_MODE: Final = "NONE"
"""``hoodie.bulkinsert.sort.mode``'s default (``BulkInsertSortMode.NONE``, 0.15.x and 1.0.x)."""


@dataclass(frozen=True)
class BulkInsertFile:
    """One file a bulk insert writes: the Spark partition (task) that writes it, its partition path,
    and the records it holds, as (input partition, index within it) pairs, in the order written."""

    task: int
    partition_path: str
    records: tuple[tuple[int, int], ...]


# --8<-- [start:bulk_insert_files]
def bulk_insert_files(inputs: Sequence[Sequence[str]], sort_mode: str = DEFAULT_SORT_MODE,
                      keys: Sequence[Sequence[str]] | None = None) -> list[BulkInsertFile]:
    """The files of a bulk insert whose input partitions hold records of the given partition paths
    (``inputs[i][j]``: the partition path of record j of input partition i; ``keys``, their record
    keys, order the sort modes). Files are listed task by task, each task's files in the order it
    opens them. ``GLOBAL_SORT`` and ``PARTITION_PATH_REPARTITION`` are stated for one output
    partition per input partition of a single-partition input and for any input respectively."""
    if sort_mode not in SORT_MODES:
        raise InvalidConfig(f"hoodie.bulkinsert.sort.mode={sort_mode!r} is not a sort mode",
                            hint=f"use one of {', '.join(SORT_MODES)}")
    records = [(i, j) for i, part in enumerate(inputs) for j in range(len(part))]

    def path(r: tuple[int, int]) -> str:
        return inputs[r[0]][r[1]]

    def key(r: tuple[int, int]) -> tuple[str, str]:
        return path(r), keys[r[0]][r[1]] if keys is not None else ""

    if sort_mode == "PARTITION_PATH_REPARTITION":
        paths = list(dict.fromkeys(path(r) for r in records))
        tasks = [[r for r in records if path(r) == p] for p in paths]
    elif sort_mode == "GLOBAL_SORT":
        tasks = [sorted(records, key=key)] if records else []
    else:
        tasks = [[r for r in records if r[0] == i] for i in range(len(inputs))]
        if sort_mode == "PARTITION_SORT":
            tasks = [sorted(t, key=key) for t in tasks]
    out = []
    for task, rows in enumerate(tasks):
        by_path: dict[str, list[tuple[int, int]]] = {}
        for r in rows:
            by_path.setdefault(path(r), []).append(r)
        out += [BulkInsertFile(task, p, tuple(rs)) for p, rs in by_path.items()]
    return out
# --8<-- [end:bulk_insert_files]
