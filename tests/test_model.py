"""The spec model (oracle): worked examples, one per rule, with the numbers each implies."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.interface.ops import CreateTable
from spec.actions.compaction import delta_commits_since_last_compaction
from spec.errors import InstantNotFound, InvalidOperation, InvalidRecord, SchemaMismatch
from spec.model import Env, TableModel, apply, predict
from spec.model.operations import (
    Archive,
    Clean,
    Compact,
    Crash,
    DeletePartition,
    ExpectError,
    Restore,
    Rollback,
    Savepoint,
    Write,
)
from spec.model.queries import incremental, key_locations, query_instants, snapshot
from spec.timeline.active_timeline import Timeline

COMBOS = [("COPY_ON_WRITE", 6), ("COPY_ON_WRITE", 8), ("MERGE_ON_READ", 6), ("MERGE_ON_READ", 8)]


def model(table_type: str = "COPY_ON_WRITE", version: int = 6, **kw: Any) -> TableModel:
    kw.setdefault("partition_fields", ("p",))
    return TableModel(CreateTable(table_type=table_type, table_version=version, **kw))


def rec(i: int, ts: int, v: str = "", p: str = "a") -> dict[str, Any]:
    return {"id": i, "p": p, "ts": ts, "v": v or f"v{i}.{ts}"}


def values(m: TableModel) -> dict[tuple[str, str], str]:
    return {(r["_hoodie_partition_path"], r["_hoodie_record_key"]): r["v"] for r in snapshot(m.state)}


@pytest.mark.parametrize(("table_type", "version"), COMBOS)
def test_greatest_ordering_value_wins_ties_to_the_later_commit(table_type: str, version: int) -> None:
    m = model(table_type, version)
    m.apply(Write("upsert", (rec(1, 5, "first"),)))
    m.apply(Write("upsert", (rec(1, 3, "older"),)))  # lower ordering value: ignored
    assert values(m) == {("a", "1"): "first"}
    m.apply(Write("upsert", (rec(1, 5, "tie"),)))  # equal: the later commit wins
    assert values(m) == {("a", "1"): "tie"}
    # within one batch the greatest wins, and among equals the later record
    m.apply(Write("upsert", (rec(2, 7, "x"), rec(2, 9, "y"), rec(2, 8, "z"), rec(3, 1, "p"), rec(3, 1, "q"))))
    assert values(m) == {("a", "1"): "tie", ("a", "2"): "y", ("a", "3"): "q"}
    if table_type == "MERGE_ON_READ":
        m.apply(Compact())
        assert values(m) == {("a", "1"): "tie", ("a", "2"): "y", ("a", "3"): "q"}


@pytest.mark.parametrize("version", [6, 8])
def test_commit_time_ordering_lets_the_later_write_win(version: int) -> None:
    m = model("COPY_ON_WRITE", version, merge_mode="COMMIT_TIME_ORDERING")
    m.apply(Write("upsert", (rec(1, 5, "first"),)))
    m.apply(Write("upsert", (rec(1, 3, "later"),)))
    assert values(m) == {("a", "1"): "later"}


@pytest.mark.parametrize(("table_type", "version"), COMBOS)
def test_delete_then_reinsert(table_type: str, version: int) -> None:
    m = model(table_type, version)
    m.apply(Write("upsert", (rec(1, 5), rec(2, 5))))
    m.apply(Write("delete", ({"id": 1, "p": "a"},)))
    assert values(m) == {("a", "2"): "v2.5"}
    m.apply(Write("upsert", (rec(1, 6, "back"),)))
    assert values(m) == {("a", "1"): "back", ("a", "2"): "v2.5"}
    # deleting an absent key changes nothing
    m.apply(Write("delete", ({"id": 9, "p": "a"},)))
    assert values(m) == {("a", "1"): "back", ("a", "2"): "v2.5"}


def test_reinsert_with_lower_ordering_after_delete_cow_vs_mor() -> None:
    """COW deletes the row physically, so a re-insert with a lower ordering value shows. On MOR the
    delete is a log record and the index (bloom/simple: base files only) still finds the key in its
    base file, so the re-insert is appended as an update; the natural-order delete never blocks the
    record after it, and that merged record then meets the base row, which keeps the greater ordering
    value (HoodieMergedLogRecordScanner + DefaultHoodieRecordPayload): the deleted version comes
    back, and compaction makes it permanent."""
    for table_type, expected in (("COPY_ON_WRITE", "low"), ("MERGE_ON_READ", "high")):
        m = model(table_type)
        m.apply(Write("upsert", (rec(1, 5, "high"),)))
        m.apply(Write("delete", ({"id": 1, "p": "a"},)))
        m.apply(Write("upsert", (rec(1, 3, "low"),)))
        assert values(m) == {("a", "1"): expected}, table_type
        if table_type == "MERGE_ON_READ":
            m.apply(Compact())
            assert values(m) == {("a", "1"): "high"}


@pytest.mark.parametrize(("table_type", "version"), COMBOS)
def test_insert_overwrite_replaces_the_partition(table_type: str, version: int) -> None:
    m = model(table_type, version)
    m.apply(Write("upsert", (rec(1, 1, p="a"), rec(2, 1, p="a"), rec(3, 1, p="b"))))
    before = predict(m.state).layout
    m.apply(Write("insert_overwrite", (rec(7, 1, p="a"),)))
    assert values(m) == {("a", "7"): "v7.1", ("b", "3"): "v3.1"}
    after = predict(m.state).layout
    (old_a,), (new_a,) = before["a"], after["a"]
    assert old_a.file_id != new_a.file_id and new_a.keys == ("7",)
    assert after["b"] == before["b"]
    assert m.state.timeline[-1].action == "replacecommit"
    m.apply(Write("insert_overwrite_table", (rec(8, 1, p="b"),)))
    assert values(m) == {("b", "8"): "v8.1"}
    m.apply(DeletePartition(("b",)))
    assert values(m) == {}
    # time travel still sees the overwritten partition as it was
    first = m.state.timeline[0].requested
    assert {r["_hoodie_record_key"] for r in snapshot(m.state, first)} == {"1", "2", "3"}


def test_small_file_routing_uses_observed_sizes() -> None:
    """max file 1000 B, 100 B per record (the estimate), small-file limit 900 B, 15 new inserts.
    Estimated, the first file (3 rows) is 300 B: it takes (1000 − 300) // 100 = 7 and the other 8
    fit one new group of 1000 // 100 = 10 → 2 groups. Observed at 850 B it takes 1, and 14 need
    2 new groups → 3 groups. Observed at 950 B it is not small, and the last commit wrote more than
    the small-file limit, so the average record size becomes ceil(950 / 3) = 317 B: new groups take
    1000 // 317 = 3 records, 15 need 5 of them → 6 groups; the first keeps exactly its 3 rows."""
    cfg = CreateTable(partition_fields=("p",), max_file_size=1000, small_file_limit=900, record_size_estimate=100)
    first = Env.deterministic()
    probe = TableModel(cfg, first)
    probe.apply(Write("upsert", tuple(rec(i, 1) for i in range(3))))
    (g,) = predict(probe.state).layout["a"]
    where = ("a", g.file_id, probe.state.timeline[-1].requested)
    for observed, groups, first_keeps_three in ((None, 2, False), (850, 3, False), (950, 6, True)):
        m = TableModel(cfg, Env.deterministic(sizes={where: observed} if observed else {}))
        m.apply(Write("upsert", tuple(rec(i, 1) for i in range(3))))
        m.apply(Write("upsert", tuple(rec(i, 1) for i in range(100, 115))))
        layout = predict(m.state).layout["a"]
        assert len(layout) == groups, observed
        assert sum(len(x.keys) for x in layout) == 18
        assert (layout[0].keys == ("0", "1", "2")) == first_keeps_three or observed is None


