"""The reference implementation (``reference.client.WriteClient`` on PySpark) as an implementation
under test: it writes a real table directory in the case's work folder, which the harness reads
with the spec's reader (``DirectoryReads``).

Replayable like the model: instant times come from a clock that starts at 2024-01-01 and moves one
second per call, file id prefixes from the same ``00000000-0000-4000-8000-<n>`` sequence; a write
that names its instant time gets exactly that time.

``CAPABILITIES`` is the one place that says what the reference writes; extend it as the
reference learns merge-on-read writes and table services (compaction, clean, rollback, ...) and
give ``apply`` the operation's handler in ``_HANDLERS``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any, ClassVar

from conformance.adapter import DirectoryReads, TableUnderTest
from conformance.ops import Clean, CreateTable, DeletePartition, Op, Restore, Rollback, Savepoint, Write
from spec.errors import InstantNotFound, InvalidOperation
from spec.timeline import parse_instant_time

WRITE_OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table")

# --8<-- [start:capabilities]
WRITES: frozenset[str] = frozenset({
    "COPY_ON_WRITE",
    "v6", "v8",
    *(f"write:{op}" for op in WRITE_OPERATIONS),
    "delete_partition",
    "keygen:SIMPLE", "keygen:COMPLEX", "keygen:NON_PARTITION",
    "merge:EVENT_TIME_ORDERING", "merge:COMMIT_TIME_ORDERING",
})
"""Copy-on-write writes of all seven operations, table versions 6 and 8."""

SERVICES: frozenset[str] = frozenset({"clean", "rollback", "savepoint", "restore"})
"""Table services run by ``reference.services`` on the table directory."""

CAPABILITIES: frozenset[str] = WRITES | SERVICES
"""What the reference does today. Extend here (and give the operation a handler in ``_HANDLERS``)."""
# --8<-- [end:capabilities]

KNOWN_FAILURES: dict[str, str] = {
    f"schema-add-column-cow-v{v}": "time travel to before a column was added: the spec model pads the new column "
    "with nulls, the spec reader (over the reference's files) returns the columns the table had then"
    for v in (6, 8)
}
"""Cases the reference is known to fail (reported XFAIL), with why."""

START_EPOCH = parse_instant_time("20240101000000000").replace(tzinfo=UTC).timestamp()


def write_options(config: CreateTable) -> dict[str, str]:
    """The ``hoodie.*`` options a Spark user passes for a case's table configuration."""
    opts = {
        "hoodie.table.name": config.table_name,
        "hoodie.datasource.write.table.type": config.table_type,
        "hoodie.datasource.write.recordkey.field": ",".join(config.record_key_fields),
        "hoodie.datasource.write.partitionpath.field": ",".join(config.partition_fields),
        "hoodie.datasource.write.keygenerator.type": config.resolved_key_generator,
        "hoodie.datasource.write.hive_style_partitioning": str(config.hive_style).lower(),
        "hoodie.write.table.version": str(config.table_version),
        "hoodie.record.merge.mode": config.merge_mode,
        "hoodie.parquet.small.file.limit": str(config.small_file_limit),
        "hoodie.parquet.max.file.size": str(config.max_file_size),
        "hoodie.copyonwrite.insert.split.size": str(config.insert_split_size),
        "hoodie.copyonwrite.record.size.estimate": str(config.record_size_estimate),
    }
    if config.ordering_field:
        opts["hoodie.datasource.write.precombine.field"] = config.ordering_field
    return {**opts, **dict(config.options)}


class ReplayClock:
    """Seconds since the epoch: one second per call from 2024-01-01, or a time the case fixed."""

    def __init__(self, start: float = START_EPOCH) -> None:
        self.now = start - 1
        self.fixed: float | None = None

    def __call__(self) -> float:
        if self.fixed is not None:
            self.now, self.fixed = self.fixed, None
        else:
            self.now += 1
        return self.now

    def fix(self, instant_time: str) -> None:
        self.fixed = parse_instant_time(instant_time).replace(tzinfo=UTC).timestamp()


