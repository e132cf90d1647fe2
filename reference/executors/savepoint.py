"""Savepoints created and deleted on a real table (Hudi's ``SavepointActionExecutor`` and
``deleteSavepoint``).

``spec.actions.savepoint`` decides which commit may be savepointed; here the savepoint is written:
``T.savepoint.inflight`` (empty) → ``T.savepoint`` / ``T_C.savepoint`` (HoodieSavepointMetadata:
the files of the latest slices as of ``T``), ``T`` being the savepointed commit's own time.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.executors.common import (
    Clock,
    complete_instant,
    now_millis,
    read_record,
    remove_instant,
    timeline_of,
    write_instant,
)
from reference.transaction.lock import SINGLE_WRITER_LOCK, maybe_locked
from spec.actions.savepoint import last_clean, savepoint_instant
from spec.config.table_config import TableConfig
from spec.errors import InstantNotFound
from spec.file_group.file_system_view import FileSystemView
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.timeline.active_timeline import Timeline, instant_times
from spec.timeline.avro_model import (
    HoodieCleanerPlan,
    HoodieCleanMetadata,
    HoodieSavepointMetadata,
    HoodieSavepointPartitionMetadata,
    format_avro_metadata,
)
from spec.timeline.instant import Action, Instant, State


@dataclass(frozen=True)
class SavepointResult:
    """A savepoint: the commit it keeps and the files kept per partition."""

    instant: str
    metadata: HoodieSavepointMetadata

    @property
    def files(self) -> frozenset[tuple[str, str]]:
        """Every file the savepoint keeps, as (partition path, file name)."""
        return frozenset((p, f) for p, m in self.metadata.partition_metadata.items() for f in m.savepoint_data_file)


def last_clean_retained(storage: Storage, timeline: Timeline) -> str | None:
    """The earliest commit the table's last clean retains (``spec.actions.savepoint.last_clean``): from a
    completed clean's metadata, from a pending clean's requested plan; None without a clean."""
    last = last_clean(timeline)
    if last is None:
        return None
    if last.is_completed:
        return read_record(storage, last, timeline.layout, HoodieCleanMetadata).earliest_commit_to_retain or None
    plan = read_record(storage, Instant(last.requested, Action.CLEAN, State.REQUESTED), timeline.layout,
                       HoodieCleanerPlan)
    return plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else None


def savepoint_create(storage: Storage, table: TableConfig, instant_time: str | None = None, *,
                     user: str = "hudi-spec", comment: str = "", clock: Clock | None = None,
                     locked: bool = False, lock: StorageLockConfig = SINGLE_WRITER_LOCK) -> SavepointResult:
    """Savepoint a completed write (default: the latest), if ``spec.actions.savepoint.savepoint_instant``
    allows it: the files of the latest slices as of it are kept by every later clean, and the table
    can be restored to it. Refused before the table lock is taken when the timeline on storage refuses it.
    ``lock``: the table lock of the configured provider (``WriteConfig.lock``), unless ``locked``."""
    if not locked:
        before = timeline_of(storage, table)
        savepoint_instant(before, instant_time, last_clean_retained(storage, before))
    with maybe_locked(storage, locked, "savepoint", lock):
        timeline = timeline_of(storage, table)
        instant_time = savepoint_instant(timeline, instant_time, last_clean_retained(storage, timeline))
        view = FileSystemView.load(storage, table, timeline, as_of=instant_time)
        per_partition: dict[str, list[str]] = {}
        for g in view.groups:
            s = g.latest_slice
            if s is None:
                continue
            names = ([s.base_file.name] if s.base_file else []) + [lf.name for lf in s.log_files]
            per_partition.setdefault(g.partition_path, []).extend(names)
        md = HoodieSavepointMetadata(
            savepointed_by=user, savepointed_at=now_millis(clock), comments=comment,
            partition_metadata={p: HoodieSavepointPartitionMetadata(partition_path=p,
                                                                    savepoint_data_file=tuple(sorted(fs)))
                                for p, fs in sorted(per_partition.items())})
        gen = instant_times(timeline, clock)
        inflight = Instant(instant_time, Action.SAVEPOINT, State.INFLIGHT)
        write_instant(storage, inflight, table.timeline_layout)
        complete_instant(storage, table, inflight, gen, format_avro_metadata(md, table.table_version))
        return SavepointResult(instant_time, md)


def savepoint_delete(storage: Storage, table: TableConfig, instant_time: str, *, locked: bool = False,
                     lock: StorageLockConfig = SINGLE_WRITER_LOCK) -> None:
    """Delete a savepoint (Hudi's ``deleteSavepoint``): its completed file first (un-publish), then its
    inflight file; its files become cleanable again. InstantNotFound if there is no such savepoint (decided
    before the table lock is taken: the refusal changes nothing)."""
    if not locked:
        _savepoint_at(timeline_of(storage, table), instant_time)
    with maybe_locked(storage, locked, "savepoint delete", lock):
        timeline = timeline_of(storage, table)
        remove_instant(storage, timeline, _savepoint_at(timeline, instant_time))


def _savepoint_at(timeline: Timeline, instant_time: str) -> Instant:
    found = [i for i in timeline.instants if i.action == Action.SAVEPOINT and i.requested == instant_time]
    if not found:
        raise InstantNotFound(f"no savepoint at {instant_time}", hint="list them with hudi-spec savepoints")
    return found[0]


def savepoint_metadata(storage: Storage, timeline: Timeline, instant_time: str) -> HoodieSavepointMetadata:
    """The metadata of the completed savepoint at ``instant_time``."""
    found = [i for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed
             and i.requested == instant_time]
    if not found:
        raise InstantNotFound(f"no completed savepoint at {instant_time}", hint="list them with hudi-spec savepoints")
    return read_record(storage, found[0], timeline.layout, HoodieSavepointMetadata)


__all__ = ["SavepointResult", "last_clean_retained", "savepoint_create", "savepoint_delete", "savepoint_metadata"]