def test_mor_updates_go_to_logs_and_inserts_to_the_smallest_base_only_file() -> None:
    for version, log_versions in ((6, (1, 2)), (8, (1, 1))):
        m = model("MERGE_ON_READ", version)
        m.apply(Write("upsert", (rec(1, 1), rec(2, 1))))
        m.apply(Write("upsert", (rec(1, 2),)))  # update only: a log file in the group
        m.apply(Write("upsert", (rec(2, 2),)))  # another deltacommit: v6 next version, v8 version 1 of its own
        (g,) = predict(m.state).layout["a"]
        assert len(g.slices) == 1 and g.slices[0].log_versions == log_versions
        # the slice has logs now: not a small file any more, so an insert opens a new group
        m.apply(Write("upsert", (rec(3, 1),)))
        assert [x.keys for x in predict(m.state).layout["a"]] == [("1", "2"), ("3",)]
        # an update to the base-only (small) group of a partition with inserts merges into a new base file
        m.apply(Write("upsert", (rec(3, 2), rec(4, 1))))
        groups = predict(m.state).layout["a"]
        assert [x.keys for x in groups] == [("1", "2"), ("3", "4")]
        assert [s.has_base for s in groups[1].slices] == [True, True]


def test_inline_compaction_after_five_delta_commits() -> None:
    m = model("MERGE_ON_READ", 6, inline_compact=True)
    for ts in range(1, 6):
        m.apply(Write("upsert", (rec(1, ts),)))
    actions = [i.action for i in m.state.timeline]
    assert actions == ["deltacommit"] * 5 + ["commit"]  # the compaction, completed as a commit
    (g,) = predict(m.state).layout["a"]
    assert [s.base_instant for s in g.slices] == [m.state.timeline[0].requested, m.state.timeline[-1].requested]
    # compaction keeps the rows' commit times: the value came from the 5th deltacommit
    (row,) = snapshot(m.state)
    assert row["_hoodie_commit_time"] == m.state.timeline[4].requested and row["ts"] == 5
    assert row["_hoodie_file_name"].endswith(f"_{m.state.timeline[-1].requested}.parquet")


