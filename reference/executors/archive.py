"""Archival executed on a table: moving the instants ``spec.actions.archive.plan_archive`` chooses off the
active timeline, into the archived timeline whose formats the spec states.

- **table version 6** (layout 1): every timeline file of each chosen instant (requested, inflight,
  completed) becomes one ``HoodieArchivedMetaEntry`` (``spec.timeline.archived_timeline.format_archived_entry``,
  ``stateTransitionTime`` the file's modification time); the entries go, ten to a block, into the archived log
  (``spec.file_group.log_file.archived_log``), appended to the newest file (a store that cannot append gets the
  next version). Then the instant files are deleted from the active timeline: pending-state files first,
  completed last.
- **table versions 8 and 9** (layout 2): the LSM timeline (``spec.timeline.lsm_timeline``). Each archived instant
  becomes one ``HoodieLSMTimelineInstant`` row in a new level-0 file ``<first>_<last>_0.parquet``; then
  ``manifest_<N+1>`` (the previous manifest's files plus the new one) and ``_version_`` (``N+1``) make it
  visible; then the instant files are deleted, pending-state first. Hudi merges ten level-0 files into one
  level-1 file; that compaction of the history is not done here (readers take any number of files).

Crash safety: the history is written, and made visible, before any instant file is deleted, so a crash
leaves every instant either on the active timeline, or archived, or both — and an instant in both is read
from the active timeline. A crash between the LSM data file and the new ``_version_`` leaves a file no
manifest names, which no reader reads and the next archival writes again; a crash after it leaves only the
deletes, which the next archival does (it finds its file in the manifest). On version 6 the next archival
appends the entries again: a reader collapses them to one instant each.

Data files are never touched by archival: a base file whose commit is archived stays visible,
being older than the active timeline's start, and a log file's deltacommit completed when the archived
timeline says (``spec.timeline.active_timeline.Timeline.completion_time``). A replacecommit is archived only
once the file groups it replaced have been cleaned (``spec.actions.archive.hold_back_uncleaned_replaces``): its
record of them leaves the active timeline with it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from reference.instrumentation.faults import fault_point
from reference.transaction.lock import SINGLE_WRITER_LOCK, maybe_locked
from spec.actions.archive import (
    ArchiveConfig,
    archive_folder,
    hold_back_uncleaned_replaces,
    metadata_table_retains,
    plan_archive,
)
from spec.actions.compaction import CompactionConfig
from spec.actions.file_refs import GroupId
from spec.config.table_config import LAYOUT_V1, TableConfig
from spec.file_group.file_naming import (
    is_log_file_name,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.file_group.file_system_view import list_data_files
from spec.file_group.log_file.archived_log import (
    archive_log_files,
    archive_log_name,
    format_archive_blocks,
)
from spec.metadata.metadata_table import metadata_storage, uses_metadata_table
from spec.metadata.writer import latest_compaction
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.timeline.active_timeline import Timeline
from spec.timeline.archived_timeline import format_archived_entry
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action, Instant, State, format_instant_time
from spec.timeline.layout import parse_instant_file_name, read_instant_content, timeline_dir
from spec.timeline.lsm_timeline import (
    HISTORY_DIR,
    VERSION_FILE,
    LsmInstant,
    ManifestEntry,
    format_lsm_file,
    format_manifest,
    format_version,
    latest_snapshot_version,
    manifest_path,
    new_file_name,
    parse_lsm_file,
    parse_lsm_file_name,
    plan_bytes,
    snapshot_manifest,
)


def archived_entry(storage: Storage, table: TableConfig, name: str) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry of one active-timeline file (``stateTransitionTime``: the file's modification
    time, as an instant time; a compaction's entries carry the plan of its requested file)."""
    inst = parse_instant_file_name(name, table.timeline_layout)
    folder = timeline_dir(table.timeline_layout)
    rel = posixpath.join(folder, name)
    mtime = storage.fs.get_file_info(storage.full(rel)).mtime
    source = f"{inst.requested}.compaction.requested" if inst.action == Action.COMPACTION else name
    return format_archived_entry(inst, storage.read(posixpath.join(folder, source)),
                                 format_instant_time(mtime) if mtime is not None else None)


# --- archiving ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ArchiveResult:
    """The instants moved off the active timeline, and the archive file they went to."""

    archived: tuple[Instant, ...]
    archive_file: str | None = None
    records: int = 0


def archive(storage: Storage, table: TableConfig, config: ArchiveConfig | None = None,
            compaction: CompactionConfig | None = None, *, locked: bool = False,
            retain: Collection[str] = (), lock: StorageLockConfig = SINGLE_WRITER_LOCK) -> ArchiveResult:
    """Archive what ``plan_archive`` chooses (v6: the archived log; v8: the LSM history), holding back
    ``retain`` and what follows it, and on a table with a metadata table what its latest compaction holds back
    (``spec.actions.archive.metadata_table_retains``: before its first, nothing is archived). Nothing chosen:
    nothing written. ``lock``: the table lock of the configured provider (``WriteConfig.lock``), unless
    ``locked``."""
    with maybe_locked(storage, locked, "archive", lock):
        timeline = Timeline.load(storage, table.timeline_layout)
        if table.table_version >= 8 and uses_metadata_table(table):
            bound = metadata_table_retains(timeline, latest_compaction(Timeline.load(metadata_storage(storage), 2)))
            if bound is None:
                return ArchiveResult(())
            retain = (*retain, *bound)
        chosen = plan_archive(timeline, config or ArchiveConfig(), table.table_type, compaction or CompactionConfig(),
                              retain)
        chosen = hold_back_uncleaned_replaces(chosen, replaced_groups(storage, timeline, chosen), live_groups(storage))
        if not chosen:
            return ArchiveResult(())
        names = [n for inst in chosen for n in _files_in_state_order(timeline, inst)]
        if table.timeline_layout != LAYOUT_V1:
            target = _write_lsm(storage, timeline, chosen)
            fault_point("mid_archive")  # archival killed with its history visible, its instants still active
            _delete_instant_files(storage, table, names)
            return ArchiveResult(tuple(chosen), target, len(chosen))
        records = [archived_entry(storage, table, n) for n in names]
        data = format_archive_blocks(records, table.table_version)
        folder = archive_folder(table)
        existing = archive_log_files(storage, folder)
        if existing and isinstance(storage.fs, pafs.LocalFileSystem):
            target = existing[-1]
            storage.append(target, data)
        else:
            version = parse_log_file_name(posixpath.basename(existing[-1])).version + 1 if existing else 1
            target = posixpath.join(folder, archive_log_name(version))
            storage.write_atomic(target, data)
        fault_point("mid_archive")  # archival killed with its entries written, its instants still active
        _delete_instant_files(storage, table, names)
        return ArchiveResult(tuple(chosen), target, len(records))


