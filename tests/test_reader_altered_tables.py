"""The spec reader on copies of real tables altered the ways failed writers leave them:
a torn (corrupt) log block, a log block of an instant that never completed, a removed completed
instant (a write rolled back by deleting its completion), and a rollback command block."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec.file_group.log_file.log_blocks import avro_data_block, decode_avro_records, rollback_command_block
from spec.file_group.log_file.log_format import encode_block, read_blocks
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset, hudi_rs_read

TRIPS_UPDATE = "quickstart_trips_table/mor/avro/v6_trips_8i1u"
COW_TWO_COMMITS = "sample_table/cow/v6_nonpartitioned"
V8_TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"


def _table(tables: list[RealTable], name: str) -> RealTable:
    return next(t for t in tables if t.name == name)


def _data_logs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob(".*.log.*") if ".hoodie" not in p.relative_to(root).parts)


def test_torn_block_at_the_tail_is_ignored(real_tables: list[RealTable], real_table_copy: object) -> None:
    table = _table(real_tables, TRIPS_UPDATE)
    path = real_table_copy(table)  # type: ignore[operator]
    before = as_multiset(read_table(str(path)))
    log = _data_logs(path)[0]
    data = log.read_bytes()
    log.write_bytes(data + data[: len(data) // 2])  # a second copy of the block, cut in half by a crash
    assert [r.is_corrupt for r in read_blocks(log.read_bytes())] == [False, True]
    assert as_multiset(read_table(str(path))) == before


def test_corrupt_block_in_the_middle_is_skipped(real_tables: list[RealTable],
                                                real_table_copy: object) -> None:
    table = _table(real_tables, TRIPS_UPDATE)
    path = real_table_copy(table)  # type: ignore[operator]
    before = as_multiset(read_table(str(path)))
    log = _data_logs(path)[0]
    data = log.read_bytes()
    log.write_bytes(data[: len(data) // 3] + data)  # torn prefix, then the intact block
    assert [r.is_corrupt for r in read_blocks(log.read_bytes())] == [True, False]
    assert as_multiset(read_table(str(path))) == before


def _append_update(path: Path, instant: str, fare: float) -> str:
    """Append an Avro block of ``instant`` updating the first logged record's fare; returns its key."""
    log = _data_logs(path)[0]
    block = next(r.block for r in read_blocks(log.read_bytes()) if r.block)
    record = dict(decode_avro_records(block)[0])
    record.update(_hoodie_commit_time=instant, fare=fare, ts=int(record["ts"]) + 1)
    with log.open("ab") as f:
        f.write(encode_block(avro_data_block(instant, block.schema or "", [record])))
    return str(record["_hoodie_record_key"])


@pytest.mark.parametrize("failed", ["20250331040000000", "20250331030644000"])
def test_block_of_an_uncommitted_instant_is_invisible(real_tables: list[RealTable], real_table_copy: object,
                                                      failed: str) -> None:
    """v6: a block of an instant that did not complete is skipped, whether it is after the latest
    completed write (20250331030645735) or before it; hudi-rs reads the same."""
    table = _table(real_tables, TRIPS_UPDATE)
    path = real_table_copy(table)  # type: ignore[operator]
    before = as_multiset(read_table(str(path)))
    (path / ".hoodie" / f"{failed}.deltacommit.requested").write_bytes(b"")
    (path / ".hoodie" / f"{failed}.deltacommit.inflight").write_bytes(b"")
    _append_update(path, failed, 999.0)
    assert as_multiset(read_table(str(path))) == before
    assert as_multiset(hudi_rs_read(str(path))) == before


def test_the_same_block_counts_once_its_instant_completes(real_tables: list[RealTable],
                                                          real_table_copy: object) -> None:
    table = _table(real_tables, TRIPS_UPDATE)
    path = real_table_copy(table)  # type: ignore[operator]
    done = "20250331040000000"
    key = _append_update(path, done, 999.0)
    (path / ".hoodie" / f"{done}.deltacommit").write_bytes(b"")  # empty completed metadata is valid
    rows = {r["_hoodie_record_key"]: r for r in read_table(str(path)).to_pylist()}
    assert rows[key]["fare"] == 999.0 and rows[key]["_hoodie_commit_time"] == done


@pytest.mark.parametrize("later_write", [True, False])
def test_rollback_command_block_removes_its_target(real_tables: list[RealTable], real_table_copy: object,
                                                   later_write: bool) -> None:
    """A rollback block removes the blocks of its target read before it, here those of a completed
    instant (isolating the rule from the completion check), when the rollback block is not after the
    query instant; hudi-rs reads the same.

    Difference (v6, without the later write): 0.x skips every block after the query instant (the
    latest completed write), a rollback block too, so the target's block is applied; hudi-rs applies
    every rollback block of the slice. (A real rollback also deletes its target's completed file,
    after which the completion check skips the block either way.)"""
    table = _table(real_tables, TRIPS_UPDATE)
    path = real_table_copy(table)  # type: ignore[operator]
    before = as_multiset(read_table(str(path)))
    done, rollback, later = "20250331040000000", "20250331050000000", "20250331060000000"
    metadata = sorted((path / ".hoodie").glob("*.deltacommit"))[-1].read_bytes()  # hudi-rs parses it
    key = _append_update(path, done, 999.0)
    (path / ".hoodie" / f"{done}.deltacommit").write_bytes(metadata)
    log = _data_logs(path)[0]
    with log.open("ab") as f:
        f.write(encode_block(rollback_command_block(rollback, done)))
    (path / ".hoodie" / f"{rollback}.rollback").write_bytes(b"")
    if later_write:
        (path / ".hoodie" / f"{later}.deltacommit").write_bytes(metadata)
    ours = read_table(str(path))
    theirs = as_multiset(hudi_rs_read(str(path)))
    assert theirs == before
    if later_write:
        assert as_multiset(ours) == before
    else:
        assert {r["_hoodie_record_key"]: r["fare"] for r in ours.to_pylist()}[key] == 999.0


@pytest.mark.parametrize("name", [COW_TWO_COMMITS, TRIPS_UPDATE, V8_TRIPS])
def test_removing_the_last_completion_rolls_the_table_back(real_tables: list[RealTable],
                                                           real_table_copy: object, name: str) -> None:
    table = _table(real_tables, name)
    path = real_table_copy(table)  # type: ignore[operator]
    timeline = Timeline.load(str(path))
    commits = timeline.commits_timeline().instants
    last, previous = commits[-1], commits[-2]
    expected = as_multiset(read_table(str(path), as_of=previous.requested))
    for f in timeline.files_of(last.requested):
        if not f.endswith((".requested", ".inflight")):
            folder = ".hoodie/timeline" if timeline.layout == 2 else ".hoodie"
            (path / folder / f).unlink()
    assert as_multiset(read_table(str(path))) == expected


def test_v8_log_only_group_keeps_one_slice() -> None:
    """Hudi 1.x: a log of a group without base files joins the slice its group's first log opened."""
    from spec.file_group.file_system_view import DataFile, build_file_groups

    names = ["20250101000000000_20250101000000100.deltacommit",
             "20250101000001000_20250101000001100.deltacommit"]
    timeline = Timeline.from_file_names(names, 2)
    files = [DataFile("", ".f-0_20250101000000000.log.1_0-1-1"),
             DataFile("", ".f-0_20250101000001000.log.1_0-1-1")]
    (group,) = build_file_groups(files, timeline, 8)
    assert [(s.base_instant, len(s.log_files)) for s in group.slices] == [("20250101000000000", 2)]
