"""The case language: JSON round trips over generated operations, and rejection of what is not in it."""

from __future__ import annotations

import json
import math
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.interface.ops import OP_NAMES, Case, CreateTable, case_from_json, case_to_json, from_json, to_json
from spec.config.registry import CLEAN_POLICIES
from spec.errors import ERROR_KINDS, InvalidOperation
from spec.model.operations import (
    COMPACT_MODES,
    WRITE_OPERATIONS,
    Archive,
    Clean,
    Cluster,
    Compact,
    Concurrent,
    Crash,
    DeletePartition,
    ExpectError,
    Operation,
    OperationHandler,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    StreamRecord,
    Write,
    dispatch,
)

instants = st.builds(
    lambda y, mo, d, h, mi, s, ms: f"{y:04d}{mo:02d}{d:02d}{h:02d}{mi:02d}{s:02d}{ms:03d}",
    st.integers(2000, 2099), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
    st.integers(0, 59), st.integers(0, 59), st.integers(0, 999),
)
names = st.text("abcdefgh_", min_size=1, max_size=6)
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8) | st.floats(
    allow_nan=False, allow_infinity=False)
records = st.dictionaries(names, scalars, max_size=4)

create_tables = st.builds(
    CreateTable,
    table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
    table_version=st.sampled_from([6, 8]),
    record_key_fields=st.lists(names, min_size=1, max_size=2).map(tuple),
    partition_fields=st.lists(names, max_size=2).map(tuple),
    key_generator=st.none() | st.sampled_from(["SIMPLE", "COMPLEX", "NON_PARTITION"]),
    hive_style=st.booleans(),
    options=st.dictionaries(st.just("hoodie.x.") | names, st.text(max_size=5), max_size=2).map(
        lambda d: tuple(d.items())),
    small_file_limit=st.integers(0, 10**9),
    max_file_size=st.integers(1, 10**9),
    compact_max_delta_commits=st.integers(1, 10),
    clean_policy=st.sampled_from(CLEAN_POLICIES),
    clean_commits_retained=st.integers(1, 5),
)
ops = st.one_of(
    create_tables,
    st.builds(Write, st.sampled_from(WRITE_OPERATIONS), st.lists(records, max_size=4).map(tuple),
              st.none() | instants),
    st.builds(DeletePartition, st.lists(names, min_size=1, max_size=3).map(tuple), st.none() | instants),
    st.builds(Compact, st.sampled_from(COMPACT_MODES), st.none() | instants),
    st.builds(Clean, st.none() | instants),
    st.builds(Rollback, st.none() | instants),
    st.builds(Savepoint, st.none() | instants),
    st.builds(Restore, st.none() | instants),
    st.just(Archive()),
    st.builds(Stream, st.lists(st.lists(st.builds(StreamRecord, st.sampled_from(["upsert", "delete"]), records),
                                        max_size=3).map(tuple), min_size=1, max_size=3).map(tuple)),
    st.builds(Crash, st.integers(0, 5)),
    st.builds(ExpectError, st.sampled_from(sorted(ERROR_KINDS))),
    st.permutations([0, 1, 2]).flatmap(lambda order: st.builds(
        Concurrent,
        st.tuples(st.builds(Write, st.sampled_from(WRITE_OPERATIONS), st.lists(records, max_size=2).map(tuple)),
                  st.builds(Write, st.just("upsert"), st.lists(records, max_size=2).map(tuple)),
                  st.just(Compact()) | st.just(Clean()) | st.just(Compact("run"))),
        st.just(tuple(order)),
        st.tuples(st.sampled_from(["ok", "write_conflict"]), st.sampled_from(["ok", "write_conflict"]),
                  st.just("ok")))),
)


@given(ops)
def test_op_json_round_trip(op: object) -> None:
    obj = to_json(op)  # type: ignore[arg-type]
    text = json.dumps(obj)  # real JSON text, not just Python objects
    assert from_json(json.loads(text)) == op
    assert to_json(from_json(json.loads(text))) == obj