def test_compaction_v6_logs_after_scheduling_join_the_new_slice() -> None:
    m = model("MERGE_ON_READ", 6)
    m.apply(Write("upsert", (rec(1, 1),)))
    m.apply(Write("upsert", (rec(1, 2),)))
    m.apply(Compact(mode="schedule"))
    tc = m.state.timeline[-1].requested
    m.apply(Write("upsert", (rec(1, 3),)))  # v6: logged under the pending compaction's instant
    g = m.state.groups[0]
    assert [lf.instant for lf in g.log_files] == [m.state.timeline[0].requested, tc]
    assert values(m) == {("a", "1"): "v1.3"}
    m.apply(Compact(mode="run"))
    assert values(m) == {("a", "1"): "v1.3"}
    assert [b.instant for b in m.state.groups[0].base_files] == [m.state.timeline[0].requested, tc]


def test_clean_keep_latest_commits_worked_example() -> None:
    """COW, 4 upserts of one key, 2 commits retained: earliest retained = 3rd commit; the 2nd is the
    last version before it and stays, the 1st goes. Time travel to commits 2-4 still answers."""
    m = model(clean_commits_retained=2, keep_min_commits=3, keep_max_commits=4)
    for ts in range(1, 5):
        m.apply(Write("upsert", (rec(1, ts),)))
    commits = [i.requested for i in m.state.timeline]
    history = {t: snapshot(m.state, t) for t in commits}
    m.apply(Clean())
    assert m.state.timeline[-1].action == "clean"
    assert [b.instant for b in m.state.groups[0].base_files] == commits[1:]
    assert query_instants(m.state) == tuple(commits[1:])
    for t in commits[1:]:
        assert snapshot(m.state, t) == history[t]
    # cleaning again finds nothing: no new clean instant
    n = len(m.state.timeline)
    m.apply(Clean())
    assert len(m.state.timeline) == n


def test_savepoint_protects_files_from_clean_and_restore_returns_to_it() -> None:
    m = model(clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3)
    m.apply(Write("upsert", (rec(1, 1),)))
    m.apply(Savepoint())
    sp = m.state.timeline[0].requested
    saved = snapshot(m.state)
    for ts in range(2, 5):
        m.apply(Write("upsert", (rec(1, ts), rec(ts * 10, 1))))
    m.apply(Clean())
    assert sp in [b.instant for b in m.state.groups[0].base_files]  # the savepointed file stayed
    assert sp in query_instants(m.state)
    m.apply(Restore())
    assert snapshot(m.state) == saved
    assert [i.action for i in m.state.timeline] == ["commit", "savepoint", "clean", "restore"]
    with pytest.raises(InstantNotFound):
        m.apply(Restore("20990101000000000"))


