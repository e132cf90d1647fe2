"""Table services as planning rules: compaction, clean, rollback, restore and archival.

Every function here is pure: it looks at file groups and slices (``GroupRef`` / ``SliceRef``,
built from any file-system view with ``SliceRef.of``) and at the timeline, and returns a frozen
plan. Executing a plan (writing the plan file, deleting files, appending command blocks) is
the writer's job; what the plan contains is the rule.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``ScheduleCompactionActionExecutor``,
``CompactionUtils``, ``BaseHoodieCompactionPlanGenerator``, ``CleanPlanner``, ``CleanerUtils``,
``HoodieCleanConfig``, ``HoodieCompactionConfig``, ``HoodieTimelineArchiver``, rollback strategies
(marker and listing based) and ``RestorePlanActionExecutor``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from spec.config_registry import (
    CLEAN_POLICIES,
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    default,
)
from spec.errors import InstantNotFound, InvalidConfig, InvalidOperation
from spec.file_naming import (
    ROLLBACK_WRITE_TOKEN,
    LogFileName,
    log_file_sort_key,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.timeline import Action, Instant, Timeline, format_instant_time, parse_instant_time

COPY_ON_WRITE: Final = "COPY_ON_WRITE"
MERGE_ON_READ: Final = "MERGE_ON_READ"

GroupId = tuple[str, str]
"""A file group's identity: (partition path, file id)."""


# --- inputs: slices and groups as the planners see them ----------------------------------------

def _file_name(x: Any) -> str:
    """A file name from a name string or a parsed name object (``.format()``) or a path."""
    if isinstance(x, str):
        return x.rsplit("/", 1)[-1]
    fmt = getattr(x, "format", None)
    if callable(fmt):
        return str(fmt())
    name = getattr(x, "name", None)
    if isinstance(name, str):
        return name.rsplit("/", 1)[-1]
    raise InvalidOperation(f"{x!r} is not a file name", hint="pass names or BaseFileName/LogFileName objects")


@dataclass(frozen=True)
class SliceRef:
    """A file slice: the base file (None in a log-only slice) and its log files, keyed by base instant."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None = None
    log_files: tuple[str, ...] = ()

    @staticmethod
    def of(s: Any) -> SliceRef:
        """The slice of any object with ``partition_path, file_id, base_instant, base_file, log_files``."""
        base = getattr(s, "base_file", None)
        return SliceRef(str(s.partition_path), str(s.file_id), str(s.base_instant),
                        None if base is None else _file_name(base),
                        tuple(_file_name(lf) for lf in getattr(s, "log_files", ())))

    @property
    def files(self) -> tuple[str, ...]:
        """The slice's file names: its base file first (if any), then its log files."""
        return ((self.base_file,) if self.base_file else ()) + self.log_files


@dataclass(frozen=True)
class GroupRef:
    """A file group: its slices (any order), and the replacecommit that replaced it, if any."""

    partition_path: str
    file_id: str
    slices: tuple[SliceRef, ...]
    replaced_by: str | None = None

    @property
    def id(self) -> GroupId:
        """The group's identity: (partition path, file id)."""
        return (self.partition_path, self.file_id)

    def newest_first(self) -> tuple[SliceRef, ...]:
        """The group's slices, newest base instant first."""
        return tuple(sorted(self.slices, key=lambda s: s.base_instant, reverse=True))


def _completed_commits(timeline: Timeline) -> list[Instant]:
    """Completed commit, deltacommit and replacecommit instants (a completed compaction is a commit)."""
    return list(timeline.commits_timeline().instants)


# =============================================================================================
# Compaction
# =============================================================================================

# --8<-- [start:compaction_trigger]
@dataclass(frozen=True)
class CompactionConfig:
    """``hoodie.compact.inline.max.delta.commits`` (default 5) with the NUM_COMMITS trigger (default)."""

    max_delta_commits: int = default("compact_max_delta_commits")

    def __post_init__(self) -> None:
        if self.max_delta_commits < 1:
            raise InvalidConfig(f"max_delta_commits {self.max_delta_commits} must be >= 1")


