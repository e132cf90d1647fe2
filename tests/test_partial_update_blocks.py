"""Partial-update log blocks (``IS_PARTIAL``): Apache Hudi 1.2.0's ``MERGE INTO … UPDATE SET`` of some columns on
merge-on-read writes records holding the five meta columns and the assigned columns alone; a record that wins its
merge keeps its values and takes every other column from the record it beat (``spec.read.merge.merge_partial``).

Without Spark: the rule on versions, and tables our writer wrote whose update blocks are rewritten as Hudi writes
them (the meta columns and the set columns alone, the header flag ``IS_PARTIAL``), read by the spec reader (snapshot,
read-optimized, incremental, time travel) and compacted by us. ``tests/test_partial_update_blocks_hudi.py``
compares the same with tables Apache Hudi 1.2.0 wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.errors import UnsupportedBlockContent
from spec.file_group.log_file.log_blocks import avro_data_block, decode_avro_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, encode_blocks, read_blocks
from spec.read.merge import MergeMode, MergeRule, Version, combine_logs, merge_partial, merge_with_base
from spec.schema.table_schema import META_FIELDS

EVENT = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", log_wins_over_base=False, table_version=8)
COMMIT = MergeRule(MergeMode.COMMIT_TIME_ORDERING, None, log_wins_over_base=True, table_version=8)
BASE = Version({"_hoodie_commit_time": "1", "id": 3, "ts": 5, "v": "three", "w": "w3"}, 5, "long")


def partial(commit: str, ts: int | None = None, **columns: Any) -> Version:
    row = {"_hoodie_commit_time": commit, **({} if ts is None else {"ts": ts}), **columns}
    return Version(row, ts, None if ts is None else "long", partial=True)


def _fold(rule: MergeRule, *logs: Version) -> Version:
    acc = logs[0]
    for v in logs[1:]:
        acc = combine_logs(acc, v, rule)
    return acc


def test_a_partial_record_takes_the_columns_it_lacks_from_the_record_it_beats() -> None:
    """Measured on Apache Hudi 1.2.0 (event time): partials (ts 2, v x), (ts 7, v y), (ts 9, w ww), (ts 8, w qq)
    over the stored row (ts 5, three, w3) read (ts 9, y, ww) with the commit time of the third."""
    logs = [partial("2", 2, v="x"), partial("3", 7, v="y"), partial("4", 9, w="ww"), partial("5", 8, w="qq")]
    merged = merge_with_base(BASE, _fold(EVENT, *logs), EVENT)
    assert merged.row == {"_hoodie_commit_time": "4", "id": 3, "ts": 9, "v": "y", "w": "ww"}
    assert not merged.partial
    # of smaller ordering value than the stored row: the stored row as it is
    assert merge_with_base(BASE, partial("2", 2, v="x"), EVENT) is BASE


def test_a_partial_record_against_whole_records_either_way() -> None:
    """Measured: partial (ts 7, v x) then a whole upsert (ts 6, v full, w wf) reads (ts 7, x, wf) with the partial
    record's commit time; a whole (ts 6) then a partial (ts 8, w zz) reads (ts 8, full1, zz)."""
    whole = Version({"_hoodie_commit_time": "3", "id": 3, "ts": 6, "v": "full", "w": "wf"}, 6, "long")
    first = combine_logs(partial("2", 7, v="x"), whole, EVENT)
    assert first.row == {"_hoodie_commit_time": "2", "id": 3, "ts": 7, "v": "x", "w": "wf"} and not first.partial
    second = combine_logs(whole, partial("4", 8, w="zz"), EVENT)
    assert second.row == {"_hoodie_commit_time": "4", "id": 3, "ts": 8, "v": "full", "w": "zz"}
    # a whole record that wins is read as it is
    assert combine_logs(partial("2", 5, v="x"), whole, EVENT) is whole


def test_commit_time_ordering_and_deletes() -> None:
    """Without an ordering field the later record wins (measured: v from one partial, w from the next, ts from the
    stored row); a delete between is no record to take columns from: the partial record after it stays partial."""
    merged = merge_with_base(BASE, _fold(COMMIT, partial("2", v="x"), partial("3", w="zz")), COMMIT)
    assert merged.row == {"_hoodie_commit_time": "3", "id": 3, "ts": 5, "v": "x", "w": "zz"}
    gone = Version(None, None, None, natural=True)
    assert _fold(COMMIT, partial("2", v="x"), gone).is_delete
    after = _fold(COMMIT, partial("2", v="x"), gone, partial("4", w="q"))
    assert after.partial and after.row == {"_hoodie_commit_time": "4", "w": "q"}
    assert merge_partial(partial("4", w="q"), gone) == partial("4", w="q")


