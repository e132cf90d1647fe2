"""Compaction: when to schedule one, what its plan holds, and which file groups pending plans hold.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``ScheduleCompactionActionExecutor`` (the NUM_COMMITS trigger), ``BaseHoodieCompactionPlanGenerator``
and ``CompactionUtils`` (the plan, the file groups under pending compactions),
``HoodieCompactionConfig`` (``hoodie.compact.inline.max.delta.commits``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from spec.actions.file_refs import GroupId, SliceRef
from spec.config.registry import default
from spec.errors import InvalidConfig
from spec.file_group.file_naming import log_file_sort_key, parse_log_file_name
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieCompactionPlan, parse_avro_metadata
from spec.timeline.instant import Action, Instant
from spec.timeline.layout import read_instant_content


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
      compaction instant (``CompletionTimeQueryViewV2.isCompletedBefore``) — a log completing later
      belongs to the slice the compaction opens (docs/spec/file_system_view.md). A deltacommit that
      archival moved off the active timeline completed when the archived timeline says: its log is
      taken like any other (the active timeline alone would leave it out, and the compaction would
      write the group's new base file without its records).
    """
    logs = sorted((parse_log_file_name(n) for n in slice_.log_files), key=log_file_sort_key)
    if table_version >= 8:
        logs = [lf for lf in logs if timeline.is_completed_before(compaction_instant, lf.instant)]
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


# --8<-- [start:pending_compactions]
def compaction_plan_of(instant: str, record: HoodieCompactionPlan) -> CompactionPlan:
    """The plan a ``HoodieCompactionPlan`` record states: per operation the partition, file id, base
    instant and the *names* of its base and log files (a missing id or partition reads as "")."""
    return CompactionPlan(instant, tuple(
        CompactionOperation(op.partition_path or "", op.file_id or "", op.base_instant_time or "",
                            posixpath.basename(op.data_file_path) if op.data_file_path else None,
                            tuple(posixpath.basename(n) for n in op.delta_file_paths or ()))
        for op in record.operations or ()))


def groups_under_compaction(pending: Iterable[CompactionPlan]) -> dict[GroupId, str]:
    """Per file group some pending compaction plan holds, that compaction's instant (Hudi's
    ``CompactionUtils.getAllPendingCompactionOperations``): a write's log joins the slice the
    compaction opens, a new compaction leaves the group out."""
    return {(op.partition_path, op.file_id): plan.instant for plan in pending for op in plan.operations}


def compaction_base_instants(pending: Iterable[CompactionPlan]) -> dict[GroupId, str]:
    """Per file group some pending compaction plan holds, the base instant of the slice it compacts:
    the cleaner keeps that slice and every later one (``needed_by_pending_compaction``)."""
    return {(op.partition_path, op.file_id): op.base_instant for plan in pending for op in plan.operations
            if op.base_instant}
# --8<-- [end:pending_compactions]


def read_compaction_plan(storage: Storage, instant: str, layout: int) -> CompactionPlan:
    """The plan of the compaction requested at ``instant`` (in any state), read from its requested file, where
    the plan lives (``CompactionUtils.getCompactionPlan``)."""
    content = read_instant_content(storage, f"{instant}.compaction.requested", layout)
    return compaction_plan_of(instant, parse_avro_metadata(content, HoodieCompactionPlan))


def pending_compaction_plans(storage: Storage, timeline: Timeline) -> list[CompactionPlan]:
    """The plans of the pending (requested or inflight) compactions on ``timeline``."""
    return [read_compaction_plan(storage, inst.requested, timeline.layout)
            for inst in timeline.pending_compactions().instants]


__all__ = [
    "CompactionConfig", "CompactionOperation", "CompactionPlan", "compactable_log_files", "compaction_base_instants",
    "compaction_plan_of", "delta_commits_since_last_compaction", "groups_under_compaction",
    "pending_compaction_plans", "plan_compaction", "read_compaction_plan", "should_schedule_compaction",
]