@pytest.mark.parametrize(("table_type", "version"), COMBOS)
def test_rollback_of_the_last_commit(table_type: str, version: int) -> None:
    m = model(table_type, version)
    m.apply(Write("upsert", (rec(1, 1), rec(2, 1))))
    before = snapshot(m.state)
    m.apply(Write("upsert", (rec(1, 2), rec(3, 1, p="b"))))
    m.apply(Rollback())
    assert snapshot(m.state) == before
    assert [i.action for i in m.state.timeline][-1] == "rollback"
    if (table_type, version) == ("MERGE_ON_READ", 6):
        # the log stays, a ROLLBACK command block follows in the next version with token 1-0-1
        logs = m.state.groups[0].log_files
        assert [(lf.version, lf.write_token, [b.kind for b in lf.blocks]) for lf in logs] == [
            (1, "0-0-0", ["data"]), (2, "1-0-1", ["command"])]
    with pytest.raises(InvalidOperation):  # not the latest write
        m.apply(Write("upsert", (rec(4, 1),)))
        m.apply(Rollback(m.state.timeline[0].requested))


def test_crash_leaves_a_pending_write_that_the_next_write_rolls_back() -> None:
    m = model("COPY_ON_WRITE", 6)
    m.apply(Write("upsert", (rec(1, 1, p="a"), rec(2, 1, p="b"))))
    before = snapshot(m.state)
    m.apply(Crash(1))
    m.apply(Write("upsert", (rec(1, 2, p="a"), rec(2, 2, p="b"))))
    assert m.state.timeline[-1].state == "INFLIGHT"
    assert sum(len(g.base_files) for g in m.state.groups) == 3  # one of the two new files was written
    assert snapshot(m.state) == before  # a pending write is invisible
    failed = m.state.timeline[-1].requested
    m.apply(Write("upsert", (rec(3, 1, p="a"),)))
    acts = [(i.requested > failed, i.action, i.state) for i in m.state.timeline]
    # the failed write is rolled back first, then the write takes its instant (Hudi's startCommit)
    assert acts[-2:] == [(True, "rollback", "COMPLETED"), (True, "commit", "COMPLETED")]
    assert failed not in [i.requested for i in m.state.timeline]
    assert sum(len(g.base_files) for g in m.state.groups) == 3  # the partial file is gone, one new


def test_bad_input_raises_the_typed_error_and_leaves_the_table_as_it_was() -> None:
    m = model()
    m.apply(Write("upsert", (rec(1, 1),)))
    state = m.state
    for bad, error in [
        (Write("upsert", ({"id": None, "p": "a", "ts": 1, "v": "x"},)), InvalidRecord),
        (Write("upsert", ({"id": "", "p": "a", "ts": 1, "v": "x"},)), InvalidRecord),
        (Write("upsert", ({"id": 2, "p": "a", "ts": None, "v": "x"},)), InvalidRecord),
        (Write("upsert", ({"id": 2, "p": "../x", "ts": 1, "v": "x"},)), InvalidRecord),
        (Write("upsert", ({"id": 2, "p": "a", "ts": 1},)), SchemaMismatch),  # drops column v
        (Write("upsert", ({"id": 2, "p": "a", "ts": 1, "v": True},)), SchemaMismatch),  # boolean into a string column
        (Write("upsert", (rec(2, 1), {"id": 3, "p": "a", "ts": 1, "w": "x"})), SchemaMismatch),
        (Write("upsert", (rec(2, 1),), instant_time="20000101000000000"), InvalidOperation),
        (Compact(), InvalidOperation),  # COW
        (Rollback("20000101000000000"), InstantNotFound),
        (Savepoint("20000101000000000"), InstantNotFound),
    ]:
        with pytest.raises(error):
            apply(state, bad, m.env)
    assert m.state is state and values(m) == {("a", "1"): "v1.1"}