# --- tables -------------------------------------------------------------------------------------------------


ROWS = [(1, "a", 5, "one", "w1"), (2, "a", 5, "two", "w2"), (3, "b", 5, "three", "w3")]
OPTIONS = {"hoodie.table.name": "pu", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
           "hoodie.metadata.enable": "false", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.compact.inline": "false"}


def _arrow(rows: list[tuple[int, str, int, str, str]]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int32()), "p": [r[1] for r in rows],
                     "ts": pa.array([r[2] for r in rows], pa.int64()), "v": [r[3] for r in rows],
                     "w": [r[4] for r in rows]})


def _as_partial(table: Path, instant: str, columns: set[str]) -> None:
    """Rewrite the data blocks ``instant`` wrote as Apache Hudi 1.2.0 writes a partial update: records of the meta
    columns and ``columns`` alone (in the table's order), the header flag ``IS_PARTIAL`` = ``true``."""
    for log in table.glob("*/.*.log.*"):
        blocks = [r.block for r in read_blocks(log.read_bytes())]
        if not any(b.instant_time == instant and b.block_type == BlockType.AVRO_DATA_BLOCK for b in blocks):
            continue
        out = []
        for b in blocks:
            if b.instant_time == instant and b.block_type == BlockType.AVRO_DATA_BLOCK:
                schema = json.loads(b.schema or "")
                keep = META_FIELDS + tuple(columns)
                schema["fields"] = [f for f in schema["fields"] if f["name"] in keep]
                records = [{k: r[k] for k in r if k in keep} for r in decode_avro_records(b)]
                b = avro_data_block(instant, json.dumps(schema), records, ((int(HeaderKey.IS_PARTIAL), "true"),))
            out.append(b)
        log.write_bytes(encode_blocks(out))


def _upsert(t: HudiTable, rows: list[tuple[int, str, int, str, str]], partial_columns: set[str] | None = None) -> str:
    instant = t.write(_arrow(rows), "upsert", OPTIONS).instant
    if partial_columns is not None:
        _as_partial(Path(t.path), instant, partial_columns)
    return instant


def _rows(table: pa.Table) -> dict[int, tuple[Any, ...]]:
    return {r["id"]: (r["_hoodie_commit_time"], r["ts"], r["v"], r["w"]) for r in table.to_pylist()}


@pytest.fixture
def chain(tmp_path: Path) -> tuple[HudiTable, list[str]]:
    """The table of the measured sequence: an insert, then partial updates of key 3 (ts 7, v y), (ts 9, w ww)
    and (ts 8, w qq), a whole upsert of key 1 (ts 6), then a partial of key 1 (ts 8, w zz)."""
    t = HudiTable(str(tmp_path / "t"), engine="local")
    first = t.write(_arrow(ROWS), "insert", OPTIONS).instant
    instants = [first,
                _upsert(t, [(3, "b", 7, "y", "-")], {"ts", "v"}),
                _upsert(t, [(3, "b", 9, "-", "ww")], {"ts", "w"}),
                _upsert(t, [(3, "b", 8, "-", "qq")], {"ts", "w"}),
                _upsert(t, [(1, "a", 6, "full1", "wf1")]),
                _upsert(t, [(1, "a", 8, "-", "zz")], {"ts", "w"})]
    return t, instants


def test_the_reader_merges_partial_blocks_in_every_query(chain: tuple[HudiTable, list[str]]) -> None:
    t, (first, u1, u2, _u3, _u4, u5) = chain
    assert _rows(t.read()) == {1: (u5, 8, "full1", "zz"), 2: (first, 5, "two", "w2"), 3: (u2, 9, "y", "ww")}
    assert _rows(t.read("read_optimized"))[3] == (first, 5, "three", "w3")
    assert _rows(t.read(as_of=u1)) == {1: (first, 5, "one", "w1"), 2: (first, 5, "two", "w2"),
                                       3: (u1, 7, "y", "w3")}
    # a window from the start reads the stored rows: the merged rows whose commit time is in it
    assert _rows(t.read("incremental")) == _rows(t.read())
    # a window whose file slices lack the stored row of a partial record's key (the view of the window's files):
    # Apache Hudi 1.2.0 fails the query (measured), the reader refuses it
    with pytest.raises(UnsupportedBlockContent, match="partial-update record of key 3"):
        t.read("incremental", begin=u1)


