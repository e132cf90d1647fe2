"""Bucket assignment for a copy-on-write write: Hudi's WorkloadProfile and UpsertPartitioner (seed 002).

A write's records are first tagged: an *update* has a current location (the file group that
holds its key), an *insert* has none. The **workload profile** counts, per partition, the
inserts and the updates per file group. Then buckets are assigned — each bucket becomes one
task that writes one file:

1. **updates** (``assignUpdates``): one UPDATE bucket per file group with updates;
2. **small files** (``assignInserts``): a partition's base files under the small-file limit take
   inserts, each up to ``(max file size - file size) // average record size`` records, reusing
   the group's update bucket if it has one;
3. **new files**: the remaining inserts go to new INSERT buckets of
   ``max file size // average record size`` records each (or the configured insert split size
   when auto-split is off); the last bucket takes the rest;
4. **weights**: each insert bucket's share of the partition's inserts; an insert is routed by
   ``r = floorMod(md5(record key) as a little-endian long, total inserts) / total inserts``
   against the cumulative weights (``getPartition``), so a key always lands in the same bucket.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from spec.errors import InvalidConfig

# --8<-- [start:config]
DEFAULT_SMALL_FILE_LIMIT = 104_857_600  # hoodie.parquet.small.file.limit: 100 MB
DEFAULT_MAX_FILE_SIZE = 125_829_120  # hoodie.parquet.max.file.size: 120 MB
DEFAULT_INSERT_SPLIT_SIZE = 500_000  # hoodie.copyonwrite.insert.split.size
DEFAULT_RECORD_SIZE_ESTIMATE = 1024  # hoodie.copyonwrite.record.size.estimate
DEFAULT_RECORD_SIZE_ESTIMATION_THRESHOLD = 1.0  # hoodie.record.size.estimation.threshold


@dataclass(frozen=True)
class PartitionerConfig:
    """The settings bucket assignment depends on (Hudi's defaults)."""

    small_file_limit: int = DEFAULT_SMALL_FILE_LIMIT
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    insert_split_size: int = DEFAULT_INSERT_SPLIT_SIZE
    auto_split_inserts: bool = True
    record_size_estimate: int = DEFAULT_RECORD_SIZE_ESTIMATE
    record_size_estimation_threshold: float = DEFAULT_RECORD_SIZE_ESTIMATION_THRESHOLD

    def __post_init__(self) -> None:
        if self.max_file_size <= 0 or self.insert_split_size <= 0 or self.record_size_estimate <= 0:
            raise InvalidConfig("max file size, insert split size and record size estimate must be positive")
# --8<-- [end:config]


@dataclass(frozen=True)
class PartitionProfile:
    """Per partition: the number of inserts, and the number of updates per file group."""

    inserts: int = 0
    updates: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadProfile:
    """The workload of one write: partition path → PartitionProfile."""

    partitions: Mapping[str, PartitionProfile]

    @staticmethod
    def from_counts(counts: Mapping[tuple[str, str | None], int]) -> WorkloadProfile:
        """From ``(partition, file id or None for inserts) → number of records``."""
        inserts: dict[str, int] = {}
        updates: dict[str, dict[str, int]] = {}
        for (partition, file_id), n in counts.items():
            if file_id is None:
                inserts[partition] = inserts.get(partition, 0) + n
            else:
                updates.setdefault(partition, {})[file_id] = updates.get(partition, {}).get(file_id, 0) + n
        parts = set(inserts) | set(updates)
        return WorkloadProfile({p: PartitionProfile(inserts.get(p, 0), updates.get(p, {})) for p in sorted(parts)})


@dataclass(frozen=True)
class SmallFile:
    """A base file that may take inserts: its group's file id and its size on disk."""

    file_id: str
    size: int


# --8<-- [start:small_files]
@dataclass(frozen=True)
class SmallFileCandidate:
    """A file group's latest slice, as the small-file rule sees it."""

    file_id: str
    base_size: int | None  # None: the slice has no base file
    has_log_files: bool = False
    under_pending_compaction: bool = False


def select_small_files(candidates: Sequence[SmallFileCandidate], small_file_limit: int,
                       merge_on_read: bool) -> list[SmallFile]:
    """The small files of a partition that may take inserts, smallest first.

    Copy-on-write: every latest base file under the limit. Merge-on-read
    (``SparkUpsertDeltaCommitPartitioner`` with an index that cannot index log files): only the
    smallest latest slice that has a base file, no log files, is not under a pending compaction,
    and is under the limit.
    """
    out = [SmallFile(c.file_id, c.base_size) for c in candidates
           if c.base_size is not None and c.base_size < small_file_limit
           and not (merge_on_read and (c.has_log_files or c.under_pending_compaction))]
    out.sort(key=lambda sf: sf.size)
    return out[:1] if merge_on_read else out
# --8<-- [end:small_files]


@dataclass(frozen=True)
class Bucket:
    """One task's file: UPDATE (an existing file group) or INSERT (a new one)."""

    number: int
    kind: str  # "UPDATE" or "INSERT"
    partition: str
    file_id: str  # the existing file id (UPDATE) or the new file id prefix (INSERT)


@dataclass(frozen=True)
class InsertBucket:
    """A bucket's share of its partition's inserts."""

    bucket: int
    weight: float


@dataclass(frozen=True)
class BucketAssignment:
    """The buckets of a write and how inserts are routed to them."""

    buckets: tuple[Bucket, ...]
    update_bucket: Mapping[str, int]  # file id → bucket number
    insert_buckets: Mapping[str, tuple[InsertBucket, ...]]  # partition → its insert buckets
    inserts: Mapping[str, int]  # partition → total inserts
    expected_records: Mapping[int, int]  # bucket → inserts assigned (sizing, not routing)

    def bucket(self, number: int) -> Bucket:
        return self.buckets[number]


# --8<-- [start:record_size]
def average_record_size(commit_totals: Sequence[tuple[int, int]], config: PartitionerConfig) -> int:
    """Hudi's ``AverageRecordSizeUtils``: from the newest commit back, the first whose bytes written
    exceed ``threshold × small-file limit`` gives ``ceil(bytes / records)``; else the estimate.

    ``commit_totals`` is ``(total bytes written, total records written)`` per completed commit, oldest first.
    """
    floor = config.record_size_estimation_threshold * config.small_file_limit
    for total_bytes, records in reversed(commit_totals):
        if total_bytes > floor and records > 0:
            return max(1, math.ceil(total_bytes / records))
    return config.record_size_estimate
# --8<-- [end:record_size]


# --8<-- [start:assign]
def assign_buckets(profile: WorkloadProfile, small_files: Mapping[str, Sequence[SmallFile]],
                   config: PartitionerConfig, avg_record_size: int,
                   new_file_id: Callable[[], str]) -> BucketAssignment:
    """Assign UPDATE buckets, small-file buckets and new INSERT buckets, with insert weights."""
    buckets: list[Bucket] = []
    update_bucket: dict[str, int] = {}
    for partition, stat in profile.partitions.items():
        for file_id in stat.updates:
            update_bucket[file_id] = len(buckets)
            buckets.append(Bucket(len(buckets), "UPDATE", partition, file_id))
    insert_buckets: dict[str, tuple[InsertBucket, ...]] = {}
    expected: dict[int, int] = {}
    for partition, stat in profile.partitions.items():
        if stat.inserts <= 0:
            continue
        unassigned = stat.inserts
        numbers: list[int] = []
        records: list[int] = []
        for sf in small_files.get(partition, ()):
            if unassigned <= 0:
                break
            to_append = min((config.max_file_size - sf.size) // avg_record_size, unassigned)
            if to_append <= 0:
                continue
            if sf.file_id in update_bucket:
                number = update_bucket[sf.file_id]
            else:
                number = len(buckets)
                update_bucket[sf.file_id] = number
                buckets.append(Bucket(number, "UPDATE", partition, sf.file_id))
            numbers.append(number)
            records.append(to_append)
            unassigned -= to_append
        if unassigned > 0:
            per_bucket = (config.max_file_size // avg_record_size if config.auto_split_inserts
                          else config.insert_split_size)
            per_bucket = max(per_bucket, 1)
            count = math.ceil(unassigned / per_bucket)
            for b in range(count):
                number = len(buckets)
                buckets.append(Bucket(number, "INSERT", partition, new_file_id()))
                numbers.append(number)
                records.append(per_bucket if b < count - 1 else unassigned - (count - 1) * per_bucket)
        insert_buckets[partition] = tuple(InsertBucket(n, r / stat.inserts) for n, r in zip(numbers, records,
                                                                                           strict=True))
        for n, r in zip(numbers, records, strict=True):
            expected[n] = expected.get(n, 0) + r
    inserts = {p: s.inserts for p, s in profile.partitions.items()}
    return BucketAssignment(tuple(buckets), update_bucket, insert_buckets, inserts, expected)
# --8<-- [end:assign]


# --8<-- [start:route]
def key_hash(record_key: str) -> int:
    """``NumericUtils.getMessageDigestHash("MD5", key)``: the first 8 bytes of the MD5 digest of the
    key's UTF-8 bytes, read as a little-endian signed long (``padToLong``)."""
    return int.from_bytes(hashlib.md5(record_key.encode("utf-8")).digest()[:8], "little", signed=True)


def route_insert(record_key: str, partition: str, assignment: BucketAssignment) -> int:
    """The bucket of an insert: ``floorMod(hash, total inserts) / total inserts`` against the
    partition's cumulative bucket weights (Java ``binarySearch``: an exact hit, else the insertion point)."""
    targets = assignment.insert_buckets[partition]
    total = max(1, assignment.inserts.get(partition, 0))
    r = (key_hash(record_key) % total) / total
    cumulative: list[float] = []
    acc = 0.0
    for t in targets:
        acc += t.weight
        cumulative.append(acc)
    index = bisect.bisect_left(cumulative, r)
    return targets[min(index, len(targets) - 1)].bucket


def route(record_key: str, partition: str, file_id: str | None, assignment: BucketAssignment) -> int:
    """An update goes to its file group's bucket; an insert is routed by its key's hash."""
    if file_id is not None:
        return assignment.update_bucket[file_id]
    return route_insert(record_key, partition, assignment)
# --8<-- [end:route]