@given(st.lists(ops.filter(lambda o: not isinstance(o, CreateTable)), max_size=5), create_tables)
def test_case_json_round_trip(op_list: list[object], config: CreateTable) -> None:
    case = Case("c1", "a case", ("t1",), "hypothesis", config, tuple(op_list))  # type: ignore[arg-type]
    text = json.dumps(case_to_json(case))
    assert case_from_json(json.loads(text)) == case


def test_every_op_name_is_encoded_by_its_class() -> None:
    assert to_json(Archive()) == {"op": "archive"}
    assert set(OP_NAMES) == {"create_table", "write", "delete_partition", "compact", "cluster", "clean", "rollback",
                             "savepoint", "restore", "archive", "stream", "concurrent", "crash", "expect_error"}
    assert {cls for name, cls in OP_NAMES.items() if name != "create_table"} == set(typing.get_args(Operation))


class _Names(OperationHandler[str]):
    """Each operation's JSON name, through the handler method ``dispatch`` picks."""

    def _name(self, op: Operation) -> str:
        return str(to_json(op)["op"])

    write = delete_partition = compact = cluster = clean = rollback = savepoint = restore = archive = stream = _name
    crash = _name
    expect_error = concurrent = _name


def test_dispatch_hands_every_operation_to_its_own_method() -> None:
    every = [Write("upsert", ()), DeletePartition(("a",)), Compact(), Cluster(), Clean(), Rollback(), Savepoint(),
             Restore(), Archive(), Stream(((StreamRecord("upsert", {"id": 1}),),)), Crash(),
             ExpectError("invalid_record"),
             Concurrent((Write("upsert", ()), Write("upsert", ())), (1, 0), ("ok", "write_conflict"))]
    assert {type(op) for op in every} == set(typing.get_args(Operation))
    methods = {name: getattr(_Names, name) for name in OperationHandler.__abstractmethods__}
    assert len(methods) == len(every)
    for op in every:
        name = dispatch(_Names(), op)
        assert name in methods and OP_NAMES[name] is type(op)


def test_a_handler_missing_a_method_cannot_be_made() -> None:
    class Partial(OperationHandler[None]):
        def write(self, op: Write) -> None:
            return None

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


_UPSERT = {"op": "write", "operation": "upsert", "records": [{"id": 1}]}


