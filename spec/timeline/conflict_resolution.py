"""Write conflicts between concurrent writers: Hudi's optimistic concurrency control, as pure functions.

Under ``hoodie.write.concurrency.mode=optimistic_concurrency_control`` writers do not hold the table
lock while they write data files; each takes it only to start its instant and again to commit
(``TransactionManager``). At commit, under the lock, ``TransactionUtils.resolveWriteConflictIfAny``
asks the conflict resolution strategy (``SimpleConcurrentFileWritesConflictResolutionStrategy``, the
default) two things:

1. **candidates** (``getCandidateInstants``): the instants that may have changed what this writer
   read — every data-writing instant (commit, deltacommit, replacecommit; a completed compaction is a
   commit) that completed after this writer started (Hudi 1.x: completion time after the writer's
   instant, ``findInstantsModifiedAfterByCompletionTime``; 0.x: after the last instant completed when
   it started), and every compaction or clustering scheduled after the writer's instant and still
   pending. We take "completed after this writer started" literally: the completed instants now on
   the timeline that were not completed when the writer created its instant, which under the lock is
   exactly what both of Hudi's rules approximate by time;
2. **conflict** (``hasConflict`` then ``resolveConflict``): the two touch a common file group
   (partition path and file id: the groups each wrote, plus those a replacecommit replaced or a
   compaction plan names). A compaction requested *before* this writer's instant is no conflict: the
   writer's files follow it. Any other overlap aborts the writer with ``HoodieWriteConflictException``
   — its write is not committed: Hudi leaves it inflight, a failed write the next writer rolls back
   (``spec.model.concurrency``).

Writers on disjoint file groups both commit.

**A bucket-indexed table** (``hoodie.index.type=BUCKET``) conflicts by bucket, not by file group: Hudi infers
``BucketIndexConcurrentFileWritesConflictResolutionStrategy`` for it (``HoodieLockConfig``'s inference of
``hoodie.write.lock.conflict.resolution.strategy``), whose ``hasConflict`` compares the (partition path, bucket
number) of every file group each write touched, the bucket read from the file id's first 8 digits
(``BucketIdentifier.bucketIdFromFileId``). Two writers that each create the same new bucket write two file
groups of different file ids; by file group they would both commit and leave the bucket with two groups,
which every later write refuses. By bucket the later of the two fails. A file id that names no bucket is
compared as itself (Hudi would fail to parse it; a bucket table has none).

The candidates depend on the table version (Hudi 1.x, ``getCandidateInstants``): before version 8
a pending compaction scheduled after the writer's instant is a candidate, and so is a completed one
(a ``commit`` on a merge-on-read table) — a log file written against the slice the compaction
closes would otherwise be left out of the new base file, so the writer loses. From version 8 on,
file slices are cut by completion time: a log file committed after a compaction was scheduled
belongs to the slice the compaction opens, so neither pending compactions nor, on merge-on-read
tables, completed ``commit`` instants are candidates — ingestion and compaction both commit.

Table services beside an ingesting writer (``BaseHoodieTableServiceClient``): a compaction or a
clean takes the lock only to write its plan (``scheduleTableService``) and again to complete
(``completeCompaction``, ``CleanActionExecutor.runClean``); it runs outside it and resolves no
conflicts at its commit (Hudi: "do not do any conflict resolution here as we do with regular
writes"). Its safety comes from the plan: a compaction plan names only committed log files, and the
cleaner never retains less than the earliest pending write needs (``spec.actions.clean``). Before
version 8 a single writer that cleans failed writes eagerly schedules no compaction while an
earlier write is pending (``may_schedule_compaction``). Archival holds the lock for its whole run.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``SimpleConcurrentFileWritesConflictResolutionStrategy`` (``getCandidateInstants``,
``getCandidateInstantsV8AndAbove``, ``getCandidateInstantsPreV8``, ``hasConflict``, ``resolveConflict``),
``ConcurrentOperation``, ``TransactionUtils.resolveWriteConflictIfAny``, ``ScheduleCompactionActionExecutor``
(``execute``), ``BaseHoodieTableServiceClient`` (``scheduleTableService``, ``completeCompaction``),
``CleanActionExecutor`` (``runClean``); Apache Hudi 1.2.0: ``BucketIndexConcurrentFileWritesConflictResolutionStrategy``
(``hasConflict``), ``HoodieLockConfig`` (``WRITE_CONFLICT_RESOLUTION_STRATEGY_CLASS_NAME``'s inference).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass

from spec.config.write_operation import WriteOperationType
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import CommitMetadata
from spec.timeline.instant import Action, Instant

GroupId = tuple[str, str]
"""(partition path, file id)."""
BUCKET_DIGITS = 8
"""The digits of a bucket index's file id that name its bucket (``spec.index.bucket_identifier.BUCKET_DIGITS``, which
this layer does not import; a test holds the two equal)."""

DATA_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
"""Completed actions that are candidates (a completed compaction or clustering is one of these)."""
TABLE_SERVICE_ACTIONS = frozenset({Action.COMPACTION, Action.CLUSTERING})
"""Pending actions that are candidates when scheduled after the writer's instant."""


@dataclass(frozen=True)
class ConcurrentOperation:
    """Hudi's ``ConcurrentOperation``: an instant and the file groups it mutates."""

    instant: str
    action: str
    operation_type: str
    file_groups: frozenset[GroupId]

    @staticmethod
    def of_commit(instant: Instant, md: CommitMetadata) -> ConcurrentOperation:
        """A (pending or completed) write from its commit metadata: the groups it wrote and replaced."""
        groups = set(md.file_ids_written())
        for partition, ids in (md.partition_to_replace_file_ids or {}).items():
            groups.update((partition, i) for i in ids)
        return ConcurrentOperation(instant.requested, instant.action, md.operation_type or "", frozenset(groups))

    @staticmethod
    def of_plan(instant: Instant, groups: Iterable[GroupId]) -> ConcurrentOperation:
        """A pending compaction (or clustering) from the file groups its plan names."""
        op = WriteOperationType.COMPACT.value if instant.action == Action.COMPACTION else "CLUSTER"
        return ConcurrentOperation(instant.requested, instant.action, op, frozenset(groups))


