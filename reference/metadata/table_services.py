"""The metadata table's own table services, and the data commit that runs them (Hudi's
``HoodieBackedTableMetadataWriter.performTableServices``): before each data instant's deltacommit the metadata table
is compacted when due (its files partition and each record index file group into new base HFiles), then cleaned, and
its timeline archived when it has grown past its limit (``on_commit``). The writes themselves are
``reference.metadata.writer``'s; the cleaner and archiver are the data table's, handed in as ``TableServices``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reference.metadata import record_index as ri
from reference.metadata.writer import TableServices, _now_ms, _put_instant, append_deltacommit, prepare
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.actions.compaction import CompactionConfig
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import FileSystemView, list_data_files
from spec.file_group.log_file.scanner import scan_slice_logs
from spec.metadata.metadata_table import FILES_PARTITION, hfile_records, merge_partition, metadata_storage
from spec.metadata.record_index import RECORD_INDEX_PARTITION, Sizing
from spec.metadata.writer import (
    CLEANER_COMMITS_RETAINED,
    COMPACT_MAX_DELTA_COMMITS,
    WRITE_TOKEN,
    base_file_name,
    commit_records,
    compacted_records,
    compaction_allowed,
    compaction_commit_metadata,
    compaction_due,
    compaction_plan,
    format_metadata_commit,
    metadata_archival_retains,
    metadata_archive_config,
    records_hfile,
)
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import format_avro_metadata
from spec.timeline.commit_metadata import CommitMetadata
from spec.timeline.instant import Action, Instant, InstantTimeGenerator, State, new_instant


def _latest_slice(mdt: Storage, cfg: TableConfig) -> tuple[Timeline, Any]:
    timeline = Timeline.load(mdt, 2)
    files = [f for f in list_data_files(mdt) if f.partition_path == FILES_PARTITION]
    (sl,) = FileSystemView.build(files, timeline, cfg).latest_slices([FILES_PARTITION])
    return timeline, sl


def compact(storage: Storage, gen: InstantTimeGenerator, services: TableServices) -> Timeline:
    """``compactIfNecessary`` then ``cleanIfNecessary``: when ``spec.metadata.writer.compaction_due`` and
    ``compaction_allowed``, the files partition's latest slice — and each record index file group's
    (``reference.metadata.record_index.compaction_slices``) — merged into a new base HFile by a compaction at a
    new instant (requested with its plan, inflight, completed as a ``commit``), then the metadata table cleaned
    (KEEP_LATEST_COMMITS, ``CLEANER_COMMITS_RETAINED``) by ``services``. The metadata table's timeline after them."""
    mdt = metadata_storage(storage)
    cfg = TableConfig.load(mdt)
    timeline, sl = _latest_slice(mdt, cfg)
    if not compaction_due(timeline):
        return timeline
    data_timeline = Timeline.load(storage, TableConfig.load(storage).timeline_layout)
    base = hfile_records(mdt.read(sl.base_file.path)) if sl.base_file else {}
    blocks, _ = scan_slice_logs(mdt, [f.path for f in sl.log_files], timeline, None, cfg.table_version)
    if not compaction_allowed([b.instant_time or "" for b in blocks], data_timeline):
        return timeline
    records = compacted_records(merge_partition(base, blocks))
    instant = gen.next()
    logs = [f.name for f in sl.log_files]
    plan = compaction_plan(sl.base_instant, sl.base_file.name if sl.base_file else None, logs,
                           sum(f.size for f in sl.log_files))
    index_slices = (ri.compaction_slices(mdt, cfg, timeline)
                    if RECORD_INDEX_PARTITION in TableConfig.load(storage).metadata_partitions else [])
    if index_slices:
        ops = plan.operations or ()
        plan = replace(plan, operations=ops + tuple(
            replace(ops[0], base_instant_time=isl.base_instant,
                    delta_file_paths=tuple(f.name for f in isl.log_files),
                    data_file_path=isl.base_file.name if isl.base_file else None, file_id=isl.file_id,
                    partition_path=RECORD_INDEX_PARTITION,
                    metrics={**(ops[0].metrics or {}), "TOTAL_LOG_FILES": float(len(isl.log_files)),
                             "TOTAL_LOG_FILES_SIZE": float(sum(f.size for f in isl.log_files))})
            for isl, _ in index_slices))
    requested = new_instant(instant, Action.COMPACTION)
    _put_instant(mdt, requested, format_avro_metadata(plan, cfg.table_version))
    inflight = requested.transition(State.INFLIGHT)
    _put_instant(mdt, inflight)
    name = base_file_name(instant, WRITE_TOKEN)
    data = records_hfile(records, _now_ms(), base_file=True, table_version=cfg.table_version, file_name=name)
    mdt.write_atomic(f"{FILES_PARTITION}/{name}", data)
    md = compaction_commit_metadata(name, len(data), sl.base_instant, len(records), len(logs))
    if index_slices:
        bases = [ri.compacted_base(mdt, isl.file_id, instant, merged, cfg.table_version, _now_ms())
                 for isl, merged in index_slices]
        stats = tuple(replace(st, prev_commit=isl.base_instant, total_log_files_compacted=len(isl.log_files))
                      for st, (isl, _) in zip(ri.write_stats(bases), index_slices, strict=True))
        md = replace(md, partition_to_write_stats={**md.partition_to_write_stats, RECORD_INDEX_PARTITION: stats})
    _put_instant(mdt, inflight.transition(State.COMPLETED, completed=gen.next()),
                 format_metadata_commit(md, cfg.table_version))
    services.clean(mdt, cfg, CleanConfig(policy="KEEP_LATEST_COMMITS", commits_retained=CLEANER_COMMITS_RETAINED))
    return Timeline.load(mdt, 2)


