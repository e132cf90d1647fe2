"""The registry of every Hudi config key this project uses: its default, aliases, parser and meaning.

Each ``Setting`` is one ``hoodie.*`` key as Hudi declares it in a ``ConfigProperty``: the key,
its default in Hudi's string form (``None``: no default, the key must be given where it is
needed), the older or table-level spellings Hudi still accepts (``aliases``), the values it takes
(``choices``, matched case-insensitively, or ``parse``, which raises ``ValueError`` on a bad
value), what it governs (``doc``), the Hudi config class and property that declare it
(``declared_by``) and the attribute name it is carried as (``name``: the same name on the
writer's ``WriteConfig``, the case language's ``CreateTable`` and the model's table settings).

Every default in the project derives from here: the writer's options and ``WriteConfig``, the case
language's ``CreateTable``, the table services' configs (``spec.write.service_configs``) and the
partitioner's. A setting with ``writer_option=False`` is one the writer does not take: its value
is Hudi's default, fixed.

``resolve_settings(options)`` validates a mapping of string options (as on Spark) into values by
name, with the rules Hudi checks across keys (``HoodieWriteConfig.validate``, the archival and
cleaner checks of ``HoodieArchivalConfig`` / ``HoodieCleanConfig``, the heartbeat minimum of
``HoodieHeartbeatClient``); a known key with a bad value raises ``InvalidConfig`` naming the key
and what it takes, an option the writer does not implement but may not ignore (it changes locking,
concurrency, consistency, durability or what is written: ``spec.config.refused_options``) raises
``UnsupportedOption``, and the other unknown ``hoodie.*`` keys are returned for the caller to warn about.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieWriteConfig``,
``HoodieTableConfig``, ``HoodieCompactionConfig``, ``HoodieCleanConfig``, ``HoodieArchivalConfig``,
``HoodieStorageConfig``, ``HoodieIndexConfig``, ``HoodieLockConfig``, ``StorageBasedLockConfig``,
``HoodieMetadataConfig``, ``KeyGeneratorOptions``, ``DataSourceWriteOptions`` and
``ConfigProperty.withAlternatives``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.config.parquet_codec import CODECS, DEFAULT_CODEC
from spec.config.parsers import (
    parse_bool,
    parse_fields,
    parse_index_type,
    parse_java_float,
    parse_non_negative_int,
    parse_positive_int,
    parse_record_index_size,
)
from spec.config.refused_options import KEYGEN_CLASS_KEYS, check_refused, keygen_type_of_class, refused_option
from spec.config.table_config import COMMIT_TIME_ORDERING, COPY_ON_WRITE, EVENT_TIME_ORDERING, MERGE_ON_READ
from spec.config.write_operation import WRITER_OPERATIONS
from spec.errors import InvalidConfig
from spec.storage.file_system_lock import EXPIRE_KEY as FS_EXPIRE_KEY
from spec.storage.file_system_lock import PATH_KEY as FS_PATH_KEY
from spec.storage.file_system_lock import FileSystemLockConfig
from spec.storage.heartbeat import DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES, INTERVAL_KEY, TOLERABLE_MISSES_KEY
from spec.storage.lock import (
    DEFAULT_HEARTBEAT_POLL_SECONDS,
    DEFAULT_VALIDITY_SECONDS,
    DEFAULT_WAIT_TIME_MS,
    HEARTBEAT_POLL_ALIAS,
    HEARTBEAT_POLL_KEY,
    RETRY_WAIT_KEY,
    RETRY_WAIT_MS,
    VALIDITY_TIMEOUT_KEY,
    WAIT_TIME_KEY,
    StorageLockConfig,
)
from spec.storage.lock_provider import PROVIDER_KEY, STORAGE_BASED, parse_lock_provider

SINGLE_WRITER = "SINGLE_WRITER"
OPTIMISTIC_CONCURRENCY_CONTROL = "OPTIMISTIC_CONCURRENCY_CONTROL"
"""``hoodie.write.concurrency.mode`` values (``WriteConcurrencyMode``)."""
KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
CLEAN_POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)
"""``hoodie.cleaner.policy`` values (``HoodieCleaningPolicy``)."""
MB = 1024 * 1024


# --8<-- [start:setting]
@dataclass(frozen=True)
class Setting:
    """One Hudi config key: default (Hudi's string form, None: none), what it governs, the declaring
    ``ConfigProperty``, the attribute name it is carried as, its parser, choices and aliases."""

    key: str
    default: str | None
    doc: str
    declared_by: str
    name: str
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    writer_option: bool = True
    case_sensitive: bool = False

    def value_of(self, raw: str) -> Any:
        """The typed value of a raw string: a choice (its canonical, upper-case spelling when only that
        matches, unless the setting is ``case_sensitive``: Hudi reads it with an enum's ``valueOf``) or what
        ``parse`` makes of it; a bad value raises ``InvalidConfig`` naming the key."""
        if self.choices and raw not in self.choices:
            if self.case_sensitive or raw.upper() not in self.choices:
                raise InvalidConfig(f"{self.key}={raw!r} is not valid", hint=f"use one of {', '.join(self.choices)}")
            raw = raw.upper()
        try:
            return self.parse(raw)
        except ValueError as err:
            raise InvalidConfig(f"{self.key}={raw!r} is not valid: {err}", hint=self.doc) from err

    @property
    def value(self) -> Any:
        """The typed default (None when the key has no default)."""
        return None if self.default is None else self.value_of(self.default)

    def option(self, value: Any) -> str:
        """The string option of a typed value (booleans lower-case, field lists comma-joined)."""
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, tuple):
            return ",".join(value)
        return str(value)
# --8<-- [end:setting]


SETTINGS: tuple[Setting, ...] = (
    # --- the table (stored in hoodie.properties by the first write) -----------------------------
    Setting("hoodie.table.name", None, "table name (required for a new table)",
            "HoodieWriteConfig.TBL_NAME", "table_name"),
    # the type of a new table; on an existing table the table's type applies and this option is not compared
    # with it (spec.write.writer_utils); the value is the enum's name (HoodieTableType.valueOf: measured with
    # Apache Hudi 1.2.0, a lower-case copy_on_write is an IllegalArgumentException). The table property
    # hoodie.table.type is no alias: Hudi does not create a table from it, and compares it with an existing one's
    Setting("hoodie.datasource.write.table.type", COPY_ON_WRITE, "COPY_ON_WRITE or MERGE_ON_READ (upper case: "
            "the enum's name)", "DataSourceWriteOptions.TABLE_TYPE", "table_type",
            choices=(COPY_ON_WRITE, MERGE_ON_READ), case_sensitive=True),
    Setting("hoodie.datasource.write.operation", "upsert", "the write operation",
            "DataSourceWriteOptions.OPERATION", "operation", choices=WRITER_OPERATIONS),
    Setting("hoodie.datasource.write.recordkey.field", None, "record key field(s), comma-separated",
            "KeyGeneratorOptions.RECORDKEY_FIELD_NAME", "record_key_fields", parse_fields,
            aliases=("hoodie.table.recordkey.fields",)),
    Setting("hoodie.datasource.write.partitionpath.field", "", "partition field(s), comma-separated",
            "KeyGeneratorOptions.PARTITIONPATH_FIELD_NAME", "partition_fields", parse_fields,
            aliases=("hoodie.table.partition.fields",)),
    Setting("hoodie.datasource.write.precombine.field", None, "ordering (precombine) field",
            "HoodieWriteConfig.PRECOMBINE_FIELD_NAME", "ordering_field",
            aliases=("hoodie.table.ordering.fields", "hoodie.table.precombine.field")),
    Setting("hoodie.datasource.write.keygenerator.type", None, "SIMPLE, COMPLEX or NON_PARTITION",
            "HoodieWriteConfig.KEYGENERATOR_TYPE", "keygen_type", choices=("SIMPLE", "COMPLEX", "NON_PARTITION")),
    Setting("hoodie.datasource.write.hive_style_partitioning", "false", "partition folders as field=value",
            "KeyGeneratorOptions.HIVE_STYLE_PARTITIONING_ENABLE", "hive_style", parse_bool),
    Setting("hoodie.datasource.write.partitionpath.urlencode", "false", "URL-encode partition values",
            "KeyGeneratorOptions.URL_ENCODE_PARTITIONING", "url_encode", parse_bool),
    Setting("hoodie.write.table.version", "9", "table version of a new table: 9 (the default, as Apache Hudi "
            "1.1 writes: HoodieTableVersion.current()), 8 (Hudi 1.0) or 6 (Hudi 0.14/0.15); 8 and 9 keep a "
            "metadata table unless hoodie.metadata.enable=false", "HoodieWriteConfig.WRITE_TABLE_VERSION",
            "table_version", int, choices=("6", "8", "9")),
    Setting("hoodie.metadata.enable", None, "keep the metadata table's files partition (table versions 8 and 9); "
            "false deletes a table's metadata table. Unset: a table keeps its own as it is; a new table of version "
            "8 or 9 gets one (Apache Hudi's default, true), a new version 6 table none (Hudi 0.15 would create "
            "one; this writer does not write version 6 metadata tables)",
            "HoodieMetadataConfig.ENABLE", "metadata_enable", parse_bool),
    Setting("hoodie.metadata.compact.max.delta.commits", "10", "metadata table deltacommits before it is compacted "
            "(only Hudi's default is written here)", "HoodieMetadataConfig.COMPACT_NUM_DELTA_COMMITS",
            "metadata_compact_max_delta_commits", int, choices=("10",)),
    Setting("hoodie.metadata.cleaner.commits.retained", "3", "commits the metadata table's cleaner retains (only "
            "Hudi's default is written here)", "HoodieMetadataConfig.CLEANER_COMMITS_RETAINED",
            "metadata_cleaner_commits_retained", int, choices=("3",)),
    # Hudi's write option; the table property hoodie.record.merge.mode among a write's options creates no table
    # (Apache Hudi 1.2.0 measured: a version 8 or 9 table created with it alone has the mode inferred from the
    # ordering field) and is compared with an existing table's (spec.write.writer_utils); case
    # commit-time-ordering-cow-v8
    Setting("hoodie.write.record.merge.mode", EVENT_TIME_ORDERING, "how records of one key merge: "
            "EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING (the table's hoodie.record.merge.mode)",
            "HoodieWriteConfig.RECORD_MERGE_MODE", "merge_mode", choices=(EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING)),
    # --- file sizing and bucketing ------------------------------------------------------------
    Setting("hoodie.parquet.small.file.limit", str(100 * MB), "base files below this size take inserts (bytes)",
            "HoodieCompactionConfig.PARQUET_SMALL_FILE_LIMIT", "small_file_limit", int),
    Setting("hoodie.parquet.max.file.size", str(120 * MB), "target base file size (bytes)",
            "HoodieStorageConfig.PARQUET_MAX_FILE_SIZE", "max_file_size", parse_positive_int),
    Setting("hoodie.copyonwrite.insert.split.size", "500000", "records per new insert bucket",
            "HoodieCompactionConfig.COPY_ON_WRITE_INSERT_SPLIT_SIZE", "insert_split_size", parse_positive_int),
    Setting("hoodie.copyonwrite.insert.auto.split", "true", "size insert buckets from the record size",
            "HoodieCompactionConfig.COPY_ON_WRITE_AUTO_SPLIT_INSERTS", "auto_split", parse_bool),
    Setting("hoodie.copyonwrite.record.size.estimate", "1024", "record size before any commit (bytes)",
            "HoodieCompactionConfig.COPY_ON_WRITE_RECORD_SIZE_ESTIMATE", "record_size_estimate",
            parse_positive_int),
    Setting("hoodie.index.type", "BLOOM", "how records are tagged with their file group: BLOOM (footers, then "
            "exact keys of candidate files), SIMPLE (all keys), BUCKET (the hash of the key: "
            "spec.index.bucket_index), or GLOBAL_BLOOM / GLOBAL_SIMPLE (a key unique across partitions: "
            "spec.index.global_index), or RECORD_INDEX (the metadata table's record index, a global index: "
            "spec.metadata.record_index; GLOBAL_RECORD_LEVEL_INDEX, its Hudi 1.2 name, is the same), or "
            "RECORD_LEVEL_INDEX (the partitioned record index, keys unique within a partition: "
            "spec.metadata.partitioned_record_index)", "HoodieIndexConfig.INDEX_TYPE", "index_type", parse_index_type,
            choices=("BLOOM", "SIMPLE", "BUCKET", "GLOBAL_BLOOM", "GLOBAL_SIMPLE", "RECORD_INDEX",
                     "GLOBAL_RECORD_LEVEL_INDEX", "RECORD_LEVEL_INDEX")),
    # false is Hudi 1.2.0's HoodieIndexConfig default, measured
    Setting("hoodie.record.index.update.partition.path", "false", "RECORD_INDEX: an upsert naming another "
            "partition moves its key there; false (the default): updates it where it is",
            "HoodieIndexConfig.RECORD_INDEX_UPDATE_PARTITION_PATH_ENABLE", "record_index_update_partition_path",
            parse_bool),
    # false is Hudi 1.2.0's default, measured: a write without it deletes the table's record index
    Setting("hoodie.metadata.global.record.level.index.enable", "false", "keep the record index in the metadata "
            "table (table versions 8 and 9; spec.metadata.record_index); false (the default) deletes a table's "
            "record index, as Apache Hudi's writer does",
            "HoodieMetadataConfig.GLOBAL_RECORD_LEVEL_INDEX_ENABLE_PROP", "record_index_enable", parse_bool,
            aliases=("hoodie.metadata.record.index.enable",)),
    # false is Hudi 1.2.0's default (HoodieMetadataConfig, since 1.1.0)
    Setting("hoodie.metadata.record.level.index.enable", "false", "keep the partitioned record index in the "
            "metadata table (file groups per data partition, a key unique within its partition; table versions 8 "
            "and 9; spec.metadata.partitioned_record_index); false (the default) deletes a table's record index",
            "HoodieMetadataConfig.RECORD_LEVEL_INDEX_ENABLE_PROP", "record_level_index_enable", parse_bool),
    # Hudi 1.2.0's HoodieMetadataConfig defaults (measured); they size a new record index (estimate_file_group_count)
    Setting("hoodie.metadata.global.record.level.index.min.filegroup.count", "10", "fewest file groups of a new "
            "record index", "HoodieMetadataConfig.GLOBAL_RECORD_LEVEL_INDEX_MIN_FILE_GROUP_COUNT_PROP",
            "record_index_min_file_groups", parse_positive_int,
            aliases=("hoodie.metadata.record.index.min.filegroup.count",)),
    Setting("hoodie.metadata.global.record.level.index.max.filegroup.count", "10000", "most file groups of a new "
            "record index", "HoodieMetadataConfig.GLOBAL_RECORD_LEVEL_INDEX_MAX_FILE_GROUP_COUNT_PROP",
            "record_index_max_file_groups", parse_positive_int,
            aliases=("hoodie.metadata.record.index.max.filegroup.count",)),
    Setting("hoodie.metadata.record.index.growth.factor", "2.0", "how much a new record index's keys are expected to "
            "grow", "HoodieMetadataConfig.RECORD_INDEX_GROWTH_FACTOR_PROP", "record_index_growth_factor",
            parse_java_float),
    Setting("hoodie.metadata.record.index.max.filegroup.size", "1073741824", "bytes a new record index's file group "
            "is sized to hold (at least 48, one entry)",
            "HoodieMetadataConfig.RECORD_INDEX_MAX_FILE_GROUP_SIZE_BYTES_PROP", "record_index_max_file_group_size",
            parse_record_index_size),
    # true is Hudi 1.2.0's HoodieIndexConfig default for both, measured
    Setting("hoodie.bloom.index.update.partition.path", "true", "GLOBAL_BLOOM: an upsert naming another partition "
            "moves its key there (a delete in the old partition, an insert in the new); false: updates it where it "
            "is", "HoodieIndexConfig.BLOOM_INDEX_UPDATE_PARTITION_PATH_ENABLE", "bloom_index_update_partition_path",
            parse_bool),
    Setting("hoodie.simple.index.update.partition.path", "true", "GLOBAL_SIMPLE: as "
            "hoodie.bloom.index.update.partition.path for GLOBAL_BLOOM",
            "HoodieIndexConfig.SIMPLE_INDEX_UPDATE_PARTITION_PATH_ENABLE", "simple_index_update_partition_path",
            parse_bool),
    Setting("hoodie.index.bucket.engine", "SIMPLE", "the bucket index's engine: SIMPLE (a fixed number of buckets; "
            "CONSISTENT_HASHING is refused)", "HoodieIndexConfig.BUCKET_INDEX_ENGINE_TYPE", "bucket_index_engine",
            choices=("SIMPLE", "CONSISTENT_HASHING")),
    # 256 is Hudi 1.2.0's HoodieIndexConfig default, measured (the Flink options' default is 4)
    Setting("hoodie.bucket.index.num.buckets", "256", "buckets (file groups) per partition of a bucket index",
            "HoodieIndexConfig.BUCKET_INDEX_NUM_BUCKETS", "bucket_index_num_buckets", int),
    Setting("hoodie.bucket.index.hash.field", "", "the record key fields a bucket index hashes (unset: every "
            "record key field)", "HoodieIndexConfig.BUCKET_INDEX_HASH_FIELD", "bucket_index_hash_fields",
            parse_fields),
    Setting("hoodie.parquet.compression.codec", DEFAULT_CODEC, "parquet compression codec of base files, "
            "compacted base files and parquet log blocks (level as parquet-mr: gzip 6, zstd 3)",
            "HoodieStorageConfig.PARQUET_COMPRESSION_CODEC_NAME", "compression", choices=CODECS),
    # --- deduplication ------------------------------------------------------------------------
    Setting("hoodie.combine.before.upsert", "true", "dedupe incoming records by key before upsert",
            "HoodieWriteConfig.COMBINE_BEFORE_UPSERT", "combine_before_upsert", parse_bool),
    Setting("hoodie.combine.before.insert", "false", "dedupe incoming records by key before insert, bulk_insert, "
            "insert_overwrite and insert_overwrite_table (off: every record is written, duplicates included)",
            "HoodieWriteConfig.COMBINE_BEFORE_INSERT", "combine_before_insert", parse_bool),
    Setting("hoodie.combine.before.delete", "true", "dedupe the keys of a delete",
            "HoodieWriteConfig.COMBINE_BEFORE_DELETE", "combine_before_delete", parse_bool),
    Setting("hoodie.merge.allow.duplicate.on.inserts", "true", "an insert routed to a small file is appended to "
            "its rows without merging by key (Hudi's concat handle)",
            "HoodieWriteConfig.MERGE_ALLOW_DUPLICATE_ON_INSERTS_ENABLE", "allow_duplicate_on_inserts", parse_bool),
    # a new table's change data capture (hoodie.properties keys, written when the table is created; an existing
    # table's own apply: spec.write.cdc_logger; merge-on-read refused, spec.write.writer_utils)
    Setting("hoodie.table.cdc.enabled", "false", "a new copy-on-write table logs every change its merge handles "
            "make in CDC log files, for the CDC query", "HoodieTableConfig.CDC_ENABLED", "cdc_enabled", parse_bool),
    Setting("hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER", "what a CDC log holds: "
            "OP_KEY_ONLY, DATA_BEFORE or DATA_BEFORE_AFTER", "HoodieTableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE",
            "cdc_logging_mode", choices=("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")),
    Setting("hoodie.bulkinsert.sort.mode", "NONE", "how bulk_insert orders each input partition's records before "
            "writing: NONE, GLOBAL_SORT, PARTITION_SORT or PARTITION_PATH_REPARTITION",
            "HoodieWriteConfig.BULK_INSERT_SORT_MODE", "bulk_insert_sort_mode",
            choices=("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION")),
    Setting("hoodie.datasource.write.partitions.to.delete", "", "partitions for delete_partition",
            "DataSourceWriteOptions.PARTITIONS_TO_DELETE", "partitions_to_delete", parse_fields),
    # --- merge-on-read log files --------------------------------------------------------------
    Setting("hoodie.logfile.data.block.max.size", str(256 * MB),
            "merge-on-read: the append handle flushes a data block when its buffer reaches this size (bytes)",
            "HoodieStorageConfig.LOGFILE_DATA_BLOCK_MAX_SIZE", "log_block_size", parse_positive_int),
    Setting("hoodie.logfile.max.size", str(1024 * MB),
            "merge-on-read: a log file rolls over to the next version past this size (bytes)",
            "HoodieStorageConfig.LOGFILE_MAX_SIZE", "log_file_size", parse_positive_int),
    # --- table services -----------------------------------------------------------------------
    Setting("hoodie.compact.inline", "false", "merge-on-read: schedule and run a compaction after a deltacommit "
            "once enough deltacommits followed the last one", "HoodieCompactionConfig.INLINE_COMPACT",
            "inline_compact", parse_bool),
    Setting("hoodie.compact.inline.max.delta.commits", "5",
            "merge-on-read: deltacommits since the last compaction that trigger the next",
            "HoodieCompactionConfig.INLINE_COMPACT_NUM_DELTA_COMMITS", "compact_max_delta_commits",
            parse_positive_int),
    Setting("hoodie.clustering.inline", "false", "cluster after a commit once enough commits followed the last "
            "clustering (the write's hoodie.clustering.plan.strategy.* options plan it)",
            "HoodieClusteringConfig.INLINE_CLUSTERING", "inline_cluster", parse_bool,
            aliases=("hoodie.datasource.clustering.inline.enable",)),
    Setting("hoodie.clustering.inline.max.commits", "4",
            "inline clustering: completed commits since the last clustering (completed or pending) that trigger the "
            "next", "HoodieClusteringConfig.INLINE_CLUSTERING_MAX_COMMITS", "cluster_max_commits", parse_positive_int),
    Setting("hoodie.clustering.schedule.inline", "false", "plan a clustering after a commit (no pending one, "
            "enough commits since the last: hoodie.clustering.async.max.commits), for another job to run",
            "HoodieClusteringConfig.SCHEDULE_INLINE_CLUSTERING", "schedule_inline_cluster", parse_bool),
    Setting("hoodie.clustering.async.max.commits", "4", "clustering scheduled inline: completed commits since the "
            "last clustering that trigger the next plan", "HoodieClusteringConfig.ASYNC_CLUSTERING_MAX_COMMITS",
            "cluster_async_max_commits", parse_positive_int),
    Setting("hoodie.clean.automatic", "true", "run the cleaner after every commit",
            "HoodieCleanConfig.AUTO_CLEAN", "auto_clean", parse_bool),
    Setting("hoodie.cleaner.policy", KEEP_LATEST_COMMITS, "which file slices the cleaner keeps",
            "HoodieCleanConfig.CLEANER_POLICY", "clean_policy", choices=CLEAN_POLICIES,
            aliases=("hoodie.clean.policy",)),
    Setting("hoodie.cleaner.commits.retained", "10", "KEEP_LATEST_COMMITS: commits whose snapshots stay readable",
            "HoodieCleanConfig.CLEANER_COMMITS_RETAINED", "clean_commits_retained", parse_non_negative_int,
            aliases=("hoodie.clean.commits.retained",)),
    Setting("hoodie.cleaner.fileversions.retained", "3", "KEEP_LATEST_FILE_VERSIONS: file slices kept per group",
            "HoodieCleanConfig.CLEANER_FILE_VERSIONS_RETAINED", "clean_file_versions_retained", parse_positive_int,
            aliases=("hoodie.clean.fileversions.retained",)),
    Setting("hoodie.cleaner.hours.retained", "24", "KEEP_LATEST_BY_HOURS: hours of commits whose snapshots stay "
            "readable", "HoodieCleanConfig.CLEANER_HOURS_RETAINED", "clean_hours_retained", parse_non_negative_int,
            aliases=("hoodie.clean.hours.retained",)),
    Setting("hoodie.archive.automatic", "true", "archive old instants after every commit",
            "HoodieArchivalConfig.AUTO_ARCHIVE", "auto_archive", parse_bool),
    Setting("hoodie.keep.min.commits", "20", "completed commits archival leaves on the active timeline",
            "HoodieArchivalConfig.MIN_COMMITS_TO_KEEP", "keep_min_commits", parse_positive_int),
    Setting("hoodie.keep.max.commits", "30", "archival starts when the active timeline has more completed commits",
            "HoodieArchivalConfig.MAX_COMMITS_TO_KEEP", "keep_max_commits", parse_positive_int),
    # --- concurrency --------------------------------------------------------------------------
    Setting("hoodie.write.concurrency.mode", SINGLE_WRITER, "SINGLE_WRITER (the table lock held for the whole "
            "write) or OPTIMISTIC_CONCURRENCY_CONTROL (held to start and to commit; conflicts checked at commit)",
            "HoodieWriteConfig.WRITE_CONCURRENCY_MODE", "concurrency_mode",
            choices=(SINGLE_WRITER, OPTIMISTIC_CONCURRENCY_CONTROL)),
    Setting("hoodie.cleaner.policy.failed.writes", None, "EAGER (pending writes rolled back before each write; "
            "single writer) or LAZY (only those whose heartbeat expired; required by optimistic concurrency "
            "control)", "HoodieCleanConfig.FAILED_WRITES_CLEANER_POLICY", "failed_writes_policy",
            choices=("EAGER", "LAZY")),
    Setting(WAIT_TIME_KEY, str(DEFAULT_WAIT_TIME_MS), "optimistic concurrency control: how long a writer waits for "
            "the table lock (ms)", "HoodieLockConfig.LOCK_ACQUIRE_WAIT_TIMEOUT_MS", "lock_wait_ms",
            parse_non_negative_int),
    Setting(RETRY_WAIT_KEY, str(RETRY_WAIT_MS), "ms between two attempts to take the table lock",
            "HoodieLockConfig.LOCK_ACQUIRE_RETRY_WAIT_TIME_IN_MILLIS", "lock_retry_wait_ms", parse_positive_int),
    Setting(VALIDITY_TIMEOUT_KEY, str(DEFAULT_VALIDITY_SECONDS), "seconds a table lock stays valid without "
            "renewal (a killed holder's lock expires after this)", "StorageBasedLockConfig.VALIDITY_TIMEOUT_SECONDS",
            "lock_validity_seconds", parse_positive_int),
    Setting(HEARTBEAT_POLL_KEY, str(DEFAULT_HEARTBEAT_POLL_SECONDS), "seconds between renewals of a held lock",
            "StorageBasedLockConfig.RENEW_INTERVAL_SECS", "lock_heartbeat_poll_seconds", parse_positive_int,
            aliases=(HEARTBEAT_POLL_ALIAS,)),
    Setting(PROVIDER_KEY, STORAGE_BASED, "the table lock every writer of the table takes: StorageBasedLockProvider "
            "(.hoodie/.locks/table_lock.json) or FileSystemBasedLockProvider (.hoodie/lock); others are refused",
            "HoodieLockConfig.LOCK_PROVIDER_CLASS_NAME", "lock_provider", parse_lock_provider),
    Setting(FS_PATH_KEY, None, "FileSystemBasedLockProvider: the folder of its lock file (unset: the table's .hoodie)",
            "HoodieLockConfig.FILESYSTEM_LOCK_PATH", "lock_filesystem_path"),
    Setting(FS_EXPIRE_KEY, "0", "FileSystemBasedLockProvider: minutes after which a lock file is stale (0: never)",
            "HoodieLockConfig.FILESYSTEM_LOCK_EXPIRE", "lock_filesystem_expire", parse_non_negative_int),
    Setting(INTERVAL_KEY, str(DEFAULT_INTERVAL_MS), "optimistic concurrency control: ms between two heartbeats "
            "of a pending write (at least 1000)", "HoodieWriteConfig.CLIENT_HEARTBEAT_INTERVAL_IN_MS",
            "heartbeat_interval_ms", parse_positive_int),
    Setting(TOLERABLE_MISSES_KEY, str(DEFAULT_TOLERABLE_MISSES), "heartbeats a pending write may miss before it "
            "counts as failed", "HoodieWriteConfig.CLIENT_HEARTBEAT_NUM_TOLERABLE_MISSES",
            "heartbeat_tolerable_misses", parse_positive_int),
    # --- Hudi's defaults the writer does not let a user change --------------------------------
    Setting("hoodie.record.size.estimation.threshold", "1.0", "a commit's base files count toward the average "
            "record size once they hold more than this fraction of hoodie.parquet.small.file.limit",
            "HoodieCompactionConfig.RECORD_SIZE_ESTIMATION_THRESHOLD", "record_size_estimation_threshold", float,
            writer_option=False),
    Setting("hoodie.merge.small.file.group.candidates.limit", "1", "merge-on-read: how many small file groups "
            "of a partition may take inserts", "HoodieWriteConfig.MERGE_SMALL_FILE_GROUP_CANDIDATES_LIMIT",
            "small_file_group_candidates", parse_positive_int, writer_option=False),
    Setting("hoodie.logfile.to.parquet.compression.ratio", "0.35", "merge-on-read: the size a group's log files "
            "count for, as a fraction of their bytes, when sizing a small file",
            "HoodieStorageConfig.LOGFILE_TO_PARQUET_COMPRESSION_RATIO_FRACTION", "log_to_parquet_ratio", float,
            writer_option=False),
)
BY_KEY: Mapping[str, Setting] = {s.key: s for s in SETTINGS}
BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}
ALIASES: Mapping[str, str] = {a: s.key for s in SETTINGS for a in s.aliases}
WRITER_OPTIONS: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.writer_option)
"""The settings the writer takes as options, in registry order."""


def default(name: str) -> Any:
    """The typed default of the setting carried as ``name`` (``KeyError`` for a name not registered)."""
    return BY_NAME[name].value


def setting_of(settings: object, name: str) -> Any:
    """The value an object of settings carries as ``name``, or the registry's default when it carries
    none (a case's table settings lack the keys the writer fixes)."""
    return getattr(settings, name, default(name))


def canonical_key(key: str) -> str:
    """The key an alias stands for (a registered key or an unknown one is returned unchanged)."""
    return ALIASES.get(key, key)


def options_of(settings: object, names: tuple[str, ...]) -> dict[str, str]:
    """The ``hoodie.*`` string options of the named settings an object carries (None values left out)."""
    out = {}
    for name in names:
        value = getattr(settings, name)
        if value is not None:
            out[BY_NAME[name].key] = BY_NAME[name].option(value)
    return out


def resolve_settings(options: Mapping[str, Any] | None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Validate string options (booleans accepted) into the writer's values by name, and the unknown
    ``hoodie.*`` keys given (other unknown keys are ignored). Every writer option is in the result,
    a key not given taking its default; then the derived values and the checks across keys. A key
    generator class the writer writes sets the key generator type; an option the writer refuses
    (``spec.config.refused_options``: it changes safety or what is written) raises ``UnsupportedOption``."""
    given: dict[str, str] = {}
    unknown: list[str] = []
    refusable: dict[str, str] = {}
    keygen_classes: dict[str, str] = {}
    for key, raw in (options or {}).items():
        text = str(raw).lower() if isinstance(raw, bool) else str(raw)
        canonical = canonical_key(key)
        if canonical in BY_KEY and BY_KEY[canonical].writer_option:
            given[canonical] = text
        elif key in KEYGEN_CLASS_KEYS:
            keygen_classes[key] = text
        elif key.startswith("hoodie."):
            if refused_option(key) is not None:
                refusable[key] = text
            else:
                unknown.append(key)
    values: dict[str, Any] = {}
    for s in WRITER_OPTIONS:
        raw = given.get(s.key, s.default)
        values[s.name] = None if raw is None else s.value_of(raw)
    check_refused(refusable, values)
    for key, raw in keygen_classes.items():
        kind = keygen_type_of_class(key, raw)
        if values["keygen_type"] not in (None, kind):
            raise InvalidConfig(f"{key}={raw!r} names a {kind} key generator, hoodie.datasource.write.keygenerator"
                                f".type={values['keygen_type']!r} another", hint="give one of them, or the same")
        values["keygen_type"] = kind
    values["record_key_fields"] = values["record_key_fields"] or ()
    values["keygen_type"] = values["keygen_type"] or inferred_key_generator(values["record_key_fields"],
                                                                            values["partition_fields"])
    check_retention(values["clean_policy"], values["clean_commits_retained"], values["keep_min_commits"],
                    values["keep_max_commits"])
    return {**values, **concurrency_settings(values)}, tuple(unknown)


def check_values(options: Mapping[str, Any]) -> None:
    """Raise ``InvalidConfig`` for the first registered writer option (or alias) among ``options`` whose value
    its setting does not take (``Setting.value_of``); other keys are left to ``resolve_settings``."""
    for key, raw in options.items():
        setting = BY_KEY.get(canonical_key(key))
        if setting is not None and setting.writer_option:
            setting.value_of(str(raw).lower() if isinstance(raw, bool) else str(raw))


def inferred_key_generator(record_key_fields: tuple[str, ...], partition_fields: tuple[str, ...]) -> str:
    """The key generator type when none is given: no partition field → NON_PARTITION; several key or
    partition fields → COMPLEX; else SIMPLE (``KeyGenUtils.inferKeyGeneratorType``)."""
    if not partition_fields:
        return "NON_PARTITION"
    return "COMPLEX" if len(record_key_fields) > 1 or len(partition_fields) > 1 else "SIMPLE"


def check_retention(clean_policy: str, commits_retained: int, keep_min: int, keep_max: int) -> None:
    """Archival keeps more than the cleaner retains: ``hoodie.keep.max.commits`` >
    ``hoodie.keep.min.commits`` and, under KEEP_LATEST_COMMITS, ``hoodie.keep.min.commits`` >
    ``hoodie.cleaner.commits.retained`` (``HoodieArchivalConfig`` / ``HoodieWriteConfig`` checks)."""
    if keep_max <= keep_min:
        raise InvalidConfig(f"hoodie.keep.max.commits={keep_max} must be greater than "
                            f"hoodie.keep.min.commits={keep_min}",
                            hint="raise hoodie.keep.max.commits or lower hoodie.keep.min.commits")
    if clean_policy == KEEP_LATEST_COMMITS and keep_min <= commits_retained:
        raise InvalidConfig(f"hoodie.keep.min.commits={keep_min} must be greater than "
                            f"hoodie.cleaner.commits.retained={commits_retained}",
                            hint="archival must not remove commits the cleaner still retains")


def concurrency_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """The failed-writes policy (LAZY under optimistic concurrency control, as ``HoodieWriteConfig``
    requires; EAGER for a single writer) and the table lock (a single writer waits for nobody:
    wait 0), after the checks: EAGER is refused under optimistic concurrency control and a heartbeat
    interval below one second is refused (``HoodieHeartbeatClient``)."""
    optimistic = values["concurrency_mode"] == OPTIMISTIC_CONCURRENCY_CONTROL
    policy = values["failed_writes_policy"] or ("LAZY" if optimistic else "EAGER")
    if optimistic and policy != "LAZY":
        raise InvalidConfig("hoodie.cleaner.policy.failed.writes=EAGER cannot be used with optimistic concurrency "
                            "control: it would roll back the pending writes of live writers",
                            hint="leave it unset (LAZY) or set it to LAZY")
    if values["heartbeat_interval_ms"] < 1000:
        raise InvalidConfig(f"{INTERVAL_KEY}={values['heartbeat_interval_ms']} is below one second",
                            hint="HoodieHeartbeatClient takes at least 1000 ms")
    lock = StorageLockConfig(values["lock_validity_seconds"], values["lock_heartbeat_poll_seconds"],
                             values["lock_wait_ms"] if optimistic else 0, values["lock_retry_wait_ms"],
                             values["lock_provider"], FileSystemLockConfig(values["lock_filesystem_path"],
                                                                           values["lock_filesystem_expire"]))
    return {"failed_writes_policy": policy, "lock": lock}
