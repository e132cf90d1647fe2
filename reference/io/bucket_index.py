"""The write client's bucket index (``hoodie.index.type=BUCKET``): the settings checked against the table, the
lookup a write tags with, and the write's buckets (``spec.index.bucket_index``,
``spec.write.bucket_index_partitioner``)."""

from __future__ import annotations

from collections.abc import Callable

from reference.config.options import WriteConfig
from reference.io.index import BucketLookup
from spec.config.table_config import TableConfig
from spec.errors import UnsupportedOption
from spec.file_group.file_system_view import FileSystemView
from spec.index.bucket_index import UNSUPPORTED_OPERATIONS, BucketIndexConfig, bucket_index_config
from spec.write.bucket_index_partitioner import assign_bucket_index
from spec.write.partitioner import BucketAssignment, WorkloadProfile


def bucket_index_of(cfg: WriteConfig, table: TableConfig, operation: str) -> BucketIndexConfig | None:
    """The write's bucket index (None: BLOOM or SIMPLE), checked as Hudi checks it against the table's record key
    fields; an operation this writer does not write through a bucket index is refused."""
    bucket = bucket_index_config(cfg.index_type, cfg.bucket_index_engine, cfg.bucket_index_num_buckets,
                                 cfg.bucket_index_hash_fields, table.record_key_fields)
    if bucket is not None and operation in UNSUPPORTED_OPERATIONS:
        raise UnsupportedOption(f"{operation} with hoodie.index.type=BUCKET is not built by this writer",
                                hint="write with upsert or insert (delete and delete_partition also work), or "
                                     "run this operation with Apache Hudi")
    return bucket


def bucket_lookup(bucket: BucketIndexConfig, view: FileSystemView) -> BucketLookup:
    """What the write tags with: every partition's latest file slices."""
    return BucketLookup.of_view(bucket, view)


def bucket_assignment(profile: WorkloadProfile, new_buckets: set[tuple[str, int]],
                      new_file_id: Callable[[], str]) -> BucketAssignment:
    """The write's buckets: the groups that take records, and a new group per new (partition, bucket)."""
    return assign_bucket_index({p: tuple(s.updates) for p, s in profile.partitions.items()}, new_buckets,
                               new_file_id)


__all__ = ["bucket_assignment", "bucket_index_of", "bucket_lookup"]
