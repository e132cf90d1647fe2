"""Record merging rules (spec.read.merge), unit by unit and on an altered real table where hudi-rs differs."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.config.table_config import (
    COMMIT_TIME_STRATEGY_ID,
    DEFAULT_PAYLOAD,
    MERGE_ON_READ,
    OVERWRITE_WITH_LATEST_PAYLOAD,
    TableConfig,
)
from spec.errors import InvalidOperation
from spec.file_group.log_file.delete_block import delete_block, delete_record
from spec.file_group.log_file.log_blocks import decode_avro_records
from spec.file_group.log_file.log_format import encode_block, read_blocks
from spec.read.merge import (
    MergeMode,
    MergeRule,
    Version,
    as_version,
    combine_logs,
    delete_version,
    is_natural_order,
    java_compare,
    merge_with_base,
)
from spec.read.reader import TableReader, read_table
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
    assert as_version({"ts": 3, "_hoodie_is_deleted": True}, V8_EVENT).is_delete
    assert not as_version({"ts": 3, "_hoodie_is_deleted": False}, V8_EVENT).is_delete


def test_v6_long_zero_delete_after_update_named_difference_with_hudi_rs(real_tables: list[RealTable],
                                                                        real_table_copy: object) -> None:
    """Difference 3: a delete whose ordering value is ``Long 0`` (``LongWrapper``, branch 3: a datasource
    delete of a record whose long ordering field is 0) after a logged UPDATE of the same key, in a v6 table.
    Apache Hudi 0.x takes only ``Integer 0`` as the natural order and compares Long 0 as a real ordering
    value, so the update survives; hudi-rs breaks the tie by commit time and deletes the key. We follow
    Apache Hudi. (Spark SQL's DELETE writes ``IntWrapper(0)``, branch 2: a natural-order delete in both.)"""
    table = next(t for t in real_tables if t.name == "quickstart_trips_table/mor/avro/v6_trips_8i1u")
    path: Path = real_table_copy(table)  # type: ignore[operator]
    log = sorted(p for p in path.rglob(".*.log.*"))[0]
    block = next(r.block for r in read_blocks(log.read_bytes()) if r.block)
    updated = decode_avro_records(block)[0]
    key, partition = updated["_hoodie_record_key"], updated["_hoodie_partition_path"]
    instant = "20250331040000000"
    with log.open("ab") as f:
        long_zero = delete_record(key, partition, 0, branch=3)
        f.write(encode_block(delete_block(instant, block.schema or "", [long_zero])))
    previous = sorted((path / ".hoodie").glob("*.deltacommit"))[-1]
    (path / ".hoodie" / f"{instant}.deltacommit").write_bytes(previous.read_bytes())
    ours = {r["_hoodie_record_key"] for r in read_table(str(path)).to_pylist()}
    theirs_table = hudi_rs_read(str(path))
    theirs = {r["_hoodie_record_key"] for r in theirs_table.to_pylist()} if theirs_table else set()
    assert key in ours
    assert key not in theirs
    assert ours - {key} == theirs


def _config(version: int, **props: str) -> TableConfig:
    return TableConfig.create("t", MERGE_ON_READ, version, ("id",), "ts").with_props(**props)


def test_merge_rule_from_config_side_by_side() -> None:
    payload, mode, strategy = "hoodie.compaction.payload.class", "hoodie.record.merge.mode", \
        "hoodie.record.merge.strategy.id"
    event_time = "org.apache.hudi.common.model.EventTimeAvroPayload"
    partial = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
    cases = [  # (version, props, mode, log wins over base)
        (6, {payload: OVERWRITE_WITH_LATEST_PAYLOAD}, MergeMode.EVENT_TIME_ORDERING, True),
        (6, {payload: DEFAULT_PAYLOAD}, MergeMode.EVENT_TIME_ORDERING, False),
        (6, {payload: event_time}, MergeMode.EVENT_TIME_ORDERING, False),
        (6, {payload: partial}, MergeMode.CUSTOM, False),
        (8, {mode: "EVENT_TIME_ORDERING"}, MergeMode.EVENT_TIME_ORDERING, False),
        (8, {mode: "COMMIT_TIME_ORDERING"}, MergeMode.COMMIT_TIME_ORDERING, True),
        (8, {mode: "CUSTOM"}, MergeMode.CUSTOM, False),
    ]
    for version, props, expected_mode, log_wins in cases:
        rule = MergeRule.from_config(_config(version, **props))
        got = (rule.mode, rule.log_wins_over_base, rule.table_version)
        assert got == (expected_mode, log_wins, version), props
    no_mode = {k: v for k, v in _config(8).props.items() if k != mode}
    rule = MergeRule.from_config(TableConfig({**no_mode, strategy: COMMIT_TIME_STRATEGY_ID}))
    assert rule.mode == MergeMode.COMMIT_TIME_ORDERING
    no_ordering = {k: v for k, v in _config(6).props.items() if k != "hoodie.table.precombine.field"}
    rule = MergeRule.from_config(TableConfig(no_ordering))
    assert (rule.mode, rule.log_wins_over_base) == (MergeMode.COMMIT_TIME_ORDERING, True)


def test_real_tables_merge_rules(real_tables: list[RealTable]) -> None:
    """The trips tables' payloads as docs/spec/merge.md describes them."""
    rules = {t.name.rsplit("/", 1)[1]: TableReader(str(t.path)).rule
             for t in real_tables if "trips" in t.name}
    assert rules["v6_trips_8i1u"].log_wins_over_base and rules["v6_trips_8i1u"].ordering_field == "ts"
    assert rules["v8_trips_8i3u1d"].mode == MergeMode.EVENT_TIME_ORDERING
    assert not rules["v8_trips_8i3u1d"].log_wins_over_base


def test_custom_payload_refuses_to_merge_but_reads_base_files(real_tables: list[RealTable],
                                                             real_table_copy: object) -> None:
    table = next(t for t in real_tables if t.name == "quickstart_trips_table/mor/avro/v6_trips_8i1u")
    path: Path = real_table_copy(table)  # type: ignore[operator]
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("OverwriteWithLatestAvroPayload", "PartialUpdateAvroPayload"))
    with pytest.raises(InvalidOperation, match="PartialUpdateAvroPayload"):
        read_table(str(path))
    assert read_table(str(path), "read_optimized").num_rows == 8


