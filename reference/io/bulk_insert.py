"""bulk_insert on the reference: a create handle per file ``spec.write.bulk_insert`` names for the input
partitions the batch came in (a Spark DataFrame's partitions; the local engine's table is one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from spec.write.bulk_insert import bulk_insert_files
from spec.write.partitioner import Bucket, BucketAssignment

BULK_INSERT_TASK = "bulk_insert:"
"""The routing token a bulk insert's records carry in the file id column: ``bulk_insert:<input
partition>:<partition path>`` (never written: each token names the create handle that writes it).
The engines tag the records (``Engine.with_input_partition``): with the Spark partition they came
in, or 0 for the local engine's one batch."""


def bulk_insert_assignment(counts: Mapping[tuple[str, str | None], int], sort_mode: str,
                           new_file_id: Callable[[], str]) -> BucketAssignment:
    """A bulk insert's buckets by ``spec.write.bulk_insert``: a create handle per file
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
