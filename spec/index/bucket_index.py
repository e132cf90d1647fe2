"""The bucket index, SIMPLE engine (``hoodie.index.type=BUCKET``, ``hoodie.index.bucket.engine=SIMPLE``): where each
record of a write goes, and the write's buckets.

1. **settings** (``bucket_index_config``): ``hoodie.bucket.index.num.buckets`` buckets per partition (Hudi's
   default 256; fewer than 1 is refused, as Hudi refuses it); the hash fields ``hoodie.bucket.index.hash.field``,
   by default the record key fields, and else a subset of them (Hudi: "Bucket index key (if configured) must be
   subset of record key"). The ``CONSISTENT_HASHING`` engine (hashing metadata under ``.hoodie/.bucket_index/``,
   resized by clustering) is not built here and is refused.
2. **tag** (``bucket_file_groups``, ``locate``): a partition's buckets are the file groups of its latest file
   slices, each named by its file id's first 8 digits (two groups of one bucket: the table is refused, as Hudi
   refuses it). A record's location is the file group of its key's bucket
   (``spec.index.bucket_identifier.bucket_id``) when the bucket has one, **whether or not the group holds the
   key**: an insert of a new key into such a bucket is an update of that group, and a delete of a key the table
   never held still goes to the group of its bucket (copy-on-write: the group's base file is rewritten;
   merge-on-read: a delete block names the key). Upserts, inserts and deletes are tagged so
   (``HoodieBucketIndex.requiresTagging``); a delete whose bucket has no group is dropped.
3. **buckets** (``spec.write.bucket_index_partitioner``): one bucket per (partition, bucket) the write touches:
   the bucket's group (UPDATE) when it has one, else a new group (INSERT) whose file id is a new random prefix
   with its first 8 characters the bucket number, ``-0`` (``newBucketFileIdPrefix``); there are no small files
   and no insert weights: a record goes to the bucket of its key.
4. **handles**: an UPDATE bucket is merged (copy-on-write; an ``insert`` with duplicates allowed is concatenated,
   ``HoodieConcatHandle``) or appended to as a log file (merge-on-read, every such bucket: no small-file
   correction); an INSERT bucket is written by a create handle, a base file in either table type (the SIMPLE
   engine cannot index log files, ``canIndexLogFiles`` false).

Source (Apache Hudi 1.2.0, measured on table versions 6, 8 and 9; 0.15.x, 1.0.x and 1.1.x not measured here):
``org.apache.hudi.index.bucket.HoodieSimpleBucketIndex`` (``loadBucketIdToFileIdMappingForPartition``,
``canIndexLogFiles``), ``HoodieBucketIndex`` (``tagLocation``, ``requiresTagging``), ``BucketIdentifier``,
``org.apache.hudi.table.action.commit.SparkBucketIndexPartitioner`` and ``BaseSparkBucketIndexBucketInfoGetter``
(``getBucketInfo``), ``BaseSparkDeltaCommitActionExecutor`` (``handleUpdate``, ``handleInsert``) and
``org.apache.hudi.config.HoodieIndexConfig`` (``BUCKET_INDEX_ENGINE_TYPE``, ``BUCKET_INDEX_NUM_BUCKETS``,
``BUCKET_INDEX_HASH_FIELD``); the checks of ``HoodieWriteConfig`` / ``HoodieIndexUtils``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from spec.errors import InvalidConfig, InvalidTable, UnsupportedOption
from spec.index.bucket_identifier import bucket_id, parse_bucket_id

BUCKET: Final = "BUCKET"
"""``hoodie.index.type`` of the bucket index."""
SIMPLE_ENGINE: Final = "SIMPLE"
CONSISTENT_HASHING: Final = "CONSISTENT_HASHING"
"""``hoodie.index.bucket.engine`` values (``HoodieIndex.BucketIndexEngineType``)."""
DEFAULT_NUM_BUCKETS: Final = 256
"""``hoodie.bucket.index.num.buckets``'s default (``HoodieIndexConfig.BUCKET_INDEX_NUM_BUCKETS``, Apache Hudi 1.2.0,
measured: ``tests/test_bucket_index_hudi.py``; Flink's option of that name defaults to 4)."""
INDEXED_OPERATIONS: Final = ("upsert", "insert", "delete")
"""The operations whose records the bucket index tags (``HoodieBucketIndex.requiresTagging``; an insert overwrite
is tagged too, but writes new groups whatever the tags say)."""
UNSUPPORTED_OPERATIONS: Final = ("bulk_insert", "insert_overwrite", "insert_overwrite_table")
"""Operations of a bucket-indexed table this writer refuses: Hudi writes them by other partitioners (the bulk
insert's row writer, the overwrite's bucket partitioner), not built here."""


# --8<-- [start:config]
@dataclass(frozen=True)
class BucketIndexConfig:
    """The bucket index of a write: buckets per partition and the fields hashed."""

    num_buckets: int
    hash_fields: tuple[str, ...]


def bucket_index_config(index_type: str, engine: str, num_buckets: int, hash_fields: Sequence[str],
                        record_key_fields: Sequence[str]) -> BucketIndexConfig | None:
    """The bucket index a write's settings ask for (None: another index), or the error Hudi raises for them."""
    if index_type != BUCKET:
        return None
    if engine == CONSISTENT_HASHING:
        raise UnsupportedOption("hoodie.index.bucket.engine=CONSISTENT_HASHING (hashing metadata under "
                                ".hoodie/.bucket_index, resized by clustering) is not built by this writer",
                                hint="use hoodie.index.bucket.engine=SIMPLE (a fixed number of buckets), "
                                     "or write the table with Apache Hudi")
    if num_buckets < 1:
        raise InvalidConfig(f"hoodie.bucket.index.num.buckets is {num_buckets}: a partition needs a bucket",
                            hint="set hoodie.bucket.index.num.buckets to 1 or more (Hudi's default is 256)")
    fields = tuple(hash_fields) or tuple(record_key_fields)
    if not set(fields) <= set(record_key_fields):
        raise InvalidConfig(f"hoodie.bucket.index.hash.field={','.join(fields)!r} is not a subset of the record "
                            f"key fields {','.join(record_key_fields)!r}",
                            hint="Hudi requires the bucket index key to be a subset of the record key: name "
                                 "record key fields, or leave it unset (the record key fields)")
    return BucketIndexConfig(num_buckets, fields)
# --8<-- [end:config]


# --8<-- [start:tag]
def bucket_file_groups(partition: str, file_ids: Iterable[str]) -> dict[int, str]:
    """Bucket number → file group id of a partition, from the file ids of its latest file slices; two groups of
    one bucket are refused (Hudi: "Find multiple files at partition path=... that belong to the same bucket
    id")."""
    out: dict[int, str] = {}
    for file_id in file_ids:
        bucket = parse_bucket_id(file_id)
        if bucket in out:
            raise InvalidTable(f"partition {partition!r} has two file groups of bucket {bucket}: "
                               f"{out[bucket]} and {file_id}",
                               hint="roll back the write that made the second one (Hudi refuses the table too)")
        out[bucket] = file_id
    return out


def locate(config: BucketIndexConfig, groups: Mapping[int, str], record_key: str) -> str | None:
    """The file group a record goes to: its bucket's, if the bucket has one (None: a new group)."""
    return groups.get(bucket_id(record_key, config.hash_fields, config.num_buckets))
# --8<-- [end:tag]