def test_a_batch_without_its_key_column_is_a_schema_mismatch_once_the_table_has_a_schema() -> None:
    """Hudi checks the batch's schema against the table's before it keys a record (expect-errors-cow-v6):
    the column a batch lacks is a dropped column first; on a new table there is no schema to drop it from
    and the key generator refuses the record."""
    m = model()
    with pytest.raises(InvalidRecord):
        m.apply(Write("insert", ({"p": "a", "ts": 1, "v": "x"},)))
    m.apply(Write("insert", (rec(1, 1),)))
    for missing in ("id", "p", "ts"):
        with pytest.raises(SchemaMismatch, match=missing):
            m.apply(Write("upsert", ({k: v for k, v in rec(2, 1).items() if k != missing},)))


def test_expect_error_consumes_the_failure() -> None:
    m = model()
    m.apply(ExpectError("invalid_record"))
    m.apply(Write("upsert", ({"id": None, "p": "a", "ts": 1, "v": "x"},)))
    assert m.state.expect_error is None and m.state.timeline == ()
    m.apply(ExpectError("invalid_record"))
    with pytest.raises(InvalidOperation, match="expects it to fail"):
        m.apply(Write("upsert", (rec(1, 1),)))
    m.apply(ExpectError("invalid_operation"))
    with pytest.raises(InvalidRecord):  # a different error is not the expected one
        m.apply(Write("upsert", ({"id": None, "p": "a", "ts": 1, "v": "x"},)))


def test_schema_evolution_adds_columns_and_rollback_takes_them_back() -> None:
    m = model()
    m.apply(Write("upsert", (rec(1, 1),)))
    m.apply(Write("upsert", ({**rec(2, 1), "extra": 1.5},)))
    rows = snapshot(m.state)
    assert [r["extra"] for r in rows] == [None, 1.5]
    m.apply(Rollback())
    assert "extra" not in snapshot(m.state)[0]


def test_every_key_lives_in_one_group_and_insert_may_duplicate() -> None:
    m = model("COPY_ON_WRITE", 6, max_file_size=2048, record_size_estimate=1024, small_file_limit=0)
    m.apply(Write("upsert", tuple(rec(i, 1) for i in range(5))))
    assert all(len(v) == 1 for v in key_locations(m.state).values())
    # bulk_insert skips the index: the same key lands in a second group
    m.apply(Write("bulk_insert", (rec(1, 9),)))
    assert len(key_locations(m.state)[("a", "1")]) == 2


@pytest.mark.parametrize("version", [6, 8])
def test_bulk_insert_into_merge_on_read_completes_as_a_commit(version: int) -> None:
    """Apache Hudi's row writer completes a bulk insert as a ``commit`` on merge-on-read too (measured on
    versions 6, 8 and 9; bulk-insert-none-mor-v8): base files only, read, queried incrementally and counted
    as the last compaction as any ``commit`` of a merge-on-read table is."""
    m = model("MERGE_ON_READ", version)
    m.apply(Write("bulk_insert", (rec(1, 1), rec(2, 1))))
    assert [len(g.base_files) for g in m.state.groups] == [1] and not m.state.groups[0].log_files
    m.apply(Write("upsert", (rec(1, 2),)))
    assert [i.action for i in m.state.timeline] == ["commit", "deltacommit"]
    first, second = (i.completed or i.requested for i in m.state.timeline)
    assert values(m) == {("a", "1"): "v1.2", ("a", "2"): "v2.1"}
    assert {r["v"] for r in incremental(m.state, None, first)} == {"v1.1", "v2.1"}
    assert {r["v"] for r in incremental(m.state, first, second)} == {"v1.2"}
    assert delta_commits_since_last_compaction(Timeline(m.state.timeline, 1 if version == 6 else 2)) == (
        m.state.timeline[1],)


def test_archive_moves_old_instants_off_the_active_timeline() -> None:
    m = model(keep_min_commits=2, keep_max_commits=3, clean_commits_retained=1)
    for ts in range(1, 6):
        m.apply(Write("upsert", (rec(1, ts),)))
    m.apply(Archive())
    assert len(m.state.timeline) == 2 and len(m.state.archived) == 3
    assert values(m) == {("a", "1"): "v1.5"}


