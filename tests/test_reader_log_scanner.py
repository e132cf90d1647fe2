"""Log scanning (spec.file_group.log_file.scanner): which blocks of a slice are applied, in what order, by version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spec.file_group.log_file.log_blocks import avro_data_block, decode_avro_records, rollback_command_block
from spec.file_group.log_file.log_format import BlockRecord, BlockType, HeaderKey, LogBlock, encode_block, read_blocks
from spec.file_group.log_file.scanner import blocks_to_apply, compacted_instants
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset, hudi_rs_read

T = [f"2025010100000{i}000" for i in range(10)]


def data(t: str, tag: str = "", compacted: tuple[str, ...] = ()) -> LogBlock:
    header: list[tuple[int, str]] = [(int(HeaderKey.INSTANT_TIME), t), (int(HeaderKey.SCHEMA), tag or t)]
    if compacted:
        header.append((int(HeaderKey.COMPACTED_BLOCK_TIMES), ",".join(compacted)))
    return LogBlock(BlockType.AVRO_DATA_BLOCK, tuple(header))


def records(*blocks: LogBlock | None) -> list[BlockRecord]:
    return [BlockRecord(i, 1, b) for i, b in enumerate(blocks)]


def names(blocks: list[LogBlock]) -> list[str]:
    return [b.schema or "" for b in blocks]


def timeline(version: int, *completed: str, pending: tuple[str, ...] = ()) -> Timeline:
    if version < 8:
        files = [f"{t}.deltacommit" for t in completed] + [f"{t}.deltacommit.inflight" for t in pending]
        return Timeline.from_file_names(files, 1)
    files = [f"{t}_{t[:-3]}500.deltacommit" for t in completed]
    files += [f"{t}.deltacommit.inflight" for t in pending]
    return Timeline.from_file_names(files, 2)


@pytest.mark.parametrize("version", [6, 8])
def test_later_blocks_are_skipped_and_corrupt_regions_ignored(version: int) -> None:
    tl = timeline(version, *T[1:4])
    applied, stats = blocks_to_apply(records(data(T[1]), None, data(T[2]), data(T[3])), tl, T[2], version)
    assert names(applied) == [T[1], T[2]]
    assert (stats.total_blocks, stats.applied, stats.corrupt, stats.skipped_later) == (4, 2, 1, 1)


def test_uncommitted_blocks_are_skipped_in_v6_and_not_checked_in_v8() -> None:
    """v6 checks each block's instant against the timeline; v8 relies on the file slice, whose log
    files of incomplete instants are already left out."""
    blocks = records(data(T[1]), data(T[2]), data(T[3]))
    v6, stats = blocks_to_apply(blocks, timeline(6, T[1], T[3], pending=(T[2],)), None, 6)
    assert names(v6) == [T[1], T[3]] and stats.skipped_uncommitted == 1
    v8, _ = blocks_to_apply(blocks, timeline(8, T[1], T[3], pending=(T[2],)), None, 8)
    assert names(v8) == [T[1], T[2], T[3]]


def test_an_instant_older_than_the_active_timeline_counts_as_completed() -> None:
    applied, _ = blocks_to_apply(records(data(T[1]), data(T[5])), timeline(6, T[5]), None, 6)
    assert names(applied) == [T[1], T[5]]


@pytest.mark.parametrize("version", [6, 8])
def test_rollback_removes_the_blocks_of_its_target_read_before_it(version: int) -> None:
    tl = timeline(version, *T[1:7])
    blocks = records(data(T[1], "a"), data(T[2], "b"), data(T[1], "c"), None,
                     rollback_command_block(T[3], T[1]), data(T[1], "d"))
    applied, stats = blocks_to_apply(blocks, tl, None, version)
    assert names(applied) == ["b", "d"]
    assert stats.rolled_back == 2


def test_a_rollback_after_the_query_instant_applies_in_v8_only() -> None:
    """0.x skips every block after the query instant; 1.x skips only data and delete blocks."""
    blocks = records(data(T[1]), data(T[2]), rollback_command_block(T[5], T[2]))
    v6, _ = blocks_to_apply(blocks, timeline(6, T[1], T[2], T[5]), T[3], 6)
    v8, _ = blocks_to_apply(blocks, timeline(8, T[1], T[2], T[5]), T[3], 8)
    assert (names(v6), names(v8)) == ([T[1], T[2]], [T[1]])


@pytest.mark.parametrize("version", [6, 8])
def test_log_compacted_block_replaces_its_instants(version: int) -> None:
    tl = timeline(version, *T[1:8])
    blocks = records(data(T[1]), data(T[2]), data(T[3], "M", (T[1], T[2])), data(T[4]))
    applied, stats = blocks_to_apply(blocks, tl, None, version)
    assert names(applied) == ["M", T[4]]
    assert stats.compacted == 2


def test_compaction_of_a_compaction_resolves_to_the_last_one() -> None:
    tl = timeline(8, *T[1:8])
    blocks = records(data(T[1]), data(T[2]), data(T[3], "M1", (T[1], T[2])), data(T[4]),
                     data(T[5], "M2", (T[3], T[4])), data(T[6]))
    applied, _ = blocks_to_apply(blocks, tl, None, 8)
    assert names(applied) == ["M2", T[6]]
    assert compacted_instants(blocks[4].block) == (T[3], T[4])  # type: ignore[arg-type]


def test_compacted_block_is_applied_where_the_latest_of_its_instants_was() -> None:
    """B(t1), M(t3 compacts t1), B(t2): M takes t1's place, before t2."""
    tl = timeline(8, *T[1:4])
    applied, _ = blocks_to_apply(records(data(T[1]), data(T[3], "M", (T[1],)), data(T[2])), tl, None, 8)
    assert names(applied) == ["M", T[2]]


