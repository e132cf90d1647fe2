"""The metadata table's own table services, and the data commit that runs them: before each data instant's
deltacommit, the metadata table is compacted when due and then cleaned, and its timeline archived when it has
grown past its limit, as Hudi's metadata writer does (``performTableServices``).

Source rules: ``spec.metadata.writer`` (``compaction_due``, ``compaction_allowed``, ``compacted_records``,
``compaction_plan``, ``metadata_archive_config``, ``earliest_for_metadata_archival``); the cleaner and the
archiver are the data table's (``reference.executors.clean``, ``reference.executors.archive``) run on the
metadata table.
"""

from __future__ import annotations

import time
from typing import Any

from reference.executors.archive import ArchiveResult, archive
from reference.executors.clean import clean
from reference.metadata_writer import append_deltacommit, prepare
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.actions.compaction import CompactionConfig
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import FileSystemView, list_data_files
from spec.file_group.log_file.scanner import scan_slice_logs
from spec.metadata.metadata_table import FILES_PARTITION, hfile_records, merge_partition, metadata_storage
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
    metadata_archival_retains,
    metadata_archive_config,
    records_hfile,
)
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import format_avro_metadata
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata
from spec.timeline.instant import Action, Instant, InstantTimeGenerator, State, new_instant
from spec.timeline.layout import format_instant_file_name, timeline_dir


def _put_instant(mdt: Storage, inst: Instant, data: bytes = b"") -> None:
    mdt.create_if_absent(f"{timeline_dir(2)}/{format_instant_file_name(inst, 2)}", data)


def _latest_slice(mdt: Storage, cfg: TableConfig) -> tuple[Timeline, Any]:
    timeline = Timeline.load(mdt, 2)
    files = [f for f in list_data_files(mdt) if f.partition_path == FILES_PARTITION]
    (sl,) = FileSystemView.build(files, timeline, cfg).latest_slices([FILES_PARTITION])
    return timeline, sl


def compact(storage: Storage, gen: InstantTimeGenerator) -> Timeline:
    """``compactIfNecessary`` then ``cleanIfNecessary``: when ``spec.metadata.writer.compaction_due`` and
    ``compaction_allowed``, the files partition's latest slice merged into a new base HFile by a compaction at a
    new instant (requested with its plan, inflight, completed as a ``commit``), then the metadata table cleaned
    (KEEP_LATEST_COMMITS, ``CLEANER_COMMITS_RETAINED``). The metadata table's timeline after them."""
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
    requested = new_instant(instant, Action.COMPACTION)
    _put_instant(mdt, requested, format_avro_metadata(plan, cfg.table_version))
    inflight = requested.transition(State.INFLIGHT)
    _put_instant(mdt, inflight)
    name = base_file_name(instant, WRITE_TOKEN)
    data = records_hfile(records, int(time.time() * 1000), base_file=True, table_version=cfg.table_version,
                         file_name=name)
    mdt.write_atomic(f"{FILES_PARTITION}/{name}", data)
    md = compaction_commit_metadata(name, len(data), sl.base_instant, len(records), len(logs))
    _put_instant(mdt, inflight.transition(State.COMPLETED, completed=gen.next()),
                 format_commit_metadata(md, cfg.table_version))
    clean(mdt, cfg, CleanConfig(policy="KEEP_LATEST_COMMITS", commits_retained=CLEANER_COMMITS_RETAINED),
          locked=True)
    return Timeline.load(mdt, 2)


def archive_metadata_table(storage: Storage, data_archive: ArchiveConfig | None = None,
                           timeline: Timeline | None = None) -> ArchiveResult:
    """``writeClient.archive()`` on the metadata table, after its compaction and clean: its timeline archived
    as a merge-on-read table's (its compaction trigger: ``COMPACT_MAX_DELTA_COMMITS`` deltacommits), keeping
    one commit more than the data table at each end (``metadata_archive_config`` of ``data_archive``, the data
    writer's ``hoodie.keep.*``; Hudi's defaults when None) and nothing from its latest compaction or the data
    table's earliest commit or pending instant on (``metadata_archival_retains``). ``timeline``: the metadata
    table's, when the caller has it; the data table's is read only when the metadata timeline has more commits
    than it keeps."""
    config = metadata_archive_config(data_archive or ArchiveConfig())
    mdt = metadata_storage(storage)
    timeline = timeline or Timeline.load(mdt, 2)
    if len(timeline.commits_timeline().instants) <= config.keep_max_commits:
        return ArchiveResult(())
    retain = metadata_archival_retains(timeline, Timeline.load(storage, TableConfig.load(storage).timeline_layout))
    if retain is None:
        return ArchiveResult(())
    return archive(mdt, TableConfig.load(mdt), config, CompactionConfig(COMPACT_MAX_DELTA_COMMITS), locked=True,
                   retain=retain)


def on_commit(storage: Storage, inst: Instant, md: CommitMetadata, gen: InstantTimeGenerator,
              enable: bool | None = None, data_archive: ArchiveConfig | None = None) -> None:
    """A commit, deltacommit, replacecommit or compaction about to complete, recorded in the metadata table
    (``HoodieBackedTableMetadataWriter.update(HoodieCommitMetadata)``): the metadata table created, deleted or
    trimmed as ``enable`` says (``reference.metadata_writer.prepare``), compacted and cleaned when due, its
    timeline archived when due (``archive_metadata_table``, ``data_archive``: the data writer's archival
    config), then the instant's deltacommit."""
    if prepare(storage, gen, enable):
        archive_metadata_table(storage, data_archive, compact(storage, gen))
        append_deltacommit(storage, inst.requested, commit_records(md), gen)


__all__ = ["archive_metadata_table", "compact", "on_commit"]