def test_compaction_writes_the_merged_rows(chain: tuple[HudiTable, list[str]]) -> None:
    """Our compaction of slices with partial blocks writes the rows the reader merges, with the merged record's
    commit time and sequence number."""
    t, _ = chain
    before = t.read().to_pylist()
    assert t.compact() is not None
    after = t.read().to_pylist()
    assert {r["id"]: {k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in after} == \
        {r["id"]: {k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in before}
    assert _rows(t.read("read_optimized")) == _rows(t.read())
    # our writer continues the table
    _upsert(t, [(3, "b", 10, "ten", "w10")])
    assert _rows(t.read())[3][1:] == (10, "ten", "w10")


def test_a_partial_block_without_the_ordering_field_is_refused(tmp_path: Path) -> None:
    """Apache Hudi 1.2.0's ``MERGE INTO`` refuses an update that does not assign the ordering field (measured: "No
    matching assignment found for target table ordering field"); such a block, under event-time ordering, is not
    read here."""
    t = HudiTable(str(tmp_path / "t"), engine="local")
    t.write(_arrow(ROWS), "insert", OPTIONS)
    _upsert(t, [(3, "b", 7, "y", "-")], {"v"})
    with pytest.raises(UnsupportedBlockContent, match="without the column"):
        t.read()


def test_a_record_after_a_delete_in_a_slice_with_a_partial_block_under_commit_time_ordering(tmp_path: Path) -> None:
    """Apache Hudi 1.2.0 fails to read such a file group (measured: a partial update of key 1, a delete of key 2, an
    upsert of key 2, commit-time ordering: "Exception when reading log file", a NullPointerException); the reader
    refuses it, and reads the same log records under event-time ordering (Hudi does too)."""
    no_ordering = {**{k: v for k, v in OPTIONS.items() if k != "hoodie.datasource.write.precombine.field"},
                   "hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"}
    for options, refused in ((no_ordering, True), (OPTIONS, False)):
        t = HudiTable(str(tmp_path / str(refused)), engine="local")
        t.write(_arrow(ROWS), "insert", options)
        partial_write = t.write(_arrow([(1, "a", 6, "x", "-")]), "upsert", options).instant
        _as_partial(Path(t.path), partial_write, {"ts", "v"})
        t.write(_arrow([(2, "a", 6, "-", "-")]), "delete", options)
        t.write(_arrow([(2, "a", 7, "again", "wa")]), "upsert", options)
        if refused:
            with pytest.raises(UnsupportedBlockContent, match="key 2 after its delete"):
                t.read()
        else:
            assert {k: v[1:] for k, v in _rows(t.read()).items()} == {
                1: (6, "x", "w1"), 2: (7, "again", "wa"), 3: (5, "three", "w3")}


def test_the_schema_log_records_are_read_as() -> None:
    """The last whole data block's schema; a later partial block's column takes its type, a column only partial
    blocks carry comes after; without a whole block, the partial blocks' columns in the order they come."""
    from spec.read.partial_update import log_read_schema

    whole = pa.schema([("id", pa.int32()), ("ts", pa.int64()), ("v", pa.string())])
    evolved = pa.schema([("ts", pa.int64()), ("v", pa.large_string()), ("x", pa.string())])
    assert log_read_schema([(whole, False), (None, False), (evolved, True)]) == pa.schema(
        [("id", pa.int32()), ("ts", pa.int64()), ("v", pa.large_string()), ("x", pa.string())])
    assert log_read_schema([(evolved, True), (whole, False)]) == whole
    assert log_read_schema([(evolved, True), (pa.schema([("id", pa.int32())]), True)]) == pa.schema(
        [("ts", pa.int64()), ("v", pa.large_string()), ("x", pa.string()), ("id", pa.int32())])
    assert log_read_schema([(None, False)]) is None
