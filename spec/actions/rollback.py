"""Rollback: which instant a rollback undoes, whether it may, and what it does to each file group.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``BaseRollbackPlanActionExecutor``, ``MarkerBasedRollbackStrategy`` and
``ListingBasedRollbackStrategy`` (``hudi-client/hudi-client-common/…/hudi/table/action/rollback/``),
``BaseHoodieTableServiceClient.rollback`` (the checks before an explicit rollback).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from spec.actions.file_refs import GroupId, GroupRef, SliceRef
from spec.actions.savepoint import savepoint_times
from spec.config.table_config import MERGE_ON_READ
from spec.errors import InstantNotFound, InvalidOperation
from spec.file_group.file_naming import (
    ROLLBACK_WRITE_TOKEN,
    LogFileName,
    is_base_file_name,
    is_log_file_name,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import DATA_WRITES, WRITE_ACTIONS, Action, Instant


@dataclass(frozen=True)
class RollbackRequest:
    """One file group's share of a rollback (HoodieRollbackRequest): files to delete, and for v6 MOR
    the new log file into which a ROLLBACK command block (TARGET = the rolled-back instant) goes."""

    partition_path: str
    file_id: str
    latest_base_instant: str | None
    files_to_delete: tuple[str, ...] = ()
    command_block_log: str | None = None


@dataclass(frozen=True)
class RollbackPlan:
    """HoodieRollbackPlan: the instant rolled back and the requests, in (partition, file id) order."""

    instant_to_rollback: Instant
    requests: tuple[RollbackRequest, ...]

    def files_to_delete(self) -> frozenset[tuple[str, str]]:
        """Every file the rollback deletes, as (partition path, file name)."""
        return frozenset((r.partition_path, f) for r in self.requests for f in r.files_to_delete)


def _next_log_version(group: GroupRef, base_instant: str) -> int:
    versions = [lf.version for s in group.slices for lf in map(parse_log_file_name, s.log_files)
                if lf.instant == base_instant]
    return max(versions, default=0) + 1


def groups_of_files(files: Iterable[tuple[str, str]]) -> list[GroupRef]:
    """The file groups of data files given as (partition path, file name), every file its own
    pseudo-slice keyed by the instant in its name, committed or not: a rollback must see what a
    failed write left, which no file-system view shows. Other names are ignored."""
    groups: dict[GroupId, list[SliceRef]] = {}
    for partition, name in files:
        if is_base_file_name(name):
            b = parse_base_file_name(name)
            groups.setdefault((partition, b.file_id), []).append(SliceRef(partition, b.file_id, b.instant, name))
        elif is_log_file_name(name):
            lg = parse_log_file_name(name)
            groups.setdefault((partition, lg.file_id), []).append(
                SliceRef(partition, lg.file_id, lg.instant, None, (name,)))
    return [GroupRef(p, fid, tuple(slices)) for (p, fid), slices in sorted(groups.items())]


# --8<-- [start:rollback_plan]
def plan_rollback(target: Instant, groups: Iterable[GroupRef], table_type: str, table_version: int,
                  appended_logs: Mapping[GroupId, Collection[str]] | None = None) -> RollbackPlan:
    """What rolling back ``target`` does to each file group it touched.

    - base files written by the instant (its requested time in their name) are deleted — COW,
      MOR inserts, compaction output; in v6 the log files of every slice based on the instant too (a
      compaction's, or a deltacommit's that wrote a new base file): Hudi's rollback deletes a file group's files
      whose base instant is the instant (``ListingBasedRollbackStrategy``'s path filter: a base file of the
      instant, a log file whose base commit time is the instant), measured with Apache Hudi 1.2.0 on
      ``savepoint-restore-mor-v6`` (a restore rolls back the delete's log block, then deletes the upsert's new
      base file and the log files on it, the rollback block included);
    - COW with change data capture: the CDC logs named with the instant (Hudi's listing-based rollback deletes
      the files whose commit time, a log's base instant, is the instant);
    - MOR v8: log files named with the instant are deleted (a v8 log name is its deltacommit);
    - MOR v6: logs are named by the slice's base instant and shared by deltacommits, so nothing
      is deleted; each slice the instant appended to (``appended_logs``: group → log files, from
      the commit metadata or the APPEND markers) gets a ROLLBACK command block in a new log file
      ``.<fileId>_<base instant>.log.<max version + 1>_1-0-1``.
    """
    t = target.requested
    appended = appended_logs or {}
    requests = []
    for g in sorted(groups, key=lambda g: g.id):
        slices = g.newest_first()
        latest_base = slices[0].base_instant if slices else None
        delete = [s.base_file for s in slices if s.base_file and parse_base_file_name(s.base_file).instant == t]
        command_log = None
        # MOR v8: a log named with the instant; v6: a log based on it; COW: a CDC log beside a base file of the
        # instant (``.<file id>_<instant>.log.1_<token>.cdc``, ``spec.write.cdc_logger``), the only logs it has
        delete += [lf for s in slices for lf in s.log_files if parse_log_file_name(lf).instant == t
                   and (table_type == MERGE_ON_READ or parse_log_file_name(lf).is_cdc)]
        if table_type == MERGE_ON_READ and table_version < 8:
            touched = appended.get(g.id, ())
            base = parse_log_file_name(next(iter(touched))).instant if touched else t
            if base != t:  # the instant's own new log files are deleted above, and take no command block
                command_log = LogFileName(g.file_id, base, _next_log_version(g, base), ROLLBACK_WRITE_TOKEN).format()
        if delete or command_log:
            requests.append(RollbackRequest(g.partition_path, g.file_id, latest_base, tuple(sorted(delete)),
                                            command_log))
    return RollbackPlan(target, tuple(requests))
# --8<-- [end:rollback_plan]


def instant_to_rollback(timeline: Timeline, instant_time: str | None = None) -> Instant:
    """The instant a rollback targets: the named one, else the latest data-writing instant
    (commit, deltacommit, replacecommit, compaction, in any state). InstantNotFound if there is none."""
    writes = [i for i in timeline.instants if i.action in WRITE_ACTIONS]
    if instant_time is not None:
        found = [i for i in writes if i.requested == instant_time]
        if not found:
            raise InstantNotFound(f"no data-writing instant {instant_time} to roll back",
                                  hint="name a commit, deltacommit, replacecommit or compaction on the timeline")
        return found[0]
    if not writes:
        raise InstantNotFound("the timeline has no instant to roll back", hint="write something first")
    return writes[-1]


# --8<-- [start:rollback_allowed]
def check_rollback_allowed(timeline: Timeline, target: Instant) -> None:
    """An explicit rollback's preconditions: a pending compaction is not rolled back (it is retried);
    a completed write is rolled back only when no write completed after it, and never while a
    savepoint keeps it. InvalidOperation otherwise."""
    if target.action == Action.COMPACTION:
        raise InvalidOperation(f"{target.requested} is a pending compaction",
                               hint="run the compaction instead of rolling it back")
    if target.is_completed:
        later = [i for i in timeline.instants if i.is_completed and i.action in DATA_WRITES
                 and i.requested > target.requested]
        if later:
            raise InvalidOperation(f"cannot roll back {target.requested}: {later[0].requested} completed after it",
                                   hint="roll back the later commits first, or restore to a savepoint")
        if target.requested in savepoint_times(timeline):
            raise InvalidOperation(f"{target.requested} is savepointed", hint="delete the savepoint first")
# --8<-- [end:rollback_allowed]


__all__ = [
    "RollbackPlan", "RollbackRequest", "check_rollback_allowed", "groups_of_files", "instant_to_rollback",
    "plan_rollback",
]