def test_v8_groups_the_blocks_of_an_instant() -> None:
    tl = timeline(8, *T[1:3])
    blocks = records(data(T[1], "a"), data(T[2], "b"), data(T[1], "c"))
    assert names(blocks_to_apply(blocks, tl, None, 8)[0]) == ["a", "c", "b"]
    assert names(blocks_to_apply(blocks, timeline(6, *T[1:3]), None, 6)[0]) == ["a", "b", "c"]


# --- on a real v8 table -----------------------------------------------------------------------


@pytest.mark.parametrize(("pending", "applied"), [("20251220210130000", True), ("20251220210131000", False)])
def test_v8_block_of_an_incomplete_instant_in_a_completed_log_file(real_tables: list[RealTable],
                                                                   real_table_copy: Any, pending: str,
                                                                   applied: bool) -> None:
    """1.x does not check block instants against the timeline (the file's deltacommit completed), so a
    block of an instant that never completed is applied when it is not after the query instant (the
    latest completed write, 20251220210130911); after it, it is skipped. hudi-rs reads the same.
    The same block in a v6 table is skipped either way (test_reader_altered_tables)."""
    import shutil

    table = next(t for t in real_tables if t.name.endswith("v8_trips_8i3u1d"))
    path: Path = real_table_copy(table)
    shutil.rmtree(path / ".hoodie" / "metadata")  # so that hudi-rs lists files from storage too
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text("".join(x for x in props.read_text().splitlines(keepends=True)
                             if not x.startswith("hoodie.table.metadata.partitions")))
    log = sorted(p for p in path.rglob(".*.log.*") if ".hoodie" not in p.relative_to(path).parts)[-1]
    assert "20251220210130911" in log.name
    block = next(r.block for r in read_blocks(log.read_bytes()) if r.block is not None and r.block.schema)
    record = dict(decode_avro_records(block)[0])
    (path / ".hoodie" / "timeline" / f"{pending}.deltacommit.requested").write_bytes(b"")
    record.update(_hoodie_commit_time=pending, _hoodie_commit_seqno=f"{pending}_0_1", fare=999.0,
                  ts=int(record["ts"]) + 1)
    with log.open("ab") as f:
        f.write(encode_block(avro_data_block(pending, block.schema or "", [record])))
    rows = {r["_hoodie_record_key"]: r for r in read_table(str(path)).to_pylist()}
    assert (rows[record["_hoodie_record_key"]]["fare"] == 999.0) == applied
    assert as_multiset(read_table(str(path))) == as_multiset(hudi_rs_read(str(path)))
