"""The engine interface: where a write's data steps run (Hudi's ``HoodieEngineContext``).

The write client (``reference.client``), compaction (``reference.executors.compaction``) and the
streaming writer decide *what* is written by the rules of ``spec``; an engine carries out the steps
that touch the batch's records. Two engines implement the protocol: ``spark_engine.SparkEngine``
(Spark jobs, the batch a DataFrame) and ``local_engine.LocalEngine`` (pyarrow in this process, the
batch an Arrow table). Both run the same handles (``reference.handles``) and write the same tables.

A *frame* is the engine's batch type; the client never looks inside one, it only passes it from one
step to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import pyarrow as pa

from reference.handles import HandleContext
from spec.config.table_config import TableConfig
from spec.write.partitioner import BucketAssignment

Task = Callable[[str, str], dict[str, Any]]
"""One task of ``Engine.run_tasks``: (its payload, its write token) → a write stat."""


class Engine(Protocol):
    """The data steps of the write path, in the order the client calls them."""

    name: str
    """``spark`` or ``local`` (``reference.client.ENGINES``)."""

    def frame(self, data: Any) -> Any:
        """The input (a pyarrow Table, or what the engine accepts besides) as the engine's frame."""
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

    def dedupe(self, frame: Any, ordering: str | None) -> Any:
        """One record per (partition, key): the greatest ordering value (nulls lose), then the latest."""
        ...

    def persist(self, frame: Any) -> Any:
        """The frame kept for the steps that read it more than once (until ``release``)."""
        ...

    def keys(self, frame: Any) -> pa.Table:
        """The (partition path, record key) columns, brought to this process for the index."""
        ...

    def tag(self, frame: Any, located: pa.Table | None, delete: bool) -> Any:
        """Each record's current file group from the index's (partition, key, file id) rows (null: an insert)
        and the delete flag; a delete keeps only the records the table holds."""
        ...

    locates_in_tasks: bool
    """Whether the index lookup of an upsert or delete runs where the batch is (``locate``) rather than
    on the client's side (``keys``, ``reference.index``, then ``tag``)."""

    def locate(self, frame: Any, base_path: str, view: Any, bloom: bool, delete: bool) -> Any:
        """The deduplicated batch tagged with each record's file group (``FILE_ID``, null for a new key)
        and the delete flag, the lookup run by the engine's tasks (BLOOM when ``bloom``, else SIMPLE)
        against ``view``'s latest base files; a delete keeps only the records found."""
        ...

    def partitions(self, frame: Any) -> set[str]:
        """The distinct partition paths of the batch."""
        ...

    def with_input_partition(self, frame: Any) -> Any:
        """A bulk insert's records tagged with their input partition (``reference.bulk_insert``)."""
        ...

    def counts_of_keys(self, keys: pa.Table, located: pa.Table | None,
                       delete: bool) -> Mapping[tuple[str, str | None], int] | None:
        """The workload profile from the index's keys (``keys``), already in this process, when that costs
        less than ``counts`` of the tagged frame; None otherwise."""
        ...

    def counts(self, frame: Any) -> Mapping[tuple[str, str | None], int]:
        """The workload profile's input: records per (partition, current file group)."""
        ...

    def write_buckets(self, frame: Any, ctx: HandleContext, user_schema: pa.Schema,
                      assignment: BucketAssignment) -> list[dict[str, Any]]:
        """Every record routed to its bucket (``reference.partitioning.route_batch``), then one handle a
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


__all__ = ["Engine", "Task"]