def delta_commits_since_last_compaction(timeline: Timeline) -> tuple[Instant, ...]:
    """The deltacommits (any state) after the last completed ``commit`` (on MOR: a compaction);
    every deltacommit when there was none (Hudi's ``getDeltaCommitsSinceLatestCompaction``)."""
    commits = [i for i in timeline.instants if i.is_completed and i.action == Action.COMMIT]
    after = commits[-1].requested if commits else ""
    return tuple(i for i in timeline.instants if i.action == Action.DELTA_COMMIT and i.requested > after)


def should_schedule_compaction(timeline: Timeline, config: CompactionConfig) -> bool:
    """NUM_COMMITS: schedule once at least ``max_delta_commits`` deltacommits followed the last compaction."""
    return len(delta_commits_since_last_compaction(timeline)) >= config.max_delta_commits
# --8<-- [end:compaction_trigger]


@dataclass(frozen=True)
class CompactionOperation:
    """One slice to compact: HoodieCompactionOperation (base instant, base file, log files, file id, partition)."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]


@dataclass(frozen=True)
class CompactionPlan:
    """The plan a ``compaction.requested`` file holds. Operations are in (partition, file id) order;
    Hudi's default strategy orders them by log size, which is implementation-chosen."""

    instant: str
    operations: tuple[CompactionOperation, ...]

    def group_ids(self) -> frozenset[GroupId]:
        """The file groups the plan compacts, as (partition path, file id)."""
        return frozenset((op.partition_path, op.file_id) for op in self.operations)


# --8<-- [start:compaction_plan]
def compactable_log_files(slice_: SliceRef, compaction_instant: str, timeline: Timeline,
                          table_version: int) -> tuple[str, ...]:
    """The log files of a slice that a compaction at ``compaction_instant`` takes, in reading order.

    - v6: every log file of the latest slice (blocks of uncommitted instants are skipped when read);
    - v8: only logs whose deltacommit (the instant in the log's name) *completed before* the
      compaction instant — a log completing later belongs to the slice the compaction opens (§6.1).
    """
    logs = sorted((parse_log_file_name(n) for n in slice_.log_files), key=log_file_sort_key)
    if table_version >= 8:
        def done_before(lf: LogFileName) -> bool:
            completed = timeline.completion_time(lf.instant)
            return completed is not None and completed < compaction_instant
        logs = [lf for lf in logs if done_before(lf)]
    return tuple(lf.format() for lf in logs)


def plan_compaction(instant: str, latest_slices: Iterable[SliceRef], timeline: Timeline, table_version: int,
                    excluded_groups: Collection[GroupId] = ()) -> CompactionPlan | None:
    """The compaction plan at ``instant``: one operation per latest slice that has log files to compact,
    skipping file groups already under a pending compaction (or clustering) — ``excluded_groups``.
    None when nothing qualifies (Hudi then writes no ``compaction.requested``)."""
    ops = []
    for s in latest_slices:
        if (s.partition_path, s.file_id) in excluded_groups:
            continue
        logs = compactable_log_files(s, instant, timeline, table_version)
        if logs:
            ops.append(CompactionOperation(s.partition_path, s.file_id, s.base_instant, s.base_file, logs))
    if not ops:
        return None
    ops.sort(key=lambda op: (op.partition_path, op.file_id))
    return CompactionPlan(instant, tuple(ops))
# --8<-- [end:compaction_plan]


# =============================================================================================
# Clean
# =============================================================================================

