"""The ``hoodie.*`` write options users know from Hudi on Spark, validated into one ``WriteConfig``.

Unknown ``hoodie.*`` keys are warned about (never silently dropped); other keys are ignored;
a known key with a bad value raises ``InvalidConfig`` naming the key and what it takes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spec.errors import InvalidConfig
from spec.heartbeat import DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES, INTERVAL_KEY, TOLERABLE_MISSES_KEY
from spec.parquet_codec import CODECS, DEFAULT_CODEC
from spec.storage_lock import (
    DEFAULT_HEARTBEAT_POLL_SECONDS,
    DEFAULT_VALIDITY_SECONDS,
    DEFAULT_WAIT_TIME_MS,
    HEARTBEAT_POLL_KEY,
    RETRY_WAIT_KEY,
    RETRY_WAIT_MS,
    VALIDITY_TIMEOUT_KEY,
    WAIT_TIME_KEY,
    StorageLockConfig,
)
from spec.table_config import COMMIT_TIME_ORDERING, COPY_ON_WRITE, EVENT_TIME_ORDERING, MERGE_ON_READ

SINGLE_WRITER = "SINGLE_WRITER"
OPTIMISTIC_CONCURRENCY_CONTROL = "OPTIMISTIC_CONCURRENCY_CONTROL"
"""``hoodie.write.concurrency.mode`` values (``WriteConcurrencyMode``)."""
OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")


@dataclass(frozen=True)
class Option:
    key: str
    default: str | None
    doc: str
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


def _bool(v: str) -> bool:
    if v.lower() not in ("true", "false"):
        raise ValueError("expected true or false")
    return v.lower() == "true"


def _positive_int(v: str) -> int:
    n = int(v)
    if n <= 0:
        raise ValueError("expected a positive integer")
    return n


def _non_negative_int(v: str) -> int:
    n = int(v)
    if n < 0:
        raise ValueError("expected a non-negative integer")
    return n


def _fields(v: str) -> tuple[str, ...]:
    return tuple(f.strip() for f in v.split(",") if f.strip())


# --- the registry -------------------------------------------------------------------------------
REGISTRY: tuple[Option, ...] = (
    Option("hoodie.table.name", None, "table name (required for a new table)"),
    Option("hoodie.datasource.write.table.type", COPY_ON_WRITE, "COPY_ON_WRITE or MERGE_ON_READ",
           choices=(COPY_ON_WRITE, MERGE_ON_READ), aliases=("hoodie.table.type",)),
    Option("hoodie.datasource.write.operation", "upsert", "the write operation", choices=OPERATIONS),
    Option("hoodie.datasource.write.recordkey.field", None, "record key field(s), comma-separated", _fields,
           aliases=("hoodie.table.recordkey.fields",)),
    Option("hoodie.datasource.write.partitionpath.field", "", "partition field(s), comma-separated", _fields,
           aliases=("hoodie.table.partition.fields",)),
    Option("hoodie.datasource.write.precombine.field", None, "ordering (precombine) field",
           aliases=("hoodie.table.ordering.fields", "hoodie.table.precombine.field")),
    Option("hoodie.datasource.write.keygenerator.type", None, "SIMPLE, COMPLEX or NON_PARTITION",
           choices=("SIMPLE", "COMPLEX", "NON_PARTITION")),
    Option("hoodie.datasource.write.hive_style_partitioning", "false", "partition folders as field=value", _bool),
    Option("hoodie.datasource.write.partitionpath.urlencode", "false", "URL-encode partition values", _bool),
    Option("hoodie.write.table.version", "6", "table version of a new table: 6, 8 or 9 (without a metadata table)",
           int, choices=("6", "8", "9")),
    Option("hoodie.metadata.enable", "false", "keep a metadata table: this writer keeps none, so only false "
           "(Apache Hudi 1.x defaults to true)", choices=("false",)),
    Option("hoodie.record.merge.mode", EVENT_TIME_ORDERING, "EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING",
           choices=(EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING)),
    Option("hoodie.parquet.small.file.limit", "104857600", "base files below this size take inserts (bytes)",
           int),
    Option("hoodie.parquet.max.file.size", "125829120", "target base file size (bytes)", _positive_int),
    Option("hoodie.copyonwrite.insert.split.size", "500000", "records per new insert bucket", _positive_int),
    Option("hoodie.copyonwrite.insert.auto.split", "true", "size insert buckets from the record size", _bool),
    Option("hoodie.copyonwrite.record.size.estimate", "1024", "record size before any commit (bytes)",
           _positive_int),
    Option("hoodie.index.type", "BLOOM", "how records are tagged with their file group: BLOOM (footers, then "
           "exact keys of candidate files) or SIMPLE (all keys)", choices=("BLOOM", "SIMPLE")),
    Option("hoodie.parquet.compression.codec", DEFAULT_CODEC, "parquet compression codec of base files, "
           "compacted base files and parquet log blocks (level as parquet-mr: gzip 6, zstd 3)", choices=CODECS),
    Option("hoodie.combine.before.upsert", "true", "dedupe incoming records by key before upsert", _bool),
    Option("hoodie.combine.before.insert", "false", "dedupe incoming records by key before insert, bulk_insert, "
           "insert_overwrite and insert_overwrite_table (off: every record is written, duplicates included)", _bool),
    Option("hoodie.combine.before.delete", "true", "dedupe the keys of a delete", _bool),
    Option("hoodie.merge.allow.duplicate.on.inserts", "true", "an insert routed to a small file is appended to its "
           "rows without merging by key (Hudi's concat handle)", _bool),
    Option("hoodie.bulkinsert.sort.mode", "NONE", "how bulk_insert orders each input partition's records before "
           "writing: NONE, GLOBAL_SORT, PARTITION_SORT or PARTITION_PATH_REPARTITION",
           choices=("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION")),
    Option("hoodie.datasource.write.partitions.to.delete", "", "partitions for delete_partition", _fields),
    Option("hoodie.logfile.data.block.max.size", str(256 * 1024 * 1024),
           "merge-on-read: the append handle flushes a data block when its buffer reaches this size (bytes)",
           _positive_int),
    Option("hoodie.logfile.max.size", str(1024 * 1024 * 1024),
           "merge-on-read: a log file rolls over to the next version past this size (bytes)", _positive_int),
    Option("hoodie.compact.inline", "false", "merge-on-read: schedule and run a compaction after a deltacommit "
           "once enough deltacommits followed the last one", _bool),
    Option("hoodie.compact.inline.max.delta.commits", "5",
           "merge-on-read: deltacommits since the last compaction that trigger the next", _positive_int),
    Option("hoodie.clean.automatic", "true", "run the cleaner after every commit", _bool),
    Option("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", "which file slices the cleaner keeps",
           choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"),
           aliases=("hoodie.clean.policy",)),
    Option("hoodie.cleaner.commits.retained", "10", "KEEP_LATEST_COMMITS: commits whose snapshots stay readable",
           _non_negative_int, aliases=("hoodie.clean.commits.retained",)),
    Option("hoodie.cleaner.fileversions.retained", "3", "KEEP_LATEST_FILE_VERSIONS: file slices kept per group",
           _positive_int, aliases=("hoodie.clean.fileversions.retained",)),
    Option("hoodie.cleaner.hours.retained", "24", "KEEP_LATEST_BY_HOURS: hours of commits whose snapshots stay "
           "readable", _non_negative_int, aliases=("hoodie.clean.hours.retained",)),
    Option("hoodie.archive.automatic", "true", "archive old instants after every commit", _bool),
    Option("hoodie.keep.min.commits", "20", "completed commits archival leaves on the active timeline",
           _positive_int),
    Option("hoodie.keep.max.commits", "30", "archival starts when the active timeline has more completed commits",
           _positive_int),
    Option("hoodie.write.concurrency.mode", SINGLE_WRITER, "SINGLE_WRITER (the table lock held for the whole write) "
           "or OPTIMISTIC_CONCURRENCY_CONTROL (held to start and to commit; conflicts checked at commit)",
           choices=(SINGLE_WRITER, OPTIMISTIC_CONCURRENCY_CONTROL)),
    Option("hoodie.cleaner.policy.failed.writes", None, "EAGER (pending writes rolled back before each write; "
           "single writer) or LAZY (only those whose heartbeat expired; required by optimistic concurrency control)",
           choices=("EAGER", "LAZY")),
    Option(WAIT_TIME_KEY, str(DEFAULT_WAIT_TIME_MS), "optimistic concurrency control: how long a writer waits for "
           "the table lock (ms)", _non_negative_int),
    Option(RETRY_WAIT_KEY, str(RETRY_WAIT_MS), "ms between two attempts to take the table lock", _positive_int),
    Option(VALIDITY_TIMEOUT_KEY, str(DEFAULT_VALIDITY_SECONDS), "seconds a table lock stays valid without renewal "
           "(a killed holder's lock expires after this)", _positive_int),
    Option(HEARTBEAT_POLL_KEY, str(DEFAULT_HEARTBEAT_POLL_SECONDS), "seconds between renewals of a held lock",
           _positive_int),
    Option(INTERVAL_KEY, str(DEFAULT_INTERVAL_MS), "optimistic concurrency control: ms between two heartbeats "
           "of a pending write (at least 1000)", _positive_int),
    Option(TOLERABLE_MISSES_KEY, str(DEFAULT_TOLERABLE_MISSES), "heartbeats a pending write may miss before it "
           "counts as failed", _positive_int),
)
BY_KEY: dict[str, Option] = {o.key: o for o in REGISTRY}
ALIASES: dict[str, str] = {a: o.key for o in REGISTRY for a in o.aliases}


@dataclass(frozen=True)
class WriteConfig:
    """Validated write options."""

    table_name: str | None
    table_type: str
    operation: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    ordering_field: str | None
    keygen_type: str
    hive_style: bool
    url_encode: bool
    table_version: int
    merge_mode: str
    small_file_limit: int
    max_file_size: int
    insert_split_size: int
    auto_split: bool
    record_size_estimate: int
    index_type: str
    compression: str
    combine_before_upsert: bool
    combine_before_insert: bool
    bulk_insert_sort_mode: str
    partitions_to_delete: tuple[str, ...]
    log_block_size: int = 256 * 1024 * 1024
    log_file_size: int = 1024 * 1024 * 1024
    inline_compact: bool = False
    compact_max_delta_commits: int = 5
    auto_clean: bool = True
    clean_policy: str = "KEEP_LATEST_COMMITS"
    clean_commits_retained: int = 10
    clean_file_versions_retained: int = 3
    clean_hours_retained: int = 24
    auto_archive: bool = True
    keep_min_commits: int = 20
    keep_max_commits: int = 30
    concurrency_mode: str = SINGLE_WRITER
    failed_writes_policy: str = "EAGER"
    lock: StorageLockConfig = field(default_factory=lambda: StorageLockConfig(wait_ms=0))
    heartbeat_interval_ms: int = DEFAULT_INTERVAL_MS
    heartbeat_tolerable_misses: int = DEFAULT_TOLERABLE_MISSES

    @property
    def optimistic(self) -> bool:
        """Whether several writers may write at once (optimistic concurrency control)."""
        return self.concurrency_mode == OPTIMISTIC_CONCURRENCY_CONTROL
    combine_before_delete: bool = True
    allow_duplicate_on_inserts: bool = True


def parse_options(options: Mapping[str, Any] | None) -> WriteConfig:
    """Validate ``options`` (string values, as on Spark) into a WriteConfig."""
    given: dict[str, str] = {}
    for key, value in (options or {}).items():
        canonical = ALIASES.get(key, key)
        if canonical not in BY_KEY:
            if key.startswith("hoodie."):
                warnings.warn(f"unknown Hudi option {key!r} is ignored by hudi-spec's writer", stacklevel=3)
            continue
        given[canonical] = str(value).lower() if isinstance(value, bool) else str(value)
    values: dict[str, Any] = {}
    for opt in REGISTRY:
        raw = given.get(opt.key, opt.default)
        if raw is None:
            values[opt.key] = None
            continue
        if opt.choices and raw not in opt.choices and raw.upper() not in opt.choices:
            raise InvalidConfig(f"{opt.key}={raw!r} is not valid", hint=f"use one of {', '.join(opt.choices)}")
        if opt.choices and raw not in opt.choices:
            raw = raw.upper()
        try:
            values[opt.key] = opt.parse(raw)
        except ValueError as err:
            raise InvalidConfig(f"{opt.key}={raw!r} is not valid: {err}", hint=opt.doc) from err
    partitions = values["hoodie.datasource.write.partitionpath.field"] or ()
    keys = values["hoodie.datasource.write.recordkey.field"] or ()
    keygen = values["hoodie.datasource.write.keygenerator.type"] or (
        "NON_PARTITION" if not partitions else "COMPLEX" if len(keys) > 1 or len(partitions) > 1 else "SIMPLE")
    if values["hoodie.keep.max.commits"] <= values["hoodie.keep.min.commits"]:
        raise InvalidConfig(f"hoodie.keep.max.commits={values['hoodie.keep.max.commits']} must be greater than "
                            f"hoodie.keep.min.commits={values['hoodie.keep.min.commits']}",
                            hint="raise hoodie.keep.max.commits or lower hoodie.keep.min.commits")
    if (values["hoodie.cleaner.policy"] == "KEEP_LATEST_COMMITS"
            and values["hoodie.keep.min.commits"] <= values["hoodie.cleaner.commits.retained"]):
        raise InvalidConfig(f"hoodie.keep.min.commits={values['hoodie.keep.min.commits']} must be greater than "
                            f"hoodie.cleaner.commits.retained={values['hoodie.cleaner.commits.retained']}",
                            hint="archival must not remove commits the cleaner still retains")
    return WriteConfig(
        table_name=values["hoodie.table.name"],
        table_type=values["hoodie.datasource.write.table.type"],
        operation=values["hoodie.datasource.write.operation"],
        record_key_fields=tuple(keys),
        partition_fields=tuple(partitions),
        ordering_field=values["hoodie.datasource.write.precombine.field"],
        keygen_type=keygen,
        hive_style=values["hoodie.datasource.write.hive_style_partitioning"],
        url_encode=values["hoodie.datasource.write.partitionpath.urlencode"],
        table_version=values["hoodie.write.table.version"],
        merge_mode=values["hoodie.record.merge.mode"],
        small_file_limit=values["hoodie.parquet.small.file.limit"],
        max_file_size=values["hoodie.parquet.max.file.size"],
        insert_split_size=values["hoodie.copyonwrite.insert.split.size"],
        auto_split=values["hoodie.copyonwrite.insert.auto.split"],
        record_size_estimate=values["hoodie.copyonwrite.record.size.estimate"],
        index_type=values["hoodie.index.type"],
        compression=values["hoodie.parquet.compression.codec"],
        combine_before_upsert=values["hoodie.combine.before.upsert"],
        combine_before_insert=values["hoodie.combine.before.insert"],
        bulk_insert_sort_mode=values["hoodie.bulkinsert.sort.mode"],
        partitions_to_delete=tuple(values["hoodie.datasource.write.partitions.to.delete"] or ()),
        log_block_size=values["hoodie.logfile.data.block.max.size"],
        log_file_size=values["hoodie.logfile.max.size"],
        inline_compact=values["hoodie.compact.inline"],
        compact_max_delta_commits=values["hoodie.compact.inline.max.delta.commits"],
        auto_clean=values["hoodie.clean.automatic"],
        clean_policy=values["hoodie.cleaner.policy"],
        clean_commits_retained=values["hoodie.cleaner.commits.retained"],
        clean_file_versions_retained=values["hoodie.cleaner.fileversions.retained"],
        clean_hours_retained=values["hoodie.cleaner.hours.retained"],
        auto_archive=values["hoodie.archive.automatic"],
        keep_min_commits=values["hoodie.keep.min.commits"],
        keep_max_commits=values["hoodie.keep.max.commits"],
        **_concurrency(values),
        combine_before_delete=values["hoodie.combine.before.delete"],
        allow_duplicate_on_inserts=values["hoodie.merge.allow.duplicate.on.inserts"],
    )


def _concurrency(values: Mapping[str, Any]) -> dict[str, Any]:
    """The concurrency settings: the mode, its failed-writes policy (LAZY under optimistic concurrency
    control, as ``HoodieWriteConfig`` requires), the table lock and the heartbeat."""
    mode = values["hoodie.write.concurrency.mode"]
    policy = values["hoodie.cleaner.policy.failed.writes"] or ("LAZY" if mode == OPTIMISTIC_CONCURRENCY_CONTROL
                                                                 else "EAGER")
    if mode == OPTIMISTIC_CONCURRENCY_CONTROL and policy != "LAZY":
        raise InvalidConfig("hoodie.cleaner.policy.failed.writes=EAGER cannot be used with optimistic concurrency "
                            "control: it would roll back the pending writes of live writers",
                            hint="leave it unset (LAZY) or set it to LAZY")
    if values[INTERVAL_KEY] < 1000:
        raise InvalidConfig(f"{INTERVAL_KEY}={values[INTERVAL_KEY]} is below one second",
                            hint="HoodieHeartbeatClient takes at least 1000 ms")
    lock = StorageLockConfig(values[VALIDITY_TIMEOUT_KEY], values[HEARTBEAT_POLL_KEY],
                             values[WAIT_TIME_KEY] if mode == OPTIMISTIC_CONCURRENCY_CONTROL else 0,
                             values[RETRY_WAIT_KEY])
    return {"concurrency_mode": mode, "failed_writes_policy": policy, "lock": lock,
            "heartbeat_interval_ms": values[INTERVAL_KEY], "heartbeat_tolerable_misses": values[TOLERABLE_MISSES_KEY]}