@pytest.mark.parametrize("version", [8, 9])
def test_archival_of_a_table_with_a_metadata_table_waits_for_its_compaction(version: int) -> None:
    """Apache Hudi 1.2.0 (archive-cow-v8, and a table of 14 commits measured on versions 8 and 9): nothing is
    archived before the metadata table's first compaction; then the commit during which it compacted stays,
    with all after it. The metadata table is compacted before the deltacommit of the data commit that finds 10
    deltacommits since its last compaction (its creation's counts: the 9th commit here, the clean after the
    third counting too)."""
    m = model("COPY_ON_WRITE", version, keep_min_commits=2, keep_max_commits=3, clean_commits_retained=1)
    for ts in range(14):
        m.apply(Write("upsert", (rec(1, ts),)))
        if ts == 2:
            m.apply(Clean())
        if ts in (4, 13):
            m.apply(Archive())
        if ts == 4:
            assert not m.state.archived
    writes = [i.requested for i in (*m.state.archived, *m.state.timeline) if i.action == "commit"]
    assert m.state.metadata is not None and m.state.metadata.compacted_during == writes[8]
    assert [i.requested for i in m.state.timeline] == writes[8:]
    no_metadata = model("COPY_ON_WRITE", version, keep_min_commits=2, keep_max_commits=3, clean_commits_retained=1,
                        options=(("hoodie.metadata.enable", "false"),))
    for ts in range(5):
        no_metadata.apply(Write("upsert", (rec(1, ts),)))
    no_metadata.apply(Archive())
    assert no_metadata.state.metadata is None and len(no_metadata.state.timeline) == 2


def test_predict_covers_every_query() -> None:
    m = model("MERGE_ON_READ", 8)
    m.apply(Write("upsert", (rec(1, 1), rec(2, 1))))
    m.apply(Write("upsert", (rec(1, 2),)))
    p = m.predict()
    c1, c2 = (i.completed for i in m.state.timeline)
    assert [r["ts"] for r in p.snapshot] == [2, 1] and [r["ts"] for r in p.read_optimized] == [1, 1]
    assert set(p.time_travel) == {i.requested for i in m.state.timeline}
    assert set(p.incremental) == {(None, c1), (None, c2), (c1, c2)}
    assert [r["_hoodie_record_key"] for r in p.incremental[(c1, c2)]] == ["1"]
    assert p.timeline[0][1:3] == ("deltacommit", "COMPLETED")


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("COPY_ON_WRITE", 8),
                                                     ("MERGE_ON_READ", 6)])
def test_stream_i_u_then_u_u_stays_in_one_group(table_type: str, version: int) -> None:
    """Seed 000's sequence: key 1 is inserted and updated in checkpoint 1 (one insert bucket, used twice),
    updated twice in checkpoint 2 (an update bucket of the same group). Groups hold 2048 // 1024 = 2
    records, so key 3 (new in checkpoint 2) opens a second group once keys 1 and 2 fill the first."""
    from spec.model.operations import Stream, StreamRecord

    def up(i: int, ts: int) -> StreamRecord:
        return StreamRecord("upsert", rec(i, ts))

    m = model(table_type, version, max_file_size=2048, record_size_estimate=1024)
    m.apply(Stream(((up(1, 1), up(1, 2), up(2, 1)), (up(1, 3), up(1, 4), up(3, 1)))))
    t1, t2 = (i.requested for i in m.state.timeline)
    assert [i.action for i in m.state.timeline] == ["commit" if table_type == "COPY_ON_WRITE" else "deltacommit"] * 2
    first, second = predict(m.state).layout["a"]
    assert (first.keys, second.keys) == (("1", "2"), ("3",))
    assert values(m) == {("a", "1"): "v1.4", ("a", "2"): "v2.1", ("a", "3"): "v3.1"}
    if table_type == "COPY_ON_WRITE":  # create handle, then merge handle
        assert [(s.base_instant, s.has_base) for s in first.slices] == [(t1, True), (t2, True)]
    else:  # Flink's MOR writes through the append handle only: a log-only group, one slice, two logs
        assert [(s.base_instant, s.has_base, s.log_versions) for s in first.slices] == [(t1, False, (1, 2))]
    # a stream delete is a whole row with its ordering value (Hudi reads it to combine the checkpoint)
    m.apply(Stream(((StreamRecord("delete", {"id": 2, "p": "a", "ts": 9, "v": None}),
                     StreamRecord("delete", {"id": 9, "p": "a", "ts": 9, "v": None})),)))
    assert values(m) == {("a", "1"): "v1.4", ("a", "3"): "v3.1"}