@dataclass(frozen=True)
class CleanConfig:
    """``hoodie.cleaner.policy`` (KEEP_LATEST_COMMITS), ``.commits.retained`` (10),
    ``.fileversions.retained`` (3), ``.hours.retained`` (24) — HoodieCleanConfig defaults."""

    policy: str = default("clean_policy")
    commits_retained: int = default("clean_commits_retained")
    file_versions_retained: int = default("clean_file_versions_retained")
    hours_retained: int = default("clean_hours_retained")

    def __post_init__(self) -> None:
        if self.policy not in CLEAN_POLICIES:
            raise InvalidConfig(f"unknown cleaner policy {self.policy!r}", hint=f"use one of {CLEAN_POLICIES}")
        if self.commits_retained < 0 or self.file_versions_retained < 1 or self.hours_retained < 0:
            raise InvalidConfig("cleaner retention counts must be non-negative (file versions at least 1)")


# --8<-- [start:earliest_to_retain]
def earliest_commit_to_retain(timeline: Timeline, config: CleanConfig, now: str | None = None) -> Instant | None:
    """The oldest completed commit whose state queries must still be able to read.

    - KEEP_LATEST_COMMITS, with more than N = ``commits_retained`` > 0 completed commits: the N-th
      newest completed commit — but never later than the earliest pending write or compaction
      (then: the latest completed commit before it);
    - KEEP_LATEST_BY_HOURS: the first completed commit requested at or after ``now`` − hours;
    - otherwise (N = 0 included: Hudi's ``nthInstant`` finds none) and for KEEP_LATEST_FILE_VERSIONS: None.
    """
    completed = _completed_commits(timeline)
    if config.policy == KEEP_LATEST_COMMITS and len(completed) > config.commits_retained > 0:
        nth = completed[len(completed) - config.commits_retained]
        pending = [i for i in timeline.instants if not i.is_completed and i.action in _WRITE_AND_COMPACTION]
        if pending and nth.requested > pending[0].requested:
            before = [i for i in completed if i.requested < pending[0].requested]
            return before[-1] if before else None
        return nth
    if config.policy == KEEP_LATEST_BY_HOURS:
        if now is None:
            raise InvalidOperation("KEEP_LATEST_BY_HOURS needs the current time", hint="pass now=<instant time>")
        cutoff = cutoff_for_hours(now, config.hours_retained)
        return next((i for i in completed if i.requested >= cutoff), None)
    return None
# --8<-- [end:earliest_to_retain]


_WRITE_AND_COMPACTION: Final = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT,
                                          Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING})


@dataclass(frozen=True)
class CleanPlan:
    """HoodieCleanerPlan: the policy, the earliest instant retained, and the files to delete per partition."""

    policy: str
    earliest_instant_to_retain: Instant | None
    last_completed_commit: str
    files_to_delete: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """An empty plan schedules nothing: Hudi writes no clean instant for it."""
        return not any(self.files_to_delete.values())

    def all_files(self) -> frozenset[tuple[str, str]]:
        """Every file the plan deletes, as (partition path, file name)."""
        return frozenset((p, f) for p, fs in self.files_to_delete.items() for f in fs)


def needed_by_pending_compaction(s: SliceRef, pending_compaction_base: Mapping[GroupId, str]) -> bool:
    """A slice at or after the base instant of its group's pending compaction operation is needed by it."""
    base = pending_compaction_base.get((s.partition_path, s.file_id))
    return base is not None and s.base_instant >= base


def _savepointed(s: SliceRef, savepointed_files: Collection[str]) -> bool:
    return any(f in savepointed_files for f in s.files)


# --8<-- [start:clean_plan]
def _clean_by_commits(group: GroupRef, earliest: Instant, savepointed_files: Collection[str],
                      pending: Mapping[GroupId, str]) -> list[SliceRef]:
    """KEEP_LATEST_COMMITS / BY_HOURS in one group: delete slices older than the earliest retained commit,
    except the latest slice, the last slice before that commit (a query at it still reads that slice),
    savepointed slices and slices a pending compaction needs."""
    slices = group.newest_first()
    latest = slices[0].base_instant
    before = next((s.base_instant for s in slices if s.base_instant < earliest.requested), None)
    return [s for s in slices
            if s.base_instant not in (latest, before)
            and not _savepointed(s, savepointed_files)
            and not needed_by_pending_compaction(s, pending)
            and s.base_instant < earliest.requested]