# --8<-- [start:conflict]
def candidate_instants(timeline: Timeline, current: str, completed_at_start: Set[str], table_version: int = 6,
                       merge_on_read: bool = False) -> list[Instant]:
    """``getCandidateInstants``: data-writing instants completed since the writer started (not in
    ``completed_at_start``), then compactions and clusterings requested after ``current`` and pending.
    From table version 8 on (``getCandidateInstantsV8AndAbove``) pending compactions are no
    candidates, nor, on a merge-on-read table, completed ``commit`` instants (compactions)."""
    v8 = table_version >= 8
    done = [i for i in timeline.instants if i.is_completed and i.action in DATA_ACTIONS
            and i.requested != current and i.requested not in completed_at_start
            and not (v8 and merge_on_read and i.action == Action.COMMIT)]
    services = {Action.CLUSTERING} if v8 else TABLE_SERVICE_ACTIONS
    pending = [i for i in timeline.instants if not i.is_completed and i.action in services
               and i.requested > current]
    return done + pending


def conflict_unit(group: GroupId, by_bucket: bool) -> GroupId:
    """What two writes conflict on for ``group``: the file group itself, or under a bucket index its
    (partition path, bucket number) (``BucketIndexConcurrentFileWritesConflictResolutionStrategy``,
    ``BucketIdentifier.partitionBucketIdStr``; a file id without 8 leading digits stays itself)."""
    head = group[1][:BUCKET_DIGITS]
    if by_bucket and len(head) == BUCKET_DIGITS and head.isdigit():
        return group[0], str(int(head))
    return group


def common_groups(this: ConcurrentOperation, other: ConcurrentOperation, by_bucket: bool = False
                  ) -> frozenset[GroupId]:
    """The file groups of ``this`` that ``other`` touched too: the same group, or under a bucket index
    (``by_bucket``) a group of the same bucket."""
    theirs = {conflict_unit(g, by_bucket) for g in other.file_groups}
    return frozenset(g for g in this.file_groups if conflict_unit(g, by_bucket) in theirs)


def has_conflict(this: ConcurrentOperation, other: ConcurrentOperation, by_bucket: bool = False) -> bool:
    """``hasConflict`` and ``resolveConflict`` together: a common file group (``by_bucket``: a common bucket),
    unless ``other`` is a compaction requested before this writer's instant."""
    if not common_groups(this, other, by_bucket):
        return False
    return not (other.operation_type == WriteOperationType.COMPACT.value and other.instant < this.instant)


def find_write_conflict(this: ConcurrentOperation, others: Iterable[ConcurrentOperation], by_bucket: bool = False
                        ) -> tuple[ConcurrentOperation, frozenset[GroupId]] | None:
    """The first of ``others`` this write conflicts with, and its file groups the other touched (``by_bucket``:
    in the same bucket); None if none."""
    for other in others:
        if has_conflict(this, other, by_bucket):
            return other, common_groups(this, other, by_bucket)
    return None


def may_schedule_compaction(timeline: Timeline, instant: str, table_version: int, multi_writer: bool) -> Instant | None:
    """``ScheduleCompactionActionExecutor.execute``: the pending write that stops a compaction being
    scheduled at ``instant``, or None. Only before table version 8, for a single writer that rolls
    failed writes back eagerly: a pending write (not a compaction) requested at or before ``instant``
    stops it — Hudi skips scheduling. Under optimistic concurrency control (failed writes cleaned
    lazily) or from version 8 on nothing stops it: the writer's commit resolves the conflict."""
    if table_version >= 8 or multi_writer:
        return None
    pending = [i for i in timeline.instants if not i.is_completed and i.action in (Action.COMMIT, Action.DELTA_COMMIT,
                                                                                    Action.REPLACE_COMMIT)]
    return pending[0] if pending and pending[0].requested <= instant else None
# --8<-- [end:conflict]


def describe_groups(groups: Iterable[GroupId], limit: int = 3) -> str:
    """File groups for a message: ``partition/file id``, the first few."""
    shown = sorted(groups)
    text = ", ".join(f"{p}/{f}" if p else f for p, f in shown[:limit])
    return text + (f" and {len(shown) - limit} more" if len(shown) > limit else "")


def completed_set(timeline: Timeline) -> frozenset[str]:
    """The requested times of the completed instants: what a writer records when it starts."""
    return frozenset(i.requested for i in timeline.instants if i.is_completed)


def operations_of(candidates: Iterable[Instant], metadata: Mapping[str, CommitMetadata],
                  plans: Mapping[str, Iterable[GroupId]]) -> list[ConcurrentOperation]:
    """The candidates as operations: completed ones from their commit metadata, pending table
    services from their plans (keyed by requested time)."""
    out = []
    for inst in candidates:
        if inst.is_completed:
            out.append(ConcurrentOperation.of_commit(inst, metadata[inst.requested]))
        else:
            out.append(ConcurrentOperation.of_plan(inst, plans.get(inst.requested, ())))
    return out


__all__ = ["ConcurrentOperation", "candidate_instants", "common_groups", "completed_set", "conflict_unit",
           "describe_groups", "find_write_conflict", "has_conflict", "may_schedule_compaction", "operations_of"]