@pytest.mark.parametrize("obj", [
    {"op": "merge"},                       # unknown op
    {"op": "WRITE", "operation": "upsert", "records": []},  # names are case-sensitive
    {"operation": "upsert", "records": []},  # no op member
    ["write"],                             # not an object
    {"op": "write", "operation": "upsert"},  # required member missing
    {"op": "write", "operation": "merge", "records": []},  # unknown write operation
    {"op": "write", "operation": "upsert", "records": [], "bogus": 1},  # unknown member
    {"op": "write", "operation": "upsert", "records": [{"a": [1]}]},  # non-scalar value
    {"op": "write", "operation": "upsert", "records": [{"a": 1}], "instant_time": "2024"},  # bad instant
    {"op": "create_table", "table_version": 7},
    {"op": "create_table", "table_version": "6"},  # wrong JSON type
    {"op": "create_table", "hive_style": 1},  # ints are not bools
    {"op": "create_table", "record_key_fields": []},
    {"op": "create_table", "keep_min_commits": 5, "keep_max_commits": 4},
    {"op": "create_table", "keep_min_commits": 5, "clean_commits_retained": 5},
    {"op": "create_table", "ordering_field": None},  # event-time ordering needs an ordering field
    {"op": "compact", "mode": "now"},
    {"op": "crash", "after_files": -1},
    {"op": "crash", "after_files": True},
    {"op": "expect_error", "kind": "oops"},
    {"op": "stream", "checkpoints": []},
    {"op": "stream", "checkpoints": [[{"kind": "insert", "record": {}}]]},
    {"op": "stream", "checkpoints": [[{"record": {}}]]},
    *({"op": "concurrent", "members": [_UPSERT, *more], "commit_order": order, "outcomes": outcomes}
      for more, order, outcomes in [
          ([], [0], ["ok"]),  # one member is no concurrency
          ([_UPSERT], [0, 0], ["ok", "ok"]),  # an index twice
          ([_UPSERT], [0, 2], ["ok", "ok"]),  # an index out of range
          ([_UPSERT], [1, 0], ["ok"]),  # an outcome missing
          ([_UPSERT], [1, 0], ["ok", "aborted"]),  # not an outcome
          ([{"op": "clean"}], [1, 0], ["ok", "write_conflict"]),  # a service resolves no conflict
          ([{"op": "compact", "mode": "schedule"}], [1, 0], ["ok", "ok"]),  # a compaction beside writers runs
          ([{"op": "rollback"}], [1, 0], ["ok", "ok"]),  # not a member
          ([{**_UPSERT, "instant_time": "20240101000000000"}], [1, 0], ["ok", "ok"]),  # members take their times
          ([_UPSERT], [True, 0], ["ok", "ok"]),  # bools are not indexes
      ]),
    {"op": "concurrent", "members": [{"op": "clean"}, {"op": "compact"}], "commit_order": [0, 1],
     "outcomes": ["ok", "ok"]},  # no write
    {"op": "concurrent", "members": _UPSERT, "commit_order": [0], "outcomes": ["ok"]},  # not a list
])
def test_outside_the_vocabulary_is_rejected(obj: object) -> None:
    with pytest.raises(InvalidOperation):
        from_json(obj)


def test_non_finite_floats_are_rejected() -> None:
    with pytest.raises(InvalidOperation, match="finite"):
        Write("upsert", ({"ts": math.inf},))


def test_case_rejects_create_table_in_ops_and_unknown_members() -> None:
    with pytest.raises(InvalidOperation):
        Case("c", ops=(CreateTable(),))
    with pytest.raises(InvalidOperation):
        case_from_json({"id": "c", "steps": []})
    with pytest.raises(InvalidOperation):
        case_from_json({"id": "c", "config": {"op": "create_table"}})
    with pytest.raises(InvalidOperation):
        case_from_json({"id": "", "config": {}})


def test_key_generator_inference() -> None:
    assert CreateTable().resolved_key_generator == "NON_PARTITION"
    assert CreateTable(partition_fields=("p",)).resolved_key_generator == "SIMPLE"
    assert CreateTable(record_key_fields=("a", "b"), partition_fields=("p",)).resolved_key_generator == "COMPLEX"
    assert CreateTable(partition_fields=("p", "q")).resolved_key_generator == "COMPLEX"
    assert CreateTable(key_generator="TIMESTAMP", partition_fields=("p",)).resolved_key_generator == "TIMESTAMP"


def test_defaults_are_hudis() -> None:
    c = CreateTable()
    # HoodieStorageConfig / HoodieCompactionConfig / HoodieCleanConfig / HoodieArchivalConfig defaults
    assert (c.small_file_limit, c.max_file_size, c.insert_split_size, c.record_size_estimate) == (
        100 * 1024 * 1024, 120 * 1024 * 1024, 500_000, 1024)
    assert (c.log_block_size, c.log_file_size) == (256 * 1024 * 1024, 1024 * 1024 * 1024)
    assert (c.compact_max_delta_commits, c.clean_policy, c.clean_commits_retained) == (5, "KEEP_LATEST_COMMITS", 10)
    assert (c.clean_file_versions_retained, c.clean_hours_retained) == (3, 24)
    assert (c.keep_min_commits, c.keep_max_commits) == (20, 30)


def test_records_are_copied_not_shared() -> None:
    rec = {"id": 1}
    w = Write("upsert", (rec,))
    rec["id"] = 2
    assert w.records[0]["id"] == 1