def _clean_by_versions(group: GroupRef, versions: int, savepointed_files: Collection[str],
                       pending: Mapping[GroupId, str]) -> list[SliceRef]:
    """KEEP_LATEST_FILE_VERSIONS in one group: keep the newest ``versions`` slices (one fewer when a
    pending compaction already holds the group's newest slices), never a savepointed slice."""
    candidates = [s for s in group.newest_first() if not needed_by_pending_compaction(s, pending)]
    keep = versions - (1 if group.id in pending else 0)
    return [s for s in candidates[max(keep, 0):] if not _savepointed(s, savepointed_files)]


def plan_clean(groups: Iterable[GroupRef], timeline: Timeline, config: CleanConfig,
               savepointed_files: Collection[str] = frozenset(),
               pending_compaction_base: Mapping[GroupId, str] | None = None,
               now: str | None = None) -> CleanPlan:
    """The cleaner plan (Hudi's CleanPlanner): which files of which slices to delete.

    Replaced file groups go whole once their replacecommit is older than the earliest retained
    commit (any time under KEEP_LATEST_FILE_VERSIONS). Nothing is cleaned under the commit-based
    policies while there is no earliest commit to retain.
    """
    pending = pending_compaction_base or {}
    completed = _completed_commits(timeline)
    earliest = earliest_commit_to_retain(timeline, config, now)
    doomed: dict[str, list[str]] = {}
    by_commits = config.policy in (KEEP_LATEST_COMMITS, KEEP_LATEST_BY_HOURS)
    if not (by_commits and earliest is None):
        for g in groups:
            if g.replaced_by is not None:
                if by_commits and earliest is not None and g.replaced_by >= earliest.requested:
                    continue
                dead = [s for s in g.slices if not _savepointed(s, savepointed_files)]
            elif not g.slices:
                continue
            elif by_commits:
                assert earliest is not None
                dead = _clean_by_commits(g, earliest, savepointed_files, pending)
            else:
                dead = _clean_by_versions(g, config.file_versions_retained, savepointed_files, pending)
            for s in dead:
                doomed.setdefault(g.partition_path, []).extend(s.files)
    return CleanPlan(config.policy, earliest, completed[-1].requested if completed else "",
                     {p: tuple(sorted(fs)) for p, fs in sorted(doomed.items())})
# --8<-- [end:clean_plan]


# =============================================================================================
# Rollback and restore
# =============================================================================================

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


