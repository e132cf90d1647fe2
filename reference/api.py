"""``HudiTable``: the Python entry point of the reference implementation.

    table = HudiTable("path/to/trips")
    table.write(df_or_arrow, operation="upsert", options={"hoodie.table.name": "trips", ...})
    HudiTable("path/to/trips", engine="local").write(arrow_table, "upsert", options)  # no Spark
    table.update("city = 'sf'", "fare = 0")        # UPDATE … SET … WHERE …: an upsert of the rows matched
    table.delete("fare > 100")                     # DELETE FROM … WHERE …: a delete of the rows matched
    table.merge(arrow_table)                       # MERGE INTO … UPDATE SET * / INSERT *: an upsert
    table.merge(src, when_matched=["AND s.op = 'd' THEN DELETE", "UPDATE SET *"], when_not_matched=["INSERT *"])
    table.read()                                   # pyarrow Table, through the spec reader
    table.read(query="incremental", begin=t1)
    table.changes(begin=t1)                        # the CDC query: op, ts_ms, before, after
    table.compact()                                # merge-on-read: base + logs → new base files
    table.cluster({"hoodie.clustering.plan.strategy.sort.columns": "city"})  # small files → sorted, larger ones
    table.clean(options)                           # the cleaner, with the options' retention
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from reference.commands._merge_clauses import Delete, Insert, Update
from reference.executors.clean import CleanResult
from reference.write.client import WriteClient, WriteResult
from spec.config.table_config import TableConfig
from spec.read.cdc import CdcRecord
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline


class HudiTable:
    """A Hudi table at ``path`` (local path or object-store URI)."""

    def __init__(self, path: str, spark: Any = None, clock: Any = None, file_id_prefix: Any = None,
                 engine: str = "spark") -> None:
        """``engine``: where writes run their data steps — ``"spark"`` (Spark jobs; a session is
        started if none is given) or ``"local"`` (pyarrow in this process, no Spark: batches that fit
        in memory; compaction runs on threads of this process too)."""
        self.path = path
        self._client = WriteClient(path, spark, clock, file_id_prefix, engine=engine)

    def write(self, data: Any, operation: str = "upsert", options: Mapping[str, Any] | None = None) -> WriteResult:
        """Write a Spark DataFrame or pyarrow Table with a Hudi operation and ``hoodie.*`` options."""
        return self._client.write(data, operation, options)

    def delete_partitions(self, partitions: Sequence[str], options: Mapping[str, Any] | None = None) -> WriteResult:
        """Delete whole partitions (``delete_partition``): a replacecommit replacing every file group of ``partitions``
        (partition paths, e.g. ``city=sf``) with nothing."""
        opts = {**(options or {}), "hoodie.datasource.write.partitions.to.delete": ",".join(partitions)}
        return self._client.write(None, "delete_partition", opts)

    def update(self, where: str, set: str, options: Mapping[str, Any] | None = None) -> WriteResult | None:
        """Spark SQL's ``UPDATE t SET … WHERE …``: an upsert of the snapshot's rows ``where`` matches with the
        columns of ``set`` changed, e.g. ``table.update("city = 'sf' AND fare > 10", "fare = 0, note = null")``
        (``reference.commands._update_delete``); None when no row matches."""
        from reference.commands._update_delete import update_where

        return update_where(self._client, where, set, options)

    def delete(self, where: str, options: Mapping[str, Any] | None = None) -> WriteResult | None:
        """Spark SQL's ``DELETE FROM t WHERE …``: a delete of the snapshot's rows ``where`` matches, e.g.
        ``table.delete("city IN ('sf', 'la')")`` (``reference.commands._update_delete``); None when no row
        matches."""
        from reference.commands._update_delete import delete_where

        return delete_where(self._client, where, options)

    def merge(self, source: Any, options: Mapping[str, Any] | None = None, *, on: str | None = None,
              when_matched: Sequence[Any] | None = None,
              when_not_matched: Sequence[Any] | None = None) -> WriteResult | None:
        """Spark SQL's ``MERGE INTO t USING source ON … WHEN MATCHED … WHEN NOT MATCHED …`` on a table with a record
        key field, as Apache Hudi 1.2.0's statement writes it (``reference.commands._merge``), e.g.
        ``table.merge(src, when_matched=["AND s.v = 'x' THEN DELETE", "UPDATE SET v = s.v, ts = s.ts"],
        when_not_matched=[Insert("*", condition="s.ts > 0")])``: clauses are ``Update``, ``Delete`` and ``Insert``
        (``reference.api`` exports them) or their SQL text after ``WHEN [NOT] MATCHED``; ``on`` equates the record
        key fields (``"t.id = s.id"``, the default). Without clauses: ``UPDATE SET *`` and ``INSERT *``, one upsert
        of the source. None when the source has no record."""
        if when_matched is None and when_not_matched is None:
            if on is None:
                from reference.commands._update_delete import merge_source

                return merge_source(self._client, source, options)
            when_matched, when_not_matched = ["UPDATE SET *"], ["INSERT *"]
        from reference.commands._merge import merge_into

        return merge_into(self._client, source, on, when_matched or (), when_not_matched or (), options)

    def read(self, query: str = "snapshot", as_of: str | None = None, begin: str | None = None,
             end: str | None = None, columns: Sequence[str] | None = None) -> pa.Table:
        """Rows of any query type, as a pyarrow Table (the spec reader; no Spark needed)."""
        return read_table(self.path, query, as_of=as_of, begin=begin, end=end, columns=columns)

    def changes(self, begin: str | None = None, end: str | None = None) -> list[CdcRecord]:
        """The CDC query (``spec.read.cdc``; a table with ``hoodie.table.cdc.enabled``): every change the writes
        requested in ``(begin, end]`` made, as records of op, ts_ms, before and after
        (``spec.read.cdc.cdc_table`` makes them the four string columns Apache Hudi's CDC query returns)."""
        from spec.read.cdc import read_cdc

        return read_cdc(self.path, begin, end)

    def compact(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Merge-on-read: schedule a compaction of every slice with log files and run it; its instant,
        or None when there was nothing to compact. ``options``: write options the new base files
        follow (``hoodie.parquet.compression.codec``)."""
        from reference.executors.compaction import compact

        return compact(self._client, options=options)

    def schedule_compaction(self, instant: str | None = None, options: Mapping[str, Any] | None = None) -> str | None:
        """Merge-on-read: write a compaction plan (``<t>.compaction.requested``) without running it, under the
        lock of the provider ``options`` name."""
        from reference.executors.compaction import schedule_compaction

        return schedule_compaction(self._client, instant, options=options)

    def run_compaction(self, instant: str | None = None, options: Mapping[str, Any] | None = None) -> str:
        """Merge-on-read: execute a pending compaction (the oldest when ``instant`` is None); ``options``
        as for ``compact``."""
        from reference.executors.compaction import run_compaction

        return run_compaction(self._client, instant, options=options)

    def cluster(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Schedule a clustering with Hudi's size-based plan strategy (``hoodie.clustering.plan.strategy.*``
        options) and execute it as Hudi's sort-and-size strategy does; its instant (a ``replacecommit``), or None
        when no file group qualified (``reference.executors.clustering``)."""
        from reference.executors.clustering import cluster

        return cluster(self._client, options=options)

    def schedule_clustering(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Write a clustering plan (v6 ``<t>.replacecommit.requested``, v8/v9 ``<t>.clustering.requested``)
        without executing it; its instant, or None."""
        from reference.executors.clustering import schedule_clustering

        return schedule_clustering(self._client, options=options)

    def run_clustering(self, instant: str | None = None, options: Mapping[str, Any] | None = None) -> str:
        """Execute a pending clustering (the oldest when ``instant`` is None); an inflight one is rolled back to
        its plan first."""
        from reference.executors.clustering import run_clustering

        return run_clustering(self._client, instant, options=options)

    def clean(self, options: Mapping[str, Any] | None = None) -> CleanResult:
        """Run the cleaner with the retention of ``options`` (``hoodie.cleaner.*``); a ``CleanResult``.
        Under optimistic concurrency control (``hoodie.write.concurrency.mode``) it first rolls back the
        failed writes whose heartbeat expired, as Hudi's cleaner does under the LAZY policy, and holds the
        table lock only to plan and to complete, so writers write while it deletes. The lock is always the one
        of the provider ``options`` name (``hoodie.write.lock.provider``)."""
        from reference.config.options import parse_options
        from reference.executors.clean import clean
        from spec.write.service_configs import clean_config

        cfg = parse_options(dict(options or {}))
        if not cfg.optimistic:
            return clean(self._client.storage, self.config, clean_config(cfg), clock=self._client.clock, lock=cfg.lock)
        self._client.heartbeat = (cfg.heartbeat_interval_ms, cfg.heartbeat_tolerable_misses)
        return clean(self._client.storage, self.config, clean_config(cfg), clock=self._client.clock, lock=cfg.lock,
                     optimistic=True, rollback_failed=self._client.rollback_failed_writes)

    @property
    def config(self) -> TableConfig:
        """The table's ``hoodie.properties``, loaded and validated afresh."""
        return TableConfig.load(self.path)

    @property
    def timeline(self) -> Timeline:
        """The table's active timeline, loaded afresh."""
        return Timeline.load(self.path)


__all__ = ["Delete", "HudiTable", "Insert", "Update"]
