"""The bucket index's rule: a record's bucket, and so its file group, is a function of its key
(``hoodie.index.type=BUCKET``; Hudi's ``BucketIdentifier``, 1.x).

- The hash keys are the values of the hash fields in the record key (``hoodie.bucket.index.hash.field``,
  by default the record key fields), read back from the key (``spec.keygen.record_key_parts``): a simple key
  is its own one value.
- The bucket is Java's ``List.hashCode`` of those values (``31 * h + String.hashCode``, null as 0, from 1, in
  32-bit arithmetic), its sign bit cleared, modulo the number of buckets
  (``hoodie.bucket.index.num.buckets``).
- A bucket's file group id starts with the bucket number in 8 digits (``%08d``): a new one is a random file id
  prefix whose first 8 characters are replaced by it (``newBucketFileIdPrefix``), and the bucket of a file
  id is read back from its first 8 characters (``bucketIdFromFileId``). Under non-blocking concurrency
  control every writer names a bucket's file group alike: the 8 digits, ``-0000-0000-0000-000000000000``
  and ``-0`` (``newBucketFileIdForNBCC``).

Source (Apache Hudi 1.2.0, measured; 0.15.x, 1.0.x and 1.1.x, table versions 6, 8 and 9, not measured
here): ``org.apache.hudi.index.bucket.BucketIdentifier`` (``getBucketId``,
``getHashKeys``, ``bucketIdStr``, ``bucketIdFromFileId``, ``newBucketFileIdPrefix``, ``newBucketFileIdForNBCC``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from spec.errors import InvalidConfig, InvalidTable
from spec.keygen.record_key_parts import record_key_values
from spec.metadata.index_keys import java_string_hash

BUCKET_DIGITS: Final = 8
"""The digits of the bucket number that start a bucket's file group id."""

CONSTANT_FILE_ID_SUFFIX: Final = "-0000-0000-0000-000000000000"
"""What follows the bucket number in the file id every writer gives a bucket under non-blocking concurrency
control (``BucketIdentifier.CONSTANT_FILE_ID_SUFFIX``)."""

_INT_MASK: Final = 0xFFFFFFFF


# --8<-- [start:bucket_id]
def java_list_hash(values: Sequence[str | None]) -> int:
    """Java's ``List.hashCode`` of strings: from 1, ``31 * h`` plus each element's ``String.hashCode`` (0 for
    null), as a signed 32-bit int."""
    h = 1
    for v in values:
        h = (31 * h + (java_string_hash(v) if v is not None else 0)) & _INT_MASK
    return h - (1 << 32) if h >= 1 << 31 else h


def hash_keys(record_key: str, hash_fields: Sequence[str]) -> tuple[str | None, ...]:
    """The values the bucket of ``record_key`` is hashed from (``BucketIdentifier.getHashKeys``)."""
    return record_key_values(record_key, hash_fields)


def bucket_id(record_key: str, hash_fields: Sequence[str], num_buckets: int) -> int:
    """The bucket of ``record_key`` among ``num_buckets`` (``BucketIdentifier.getBucketId``)."""
    if num_buckets < 1:
        raise InvalidConfig(f"hoodie.bucket.index.num.buckets is {num_buckets}", hint="use 1 or more buckets")
    return (java_list_hash(hash_keys(record_key, hash_fields)) & 0x7FFFFFFF) % num_buckets
# --8<-- [end:bucket_id]


# --8<-- [start:file_ids]
def format_bucket_id(bucket: int) -> str:
    """The bucket number as a file id starts with it (``bucketIdStr``: ``%08d``)."""
    return f"{bucket:0{BUCKET_DIGITS}d}"


def parse_bucket_id(file_id: str) -> int:
    """The bucket a bucket index's file group id names (``bucketIdFromFileId``); ``InvalidTable`` for a file id
    that does not start with 8 digits."""
    head = file_id[:BUCKET_DIGITS]
    if len(head) != BUCKET_DIGITS or not head.isdigit():
        raise InvalidTable(f"file id {file_id!r} does not start with a bucket number",
                           hint="a bucket index's file group ids start with 8 digits")
    return int(head)


def bucket_file_id_prefix(bucket: int, random_prefix: str) -> str:
    """A new file id prefix of ``bucket``: ``random_prefix`` (a UUID, ``FSUtils.createNewFileIdPfx``) with its first
    8 characters replaced by the bucket number (``newBucketFileIdPrefix``)."""
    return format_bucket_id(bucket) + random_prefix[BUCKET_DIGITS:]


def nbcc_bucket_file_id(bucket: int) -> str:
    """The file group id of ``bucket`` that every writer under non-blocking concurrency control gives it
    (``newBucketFileIdForNBCC``: the prefix and write token ``-0`` of ``FSUtils.createNewFileId``)."""
    return f"{format_bucket_id(bucket)}{CONSTANT_FILE_ID_SUFFIX}-0"
# --8<-- [end:file_ids]