# --8<-- [start:rollback_plan]
def plan_rollback(target: Instant, groups: Iterable[GroupRef], table_type: str, table_version: int,
                  appended_logs: Mapping[GroupId, Collection[str]] | None = None) -> RollbackPlan:
    """What rolling back ``target`` does to each file group it touched.

    - base files written by the instant (its requested time in their name) are deleted — COW,
      MOR inserts, compaction output; in v6 the logs of a rolled-back compaction's slice too;
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
        if table_type == MERGE_ON_READ and table_version >= 8:
            delete += [lf for s in slices for lf in s.log_files if parse_log_file_name(lf).instant == t]
        elif table_type == MERGE_ON_READ:
            if target.action in (Action.COMPACTION, Action.COMMIT):
                delete += [lf for s in slices for lf in s.log_files if parse_log_file_name(lf).instant == t]
            touched = appended.get(g.id, ())
            if touched:
                base = parse_log_file_name(next(iter(touched))).instant
                command_log = LogFileName(g.file_id, base, _next_log_version(g, base), ROLLBACK_WRITE_TOKEN).format()
        if delete or command_log:
            requests.append(RollbackRequest(g.partition_path, g.file_id, latest_base, tuple(sorted(delete)),
                                            command_log))
    return RollbackPlan(target, tuple(requests))
# --8<-- [end:rollback_plan]


def instant_to_rollback(timeline: Timeline, instant_time: str | None = None) -> Instant:
    """The instant a rollback targets: the named one, else the latest data-writing instant
    (commit, deltacommit, replacecommit, compaction, in any state). InstantNotFound if there is none."""
    writes = [i for i in timeline.instants if i.action in _WRITE_AND_COMPACTION]
    if instant_time is not None:
        found = [i for i in writes if i.requested == instant_time]
        if not found:
            raise InstantNotFound(f"no data-writing instant {instant_time} to roll back",
                                  hint="name a commit, deltacommit, replacecommit or compaction on the timeline")
        return found[0]
    if not writes:
        raise InstantNotFound("the timeline has no instant to roll back", hint="write something first")
    return writes[-1]


# --8<-- [start:restore_plan]
def plan_restore(timeline: Timeline, savepoint_time: str) -> tuple[Instant, ...]:
    """Restoring to a savepoint rolls back every data-writing instant requested after it
    (completed or pending, compactions included), newest first (HoodieRestorePlan)."""
    if not any(i.action == Action.SAVEPOINT and i.is_completed and i.requested == savepoint_time
               for i in timeline.instants):
        raise InstantNotFound(f"no completed savepoint at {savepoint_time}",
                              hint="restore only to a savepoint that is on the timeline")
    later = [i for i in timeline.instants if i.action in _WRITE_AND_COMPACTION and i.requested > savepoint_time]
    return tuple(reversed(later))
# --8<-- [end:restore_plan]


# =============================================================================================
# Archival
# =============================================================================================

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
                 compaction: CompactionConfig = CompactionConfig()) -> tuple[Instant, ...]:
    """The instants archival moves off the active timeline (HoodieTimelineArchiver), oldest first.

    When there are more than ``keep_max_commits`` completed commits, the oldest are archived until
    ``keep_min_commits`` remain, stopping at the first savepoint, at the latest completed commit
    before the oldest pending write (so the timeline keeps no holes) and, on MOR (NUM_COMMITS
    compaction trigger), at the delta commits a future compaction trigger still counts. Completed
    clean and rollback instants older than the newest archived commit go with them.
    """
    commits = _completed_commits(timeline)
    if len(commits) <= config.keep_max_commits:
        return ()
    limit: list[str] = []
    savepoints = [i.requested for i in timeline.instants if i.action == Action.SAVEPOINT and i.is_completed]
    if savepoints:
        limit.append(savepoints[0])
    pending = [i for i in timeline.instants if not i.is_completed and i.action in _WRITE_AND_COMPACTION]
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
    bound = min(limit) if limit else None
    eligible = [c for c in commits if bound is None or c.requested < bound]
    archived = eligible[: len(commits) - config.keep_min_commits]
    if not archived:
        return ()
    newest = archived[-1].requested
    services = [i for i in timeline.instants if i.is_completed and i.action in (Action.CLEAN, Action.ROLLBACK)
                and i.requested < newest]
    return tuple(sorted(archived + services, key=lambda i: i.requested))
# --8<-- [end:archive_plan]


def cutoff_for_hours(now: str, hours: int) -> str:
    """The instant time ``hours`` before ``now`` (the KEEP_LATEST_BY_HOURS boundary)."""
    return format_instant_time(parse_instant_time(now) - timedelta(hours=hours))


__all__ = [
    "CLEAN_POLICIES", "KEEP_LATEST_BY_HOURS", "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS",
    "ArchiveConfig", "CleanConfig", "CleanPlan", "CompactionConfig", "CompactionOperation", "CompactionPlan",
    "GroupRef", "RollbackPlan", "RollbackRequest", "SliceRef", "compactable_log_files", "cutoff_for_hours",
    "delta_commits_since_last_compaction", "earliest_commit_to_retain", "instant_to_rollback",
    "needed_by_pending_compaction", "plan_archive", "plan_clean", "plan_compaction", "plan_restore",
    "plan_rollback", "should_schedule_compaction",
]
