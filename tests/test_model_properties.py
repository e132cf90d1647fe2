"""Properties of the spec model over generated operation sequences (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conformance.interface.ops import CreateTable
from spec.actions.clean import CleanConfig, earliest_commit_to_retain
from spec.errors import HudiSpecError
from spec.model import TableModel, TableState, apply
from spec.model.files import FILE_NAME, META_COLUMNS
from spec.model.operations import Clean, Compact, DeletePartition, Rollback, Savepoint, Write
from spec.model.queries import index_locations, key_locations, query_instants, snapshot

KEYS = st.integers(0, 5)
PARTS = st.sampled_from(["a", "b"])


def record(i: int, p: str, ts: int, v: str) -> dict[str, Any]:
    return {"id": i, "p": p, "ts": ts, "v": v}


records = st.builds(record, KEYS, PARTS, st.integers(0, 3), st.sampled_from(["x", "y", "z"]))
upserts = st.lists(records, min_size=1, max_size=4).map(lambda rs: Write("upsert", tuple(rs)))
deletes = st.lists(st.builds(lambda i, p: {"id": i, "p": p}, KEYS, PARTS), min_size=1, max_size=2).map(
    lambda rs: Write("delete", tuple(rs)))
# an insert_overwrite batch that repeats a key writes it twice, as Hudi does (hoodie.combine.before.insert
# is false): the overwrites drawn here repeat none, so every key stays in one file group
overwrites = st.lists(records, min_size=1, max_size=2, unique_by=lambda r: (r["p"], r["id"])).map(
    lambda rs: Write("insert_overwrite", tuple(rs)))
configs = st.builds(
    lambda tt, v, retained: CreateTable(table_type=tt, table_version=v, partition_fields=("p",),
                                        clean_commits_retained=retained, keep_min_commits=retained + 1,
                                        keep_max_commits=retained + 2),
    st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), st.sampled_from([6, 8]), st.integers(1, 3))
any_op = st.one_of(upserts, upserts, deletes, overwrites, st.builds(DeletePartition, st.just(("b",))),
                   st.just(Compact()), st.just(Clean()), st.just(Rollback()), st.just(Savepoint()))


def run(config: CreateTable, ops: list[Any]) -> tuple[TableModel, dict[str, tuple[Any, ...]]]:
    """Apply the ops (skipping those the model rejects) and keep each write's snapshot as it committed."""
    m = TableModel(config)
    history: dict[str, tuple[Any, ...]] = {}
    for op in ops:
        try:
            m.apply(op)
        except HudiSpecError:
            continue
        for i in m.state.timeline:
            if i.is_completed and i.action in ("commit", "deltacommit", "replacecommit") and i.requested not in history:
                history[i.requested] = snapshot(m.state, i.requested)
    return m, history


def data(rows: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Rows without commit time, sequence number and file name: what an idempotent write preserves."""
    return sorted(tuple(v for k, v in r.items() if k not in META_COLUMNS or k in ("_hoodie_record_key",
                                                                              "_hoodie_partition_path"))
                  for r in rows)


@given(configs, st.lists(st.one_of(upserts, st.just(Compact())), max_size=7))
def test_the_greatest_ordering_value_wins_ties_to_the_later_write(config: CreateTable, ops: list[Any]) -> None:
    expected: dict[tuple[str, str], tuple[int, str]] = {}
    for op in ops:
        for r in getattr(op, "records", ()):
            k = (r["p"], str(r["id"]))
            if k not in expected or r["ts"] >= expected[k][0]:
                expected[k] = (r["ts"], r["v"])
    m, _ = run(config, ops)
    got = {(r["_hoodie_partition_path"], r["_hoodie_record_key"]): (r["ts"], r["v"]) for r in snapshot(m.state)}
    assert got == expected


@given(configs, st.lists(any_op, max_size=8))
def test_every_key_is_in_exactly_one_file_group(config: CreateTable, ops: list[Any]) -> None:
    m, _ = run(config, ops)
    assert all(len(v) == 1 for v in key_locations(m.state).values())
    assert all(len(v) == 1 for v in index_locations(m.state).values())
    # and the snapshot holds each key once
    keys = [(r["_hoodie_partition_path"], r["_hoodie_record_key"]) for r in snapshot(m.state)]
    assert len(keys) == len(set(keys))


@given(configs, st.lists(any_op, max_size=8))
def test_time_travel_returns_each_write_as_it_committed(config: CreateTable, ops: list[Any]) -> None:
    m, history = run(config, ops)
    for t in query_instants(m.state):
        assert data(snapshot(m.state, t)) == data(history[t])
        assert snapshot(m.state, t) == history[t] or _only_file_names_differ(snapshot(m.state, t), history[t])


def _only_file_names_differ(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    strip = [{k: v for k, v in r.items() if k != FILE_NAME} for r in a]
    return strip == [{k: v for k, v in r.items() if k != FILE_NAME} for r in b]


@given(configs, st.lists(any_op, max_size=6), upserts)
def test_upsert_is_idempotent(config: CreateTable, ops: list[Any], batch: Write) -> None:
    m, _ = run(config, ops)
    try:
        m.apply(batch)
    except HudiSpecError:
        return
    once = snapshot(m.state)
    m.apply(batch)
    assert data(snapshot(m.state)) == data(once)


@given(configs, st.lists(any_op, max_size=6), st.one_of(upserts, deletes, overwrites))
def test_rollback_of_the_last_commit_restores_the_previous_snapshot_exactly(
        config: CreateTable, ops: list[Any], last: Write) -> None:
    m, _ = run(config, ops)
    before = snapshot(m.state)
    try:
        m.apply(last)
    except HudiSpecError:
        return
    m.apply(Rollback())
    assert snapshot(m.state) == before


@given(configs.filter(lambda c: c.is_mor), st.lists(any_op, max_size=8))
def test_compaction_does_not_change_snapshot_rows(config: CreateTable, ops: list[Any]) -> None:
    m, _ = run(config, ops)
    before = snapshot(m.state)
    try:
        m.apply(Compact())
    except HudiSpecError:
        return
    after = snapshot(m.state)
    assert _only_file_names_differ(after, before)  # rows keep commit time and sequence number


@given(configs, st.lists(st.one_of(upserts, deletes, overwrites, st.just(Compact()), st.just(Savepoint())),
                         max_size=9))
def test_clean_never_removes_what_a_retained_query_needs(config: CreateTable, ops: list[Any]) -> None:
    m, history = run(config, ops)
    state: TableState = m.state
    retained = CleanConfig(commits_retained=config.clean_commits_retained)
    earliest = earliest_commit_to_retain(state.timeline_view(), retained)
    latest = snapshot(state)
    try:
        cleaned = apply(state, Clean(), m.env)
    except HudiSpecError:
        return
    assert snapshot(cleaned) == latest
    saved = {t for t, _ in state.savepoints}
    for t in history:
        if state.instant(t) is not None and ((earliest is not None and t >= earliest.requested) or t in saved):
            assert t in query_instants(cleaned)
            assert snapshot(cleaned, t) == snapshot(state, t)
