"""Table-service planning: a worked test per rule with the numbers it implies, and clean's safety property."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.interface.ops import CreateTable
from spec.actions.archive import ArchiveConfig, plan_archive
from spec.actions.clean import CleanConfig, earliest_commit_to_retain, plan_clean
from spec.actions.compaction import (
    CompactionConfig,
    CompactionOperation,
    CompactionPlan,
    compaction_base_instants,
    compaction_plan_of,
    delta_commits_since_last_compaction,
    groups_under_compaction,
    plan_compaction,
    should_schedule_compaction,
)
from spec.actions.file_refs import GroupRef, SliceRef
from spec.actions.restore import plan_restore, savepoint_to_restore
from spec.actions.rollback import check_rollback_allowed, groups_of_files, instant_to_rollback, plan_rollback
from spec.actions.savepoint import last_clean, savepoint_instant
from spec.errors import InstantNotFound, InvalidConfig, InvalidOperation
from spec.file_group.file_naming import BaseFileName, LogFileName
from spec.model import TableModel
from spec.model.operations import Clean, Savepoint, Write
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieCompactionOperation, HoodieCompactionPlan
from spec.timeline.instant import Action, Instant, State


def t(n: int) -> str:
    """Instant n: one second apart, so they sort as numbers."""
    return f"20240101{n // 3600:02d}{n // 60 % 60:02d}{n % 60:02d}000"


def done(n: int, action: str = Action.COMMIT, completed: int | None = None) -> Instant:
    return Instant(t(n), action, State.COMPLETED, t(completed) if completed is not None else None)


def pending(n: int, action: str = Action.COMMIT, state: State = State.INFLIGHT) -> Instant:
    return Instant(t(n), action, state)


def tl(*instants: Instant, layout: int = 1) -> Timeline:
    return Timeline(tuple(sorted(instants, key=lambda i: i.requested)), layout)


def base(fid: str, n: int) -> str:
    return BaseFileName(fid, "0-1-0", t(n)).format()


def log(fid: str, n: int, version: int = 1, token: str = "0-1-0") -> str:
    return LogFileName(fid, t(n), version, token).format()


def cow_group(fid: str, *versions: int, p: str = "p1", replaced_by: str | None = None) -> GroupRef:
    return GroupRef(p, fid, tuple(SliceRef(p, fid, t(n), base(fid, n)) for n in versions), replaced_by)


# --- compaction -----------------------------------------------------------------------------------

def test_compaction_triggers_after_five_delta_commits_by_default() -> None:
    cfg = CompactionConfig()
    four = tl(*(done(n, Action.DELTA_COMMIT) for n in range(1, 5)))
    assert len(delta_commits_since_last_compaction(four)) == 4
    assert not should_schedule_compaction(four, cfg)
    five = tl(*four.instants, done(5, Action.DELTA_COMMIT))
    assert should_schedule_compaction(five, cfg)
    # a completed compaction (a commit on MOR) resets the count; pending deltacommits count
    after = tl(*five.instants, done(6), done(7, Action.DELTA_COMMIT), pending(8, Action.DELTA_COMMIT))
    assert [i.requested for i in delta_commits_since_last_compaction(after)] == [t(7), t(8)]
    assert should_schedule_compaction(after, CompactionConfig(max_delta_commits=2))
    assert not should_schedule_compaction(after, cfg)
    with pytest.raises(InvalidConfig):
        CompactionConfig(max_delta_commits=0)


def test_compaction_plan_v6_takes_every_log_of_latest_slices_with_logs() -> None:
    timeline = tl(done(1, Action.DELTA_COMMIT), done(2, Action.DELTA_COMMIT), pending(3, Action.DELTA_COMMIT))
    with_logs = SliceRef("p1", "g1", t(1), base("g1", 1), (log("g1", 1, 2), log("g1", 1, 1)))
    no_logs = SliceRef("p1", "g2", t(1), base("g2", 1))
    excluded = SliceRef("p2", "g3", t(1), base("g3", 1), (log("g3", 1),))
    plan = plan_compaction(t(10), [with_logs, no_logs, excluded], timeline, 6, excluded_groups={("p2", "g3")})
    assert plan is not None and plan.instant == t(10)
    (op,) = plan.operations
    assert (op.partition_path, op.file_id, op.base_instant, op.base_file) == ("p1", "g1", t(1), base("g1", 1))
    assert op.log_files == (log("g1", 1, 1), log("g1", 1, 2))  # reading order: by version
    assert plan_compaction(t(10), [no_logs], timeline, 6) is None


def test_compaction_plan_v8_takes_only_logs_completed_before_the_compaction_instant() -> None:
    # base at 100; deltacommit 110 completes at 115, deltacommit 120 completes at 140; compaction at 130
    timeline = tl(done(100, Action.DELTA_COMMIT, 101), done(110, Action.DELTA_COMMIT, 115),
                  done(120, Action.DELTA_COMMIT, 140), pending(125, Action.DELTA_COMMIT), layout=2)
    s = SliceRef("p", "g", t(100), base("g", 100), (log("g", 110), log("g", 120), log("g", 125)))
    plan = plan_compaction(t(130), [s], timeline, 8)
    assert plan is not None
    assert plan.operations[0].log_files == (log("g", 110),)
    # in v6 the same slice would hand over all three
    assert len(plan_compaction(t(130), [s], timeline, 6).operations[0].log_files) == 3  # type: ignore[union-attr]
    # nothing completed before 112 → no plan
    assert plan_compaction(t(112), [s], timeline, 8) is None


# --- clean ----------------------------------------------------------------------------------------

def test_keep_latest_commits_worked_example() -> None:
    # 5 commits, 2 retained: earliest retained = the 2nd newest (c4); keep c5 (latest), c4 (retained),
    # c3 (last version before c4, a query at c4's start may read it); delete c1 and c2.
    timeline = tl(*(done(n) for n in range(1, 6)))
    cfg = CleanConfig(commits_retained=2)
    assert earliest_commit_to_retain(timeline, cfg) == done(4)
    plan = plan_clean([cow_group("g", 1, 2, 3, 4, 5)], timeline, cfg)
    assert plan.files_to_delete == {"p1": (base("g", 1), base("g", 2))}
    assert plan.earliest_instant_to_retain == done(4) and plan.last_completed_commit == t(5)
    # a group untouched since c1 keeps its only slice
    assert plan_clean([cow_group("h", 1)], timeline, cfg).is_empty
    # not more than N commits → nothing to clean
    assert plan_clean([cow_group("g", 1, 2, 3, 4, 5)], timeline, CleanConfig(commits_retained=5)).is_empty
    # default: 10 retained
    assert earliest_commit_to_retain(tl(*(done(n) for n in range(1, 12))), CleanConfig()) == done(2)


def test_earliest_commit_to_retain_stops_before_the_earliest_pending_write() -> None:
    timeline = tl(done(1), done(2), pending(3), done(4), done(5))
    # 4 completed, 1 retained → nth = c5, but c3 is pending → the latest completed before c3 = c2
    assert earliest_commit_to_retain(timeline, CleanConfig(commits_retained=1)) == done(2)
    # a pending compaction counts as pending too
    assert earliest_commit_to_retain(tl(done(1), done(2), pending(3, Action.COMPACTION, State.REQUESTED),
                                        done(4)), CleanConfig(commits_retained=1)) == done(2)


def test_keep_latest_file_versions_worked_example() -> None:
    timeline = tl(*(done(n) for n in range(1, 5)))
    cfg = CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS", file_versions_retained=2)
    plan = plan_clean([cow_group("g", 1, 2, 3, 4)], timeline, cfg)
    assert plan.files_to_delete == {"p1": (base("g", 1), base("g", 2))}
    assert plan.earliest_instant_to_retain is None
    # a pending compaction at 5 holds the group: slices at/after its base (4) are spared and one
    # version fewer is kept among the rest → keep 3, delete 1 and 2
    mor = GroupRef("p1", "g", tuple(SliceRef("p1", "g", t(n), base("g", n), (log("g", n),)) for n in (1, 2, 3, 4)))
    plan = plan_clean([mor], timeline, cfg, pending_compaction_base={("p1", "g"): t(4)})
    assert plan.files_to_delete == {"p1": tuple(sorted([base("g", 1), log("g", 1), base("g", 2), log("g", 2)]))}


def test_keep_latest_by_hours_worked_example() -> None:
    # commits at 00:00, 01:00, 02:00, 03:00; now 03:00, 2 hours retained → cutoff 01:00 → earliest = c(01:00);
    # keep 03:00 (latest), 02:00, 01:00, and 00:00 is the last version before 01:00 → kept too.
    hours = [0, 3600, 7200, 10800]
    timeline = tl(*(done(h) for h in hours))
    cfg = CleanConfig(policy="KEEP_LATEST_BY_HOURS", hours_retained=2)
    assert earliest_commit_to_retain(timeline, cfg, now=t(10800)) == done(3600)
    assert plan_clean([cow_group("g", *hours)], timeline, cfg, now=t(10800)).is_empty
    # one more hour: cutoff 02:00 → 00:00 goes
    later = tl(*timeline.instants, done(14400))
    plan = plan_clean([cow_group("g", *hours, 14400)], later, cfg, now=t(14400))
    assert plan.files_to_delete == {"p1": (base("g", 0),)}
    with pytest.raises(Exception, match="current time"):
        earliest_commit_to_retain(timeline, cfg)


def test_clean_spares_savepointed_slices_and_pending_compaction_slices() -> None:
    timeline = tl(*(done(n) for n in range(1, 6)))
    cfg = CleanConfig(commits_retained=1)  # earliest = c5; deletable: 1, 2, 3 (4 is last before c5)
    plan = plan_clean([cow_group("g", 1, 2, 3, 4, 5)], timeline, cfg, savepointed_files={base("g", 2)})
    assert plan.files_to_delete == {"p1": (base("g", 1), base("g", 3))}


def test_replaced_groups_are_cleaned_once_older_than_the_earliest_retained_commit() -> None:
    timeline = tl(done(1), done(2), done(3, Action.REPLACE_COMMIT), done(4), done(5))
    old = cow_group("old", 1, 2, replaced_by=t(3))
    assert plan_clean([old], timeline, CleanConfig(commits_retained=3)).is_empty  # E = c3: not older
    plan = plan_clean([old], timeline, CleanConfig(commits_retained=2))  # E = c4
    assert plan.files_to_delete == {"p1": (base("old", 1), base("old", 2))}


# a clean must never take a slice that a retained query needs --------------------------------------

@st.composite
def tables(draw: st.DrawFn) -> tuple[Timeline, list[GroupRef], int, frozenset[str]]:
    n = draw(st.integers(1, 12))
    timeline = tl(*(done(i) for i in range(1, n + 1)))
    groups = []
    for g in range(draw(st.integers(1, 4))):
        versions = sorted(draw(st.sets(st.integers(1, n), min_size=1)))
        groups.append(cow_group(f"g{g}", *versions))
    retained = draw(st.integers(0, n + 1))
    files = [f for g in groups for s in g.slices for f in s.files]
    savepointed = frozenset(draw(st.sets(st.sampled_from(files), max_size=2)))
    return timeline, groups, retained, savepointed


def visible_slice(group: GroupRef, as_of: str) -> SliceRef | None:
    older = [s for s in group.slices if s.base_instant <= as_of]
    return max(older, key=lambda s: s.base_instant) if older else None


@given(tables())
def test_clean_never_removes_a_slice_a_retained_query_needs(args: tuple[Timeline, list[GroupRef], int,
                                                                        frozenset[str]]) -> None:
    timeline, groups, retained, savepointed = args
    cfg = CleanConfig(commits_retained=retained)
    plan = plan_clean(groups, timeline, cfg, savepointed_files=savepointed)
    deleted = {f for _, f in plan.all_files()}
    earliest = earliest_commit_to_retain(timeline, cfg)
    for g in groups:
        assert g.newest_first()[0].base_file not in deleted  # the snapshot
        for inst in timeline.instants:
            if earliest is None or inst.requested >= earliest.requested:  # time travel within retention
                s = visible_slice(g, inst.requested)
                assert s is None or s.base_file not in deleted
        assert not (deleted & savepointed)
    if earliest is None:
        assert plan.is_empty


# --- rollback and restore -------------------------------------------------------------------------

def test_rollback_cow_deletes_the_base_files_of_the_instant() -> None:
    groups = [cow_group("g1", 1, 2), cow_group("g2", 2), cow_group("g3", 1)]
    plan = plan_rollback(done(2), groups, "COPY_ON_WRITE", 6)
    assert [(r.file_id, r.files_to_delete, r.command_block_log) for r in plan.requests] == [
        ("g1", (base("g1", 2),), None), ("g2", (base("g2", 2),), None)]


def test_rollback_mor_v6_appends_a_command_block_in_a_new_log_version() -> None:
    # slice base 1 with logs .log.1 (deltacommit 2) and .log.2 (deltacommit 3); roll back 3 →
    # a command block goes to .log.3_1-0-1; a new group inserted by 3 loses its base file.
    g1 = GroupRef("", "g1", (SliceRef("", "g1", t(1), base("g1", 1), (log("g1", 1, 1), log("g1", 1, 2))),))
    g2 = GroupRef("", "g2", (SliceRef("", "g2", t(3), base("g2", 3)),))
    plan = plan_rollback(done(3, Action.DELTA_COMMIT), [g1, g2], "MERGE_ON_READ", 6,
                         appended_logs={("", "g1"): [log("g1", 1, 2)]})
    r1, r2 = plan.requests
    assert r1.files_to_delete == () and r1.command_block_log == LogFileName("g1", t(1), 3, "1-0-1").format()
    assert r1.latest_base_instant == t(1)
    assert r2.files_to_delete == (base("g2", 3),) and r2.command_block_log is None


def test_rollback_mor_v6_of_a_new_base_file_deletes_the_log_files_based_on_it() -> None:
    # deltacommit 2 rewrote g1 into a new base file (small-file packing); deltacommit 3 logged a delete on it
    # (.g1_2.log.1), whose rollback appended .g1_2.log.2. Rolling back 2 deletes the base file and both logs
    # based on it, as Apache Hudi 1.2.0 does (savepoint-restore-mor-v6), and appends no command block to them;
    # a log-only group the instant created loses its logs the same way
    g1 = GroupRef("", "g1", (SliceRef("", "g1", t(1), base("g1", 1)),
                             SliceRef("", "g1", t(2), base("g1", 2), (log("g1", 2, 1), log("g1", 2, 2)))))
    g2 = GroupRef("", "g2", (SliceRef("", "g2", t(2), None, (log("g2", 2, 1),)),))
    plan = plan_rollback(done(2, Action.DELTA_COMMIT), [g1, g2], "MERGE_ON_READ", 6,
                         appended_logs={("", "g2"): [log("g2", 2, 1)]})
    r1, r2 = plan.requests
    assert r1.files_to_delete == tuple(sorted((base("g1", 2), log("g1", 2, 1), log("g1", 2, 2))))
    assert r2.files_to_delete == (log("g2", 2, 1),)
    assert r1.command_block_log is None and r2.command_block_log is None


def test_rollback_mor_v8_deletes_the_logs_named_with_the_instant() -> None:
    g1 = GroupRef("", "g1", (SliceRef("", "g1", t(1), base("g1", 1), (log("g1", 2), log("g1", 3))),))
    plan = plan_rollback(done(3, Action.DELTA_COMMIT, 4), [g1], "MERGE_ON_READ", 8)
    assert plan.requests[0].files_to_delete == (log("g1", 3),)
    assert plan.files_to_delete() == {("", log("g1", 3))}


def test_instant_to_rollback_and_restore_order() -> None:
    timeline = tl(done(1), done(2), done(3, Action.SAVEPOINT), done(4, Action.DELTA_COMMIT), done(5, Action.CLEAN),
                  pending(6, Action.COMPACTION, State.REQUESTED), pending(7, Action.DELTA_COMMIT))
    assert instant_to_rollback(timeline) == pending(7, Action.DELTA_COMMIT)
    assert instant_to_rollback(timeline, t(4)).requested == t(4)
    with pytest.raises(InstantNotFound):
        instant_to_rollback(timeline, t(5))  # a clean is not a write
    # restore to the savepoint at 3: every write after it, newest first (the pending ones too)
    assert [i.requested for i in plan_restore(timeline, t(3))] == [t(7), t(6), t(4)]
    with pytest.raises(InstantNotFound):
        plan_restore(timeline, t(2))


# --- archival -------------------------------------------------------------------------------------

def test_archive_worked_example() -> None:
    cfg = ArchiveConfig(keep_min_commits=2, keep_max_commits=4)
    four = tl(*(done(n) for n in range(1, 5)))
    assert plan_archive(four, cfg) == ()  # not above max
    six = tl(*(done(n) for n in (1, 2, 4, 5, 6, 7)), done(3, Action.CLEAN))
    # 6 commits > 4 → archive the oldest 4, leaving 2; the clean at 3 is older than the newest archived (5)
    assert [i.requested for i in plan_archive(six, cfg)] == [t(1), t(2), t(3), t(4), t(5)]
    # a savepoint at 4.5 stops archival before it
    sp = tl(*six.instants, Instant(t(4)[:-3] + "500", Action.SAVEPOINT, State.COMPLETED))
    assert [i.requested for i in plan_archive(sp, cfg)] == [t(1), t(2), t(3), t(4)]
    # a pending write at 5.5 keeps the latest completed commit before it (5) and everything after
    pend = tl(*six.instants, Instant(t(5)[:-3] + "500", Action.COMMIT, State.INFLIGHT))
    assert [i.requested for i in plan_archive(pend, cfg)] == [t(1), t(2), t(3), t(4)]
    with pytest.raises(InvalidConfig):
        ArchiveConfig(3, 3)


def test_archive_on_mor_keeps_the_delta_commits_compaction_still_counts() -> None:
    cfg = ArchiveConfig(keep_min_commits=1, keep_max_commits=2)
    timeline = tl(*(done(n, Action.DELTA_COMMIT) for n in range(1, 7)))
    # 6 deltacommits, no compaction, trigger 5: the oldest to retain is deltacommit 2 (6 - 5 + 1 = 2nd)
    assert [i.requested for i in plan_archive(timeline, cfg, "MERGE_ON_READ", CompactionConfig(5))] == [t(1)]
    # COW rules would archive all but one
    assert len(plan_archive(timeline, cfg, "COPY_ON_WRITE")) == 5


# --- preconditions and shared reads: one rule for the model and the executors -----------------------

def test_rollback_is_refused_for_a_pending_compaction_a_superseded_or_a_savepointed_commit() -> None:
    timeline = tl(done(1), done(1, Action.SAVEPOINT), done(2), pending(3, Action.COMPACTION, State.REQUESTED))
    with pytest.raises(InvalidOperation, match="pending compaction"):
        check_rollback_allowed(timeline, pending(3, Action.COMPACTION, State.REQUESTED))
    with pytest.raises(InvalidOperation, match="completed after it"):
        check_rollback_allowed(timeline, done(1))
    check_rollback_allowed(timeline, done(2))  # the latest completed write may go
    with pytest.raises(InvalidOperation, match="savepointed"):
        check_rollback_allowed(tl(done(1), done(2), done(2, Action.SAVEPOINT)), done(2))
    check_rollback_allowed(tl(done(1), pending(2)), pending(2))  # a failed write always may


def test_savepoint_keeps_a_completed_write_not_older_than_the_last_clean_retained() -> None:
    timeline = tl(done(1), done(2), done(3, Action.CLEAN), done(4, Action.DELTA_COMMIT), pending(5))
    assert savepoint_instant(timeline, None, None) == t(4)  # default: the latest completed write
    assert savepoint_instant(timeline, t(1), None) == t(1)  # no clean (or it retained none): any write
    assert last_clean(timeline) == done(3, Action.CLEAN)
    # a clean still requested or inflight is the last clean too (its plan says what it retains)
    assert last_clean(tl(done(1), done(3, Action.CLEAN), pending(4, Action.CLEAN, State.REQUESTED))) == \
        pending(4, Action.CLEAN, State.REQUESTED)
    with pytest.raises(InvalidOperation, match="retained only commits from"):
        savepoint_instant(timeline, t(1), t(2))
    assert savepoint_instant(timeline, t(2), t(2)) == t(2)
    with pytest.raises(InstantNotFound):
        savepoint_instant(timeline, t(3), None)  # a clean is not a write
    with pytest.raises(InstantNotFound):
        savepoint_instant(timeline, t(5), None)  # nor is a pending one
    with pytest.raises(InvalidOperation, match="already savepointed"):
        savepoint_instant(tl(done(1), done(1, Action.SAVEPOINT)), t(1), None)
    with pytest.raises(InstantNotFound):
        savepoint_instant(tl(pending(1)), None, None)


def test_the_model_refuses_a_savepoint_the_last_clean_may_have_broken() -> None:
    """The rule the reference's executor checks is the model's too: after a clean retaining only the
    latest commit, the first commit can no longer be savepointed; the latest can."""
    m = TableModel(CreateTable(table_type="COPY_ON_WRITE", table_version=6, partition_fields=("p",),
                               clean_commits_retained=1))
    for ts in range(1, 4):
        m.apply(Write("upsert", ({"id": 1, "p": "a", "ts": ts, "v": f"v{ts}"},)))
    commits = [i.requested for i in m.state.timeline]
    m.apply(Clean())
    with pytest.raises(InvalidOperation, match="retained only commits from"):
        m.apply(Savepoint(commits[0]))
    m.apply(Savepoint(commits[-1]))
    assert m.state.savepoints[-1][0] == commits[-1]


def test_restore_defaults_to_the_newest_savepoint() -> None:
    timeline = tl(done(1), done(1, Action.SAVEPOINT), done(2), done(2, Action.SAVEPOINT), done(3))
    assert savepoint_to_restore(timeline) == t(2)
    assert savepoint_to_restore(timeline, t(1)) == t(1)
    with pytest.raises(InstantNotFound):
        savepoint_to_restore(tl(done(1)))


def test_pending_compaction_plans_say_which_groups_are_taken_and_from_which_slice() -> None:
    record = HoodieCompactionPlan(operations=(
        HoodieCompactionOperation(base_instant_time=t(1), file_id="f1", partition_path="a",
                                  data_file_path=f"f1_0-0-0_{t(1)}.parquet",
                                  delta_file_paths=(f".f1_{t(1)}.log.1_0-0-0",)),
        HoodieCompactionOperation(base_instant_time=t(2), file_id="f2", partition_path="b")), version=2)
    plan = compaction_plan_of(t(5), record)
    assert plan.operations[0] == CompactionOperation("a", "f1", t(1), f"f1_0-0-0_{t(1)}.parquet",
                                                     (f".f1_{t(1)}.log.1_0-0-0",))
    assert plan.operations[1] == CompactionOperation("b", "f2", t(2), None, ())
    other = CompactionPlan(t(6), (CompactionOperation("c", "f3", t(3), None, ("x.log",)),))
    assert groups_under_compaction([plan, other]) == {("a", "f1"): t(5), ("b", "f2"): t(5), ("c", "f3"): t(6)}
    assert compaction_base_instants([plan, other]) == {("a", "f1"): t(1), ("b", "f2"): t(2), ("c", "f3"): t(3)}


def test_groups_of_files_give_every_data_file_its_own_slice() -> None:
    base = BaseFileName("f1", "0-0-0", t(1)).format()
    log = LogFileName("f1", t(1), 1, "0-0-0").format()
    other = BaseFileName("f2", "0-0-0", t(2)).format()
    groups = groups_of_files([("a", log), ("a", base), ("b", other), ("a", ".hoodie_partition_metadata")])
    assert [g.id for g in groups] == [("a", "f1"), ("b", "f2")]
    assert set(groups[0].slices) == {SliceRef("a", "f1", t(1), base), SliceRef("a", "f1", t(1), None, (log,))}
