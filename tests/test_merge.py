"""Record merging rules (spec.merge), unit by unit and on an altered real table where hudi-rs differs."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from spec.log_blocks import decode_avro_records, delete_block, delete_record
from spec.log_format import encode_block, read_blocks
from spec.merge import MergeMode, MergeRule, Version, combine_logs, delete_version, is_natural_order, merge_with_base
from spec.reader import read_table
from tests.conftest import RealTable
from tests.hudi_rs import hudi_rs_read

V6_DEFAULT = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", log_wins_over_base=False, table_version=6)
V6_OVERWRITE = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", log_wins_over_base=True, table_version=6)
V8_EVENT = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", log_wins_over_base=False, table_version=8)
V8_COMMIT = MergeRule(MergeMode.COMMIT_TIME_ORDERING, "ts", log_wins_over_base=True, table_version=8)


def rec(ts: int, tag: str = "") -> Version:
    return Version({"ts": ts, "tag": tag}, ts, "long")


@given(st.lists(st.integers(0, 5), min_size=1, max_size=8))
def test_greatest_ordering_wins_ties_to_later(values: list[int]) -> None:
    versions = [rec(v, str(i)) for i, v in enumerate(values)]
    acc = versions[0]
    for v in versions[1:]:
        acc = combine_logs(acc, v, V8_EVENT)
    best = max(values)
    last_best = max(i for i, v in enumerate(values) if v == best)
    assert acc.row == {"ts": best, "tag": str(last_best)}


@given(st.lists(st.integers(0, 5), min_size=1, max_size=8))
def test_commit_time_ordering_takes_the_last(values: list[int]) -> None:
    acc = rec(values[0], "0")
    for i, v in enumerate(values[1:], 1):
        acc = combine_logs(acc, rec(v, str(i)), V8_COMMIT)
    assert acc.row == {"ts": values[-1], "tag": str(len(values) - 1)}


def test_natural_order_deletes_per_version() -> None:
    assert is_natural_order(None, None, 6) and is_natural_order(0, "int", 6)
    assert not is_natural_order(0, "long", 6)  # Hudi 0.x: Long 0 is a real ordering value
    assert is_natural_order(0, "long", 8)  # Hudi 1.x: numeric 0 of any type
    assert not is_natural_order(5, "long", 8)


def test_delete_after_update_in_logs_differs_between_versions() -> None:
    update, long_zero_delete = rec(100), delete_version(0, "long", V6_DEFAULT)
    assert combine_logs(update, long_zero_delete, V6_DEFAULT).row is not None  # 0.x: the update survives
    v8_delete = delete_version(0, "long", V8_EVENT)
    assert combine_logs(update, v8_delete, V8_EVENT).is_delete
    real_delete = delete_version(50, "long", V8_EVENT)
    assert combine_logs(update, real_delete, V8_EVENT).row is not None  # smaller real ordering loses
    assert combine_logs(update, delete_version(150, "long", V8_EVENT), V8_EVENT).is_delete


def test_base_against_log() -> None:
    base, older_log = rec(10, "base"), rec(5, "log")
    assert merge_with_base(base, older_log, V6_OVERWRITE).row == {"ts": 5, "tag": "log"}
    assert merge_with_base(base, older_log, V6_DEFAULT).row == {"ts": 10, "tag": "base"}
    assert merge_with_base(base, older_log, V8_EVENT).row == {"ts": 10, "tag": "base"}
    assert merge_with_base(base, delete_version(0, "long", V6_DEFAULT), V6_DEFAULT).is_delete
    assert merge_with_base(base, rec(10, "log"), V8_EVENT).row == {"ts": 10, "tag": "log"}  # ties -> log


def test_is_deleted_flag_is_a_delete() -> None:
    from spec.merge import as_version

    assert as_version({"ts": 3, "_hoodie_is_deleted": True}, V8_EVENT).is_delete
    assert not as_version({"ts": 3, "_hoodie_is_deleted": False}, V8_EVENT).is_delete


def test_v6_long_zero_delete_after_update_named_difference_with_hudi_rs(real_tables: list[RealTable],
                                                                        real_table_copy: object) -> None:
    """Difference 3: a Spark SQL DELETE (ordering Long 0) after a logged UPDATE of the same key, in a v6
    table. Apache Hudi 0.x compares Long 0 as a real ordering value, so the update survives; hudi-rs
    breaks the tie by commit time and deletes the key. We follow Apache Hudi."""
    table = next(t for t in real_tables if t.name == "quickstart_trips_table/mor/avro/v6_trips_8i1u")
    path: Path = real_table_copy(table)  # type: ignore[operator]
    log = sorted(p for p in path.rglob(".*.log.*"))[0]
    block = next(r.block for r in read_blocks(log.read_bytes()) if r.block)
    updated = decode_avro_records(block)[0]
    key, partition = updated["_hoodie_record_key"], updated["_hoodie_partition_path"]
    instant = "20250331040000000"
    with log.open("ab") as f:
        f.write(encode_block(delete_block(instant, block.schema or "", [delete_record(key, partition, 0, branch=2)])))
    previous = sorted((path / ".hoodie").glob("*.deltacommit"))[-1]
    (path / ".hoodie" / f"{instant}.deltacommit").write_bytes(previous.read_bytes())
    ours = {r["_hoodie_record_key"] for r in read_table(str(path)).to_pylist()}
    theirs_table = hudi_rs_read(str(path))
    theirs = {r["_hoodie_record_key"] for r in theirs_table.to_pylist()} if theirs_table is not None else set()
    assert key in ours
    assert key not in theirs
    assert ours - {key} == theirs