class ReferenceSparkAdapter(DirectoryReads, TableUnderTest):
    """``reference.client.WriteClient`` on a table directory in the case's work folder."""

    name: ClassVar[str] = "reference"
    capabilities: ClassVar[frozenset[str]] = CAPABILITIES
    known_failures: ClassVar[dict[str, str]] = KNOWN_FAILURES

    def __init__(self, spark: Any = None) -> None:
        self.spark = spark
        self.client: Any = None
        self.options: dict[str, str] = {}
        self.clock = ReplayClock()
        self.config = CreateTable()

    def create(self, config: CreateTable, workdir: Path) -> None:
        from reference.client import WriteClient

        if self.spark is None:
            from reference.spark import get_or_create_session

            self.spark = get_or_create_session()
        self.path = str(workdir / config.table_name)
        ids = itertools.count(1)
        self.client = WriteClient(self.path, self.spark, self.clock,
                                  lambda: f"00000000-0000-4000-8000-{next(ids):012d}")
        self.options = write_options(config)
        self.config = config

    def _write(self, op: Write) -> None:
        import pyarrow as pa

        if op.instant_time is not None:
            self.clock.fix(op.instant_time)
        self.client.write(pa.Table.from_pylist([dict(r) for r in op.records]), op.operation, self.options)

    def _delete_partition(self, op: DeletePartition) -> None:
        if op.instant_time is not None:
            self.clock.fix(op.instant_time)
        opts = {**self.options, "hoodie.datasource.write.partitions.to.delete": ",".join(op.partitions)}
        self.client.write(None, "delete_partition", opts)

    def apply(self, op: Op) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise InvalidOperation(f"the reference adapter cannot apply {type(op).__name__}",
                                   hint="declare the capability in CAPABILITIES and add a handler")
        handler(self, op)


def _storage_table(adapter: ReferenceSparkAdapter) -> tuple[Any, Any]:
    from spec.storage import Storage
    from spec.table_config import TableConfig

    storage = Storage(adapter.path)
    if not storage.exists(".hoodie/hoodie.properties"):
        raise InstantNotFound("the table has no commit yet", hint="write something first")
    return storage, TableConfig.load(storage)


def _fixing(adapter: ReferenceSparkAdapter, t: str | None) -> None:
    if t is not None:
        adapter.clock.fix(t)


def _clean(adapter: ReferenceSparkAdapter, op: Clean) -> None:
    from reference import services
    from spec.services import CleanConfig

    storage, table = _storage_table(adapter)
    c = adapter.config
    _fixing(adapter, op.instant_time)
    services.clean(storage, table, CleanConfig(c.clean_policy, c.clean_commits_retained,
                                               c.clean_file_versions_retained, c.clean_hours_retained),
                   clock=adapter.clock)


def _rollback(adapter: ReferenceSparkAdapter, op: Rollback) -> None:
    from reference import services

    storage, table = _storage_table(adapter)
    services.rollback(storage, table, op.instant_time, clock=adapter.clock)


def _savepoint(adapter: ReferenceSparkAdapter, op: Savepoint) -> None:
    from reference import services

    storage, table = _storage_table(adapter)
    services.savepoint_create(storage, table, op.instant_time, clock=adapter.clock)


def _restore(adapter: ReferenceSparkAdapter, op: Restore) -> None:
    from reference import services
    from spec.timeline import Timeline

    storage, table = _storage_table(adapter)
    t = op.savepoint_time
    if t is None:
        saved = services.savepoint_times(Timeline.load(storage, table.timeline_layout))
        if not saved:
            raise InstantNotFound("there is no savepoint to restore to", hint="savepoint a commit first")
        t = saved[-1]
    services.restore(storage, table, t, clock=adapter.clock)


_HANDLERS: dict[type, Callable[[ReferenceSparkAdapter, Any], None]] = {
    Write: ReferenceSparkAdapter._write,
    DeletePartition: ReferenceSparkAdapter._delete_partition,
    Clean: _clean,
    Rollback: _rollback,
    Savepoint: _savepoint,
    Restore: _restore,
}