def replaced_groups(storage: Storage, timeline: Timeline, chosen: tuple[Instant, ...]) -> dict[str, frozenset[GroupId]]:
    """Per completed replacecommit among ``chosen``, the file groups its commit metadata says it replaced."""
    return {i.requested: frozenset(parse_commit_metadata(read_instant_content(storage, i, timeline.layout))
                                    .replaced_file_ids())
            for i in chosen if i.action == Action.REPLACE_COMMIT}


def live_groups(storage: Storage) -> frozenset[GroupId]:
    """The file groups that still have a data file on storage."""
    return frozenset((f.partition_path, _file_id(f.name)) for f in list_data_files(storage))


def _file_id(name: str) -> str:
    return parse_log_file_name(name).file_id if is_log_file_name(name) else parse_base_file_name(name).file_id


def _delete_instant_files(storage: Storage, table: TableConfig, names: list[str]) -> None:
    """Remove archived instants from the active timeline: pending-state files first, completed last,
    so a crash never leaves a completed instant without its earlier files being the only trace."""
    layout = table.timeline_layout
    folder = timeline_dir(layout)
    for n in sorted(names, key=lambda n: parse_instant_file_name(n, layout).is_completed):
        storage.delete(posixpath.join(folder, n))


def lsm_row(storage: Storage, timeline: Timeline, inst: Instant) -> LsmInstant:
    """The HoodieLSMTimelineInstant of an archived (completed) instant: its completed file's bytes as
    ``metadata``; as ``plan``, the requested plan of a clean, compaction or log compaction, and of a
    replacecommit or clustering its inflight file when not empty, else its requested file."""
    folder = timeline_dir(timeline.layout)
    by_state = {parse_instant_file_name(n, timeline.layout): n for n in timeline.files_of(inst)}

    def data(state: State) -> tuple[str | None, bytes | None]:
        for i, n in by_state.items():
            if i.state == state:
                body = storage.read(posixpath.join(folder, n))
                return i.action, body or None
        return None, None

    _, metadata = data(State.COMPLETED)
    pending_action, requested = data(State.REQUESTED)
    plan = plan_bytes(pending_action, requested, data(State.INFLIGHT)[1])
    return LsmInstant(inst.requested, inst.completed, inst.action, metadata, plan)


# --8<-- [start:lsm_write]
def _write_lsm(storage: Storage, timeline: Timeline, chosen: tuple[Instant, ...]) -> str:
    """Write the level-0 history file of ``chosen``, then the next manifest and ``_version_``. Instants the
    history already holds (a crashed archival made its file visible but did not delete them from the active
    timeline) are not written again."""
    ordered = sorted(chosen, key=lambda i: i.requested)
    version = latest_snapshot_version(storage)
    entries = list(snapshot_manifest(storage, version))
    first, last = ordered[0].requested, ordered[-1].requested
    held = {r.instant_time for e in entries if _overlaps(e.file_name, first, last)
            for r in parse_lsm_file(storage.read(posixpath.join(HISTORY_DIR, e.file_name)))}
    todo = [i for i in ordered if i.requested not in held]
    if not todo:
        return posixpath.join(HISTORY_DIR, next(e.file_name for e in reversed(entries)
                                                if _overlaps(e.file_name, first, last)))
    name = new_file_name([i.requested for i in todo]).format()
    rel = posixpath.join(HISTORY_DIR, name)
    storage.write_atomic(rel, format_lsm_file([lsm_row(storage, timeline, i) for i in todo]))
    entries.append(ManifestEntry(name, storage.size(rel)))
    new_version = 1 if version < 0 else version + 1
    manifest = manifest_path(new_version)
    storage.delete(manifest)  # a manifest a crashed archival left without its version file
    storage.create_if_absent(manifest, format_manifest(entries))
    fault_point("mid_archive_version")  # archival killed between the new manifest and the version file
    storage.delete(posixpath.join(HISTORY_DIR, VERSION_FILE))
    storage.create_if_absent(posixpath.join(HISTORY_DIR, VERSION_FILE), format_version(new_version))
    return rel
# --8<-- [end:lsm_write]


def _overlaps(file_name: str, first: str, last: str) -> bool:
    """Whether the history file ``file_name`` holds instants in ``[first, last]``, by its name's range."""
    span = parse_lsm_file_name(file_name)
    return span.min_instant <= last and span.max_instant >= first


def _files_in_state_order(timeline: Timeline, inst: Instant) -> list[str]:
    return sorted(timeline.files_of(inst), key=lambda n: parse_instant_file_name(n, timeline.layout).sort_key)


__all__ = ["ArchiveResult", "archive", "archived_entry", "live_groups", "lsm_row", "replaced_groups"]
