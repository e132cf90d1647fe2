"""Archival: which instants leave the active timeline, which replacecommits must wait for the cleaner, and the
archived timeline they go to.

The archived timeline's formats are the timeline's (``spec.timeline.archived_timeline``: the version-6 entries,
``spec.file_group.log_file.archived_log``: the files holding them, ``spec.timeline.lsm_timeline``: versions 8 and
9); ``archived_instants`` reads either back.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieTimelineArchiver``
(0.15.x), ``TimelineArchiverV1`` and ``TimelineArchiverV2`` (1.x) (``getCommitInstantsToArchive``,
``getInstantsToArchive``) with ``ClusteringUtils.getEarliestInstantToRetainForClustering``;
``HoodieArchivalConfig`` (``hoodie.keep.min.commits``, ``hoodie.keep.max.commits``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spec.actions.compaction import CompactionConfig, delta_commits_since_last_compaction
from spec.actions.file_refs import GroupId
from spec.config.registry import default
from spec.config.table_config import COPY_ON_WRITE, LAYOUT_V1, MERGE_ON_READ, TableConfig
from spec.errors import InvalidConfig
from spec.file_group.log_file.archived_log import read_archived_entries
from spec.timeline.active_timeline import Timeline
from spec.timeline.archived_timeline import ArchivedInstant, archived_instants_of_entries
from spec.timeline.instant import WRITE_ACTIONS, Action, Instant
from spec.timeline.lsm_timeline import read_lsm_instants

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage


@dataclass(frozen=True)
class ArchiveConfig:
    """``hoodie.keep.min.commits`` (20) and ``hoodie.keep.max.commits`` (30): archival starts above max
    completed commits and leaves min."""

    keep_min_commits: int = default("keep_min_commits")
    keep_max_commits: int = default("keep_max_commits")

    def __post_init__(self) -> None:
        if not 0 < self.keep_min_commits < self.keep_max_commits:
            raise InvalidConfig("need 0 < keep_min_commits < keep_max_commits",
                                hint="Hudi requires hoodie.keep.max.commits > hoodie.keep.min.commits")


# --8<-- [start:archive_plan]
def plan_archive(timeline: Timeline, config: ArchiveConfig, table_type: str = COPY_ON_WRITE,
                 compaction: CompactionConfig | None = None, retain: Collection[str] = ()) -> tuple[Instant, ...]:
    """The instants archival moves off the active timeline (HoodieTimelineArchiver), oldest first.

    When there are more than ``keep_max_commits`` completed commits, the oldest are archived until
    ``keep_min_commits`` remain, stopping at the first savepoint, at the latest completed commit
    before the oldest pending write (so the timeline keeps no holes) and, on MOR (NUM_COMMITS
    compaction trigger), at the delta commits a future compaction trigger still counts. Completed
    clean and rollback instants older than the newest archived commit go with them (``compaction``:
    the table's compaction trigger, HoodieCompactionConfig's defaults when None). ``retain`` holds
    further earliest instants to retain, by requested time (a metadata table's: its latest compaction
    and its data table's earliest commit or pending instant, ``spec.metadata.writer.metadata_archival_retains``).
    """
    compaction = compaction or CompactionConfig()
    commits = list(timeline.commits_timeline().instants)
    if len(commits) <= config.keep_max_commits:
        return ()
    limit: list[str] = []
    savepoints = [i.requested for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed]
    if savepoints:
        limit.append(savepoints[0])
    pending = [i for i in timeline.instants if not i.is_completed and i.action in WRITE_ACTIONS]
    if pending:
        before = [c for c in commits if c.requested < pending[0].requested]
        limit.append(before[-1].requested if before else pending[0].requested)
    if table_type == MERGE_ON_READ:
        deltas = delta_commits_since_last_compaction(timeline)
        last_compaction = [i for i in timeline.instants if i.is_completed and i.action == Action.COMMIT]
        if len(deltas) < compaction.max_delta_commits:
            anchor = last_compaction[-1] if last_compaction else (deltas[0] if deltas else None)
        else:
            anchor = deltas[len(deltas) - compaction.max_delta_commits]
        if anchor is not None:
            limit.append(anchor.requested)
    limit.extend(retain)
    bound = min(limit) if limit else None
    eligible = [c for c in commits if bound is None or c.requested < bound]
    archived = eligible[: len(commits) - config.keep_min_commits]
    if not archived:
        return ()
    newest = archived[-1].requested
    services = [i for i in timeline.instants if i.is_completed and i.action in _SERVICES
                and i.requested < newest]
    return tuple(sorted(archived + services, key=lambda i: i.requested))
# --8<-- [end:archive_plan]


# --8<-- [start:metadata_bound]
def metadata_table_retains(timeline: Timeline, latest_compaction: str | None) -> tuple[str, ...] | None:
    """What a data table with a metadata table keeps from archival for it (``plan_archive``'s ``retain``), or
    None when it archives nothing (table versions 8 and 9).

    Apache Hudi archives no data instant more recent than the metadata table's latest compaction
    (``TimelineArchiverV2.getCommitInstantsToArchive``, "do not archive instants which are more recent than the
    last compaction on the metadata table"): with none yet nothing is archived; else the first completed commit
    whose completion time follows that compaction's time (``latest_compaction``: its requested time,
    ``HoodieTableMetadata.getLatestCompactionTime``) is kept with all that follows
    (``findInstantsModifiedAfterByCompletionTime``). So every metadata block not yet compacted belongs to an
    instant still on the data table's active timeline. Measured with Apache Hudi 1.2.0 (case
    ``archive-cow-v8``: its six instants left the metadata table uncompacted, and archival kept every one; a
    table of 14 commits kept the commit during which the metadata table compacted and all after it)."""
    if latest_compaction is None:
        return None
    after = [i for i in timeline.commits_timeline().instants if (i.completed or i.requested) > latest_compaction]
    return (after[0].requested,) if after else ()
# --8<-- [end:metadata_bound]


_SERVICES = frozenset({Action.CLEAN, Action.ROLLBACK})


# --8<-- [start:hold_back]
def hold_back_uncleaned_replaces(chosen: Sequence[Instant], replaced: Mapping[str, Collection[GroupId]],
                                 live: Collection[GroupId]) -> tuple[Instant, ...]:
    """Archival's precondition on replacecommits: of the instants archival chose, keep those before the
    first replacecommit some of whose replaced file groups (``replaced``, by its time) still have files
    (``live``); clean and rollback instants only when older than the newest write kept.

    Once archived, a replacecommit no longer hides what it replaced, so it waits for the cleaner
    (Hudi: ``TimelineArchiverV1``/``TimelineArchiverV2.getCommitInstantsToArchive`` stop at
    ``ClusteringUtils.getEarliestInstantToRetainForClustering``, the oldest replacecommit whose replaced
    groups the cleaner has not yet removed)."""
    ordered = sorted(chosen, key=lambda i: i.requested)
    live_set = frozenset(live)
    cut = next((i.requested for i in ordered if i.action == Action.REPLACE_COMMIT
                and live_set.intersection(replaced.get(i.requested, ()))), None)
    if cut is None:
        return tuple(chosen)
    writes = [i for i in ordered if i.action not in _SERVICES and i.requested < cut]
    newest = max((i.requested for i in writes), default="")
    return tuple(i for i in chosen if i in writes or (i.action in _SERVICES and i.requested < newest))
# --8<-- [end:hold_back]


def archive_folder(table: TableConfig) -> str:
    """The folder of a version-6 table's archived logs: ``.hoodie/`` + ``hoodie.archivelog.folder`` (default
    ``archived``; Apache Hudi 1.2.0 sets ``history`` on the version 6 tables it creates). Readers and the
    archiver use the same folder, so what one writer archives the other reads (``HoodieTableConfig.ARCHIVELOG_FOLDER``,
    ``HoodieTableMetaClient.getArchivePath``)."""
    return posixpath.join(".hoodie", table.props.get("hoodie.archivelog.folder") or "archived")


def archived_instants(storage: Storage, table: TableConfig) -> list[ArchivedInstant]:
    """The archived timeline of a table: per archived instant its action and highest archived state, oldest
    first (version 6: the archived logs' entries; 8 and 9: the LSM timeline's latest snapshot, with completion
    times)."""
    if table.timeline_layout == LAYOUT_V1:
        return archived_instants_of_entries(read_archived_entries(storage, archive_folder(table)))
    return [ArchivedInstant.of_lsm(r) for r in read_lsm_instants(storage)]


__all__ = ["ArchiveConfig", "archive_folder", "archived_instants", "hold_back_uncleaned_replaces",
           "metadata_table_retains", "plan_archive"]
