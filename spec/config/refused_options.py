"""Hudi options the writer refuses: those that change safety or what is written, and that it does not implement.

An option the writer does not implement is either harmless to ignore (it tunes how Hudi runs, not what
it writes: parallelism, memory, metrics, catalog sync) — it is warned about and ignored — or it
changes one of these, and then ignoring it would break a promise the user relied on:

- **locking**: every ``hoodie.write.lock.*`` setting of a provider whose lock this writer does not take
  (ZooKeeper, DynamoDB, Hive metastore; ``spec.storage.lock_provider`` refuses the providers themselves).
  A Hudi pipeline on the same table configured with one of them does not see this writer's lock, so the
  two would not exclude each other;
- **concurrency**: how concurrent writes are detected and resolved (early conflict detection, conflict
  resolution strategies, retries on conflict);
- **consistency**: the consistency guard for eventually consistent stores;
- **durability**: whether and how a write is committed (``hoodie.auto.commit``, a streaming batch
  whose failure is ignored);
- **what is written**: record payloads and merge strategies, schema evolution switches, meta
  columns, partition columns dropped from data files, key generators, base and log file formats,
  bloom filter parameters, clustering, CDC, metadata table indexes, the table services' schedules.

Each is refused with ``UnsupportedOption`` (a typed ``InvalidConfig``) naming the key, its concern and
what to do — unless its value is one that means what this writer does (``accepts``): a switch at its
default, the payload class of the table's merge mode.
Keys are matched exactly, or by a prefix ending in ``.``; a key the registry knows
(``spec.config.registry``) is never looked up here.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieLockConfig``
(``hoodie.write.lock.*``, ``LOCK_PREFIX``), ``StorageBasedLockConfig``, ``HoodieWriteConfig``
(``WRITE_CONCURRENCY_*``, ``AUTO_COMMIT_ENABLE``, ``AVRO_SCHEMA_VALIDATE_ENABLE``,
``SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP``, ``WRITE_PAYLOAD_CLASS_NAME``, ``RECORD_MERGE_STRATEGY_ID``),
``ConsistencyGuardConfig``, ``HoodieTableConfig``, ``HoodieStorageConfig``, ``HoodieIndexConfig``,
``HoodieClusteringConfig``, ``HoodieCompactionConfig``, ``HoodieCleanConfig``, ``HoodieArchivalConfig``,
``HoodieMetadataConfig``, ``HoodieCommonConfig`` and ``DataSourceWriteOptions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from spec.config.table_config import (
    COMMIT_TIME_ORDERING,
    DEFAULT_PAYLOAD,
    KEYGEN_CLASSES,
    OVERWRITE_WITH_LATEST_PAYLOAD,
)
from spec.errors import UnsupportedOption
from spec.storage.lock_provider import FILE_SYSTEM_BASED, STORAGE_BASED

REJECT_UPDATE_STRATEGY: Final = "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"
"""The strategy Hudi applies when ``hoodie.clustering.updates.strategy`` is unset (``HoodieClusteringConfig``: "the
default strategy just rejects the update"): a write that updates a file group a pending clustering rewrites
fails. The only strategy this writer applies."""
STORAGE_LOCK_PROVIDER: Final = STORAGE_BASED
"""The lock provider whose lock this writer takes by default (``.hoodie/.locks``, ``spec.storage.lock``)."""
SIMPLE_CONFLICT_STRATEGY: Final = ("org.apache.hudi.client.transaction."
                                   "SimpleConcurrentFileWritesConflictResolutionStrategy")
"""The conflict resolution this writer applies (``spec.timeline.conflict_resolution``)."""
BUCKET_CONFLICT_STRATEGY: Final = ("org.apache.hudi.client.transaction."
                                   "BucketIndexConcurrentFileWritesConflictResolutionStrategy")
"""The conflict resolution this writer applies to a bucket-indexed table: by bucket, not file group."""
INDEX_CONFLICT_STRATEGY = "the conflict resolution strategy Hudi infers from hoodie.index.type"


def conflict_strategy_of(index_type: str | None) -> str:
    """The conflict resolution strategy of a writer of ``index_type`` (``HoodieLockConfig`` infers
    ``hoodie.write.lock.conflict.resolution.strategy``: the bucket strategy for BUCKET, else the simple one)."""
    return BUCKET_CONFLICT_STRATEGY if str(index_type or "").upper() == "BUCKET" else SIMPLE_CONFLICT_STRATEGY

LOCKING, CONCURRENCY, CONSISTENCY, DURABILITY, WRITTEN = (
    "locking", "concurrency", "consistency", "durability", "what is written")
MERGE_MODE_PAYLOAD = "the payload class of hoodie.record.merge.mode"


def _same(raw: str, value: str) -> bool:
    """A value given equals an accepted one: case-insensitively (Hudi parses booleans and enums so), or as
    numbers."""
    if raw.strip().lower() == value.lower():
        return True
    try:
        return float(raw) == float(value)
    except ValueError:
        return False


def payload_of(merge_mode: str | None) -> str:
    """The payload class that merges as the merge mode says (``HoodieTableConfig.create``)."""
    return OVERWRITE_WITH_LATEST_PAYLOAD if merge_mode == COMMIT_TIME_ORDERING else DEFAULT_PAYLOAD


# --8<-- [start:refused]
@dataclass(frozen=True)
class RefusedOption:
    """A Hudi option (``key``, or every key under it when it ends in ``.``) the writer does not implement,
    what it changes (``concern``), what Hudi does with it (``does``), the values that mean what this
    writer does anyway (``accepted``; ``MERGE_MODE_PAYLOAD``: the payload class of the writer's merge mode),
    and what to do instead (``hint``)."""

    key: str
    concern: str
    does: str
    accepted: tuple[str, ...] = ()
    hint: str = ""

    def matches(self, key: str) -> bool:
        """Whether ``key`` is this option (or under this prefix)."""
        return key == self.key or (self.key.endswith(".") and key.startswith(self.key))

    def accepts(self, raw: str, values: Mapping[str, Any]) -> bool:
        """Whether ``raw`` means what this writer does, given its resolved settings by name."""
        if self.accepted == (MERGE_MODE_PAYLOAD,):
            return raw.strip() == payload_of(values.get("merge_mode"))
        if self.accepted == (INDEX_CONFLICT_STRATEGY,):
            return raw.strip() == conflict_strategy_of(values.get("index_type"))
        return any(_same(raw, v) for v in self.accepted)


_LOCK_HINT = (f"hudi-spec's writers take the lock of {STORAGE_BASED} or {FILE_SYSTEM_BASED} "
              "(hoodie.write.lock.provider); configure every writer of the table, Hudi pipelines included, with one "
              "of them — or do not write at once")
_OFF = "leave it unset or false"

REFUSED: tuple[RefusedOption, ...] = (
    # --- locking ------------------------------------------------------------------------------
    RefusedOption("hoodie.write.lock.conflict.resolution.strategy", CONCURRENCY,
                  "decides which of two concurrent writes fails", (INDEX_CONFLICT_STRATEGY,),
                  "this writer fails the later of two writes that touched the same file group (with "
                  "hoodie.index.type=BUCKET: the same bucket), as Hudi's inferred strategy does; leave it unset"),
    RefusedOption("hoodie.write.lock.", LOCKING, "configures a lock provider this writer does not take "
                  "(ZooKeeper, DynamoDB, Hive metastore) or its retries", (),
                  _LOCK_HINT + "; its settings are hoodie.write.lock.wait_time_ms, "
                  "hoodie.write.lock.wait_time_ms_between_retry, hoodie.write.lock.storage.* and "
                  "hoodie.write.lock.filesystem.*"),
    # --- concurrency --------------------------------------------------------------------------
    RefusedOption("hoodie.write.concurrency.", CONCURRENCY, "switches early conflict detection and its "
                  "strategies", ("false",), "leave it unset: conflicts are checked at commit"),
    RefusedOption("hoodie.write.num.retries.on.conflict.failures", CONCURRENCY,
                  "retries a write that failed on a conflict", ("0",), "retry the write yourself"),
    RefusedOption("hoodie.client.heartbeat.", CONCURRENCY, "tunes the heartbeats that tell live writes from "
                  "failed ones", (), "hoodie.client.heartbeat.interval_in_ms and "
                  "hoodie.client.heartbeat.tolerable.misses are the ones this writer takes"),
    # --- consistency --------------------------------------------------------------------------
    RefusedOption("hoodie.consistency.check.enabled", CONSISTENCY, "waits until an eventually consistent store "
                  "lists the files a write created", ("false",),
                  "this writer assumes a strongly consistent store (local disks, HDFS, S3, GCS, ABFS): " + _OFF),
    # --- durability ---------------------------------------------------------------------------
    RefusedOption("hoodie.auto.commit", DURABILITY, "false leaves a write uncommitted for the caller to commit",
                  ("true",), "this writer commits every write it finishes: leave it unset or true"),
    RefusedOption("hoodie.datasource.write.streaming.ignore.failed.batch", DURABILITY,
                  "skips a streaming micro-batch that failed, losing its records", ("false",), _OFF),
    RefusedOption("hoodie.fail.on.timeline.archiving", DURABILITY, "false lets a write succeed when archival "
                  "failed", ("true",), "leave it unset or true"),
    RefusedOption("hoodie.rollback.using.markers", DURABILITY, "false rolls back a failed write by listing "
                  "files instead of by its markers", ("true",), "leave it unset or true"),
    # --- what is written: records and their merging ---------------------------------------------
    RefusedOption("hoodie.datasource.write.payload.class", WRITTEN, "decides how records with one key merge",
                  (MERGE_MODE_PAYLOAD,), "set hoodie.write.record.merge.mode instead: EVENT_TIME_ORDERING "
                  f"({DEFAULT_PAYLOAD}) or COMMIT_TIME_ORDERING ({OVERWRITE_WITH_LATEST_PAYLOAD})"),
    RefusedOption("hoodie.compaction.payload.class", WRITTEN, "decides how records with one key merge",
                  (MERGE_MODE_PAYLOAD,), "set hoodie.write.record.merge.mode instead"),
    RefusedOption("hoodie.record.merge.strategy.id", WRITTEN, "names a record merger", (),
                  "set hoodie.write.record.merge.mode (EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING)"),
    RefusedOption("hoodie.datasource.write.record.merger.impls", WRITTEN, "plugs in a record merger", (),
                  "set hoodie.write.record.merge.mode"),
    RefusedOption("hoodie.record.merge.custom.implementation.classes", WRITTEN, "plugs in a record merger", (),
                  "set hoodie.write.record.merge.mode"),
    RefusedOption("hoodie.payload.ordering.field", WRITTEN, "names the payload's ordering field", (),
                  "set hoodie.datasource.write.precombine.field"),
    RefusedOption("hoodie.payload.event.time.field", WRITTEN, "records event times in the commit", (),
                  "leave it unset"),
    RefusedOption("hoodie.datasource.write.insert.drop.duplicates", WRITTEN,
                  "true drops incoming records whose keys the table holds", ("false",),
                  "use upsert, or set hoodie.combine.before.insert=true to dedupe the batch"),
    RefusedOption("hoodie.datasource.insert.dup.policy", WRITTEN, "drops or refuses inserts of keys the table "
                  "holds", ("none",), "use upsert"),
    RefusedOption("hoodie.sql.insert.mode", WRITTEN, "strict or non-strict Spark SQL inserts", ("upsert",),
                  "use the operation option"),
    # --- what is written: schema ----------------------------------------------------------------
    RefusedOption("hoodie.datasource.write.schema.allow.auto.evolution.column.drop", WRITTEN,
                  "true lets a write drop columns, losing their values", ("false",),
                  "write every column of the table (null where unknown): " + _OFF),
    RefusedOption("hoodie.datasource.write.reconcile.schema", WRITTEN, "true writes with the table's schema "
                  "when a batch lacks columns", ("false",), "write every column of the table: " + _OFF),
    RefusedOption("hoodie.write.set.null.for.missing.columns", WRITTEN, "true fills columns a batch lacks "
                  "with nulls", ("false",), "write every column of the table (null where unknown): " + _OFF),
    RefusedOption("hoodie.schema.on.read.enable", WRITTEN, "records schema changes (renames, drops) in "
                  "internal schemas", ("false",), _OFF),
    RefusedOption("hoodie.datasource.write.drop.partition.columns", WRITTEN, "true leaves the partition "
                  "columns out of the data files", ("false",), _OFF),
    RefusedOption("hoodie.populate.meta.fields", WRITTEN, "false leaves the _hoodie_* meta columns empty",
                  ("true",), "leave it unset or true"),
    RefusedOption("hoodie.write.schema", WRITTEN, "overrides the writer schema", (), "leave it unset"),
    RefusedOption("hoodie.avro.schema", WRITTEN, "overrides the writer schema", (), "leave it unset"),
    # --- what is written: keys and files ----------------------------------------------------------
    RefusedOption("hoodie.keygen.", WRITTEN, "configures the timestamp key generator", (),
                  "partition by a column's value (SIMPLE, COMPLEX or NON_PARTITION key generators)"),
    RefusedOption("hoodie.deltastreamer.keygen.", WRITTEN, "configures the timestamp key generator", (),
                  "partition by a column's value (SIMPLE, COMPLEX or NON_PARTITION key generators)"),
    RefusedOption("hoodie.write.complex.keygen.new.encoding", WRITTEN, "true writes a one-field complex key "
                  "without its field name", ("false",), _OFF),
    RefusedOption("hoodie.database.name", WRITTEN, "names the table's database in hoodie.properties (and its "
                  "checksum)", ("default",), "leave it unset (default)"),
    RefusedOption("hoodie.table.base.file.format", WRITTEN, "the base file format", ("PARQUET",),
                  "this writer writes parquet base files"),
    RefusedOption("hoodie.base.file.format", WRITTEN, "the base file format", ("PARQUET",),
                  "this writer writes parquet base files"),
    RefusedOption("hoodie.logfile.data.block.format", WRITTEN, "the log data block format", ("avro",),
                  "this writer writes Avro data blocks"),
    RefusedOption("hoodie.table.timeline.timezone", WRITTEN, "the time zone of instant times", ("UTC",),
                  "this writer's instant times are UTC"),
    # hoodie.table.type among a write's options names no new table's type (Apache Hudi 1.2.0 creates the table
    # hoodie.datasource.write.table.type names) and is compared with an existing table's (a config conflict:
    # spec.write.writer_utils); either type's name means what this writer does
    RefusedOption("hoodie.table.type", WRITTEN, "names the table's type", ("COPY_ON_WRITE", "MERGE_ON_READ"),
                  "set hoodie.datasource.write.table.type (COPY_ON_WRITE or MERGE_ON_READ)"),
    RefusedOption("hoodie.table.", WRITTEN, "sets a table property this writer does not write", (),
                  "leave it unset: the writer sets hoodie.properties from its own options"),
    RefusedOption("hoodie.parquet.outputtimestamptype", WRITTEN, "the physical type of timestamps",
                  ("TIMESTAMP_MICROS",), "leave it unset (TIMESTAMP_MICROS)"),
    RefusedOption("hoodie.parquet.writelegacyformat.enabled", WRITTEN, "true writes Spark's legacy parquet "
                  "layout (decimals, lists)", ("false",), _OFF),
    RefusedOption("hoodie.index.bloom.num_entries", WRITTEN, "sizes the base files' bloom filters",
                  ("60000",), "leave it unset (60000)"),
    RefusedOption("hoodie.index.bloom.fpp", WRITTEN, "sizes the base files' bloom filters", ("1e-9",),
                  "leave it unset (0.000000001)"),
    RefusedOption("hoodie.bloom.index.filter.type", WRITTEN, "the bloom filter type", ("DYNAMIC_V0",),
                  "leave it unset (DYNAMIC_V0)"),
    RefusedOption("hoodie.bloom.index.filter.dynamic.max.entries", WRITTEN, "caps the bloom filters",
                  ("100000",), "leave it unset (100000)"),
    RefusedOption("hoodie.bucket.index.", WRITTEN, "configures the bucket index beyond its SIMPLE engine "
                  "(partition-level bucket numbers, consistent hashing's resizing)", (),
                  "use hoodie.bucket.index.num.buckets and hoodie.bucket.index.hash.field only"),
    # --- what is written: table services and the metadata table --------------------------------
    RefusedOption("hoodie.clustering.async.enabled", WRITTEN, "clusters file groups", ("false",), _OFF),
    RefusedOption("hoodie.clustering.updates.strategy", CONCURRENCY, "decides whether a write may update a file "
                  "group a pending clustering rewrites", (REJECT_UPDATE_STRATEGY,),
                  "leave it unset: this writer rejects such an update, as Hudi's default SparkRejectUpdateStrategy "
                  "does; Apache Hudi 1.2.0's SparkAllowUpdateStrategy lets the update commit and the clustering then "
                  "replaces its file group with the rows from before it, so the update is lost"),
    RefusedOption("hoodie.datasource.clustering.async.enable", WRITTEN, "clusters file groups", ("false",),
                  _OFF),
    RefusedOption("hoodie.compact.schedule.inline", WRITTEN, "schedules compactions after writes",
                  ("false",), "use hoodie.compact.inline"),
    RefusedOption("hoodie.compact.inline.trigger.strategy", WRITTEN, "when a compaction is scheduled",
                  ("NUM_COMMITS",), "leave it unset (NUM_COMMITS, hoodie.compact.inline.max.delta.commits)"),
    RefusedOption("hoodie.compaction.strategy", WRITTEN, "which file groups a compaction takes",
                  ("org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",),
                  "leave it unset"),
    RefusedOption("hoodie.clean.async", WRITTEN, "cleans beside the writer", ("false",),
                  "use hoodie.clean.automatic, or `hudi-spec clean`"),
    RefusedOption("hoodie.clean.async.enabled", WRITTEN, "cleans beside the writer", ("false",),
                  "use hoodie.clean.automatic, or `hudi-spec clean`"),
    RefusedOption("hoodie.clean.trigger.strategy", WRITTEN, "when the cleaner runs", ("NUM_COMMITS",),
                  "leave it unset"),
    RefusedOption("hoodie.clean.max.commits", WRITTEN, "commits between two cleans", ("1",), "leave it unset (1)"),
    RefusedOption("hoodie.archive.async", WRITTEN, "archives beside the writer", ("false",),
                  "use hoodie.archive.automatic"),
    RefusedOption("hoodie.archive.beyond.savepoint", WRITTEN, "true archives instants past a savepoint",
                  ("false",), _OFF),
    RefusedOption("hoodie.archive.merge.enable", WRITTEN, "merges small archive files", ("false",), _OFF),
    RefusedOption("hoodie.commits.archival.batch", WRITTEN, "instants per archived block", ("10",),
                  "leave it unset (10)"),
    RefusedOption("hoodie.metadata.record.level.index.min.filegroup.count", WRITTEN,
                  "sizes a new partitioned record index", ("1",),
                  "leave it unset (1, spec.metadata.partitioned_record_index)"),
    RefusedOption("hoodie.metadata.partitioned.record.index.min.filegroup.count", WRITTEN,
                  "sizes a new partitioned record index", ("1",), "leave it unset (1)"),
    RefusedOption("hoodie.metadata.record.level.index.max.filegroup.count", WRITTEN,
                  "sizes a new partitioned record index", ("10",), "leave it unset (10)"),
    RefusedOption("hoodie.metadata.partitioned.record.index.max.filegroup.count", WRITTEN,
                  "sizes a new partitioned record index", ("10",), "leave it unset (10)"),
    RefusedOption("hoodie.metadata.index.", WRITTEN, "keeps an index (column stats, bloom filters, partition "
                  "stats, secondary, expression) in the metadata table", ("false",),
                  "this writer keeps the files partition and the record index only: " + _OFF),
    RefusedOption("hoodie.metadata.async", WRITTEN, "builds metadata indexes beside the writer", ("false",),
                  _OFF),
)
"""Every option the writer refuses, exact keys before the prefixes that contain them."""
# --8<-- [end:refused]


KEYGEN_CLASS_KEYS: Final = ("hoodie.datasource.write.keygenerator.class", "hoodie.table.keygenerator.class")
"""The key generator class options (v6 names the key generator by class)."""
WRITABLE_KEYGEN_CLASSES: Final[Mapping[str, str]] = {
    cls: kind for kind in ("SIMPLE", "COMPLEX", "NON_PARTITION")
    for cls in (KEYGEN_CLASSES[kind], KEYGEN_CLASSES[kind].replace("KeyGenerator", "AvroKeyGenerator"))}
"""The key generator classes this writer writes (the Spark classes and their Avro twins), by type."""


def refused_option(key: str) -> RefusedOption | None:
    """The refusal that covers ``key`` (the first that matches), or None."""
    return next((r for r in REFUSED if r.matches(key)), None)


def check_refused(given: Mapping[str, str], values: Mapping[str, Any]) -> None:
    """Raise ``UnsupportedOption`` for the first option of ``given`` (unknown to the registry, raw string
    values) that a refusal covers, unless its value is one it accepts (given the writer's resolved
    settings ``values``)."""
    for key, raw in given.items():
        refusal = refused_option(key)
        if refusal is None or refusal.accepts(raw, values):
            continue
        raise UnsupportedOption(f"{key}={raw!r} is not supported by hudi-spec's writer: it {refusal.does} "
                                f"({refusal.concern}), and ignoring it would not do what it asks",
                                hint=refusal.hint or "leave it unset")


def keygen_type_of_class(key: str, raw: str) -> str:
    """The key generator type a key generator class option names, if this writer writes it; otherwise
    ``UnsupportedOption`` (a timestamp, custom or user class decides partition paths by rules not run here)."""
    kind = WRITABLE_KEYGEN_CLASSES.get(raw.strip())
    if kind is None:
        raise UnsupportedOption(f"{key}={raw!r} is not supported by hudi-spec's writer: it decides record keys and "
                                f"partition paths ({WRITTEN}) by rules this writer does not run",
                                hint="use hoodie.datasource.write.keygenerator.type SIMPLE, COMPLEX or "
                                     "NON_PARTITION (or their classes)")
    return kind
