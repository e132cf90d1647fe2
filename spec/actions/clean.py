"""Clean: which commits a clean retains, and which files of which slices its plan deletes.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``CleanPlanner``
(``getEarliestCommitToRetain``, ``getFilesToCleanKeepingLatestCommits``,
``getFilesToCleanKeepingLatestVersions``, ``getReplacedFilesEligibleToClean``), ``CleanerUtils`` and
``HoodieCleanConfig`` (``hoodie.cleaner.*``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from spec.actions.file_refs import GroupId, GroupRef, SliceRef
from spec.config.registry import (
    CLEAN_POLICIES,
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    default,
)
from spec.errors import InvalidConfig, InvalidOperation
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import WRITE_ACTIONS, Instant, format_instant_time, parse_instant_time


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
    completed = list(timeline.commits_timeline().instants)
    if config.policy == KEEP_LATEST_COMMITS and len(completed) > config.commits_retained > 0:
        nth = completed[len(completed) - config.commits_retained]
        pending = [i for i in timeline.instants if not i.is_completed and i.action in WRITE_ACTIONS]
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


def cutoff_for_hours(now: str, hours: int) -> str:
    """The instant time ``hours`` before ``now`` (the KEEP_LATEST_BY_HOURS boundary)."""
    return format_instant_time(parse_instant_time(now) - timedelta(hours=hours))


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
    completed = list(timeline.commits_timeline().instants)
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


__all__ = [
    "CLEAN_POLICIES", "KEEP_LATEST_BY_HOURS", "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "CleanConfig",
    "CleanPlan", "cutoff_for_hours", "earliest_commit_to_retain", "needed_by_pending_compaction", "plan_clean",
]