def archive_metadata_table(storage: Storage, services: TableServices, data_archive: ArchiveConfig | None = None,
                           timeline: Timeline | None = None) -> None:
    """``writeClient.archive()`` on the metadata table, after its compaction and clean: its timeline archived
    by ``services`` as a merge-on-read table's (its compaction trigger: ``COMPACT_MAX_DELTA_COMMITS``
    deltacommits), keeping one commit more than the data table at each end (``metadata_archive_config`` of
    ``data_archive``, the data writer's ``hoodie.keep.*``; Hudi's defaults when None) and nothing from its latest
    compaction or the data table's earliest commit or pending instant on (``metadata_archival_retains``).
    ``timeline``: the metadata table's, when the caller has it; the data table's is read only when the metadata
    timeline has more commits than it keeps."""
    config = metadata_archive_config(data_archive or ArchiveConfig())
    mdt = metadata_storage(storage)
    timeline = timeline or Timeline.load(mdt, 2)
    if len(timeline.commits_timeline().instants) <= config.keep_max_commits:
        return
    retain = metadata_archival_retains(timeline, Timeline.load(storage, TableConfig.load(storage).timeline_layout))
    if retain is None:
        return
    services.archive(mdt, TableConfig.load(mdt), config, CompactionConfig(COMPACT_MAX_DELTA_COMMITS), retain)


def on_commit(storage: Storage, inst: Instant, md: CommitMetadata, gen: InstantTimeGenerator, services: TableServices,
              enable: bool | None = None, data_archive: ArchiveConfig | None = None,
              record_index: bool | None = None, partitioned: bool = False, sizing: Sizing | None = None) -> None:
    """A commit, deltacommit, replacecommit or compaction about to complete, recorded in the metadata table
    (``HoodieBackedTableMetadataWriter.update(HoodieCommitMetadata)``): the metadata table created, deleted or
    trimmed as ``enable`` says (``prepare``), compacted and cleaned when due, its timeline archived when due
    (``archive_metadata_table``, ``data_archive``: the data writer's archival config), then the instant's
    deltacommit (with the record index's changes, ``record_index``, ``partitioned`` and ``sizing`` as ``prepare``
    takes them)."""
    if prepare(storage, gen, enable, record_index, partitioned, sizing):
        archive_metadata_table(storage, services, data_archive, compact(storage, gen, services))
        append_deltacommit(storage, inst.requested, commit_records(md), gen, md)


__all__ = ["archive_metadata_table", "compact", "on_commit"]
