"""The table services a write client runs around its writes (Hudi's ``BaseHoodieTableServiceClient``): failed
writes rolled back before a write begins, the inline services after it commits (compaction, the cleaner,
archival), and the cleaner and archiver the metadata table's writer runs on the metadata table.

The write client hands these to its transaction (``reference.transaction.transaction.Writer``), which never
imports the executors.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from typing import Protocol

from reference.config.options import WriteConfig
from reference.executors.archive import ArchiveResult, archive
from reference.executors.clean import CleanResult, clean
from reference.executors.clustering import Clusterer, run_clustering, schedule_clustering
from reference.executors.common import Clock
from reference.executors.compaction import maybe_inline_compaction
from reference.executors.restore import finish_pending_restores
from reference.executors.rollback import finish_pending_rollbacks, rollback_instant
from reference.transaction.heartbeat import live_heartbeats
from reference.transaction.transaction import TIMELINE_TEMP, marked_files
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.actions.clustering import (
    commits_since_last_clustering,
    last_clustering,
    pending_clusterings,
    should_schedule_inline_clustering,
)
from spec.actions.compaction import CompactionConfig
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import HudiSpecError
from spec.file_group.file_naming import is_log_file_name, parse_base_file_name
from spec.file_group.log_file.log_format import read_blocks
from spec.storage.heartbeat import DEFAULT_INTERVAL_MS, DEFAULT_TOLERABLE_MISSES
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action, Instant
from spec.timeline.layout import timeline_dir
from spec.write.service_configs import archive_config, clean_config, compaction_config

# --- before a write: failed writes rolled back ----------------------------------------------------


def rollback_failed_writes(storage: Storage, table: TableConfig, timeline: Timeline, after: str | None = None,
                           clock: Clock | None = None, interval_ms: int = DEFAULT_INTERVAL_MS,
                           tolerable_misses: int = DEFAULT_TOLERABLE_MISSES) -> list[str]:
    """Before a write: every failed write is rolled back, newest first, each under a rollback instant
    with its plan and metadata (``BaseHoodieTableServiceClient.rollbackFailedWrites``); the rollback
    instants come after ``after``, the new write's instant, their times by ``clock``. A pending write is
    failed unless its heartbeat is alive, by ``interval_ms`` and ``tolerable_misses`` (a live writer under
    optimistic concurrency control is never undone).

    What no rollback plan can name goes first: a completed instant file left half written, data
    files a killed task left half written (``.inprogress``) and log files holding no complete
    block. Pending compactions are not rolled back: they are retried. A rollback a killed process
    left pending is finished first, from its plan (Hudi's ``getPendingRollbackInfos``: a pending
    rollback is re-run, never planned anew). Before all that, a restore a killed process left pending is
    finished from its plan (``reference.executors.restore.finish_pending_restores``): the instants it un-published
    are its to undo, not failed writes (Hudi's writer refuses to start while a restore is pending; running the
    restore again finishes it, which is what this writer does first)."""
    if finish_pending_restores(storage, table, clock=clock):
        timeline = Timeline.load(storage, table.timeline_layout)
    if finish_pending_rollbacks(storage, table, clock=clock):
        timeline = Timeline.load(storage, table.timeline_layout)
    pending = _drop_partial_files(storage, table, timeline, interval_ms, tolerable_misses)
    rolled: list[str] = []
    for inst in reversed(pending):
        tl = Timeline.load(storage, table.timeline_layout)
        rollback_instant(storage, table, inst, clock=clock, timeline=tl, after=after)
        rolled.append(inst.requested)
    return rolled


def _drop_partial_files(storage: Storage, table: TableConfig, timeline: Timeline,
                        interval_ms: int = DEFAULT_INTERVAL_MS,
                        tolerable_misses: int = DEFAULT_TOLERABLE_MISSES) -> list[Instant]:
    """Delete what killed writers left half written; the failed writes, oldest first."""
    layout = table.timeline_layout
    for f in storage.list(timeline_dir(layout)):
        if not f.is_dir and TIMELINE_TEMP.match(f.name):  # an instant file a killed writer left half written
            storage.delete(f.path)
    clusterings = {i.requested for i in pending_clusterings(storage, timeline)}  # table services: run again
    pending = [i for i in timeline.pending_writes().instants
               if i.action != Action.COMPACTION and i.requested not in clusterings]
    if not pending:
        return pending
    live = live_heartbeats(storage, interval_ms, tolerable_misses)
    pending = [i for i in pending if i.requested not in live]
    if not pending:
        return pending
    times = {i.requested for i in pending}
    for f in storage.list("", recursive=True):
        if f.is_dir or f.path.startswith(".hoodie") or not f.name.endswith(".inprogress"):
            continue
        try:
            if parse_base_file_name(f.name.removesuffix(".inprogress")).instant in times:
                storage.delete(f.path)
        except HudiSpecError:
            continue
    for t in times:
        for data in marked_files(storage, t):
            if (is_log_file_name(posixpath.basename(data)) and storage.exists(data)
                    and not any(r.block is not None for r in read_blocks(storage.read(data)))):
                storage.delete(data)  # a log file whose only block was cut short
    return pending


# --- after a commit: the inline services ----------------------------------------------------------


class ServiceWriter(Clusterer, Protocol):
    """What the inline services need of the writer (``reference.write.client.WriteClient`` is one): compaction's
    and clustering's writer, and where to show which service runs."""

    def set_job_status(self, description: str) -> None: ...


