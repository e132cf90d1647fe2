"""The engine interface: where a write's data steps run (Hudi's ``HoodieEngineContext``).

The write client (``reference.write.client``), compaction (``reference.executors.compaction``) and the
streaming writer decide *what* is written by the rules of ``spec``; an engine carries out the steps
that touch the batch's records. Two engines implement the protocol: ``spark.SparkEngine`` (Spark jobs,
the batch a DataFrame) and ``local.LocalEngine`` (pyarrow in this process, the batch an Arrow table).
Both run the same handles (``reference.io.handles``) and write the same tables. Whatever differs
between them — where the index lookup runs, what is cached, how jobs are named — lives behind this
protocol: the client calls the same steps on either.

A *frame* is the engine's batch type; the client never looks inside one, it only passes it from one
step to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import pyarrow as pa

from reference.io.handles import HandleContext
from reference.io.index import IndexLookup
from spec.config.table_config import TableConfig
from spec.write.partitioner import BucketAssignment

Task = Callable[[str, str], dict[str, Any]]
"""One task of ``Engine.run_tasks``: (its payload, its write token) → a write stat."""


class Engine(Protocol):
    """The data steps of the write path, in the order the client calls them."""

    name: str
    """``spark`` or ``local`` (``reference.engines.ENGINES``)."""

    def frame(self, data: Any) -> Any:
        """The input (a pyarrow Table, or what the engine accepts besides) as the engine's frame."""
        ...

    def prepped_frame(self, data: Any) -> Any:
        """Rows read from a table with auto-generated keys as the engine's frame, their ``_hoodie_record_key``
        and ``_hoodie_partition_path`` kept: they are the records' keys (Hudi's prepped writes)."""
        ...

    def columns(self, frame: Any) -> list[str]:
        """The frame's column names."""
        ...

    def user_schema(self, frame: Any) -> pa.Schema:
        """The Arrow schema of the user's columns (meta and internal ``__`` columns left out)."""
        ...

    def has_null(self, frame: Any, column: str) -> bool:
        """Whether ``column`` holds a null."""
        ...

    def cast(self, frame: Any, casts: Mapping[str, pa.DataType]) -> Any:
        """The frame with columns cast to the given types (``spec.schema.evolution.evolve_schema``: the
        batch's type with the fields that promote to the table's type changed to it, at any depth)."""
        ...

    def with_keys(self, frame: Any, config: TableConfig) -> Any:
        """``_hoodie_record_key`` and ``_hoodie_partition_path`` added by the table's key generator; each key
        and each partition path is checked (``spec.keygen.key_generators.check_record_keys``, ``check_partition_paths``)
        before anything is written."""
        ...

    def with_auto_keys(self, frame: Any, instant: str) -> Any:
        """``_hoodie_record_key`` generated for a table with no record key field, once the write's instant is
        known (``spec.keygen.auto_record_key``): ``<instant>_<input partition>_<row in it>``."""
        ...

    def tag_location(self, frame: Any, lookup: IndexLookup | None, dedupe: bool,
                     ordering: str | None, by_key: bool = False
                     ) -> tuple[Any, Mapping[tuple[str, str | None], int] | None]:
        """The batch ready for the workload profile (Hudi's ``HoodieWriteHelper.deduplicateRecords`` then
        ``HoodieIndex.tagLocation``): one record per (partition, key) when ``dedupe`` — the greatest ordering
        value (nulls lose), then the latest —, kept for the steps that read it again, and each record tagged
        with its current file group (``FILE_ID``, null for a new key) and the delete flag, looked up by
        ``lookup`` (None: every record is new); a delete keeps only the records the table holds. With the
        tagged frame, the workload profile's counts when the lookup had them at hand (None: ``counts``). A bucket
        index's lookup (``IndexLookup.bucket``) tags each record with its bucket's group and adds its bucket
        number (``reference.io.index.BUCKET_ID``). ``by_key``: a global index's table, whose batch is combined by
        record key alone (``spec.index.global_index``; its lookup, ``IndexLookup.global_index``, tags and routes
        the records by ``reference.io.global_index``)."""
        ...

    def keys_in_two_partitions(self, frame: Any) -> list[str]:
        """Up to ten record keys the batch names in more than one partition, sorted."""
        ...

    def partitions(self, frame: Any) -> set[str]:
        """The distinct partition paths of the batch."""
        ...

    def with_input_partition(self, frame: Any) -> Any:
        """A bulk insert's records tagged with their input partition (``reference.io.bulk_insert``)."""
        ...

    def counts(self, frame: Any) -> Mapping[tuple[str, str | None], int]:
        """The workload profile's input: records per (partition, current file group)."""
        ...

    def new_buckets(self, frame: Any) -> set[tuple[str, int]]:
        """A bucket index's new buckets: the (partition, bucket number) of the records tagged with no group
        (``reference.io.partitioning.new_buckets``)."""
        ...

    def write_buckets(self, frame: Any, ctx: HandleContext, user_schema: pa.Schema,
                      assignment: BucketAssignment) -> list[dict[str, Any]]:
        """Every record routed to its bucket (``reference.io.partitioning.route_batch``), then one handle a
        bucket; the write stats."""
        ...

    def write_routed(self, frame: Any, ctx: HandleContext, user_schema: pa.Schema) -> list[dict[str, Any]]:
        """One handle a bucket, for a frame whose records carry their bucket already (the ``BUCKET``
        column); the write stats."""
        ...

    def run_tasks(self, task: Task, payloads: Sequence[str], description: str) -> list[dict[str, Any]]:
        """``task(payload, write token)`` for every payload, in parallel (a table service's operations, e.g.
        compaction's file groups); the stats, in no particular order."""
        ...

    def release(self) -> None:
        """Free what the write cached."""
        ...


class EngineContext(Protocol):
    """Where a client's work runs (Hudi's ``HoodieEngineContext``): a fresh engine for each write, which holds
    what that write caches, and the status the jobs that follow are shown under."""

    name: str
    """``spark`` or ``local`` (``reference.engines.ENGINES``)."""

    def engine(self) -> Engine:
        """A fresh engine for one write or table service."""
        ...

    def set_job_status(self, description: str) -> None:
        """Name the jobs that follow (``HoodieEngineContext.setJobStatus``), where the engine shows jobs."""
        ...


__all__ = ["Engine", "EngineContext", "Task"]
