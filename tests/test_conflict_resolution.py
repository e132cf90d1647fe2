"""The conflict rules of optimistic concurrency control (``spec.timeline.conflict_resolution``), as pure functions:
which instants a committing writer checks, by table version and type, and when a compaction may be
scheduled beside a pending write."""

from __future__ import annotations

from spec.index import bucket_identifier
from spec.timeline.active_timeline import Timeline
from spec.timeline.conflict_resolution import (
    BUCKET_DIGITS,
    ConcurrentOperation,
    candidate_instants,
    conflict_unit,
    find_write_conflict,
    has_conflict,
    may_schedule_compaction,
)
from spec.timeline.instant import Action, Instant, State

T0, T1, T2, T3, T4 = (f"2026010100000{i}000" for i in range(5))


def _timeline(*instants: Instant) -> Timeline:
    return Timeline(tuple(sorted(instants)), 2)


def test_a_compaction_scheduled_after_the_writer_is_a_candidate_only_before_version_8() -> None:
    tl = _timeline(Instant(T0, Action.DELTA_COMMIT, State.COMPLETED), Instant(T1, Action.DELTA_COMMIT, State.INFLIGHT),
                   Instant(T2, Action.COMPACTION, State.REQUESTED))
    at_start = frozenset({T0})
    assert [i.requested for i in candidate_instants(tl, T1, at_start, 6, True)] == [T2]
    assert candidate_instants(tl, T1, at_start, 8, True) == []
    assert candidate_instants(tl, T1, at_start, 9, True) == []


def test_a_completed_compaction_is_a_candidate_on_merge_on_read_only_before_version_8() -> None:
    tl = _timeline(Instant(T0, Action.DELTA_COMMIT, State.COMPLETED), Instant(T1, Action.DELTA_COMMIT, State.INFLIGHT),
                   Instant(T2, Action.COMMIT, State.COMPLETED), Instant(T3, Action.DELTA_COMMIT, State.COMPLETED))
    at_start = frozenset({T0})
    assert [i.requested for i in candidate_instants(tl, T1, at_start, 6, True)] == [T2, T3]
    assert [i.requested for i in candidate_instants(tl, T1, at_start, 8, True)] == [T3]
    assert [i.requested for i in candidate_instants(tl, T1, at_start, 8, False)] == [T2, T3]  # copy-on-write


def test_a_compaction_requested_before_the_writer_resolves_later_ones_conflict() -> None:
    g = frozenset({("a", "f1")})
    writer = ConcurrentOperation(T2, Action.DELTA_COMMIT, "UPSERT", g)
    assert not has_conflict(writer, ConcurrentOperation(T1, Action.COMPACTION, "COMPACT", g))
    assert has_conflict(writer, ConcurrentOperation(T3, Action.COMPACTION, "COMPACT", g))
    assert not has_conflict(writer, ConcurrentOperation(T3, Action.COMPACTION, "COMPACT", frozenset({("a", "f2")})))


def test_scheduling_waits_for_an_earlier_pending_write_only_for_an_eager_single_writer_before_version_8() -> None:
    tl = _timeline(Instant(T0, Action.DELTA_COMMIT, State.COMPLETED), Instant(T1, Action.DELTA_COMMIT, State.INFLIGHT))
    blocker = may_schedule_compaction(tl, T2, 6, multi_writer=False)
    assert blocker is not None and blocker.requested == T1
    assert may_schedule_compaction(tl, T2, 6, multi_writer=True) is None
    assert may_schedule_compaction(tl, T2, 8, multi_writer=False) is None
    later = _timeline(Instant(T0, Action.DELTA_COMMIT, State.COMPLETED),
                      Instant(T3, Action.DELTA_COMMIT, State.INFLIGHT))
    assert may_schedule_compaction(later, T2, 6, multi_writer=False) is None


def test_a_bucket_index_conflicts_by_bucket_not_file_group() -> None:
    """Two new file groups of bucket 2 (different file ids) conflict under the bucket strategy, not by file group;
    bucket 2 of another partition, or bucket 3, does not; a file id without a bucket number stays itself."""
    mine = ConcurrentOperation(T2, Action.COMMIT, "UPSERT", frozenset({("a", "00000002-aaaa-0")}))
    same_bucket = ConcurrentOperation(T1, Action.COMMIT, "UPSERT", frozenset({("a", "00000002-bbbb-0")}))
    assert not has_conflict(mine, same_bucket)
    assert has_conflict(mine, same_bucket, by_bucket=True)
    found = find_write_conflict(mine, [same_bucket], by_bucket=True)
    assert found is not None and found[1] == mine.file_groups
    for other in ({("b", "00000002-bbbb-0")}, {("a", "00000003-aaaa-0")}):
        assert not has_conflict(mine, ConcurrentOperation(T1, Action.COMMIT, "UPSERT", frozenset(other)), True)
    assert conflict_unit(("a", "f1"), True) == ("a", "f1")
    assert BUCKET_DIGITS == bucket_identifier.BUCKET_DIGITS
    assert conflict_unit(("a", "00000012-x"), True) == ("a", "12")
