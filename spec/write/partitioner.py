"""Bucket assignment for a batch write: Hudi's WorkloadProfile and UpsertPartitioner.

A write's records are first tagged: an *update* has a current location (the file group that
holds its key), an *insert* has none. The **workload profile** counts, per partition, the
inserts and the updates per file group. Then buckets are assigned — each bucket becomes one
Spark task that writes one file:

1. **updates** (``assignUpdates``): one UPDATE bucket per file group with updates;
2. **small files** (``assignInserts``): a partition's small files take inserts in turn, each up
   to ``(max file size - file size) // average record size`` records (Java long division),
   reusing the group's UPDATE bucket if it has one, until no insert is left;
3. **new files**: the remaining inserts go to ``ceil(remaining / per bucket)`` new INSERT
   buckets of ``per bucket = max file size // average record size`` records (or
   ``hoodie.copyonwrite.insert.split.size`` with auto-split off); the last takes the rest;
4. **weights**: each insert bucket's share of the partition's inserts, summed in order into
   cumulative weights; an insert goes where ``floorMod(hash, inserts) / inserts`` falls among
   them (``getPartition``), ``hash`` being the first 8 MD5 bytes of its key read as a
   little-endian signed long — so a key always lands in the same bucket.

Buckets are numbered in that order: every UPDATE bucket of every partition first, then per
partition its small-file and INSERT buckets. (Hudi walks partitions in Java HashMap order;
here they are taken in the profile's order.)

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``UpsertPartitioner``
(``assignUpdates``, ``assignInserts``, ``getSmallFiles``, ``getPartition``),
``SparkUpsertDeltaCommitPartitioner``, ``WorkloadProfile``,
``AverageRecordSizeUtils.averageBytesPerRecord`` and ``NumericUtils.getMessageDigestHash``.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from spec.config.registry import default
from spec.errors import InvalidConfig, InvalidRecord

# --8<-- [start:config]
# Hudi's defaults, from spec.config.registry: hoodie.parquet.small.file.limit 100 MB (<= 0: no small
# files), hoodie.parquet.max.file.size 120 MB, hoodie.copyonwrite.insert.split.size 500000,
# hoodie.copyonwrite.insert.auto.split true, hoodie.copyonwrite.record.size.estimate 1024,
# hoodie.record.size.estimation.threshold 1.0, hoodie.merge.small.file.group.candidates.limit 1 (MOR),
# hoodie.logfile.to.parquet.compression.ratio 0.35

@dataclass(frozen=True)
class PartitionerConfig:
    """The settings bucket assignment depends on (Hudi's defaults)."""

    small_file_limit: int = default("small_file_limit")
    max_file_size: int = default("max_file_size")
    insert_split_size: int = default("insert_split_size")
    auto_split_inserts: bool = default("auto_split")
    record_size_estimate: int = default("record_size_estimate")
    record_size_estimation_threshold: float = default("record_size_estimation_threshold")
    small_file_group_candidates: int = default("small_file_group_candidates")
    log_to_parquet_ratio: float = default("log_to_parquet_ratio")

    def __post_init__(self) -> None:
        if self.max_file_size <= 0 or self.insert_split_size <= 0 or self.record_size_estimate <= 0:
            raise InvalidConfig("max file size, insert split size and record size estimate must be positive",
                                hint="check hoodie.parquet.max.file.size, "
                                     "hoodie.copyonwrite.insert.split.size and "
                                     "hoodie.copyonwrite.record.size.estimate")
# --8<-- [end:config]


# =================================================================================================
# the workload profile
# =================================================================================================

@dataclass(frozen=True)
class TaggedRecord:
    """A record after index lookup: its key, partition and current file group (None: an insert)."""

    key: str
    partition: str
    location: str | None = None


@dataclass(frozen=True)
class PartitionProfile:
    """Per partition: the number of inserts, and the number of updates per file group."""

    inserts: int = 0
    updates: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadProfile:
    """The workload of one write: partition path → PartitionProfile (sorted by partition path)."""

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
        return WorkloadProfile({p: PartitionProfile(inserts.get(p, 0), updates.get(p, {}))
                                for p in sorted({*inserts, *updates})})

    @staticmethod
    def from_records(records: Iterable[TaggedRecord]) -> WorkloadProfile:
        """Counted from tagged records."""
        counts: dict[tuple[str, str | None], int] = {}
        for r in records:
            counts[(r.partition, r.location)] = counts.get((r.partition, r.location), 0) + 1
        return WorkloadProfile.from_counts(counts)


# =================================================================================================
# average record size
# =================================================================================================

@dataclass(frozen=True)
class CommitSizes:
    """What one completed instant's write stats say: its action, and bytes / records written to
    base files and to log files."""

    action: str  # "commit", "replacecommit" or "deltacommit"
    base_bytes: int
    base_records: int
    log_bytes: int = 0
    log_records: int = 0


# --8<-- [start:record_size]
def average_record_size(commits: Sequence[CommitSizes | tuple[int, int]], config: PartitionerConfig) -> int:
    """Hudi's ``AverageRecordSizeUtils.averageBytesPerRecord`` (0.15 / 1.0): from the newest
    completed instant back, the first whose bytes written exceed
    ``(long)(threshold × small-file limit)`` with records written > 0 gives
    ``(long) ceil(bytes / records)``; none: ``hoodie.copyonwrite.record.size.estimate``.

    A commit or replacecommit counts all its write stats; a deltacommit only its base files
    (log bytes say little about parquet size). ``commits`` are oldest first; a plain
    ``(bytes, records)`` pair is taken as already counted. (Hudi 0.14.0 read commits only.)
    """
    threshold = int(config.record_size_estimation_threshold * config.small_file_limit)
    for c in reversed(commits):
        if isinstance(c, CommitSizes):
            if c.action in ("commit", "replacecommit"):
                total_bytes, records = c.base_bytes + c.log_bytes, c.base_records + c.log_records
            elif c.action == "deltacommit":
                total_bytes, records = c.base_bytes, c.base_records
            else:
                continue
        else:
            total_bytes, records = c
        if total_bytes > threshold and records > 0:
            return math.ceil(float(total_bytes) / float(records))
    return config.record_size_estimate
# --8<-- [end:record_size]


# =================================================================================================
# small files
# =================================================================================================

@dataclass(frozen=True)
class SmallFile:
    """A file group that may take inserts: its file id and its size (MOR: base + logs as parquet)."""

    file_id: str
    size: int


# --8<-- [start:small_files]
@dataclass(frozen=True)
class SmallFileCandidate:
    """A file group's latest slice (before or on the last completed commit), as the small-file
    rule sees it."""

    file_id: str
    base_size: int | None  # None: the slice has no base file
    has_log_files: bool = False
    under_pending_compaction: bool = False
    log_sizes: tuple[int, ...] = ()
    under_pending_clustering: bool = False

    def size_as_parquet(self, ratio: float) -> int:
        """``FileSlice.getTotalFileSizeAsParquetFormat``: base size + ``(long)(log bytes × ratio)``."""
        return (self.base_size or 0) + int(sum(s for s in self.log_sizes if s > 0) * ratio)


def select_small_files(candidates: Sequence[SmallFileCandidate], small_file_limit: int,
                       merge_on_read: bool, *, config: PartitionerConfig | None = None,
                       index_can_index_log_files: bool = False) -> list[SmallFile]:
    """The small files of a partition that may take inserts (none when the limit is <= 0).

    Copy-on-write (``UpsertPartitioner.getSmallFiles``): every latest base file under the
    limit. Merge-on-read (``SparkUpsertDeltaCommitPartitioner``), groups under a pending
    compaction excluded: with an index that can index log files (not BLOOM or SIMPLE), every
    slice whose size as parquet is under the *max* file size, sized so; otherwise slices with a
    base file and no log files under the limit, smallest first, at most
    ``hoodie.merge.small.file.group.candidates.limit`` (1) of them. Groups under a pending
    clustering never take inserts. Hudi keeps the file-system view's order for the others; here
    they are smallest first (ties: the candidates' order).
    """
    cfg = config or PartitionerConfig(small_file_limit=small_file_limit)
    if small_file_limit <= 0:
        return []
    usable = [c for c in candidates if not c.under_pending_clustering]
    if not merge_on_read:
        out = [SmallFile(c.file_id, c.base_size) for c in usable
               if c.base_size is not None and c.base_size < small_file_limit]
    elif index_can_index_log_files:
        out = [SmallFile(c.file_id, c.size_as_parquet(cfg.log_to_parquet_ratio)) for c in usable
               if not c.under_pending_compaction
               and c.size_as_parquet(cfg.log_to_parquet_ratio) < cfg.max_file_size]
    else:
        out = [SmallFile(c.file_id, c.base_size) for c in usable
               if c.base_size is not None and c.base_size < small_file_limit
               and not c.under_pending_compaction and not c.has_log_files and not c.log_sizes]
    out.sort(key=lambda sf: sf.size)
    if merge_on_read and not index_can_index_log_files:
        return out[:max(cfg.small_file_group_candidates, 0)]
    return out
# --8<-- [end:small_files]


# =================================================================================================
# buckets
# =================================================================================================

@dataclass(frozen=True)
class Bucket:
    """One task's file: UPDATE (an existing file group) or INSERT (a new one, whose file id is
    ``<file_id prefix>-0``)."""

    number: int
    kind: str  # "UPDATE" or "INSERT"
    partition: str
    file_id: str  # the existing file id (UPDATE) or the new file id prefix (INSERT)


@dataclass(frozen=True)
class InsertBucket:
    """A bucket's share of its partition's inserts, and the running sum of the shares up to it."""

    bucket: int
    weight: float
    cumulative_weight: float = 0.0


@dataclass(frozen=True)
class BucketAssignment:
    """The buckets of a write and how inserts are routed to them."""

    buckets: tuple[Bucket, ...]
    update_bucket: Mapping[str, int]  # file id → bucket number
    insert_buckets: Mapping[str, tuple[InsertBucket, ...]]  # partition → its insert buckets
    inserts: Mapping[str, int]  # partition → total inserts
    expected_records: Mapping[int, int]  # bucket → inserts assigned (sizing, not routing)
    bucket_of: Mapping[tuple[str, int], int] | None = None
    """A bucket index's routing (``spec.write.bucket_index_partitioner``): (partition, bucket number) → bucket;
    None: records are routed by file id and insert weights."""

    def bucket(self, number: int) -> Bucket:
        """The bucket numbered ``number``."""
        return self.buckets[number]


# --8<-- [start:assign]
def records_per_insert_bucket(config: PartitionerConfig, avg_record_size: int) -> int:
    """``max file size // average record size`` with auto-split (Hudi 0.14–1.0; later Hudi rounds
    up), else the insert split size. At least 1 (Hudi would divide by zero)."""
    per_bucket = (config.max_file_size // avg_record_size if config.auto_split_inserts
                  else config.insert_split_size)
    return max(per_bucket, 1)


def assign_buckets(profile: WorkloadProfile, small_files: Mapping[str, Sequence[SmallFile]],
                   config: PartitionerConfig, avg_record_size: int,
                   new_file_id: Callable[[], str]) -> BucketAssignment:
    """Assign UPDATE buckets, small-file buckets and new INSERT buckets, with insert weights.
    ``new_file_id()`` gives each INSERT bucket its file id prefix (Hudi: a random UUID)."""
    if avg_record_size <= 0:
        raise InvalidConfig(f"average record size {avg_record_size} must be positive")
    buckets: list[Bucket] = []
    update_bucket: dict[str, int] = {}

    def add_update_bucket(partition: str, file_id: str) -> int:
        update_bucket[file_id] = len(buckets)
        buckets.append(Bucket(len(buckets), "UPDATE", partition, file_id))
        return update_bucket[file_id]

    for partition, stat in profile.partitions.items():
        for file_id in stat.updates:
            add_update_bucket(partition, file_id)
    insert_buckets: dict[str, tuple[InsertBucket, ...]] = {}
    expected: dict[int, int] = {}
    for partition, stat in profile.partitions.items():
        if stat.inserts <= 0:
            continue
        unassigned = stat.inserts
        shares: list[tuple[int, int]] = []  # (bucket, records)
        for sf in small_files.get(partition, ()):
            to_append = min((config.max_file_size - sf.size) // avg_record_size, unassigned)
            if to_append > 0:
                number = update_bucket.get(sf.file_id)
                if number is None:
                    number = add_update_bucket(partition, sf.file_id)
                shares.append((number, to_append))
                unassigned -= to_append
                if unassigned <= 0:
                    break
        if unassigned > 0:
            per_bucket = records_per_insert_bucket(config, avg_record_size)
            count = math.ceil(unassigned / per_bucket)
            for b in range(count):
                buckets.append(Bucket(len(buckets), "INSERT", partition, new_file_id()))
                last = unassigned - (count - 1) * per_bucket
                shares.append((len(buckets) - 1, per_bucket if b < count - 1 else last))
        cumulative = 0.0
        out = []
        for number, records in shares:
            weight = float(records) / stat.inserts
            cumulative += weight
            out.append(InsertBucket(number, weight, cumulative))
            expected[number] = expected.get(number, 0) + records
        insert_buckets[partition] = tuple(out)
    inserts = {p: s.inserts for p, s in profile.partitions.items()}
    return BucketAssignment(tuple(buckets), update_bucket, insert_buckets, inserts, expected)
# --8<-- [end:assign]


# --8<-- [start:route]
def key_hash(record_key: str) -> int:
    """``NumericUtils.getMessageDigestHash("MD5", key)``: the MD5 digest of the key's UTF-8 bytes;
    its first 8 bytes read as a little-endian long (``padToLong``: byte i is bits 8i..8i+7),
    signed (two's complement)."""
    return int.from_bytes(hashlib.md5(record_key.encode("utf-8")).digest()[:8], "little", signed=True)


def insert_position(record_key: str, partition: str, assignment: BucketAssignment) -> float:
    """Where an insert falls among its partition's cumulative weights: ``r = floorMod(hash, total) / total``
    with ``total = max(1, the partition's inserts)``, in [0, 1)."""
    total = max(1, assignment.inserts.get(partition, 0))
    return (key_hash(record_key) % total) / total


def route_insert(record_key: str, partition: str, assignment: BucketAssignment) -> int:
    """The bucket of an insert (``getPartition``): ``r = floorMod(hash, total) / total`` with
    ``total = max(1, the partition's inserts)``; Java ``binarySearch`` of ``r`` in the cumulative
    weights: an exact hit is that bucket, else the first bucket whose cumulative weight is above
    ``r``, else (rounding left the last sum below ``r``) the first bucket."""
    targets = assignment.insert_buckets.get(partition)
    if not targets:
        raise InvalidRecord(f"partition {partition!r} has no insert bucket",
                            hint="count the insert in the workload profile before assigning buckets")
    r = insert_position(record_key, partition, assignment)
    index = bisect.bisect_left([t.cumulative_weight for t in targets], r)
    return targets[index].bucket if index < len(targets) else targets[0].bucket


def route_update(file_id: str, assignment: BucketAssignment) -> int:
    """The bucket of an update: its file group's UPDATE bucket."""
    if file_id not in assignment.update_bucket:
        raise InvalidRecord(f"file group {file_id!r} has no update bucket",
                            hint="count the update in the workload profile before assigning buckets")
    return assignment.update_bucket[file_id]


def route(record_key: str, partition: str, file_id: str | None, assignment: BucketAssignment) -> int:
    """An update goes to its file group's bucket; an insert is routed by its key's hash."""
    return route_update(file_id, assignment) if file_id is not None else route_insert(record_key, partition,
                                                                                      assignment)
# --8<-- [end:route]
