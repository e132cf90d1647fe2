"""The buckets of a write to a bucket-indexed table (``spec.index.bucket_index``, step 3): Hudi's
``SparkBucketIndexPartitioner``.

One bucket per (partition, bucket number) the write touches: the bucket's file group (UPDATE) when it has one,
else a new group (INSERT) whose file id prefix is a new random prefix with its first 8 characters the bucket
number (``BucketIdentifier.newBucketFileIdPrefix``; the file id is the prefix and ``-0``). No small files, no
insert weights: every record goes to the bucket of its partition and its key's bucket number
(``getPartition``). Buckets are numbered by partition, then bucket number (Hudi numbers its Spark partitions
``partition offset + bucket number``, the same order with gaps).

Source (Apache Hudi 1.2.0, measured; 0.15.x, 1.0.x and 1.1.x not measured here):
``org.apache.hudi.table.action.commit.SparkBucketIndexPartitioner``,
``BaseSparkBucketIndexBucketInfoGetter.getBucketInfo`` and ``org.apache.hudi.index.bucket.BucketIdentifier``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from spec.errors import InvalidTable
from spec.index.bucket_identifier import bucket_file_id_prefix, bucket_id, parse_bucket_id
from spec.index.bucket_index import BucketIndexConfig
from spec.write.partitioner import Bucket, BucketAssignment


# --8<-- [start:assign]
def assign_bucket_index(updates: Mapping[str, Iterable[str]], inserts: Iterable[tuple[str, int]],
                        new_file_id_prefix: Callable[[], str]) -> BucketAssignment:
    """The buckets of a write: per partition (in order), per bucket number, the group's UPDATE bucket
    (``updates``: partition → the file ids that take records) or a new INSERT bucket
    (``inserts``: the (partition, bucket) pairs of records whose bucket has no group; its file id prefix a new
    random prefix, ``new_file_id_prefix()``, with the bucket number in its first 8 characters). The assignment
    routes by ``bucket_of``: (partition, bucket number) → the write's bucket."""
    targets: dict[tuple[str, int], tuple[str, str]] = {}
    for partition, file_ids in updates.items():
        for file_id in file_ids:
            targets[(partition, parse_bucket_id(file_id))] = ("UPDATE", file_id)
    for partition, bucket in sorted(set(inserts)):
        if (partition, bucket) in targets:
            raise InvalidTable(f"bucket {bucket} of partition {partition!r} has a file group and takes a new one",
                               hint="tag every record of a bucket that has a group with that group")
        targets[(partition, bucket)] = ("INSERT", bucket_file_id_prefix(bucket, new_file_id_prefix()))
    buckets: list[Bucket] = []
    bucket_of: dict[tuple[str, int], int] = {}
    update_bucket: dict[str, int] = {}
    for (partition, number), (kind, file_id) in sorted(targets.items()):
        bucket_of[(partition, number)] = len(buckets)
        if kind == "UPDATE":
            update_bucket[file_id] = len(buckets)
        buckets.append(Bucket(len(buckets), kind, partition, file_id))
    return BucketAssignment(tuple(buckets), update_bucket, {}, {}, {}, bucket_of)


def route_bucket(config: BucketIndexConfig, record_key: str, partition: str, assignment: BucketAssignment) -> int:
    """The write's bucket of a record: the one of its partition and its key's bucket number
    (``SparkBucketIndexPartitioner.getPartition``)."""
    assert assignment.bucket_of is not None, "a bucket index assignment"
    return assignment.bucket_of[(partition, bucket_id(record_key, config.hash_fields, config.num_buckets))]
# --8<-- [end:assign]