def run_inline_services(writer: ServiceWriter, table: TableConfig, cfg: WriteConfig) -> None:
    """After a commit, under the writer's lock, as Hudi's write client does (``BaseHoodieTableServiceClient
    .runTableServicesInline``, then ``mayBeCleanAndArchive``): inline compaction (merge-on-read,
    ``hoodie.compact.inline``), inline clustering (``hoodie.clustering.inline``, ``hoodie.clustering.schedule.inline``:
    ``maybe_inline_clustering``),
    then the cleaner (``hoodie.clean.automatic``), then archival (``hoodie.archive.automatic``)."""
    if table.table_type == MERGE_ON_READ and cfg.inline_compact:
        maybe_inline_compaction(writer, table, cfg)
    if cfg.inline_cluster or cfg.schedule_inline_cluster:
        maybe_inline_clustering(writer, table, cfg)
    if cfg.auto_clean:
        writer.set_job_status("hudi clean")
        clean(writer.storage, table, clean_config(cfg), clock=writer.clock, locked=True)
    if cfg.auto_archive:
        writer.set_job_status("hudi archive")
        archive(writer.storage, table, archive_config(cfg), compaction_config(cfg), locked=True)


def maybe_inline_clustering(writer: ServiceWriter, table: TableConfig, cfg: WriteConfig) -> str | None:
    """Inline clustering after a commit, under the lock the committing writer holds; the instant it planned, or None.

    ``hoodie.clustering.inline`` (Hudi's ``BaseHoodieTableServiceClient.inlineClustering``): the pending clusterings
    run first; then, once ``hoodie.clustering.inline.max.commits`` completed commits followed the last clustering,
    completed or pending (``spec.actions.clustering.should_schedule_inline_clustering``), a clustering is planned
    with the write's ``hoodie.clustering.*`` options and executed. ``hoodie.clustering.schedule.inline`` alone
    (``runTableServicesInline``): with no clustering pending, one is planned once ``hoodie.clustering.async.max
    .commits`` commits followed the last, and left for another job to run."""
    options = {**dict(cfg.clustering_options), "hoodie.parquet.compression.codec": cfg.compression,
               "hoodie.parquet.max.file.size": str(cfg.max_file_size),
               "hoodie.write.concurrency.mode": cfg.concurrency_mode}
    pending = pending_clusterings(writer.storage, Timeline.load(writer.storage, table.timeline_layout))
    if cfg.inline_cluster:
        writer.set_job_status("hudi inline clustering")
        for inst in pending:
            run_clustering(writer, inst.requested, locked=True, options=options)
    elif pending:
        return None
    timeline = Timeline.load(writer.storage, table.timeline_layout)
    since = commits_since_last_clustering(timeline, last_clustering(writer.storage, timeline))
    if not should_schedule_inline_clustering(since, cfg.cluster_max_commits if cfg.inline_cluster else None,
                                             cfg.cluster_async_max_commits if cfg.schedule_inline_cluster else None):
        return None
    t = schedule_clustering(writer, locked=True, options=options)
    if t is not None and cfg.inline_cluster:
        run_clustering(writer, t, locked=True, options=options)
    return t


# --- the metadata table's services ----------------------------------------------------------------


class MetadataTableServices:
    """The cleaner and the archiver run on the metadata table (``reference.metadata.writer.TableServices``),
    under the data table's lock, which the transaction that records a data instant holds."""

    def clean(self, storage: Storage, table: TableConfig, config: CleanConfig) -> CleanResult:
        return clean(storage, table, config, locked=True)

    def archive(self, storage: Storage, table: TableConfig, config: ArchiveConfig, compaction: CompactionConfig,
                retain: Collection[str]) -> ArchiveResult:
        return archive(storage, table, config, compaction, locked=True, retain=retain)


METADATA_TABLE_SERVICES = MetadataTableServices()


__all__ = ["METADATA_TABLE_SERVICES", "MetadataTableServices", "ServiceWriter", "maybe_inline_clustering",
           "rollback_failed_writes", "run_inline_services"]