def _utf16_units(s: str) -> list[int]:
    """UTF-16 code units of a string, computed from code points (surrogate pairs above U+FFFF)."""
    out: list[int] = []
    for ch in s:
        o = ord(ch)
        if o > 0xFFFF:
            o -= 0x10000
            out += [0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)]
        else:
            out.append(o)
    return out


@given(st.text(max_size=6), st.text(max_size=6))
def test_strings_compare_by_utf16_code_units(a: str, b: str) -> None:
    ua, ub = _utf16_units(a), _utf16_units(b)
    assert java_compare(a, b) == (ua > ub) - (ua < ub)


def test_java_compare_edges() -> None:
    assert java_compare("\U0001F600", "\uFFFF") == -1  # a surrogate pair sorts below U+FFFF in Java
    assert "\U0001F600" > "\uFFFF"  # ... though above it by code point
    assert java_compare(-0.0, 0.0) == -1 and java_compare(0.0, -0.0) == 1
    assert java_compare(float("nan"), float("inf")) == 1 and java_compare(float("nan"), float("nan")) == 0
    assert java_compare(b"\x80", b"\x01") == -1  # ByteBuffer compares signed bytes
    assert java_compare(b"\x01", b"\x01\x00") == -1
    assert java_compare(False, True) == -1
    assert java_compare(None, 1) is None and java_compare("1", 1) is None
    assert java_compare(Decimal("1.10"), Decimal("1.1")) == 0
    # a later log record with the smaller string ordering value loses under event-time ordering
    older, newer = Version({"k": 1}, "\uFFFF", "string"), Version({"k": 2}, "\U0001F600", "string")
    assert combine_logs(older, newer, V8_EVENT) is older
