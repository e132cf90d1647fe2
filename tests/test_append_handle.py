"""The append handle's rules (HoodieAppendHandle): block flushes, one delete block, rollover."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidConfig, InvalidRecord
from spec.file_group.file_naming import LogFileName
from spec.write.append_handle import (
    AppendHandleConfig,
    LogRecordOp,
    PlannedBlock,
    first_log_file,
    plan_append_handle,
    plan_appends,
    roll_over,
)

FID = "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
BASE, T2, T3 = "20250126040823628", "20250126060846931", "20250126070000000"


def ups(n: int, size: int = 100) -> list[LogRecordOp]:
    return [LogRecordOp(f"k{i}", False, size) for i in range(n)]


def test_block_threshold_with_constant_sizes() -> None:
    # 1000-byte limit, 100-byte records: a block holds max_block_size // avg = 10 records
    appends = plan_appends(ups(25), AppendHandleConfig(max_block_size=1000))
    assert [[len(b.records) for b in a] for a in appends] == [[10], [10], [5]]


def test_estimate_moves_towards_sampled_sizes() -> None:
    # first record 100 bytes: avg 100; at record 0 it is refreshed to int(0.8*100 + 0.2*100) = 100;
    # records then grow to 500 bytes but the estimate is only refreshed every 100 records or on a full buffer
    recs = [LogRecordOp("a", False, 100)] + [LogRecordOp(f"k{i}", False, 500) for i in range(30)]
    appends = plan_appends(recs, AppendHandleConfig(max_block_size=1000))
    # count reaches 10 -> refresh to int(0.8*100+0.2*500)=180 -> 1000//180 = 5 < 10 -> flush 10 records
    assert len(appends[0][0].records) == 10
    # the flush resets the count without a refresh; the limit stays 1000//180 = 5, so at count 5 the estimate
    # is refreshed to int(0.8*180+0.2*500) = 244 (limit 4) and the 5 buffered records are flushed
    assert len(appends[1][0].records) == 5
    # then at count 4: refresh to int(0.8*244+0.2*500) = 295 (limit 3): flush 4
    assert len(appends[2][0].records) == 4


def test_deletes_go_to_one_block_after_the_data_blocks() -> None:
    recs = [LogRecordOp(f"k{i}", i % 3 == 0, 100) for i in range(30)]
    appends = plan_appends(recs, AppendHandleConfig(max_block_size=1000))
    kinds = [[b.kind for b in a] for a in appends]
    assert all(k == ["data"] for k in kinds[:-1]) and kinds[-1] == ["data", "delete"]
    deletes = appends[-1][-1].records
    assert deletes == tuple(i for i in range(30) if i % 3 == 0)


def test_only_deletes_make_one_delete_block() -> None:
    recs = [LogRecordOp(f"k{i}", True, 100) for i in range(50)]
    assert plan_appends(recs, AppendHandleConfig(max_block_size=1000)) == [
        (PlannedBlock("delete", tuple(range(50))),)]


def test_close_flushes_the_rest_and_empty_input_writes_nothing() -> None:
    assert plan_appends([], AppendHandleConfig()) == []
    assert plan_appends(ups(3), AppendHandleConfig()) == [(PlannedBlock("data", (0, 1, 2)),)]


@given(st.lists(st.tuples(st.booleans(), st.integers(1, 5000)), max_size=300), st.integers(500, 20000))
def test_every_record_lands_in_exactly_one_block_in_order(ops: list[tuple[bool, int]], limit: int) -> None:
    recs = [LogRecordOp(f"k{i}", d, s) for i, (d, s) in enumerate(ops)]
    appends = plan_appends(recs, AppendHandleConfig(max_block_size=limit))
    data = [i for a in appends for b in a if b.kind == "data" for i in b.records]
    deletes = [i for a in appends for b in a if b.kind == "delete" for i in b.records]
    assert data == [i for i, r in enumerate(recs) if not r.is_delete]
    assert deletes == [i for i, r in enumerate(recs) if r.is_delete]
    assert sum(1 for a in appends for b in a if b.kind == "delete") <= 1


def test_log_names_per_table_version() -> None:
    existing = [LogFileName(FID, BASE, 1, "0-33-43"), LogFileName(FID, BASE, 2, "1-0-1")]
    v6 = first_log_file(FID, BASE, T2, existing, "0-13-9", 6)
    assert v6.format() == f".{FID}_{BASE}.log.3_0-13-9"  # as in the real v6 rollback table
    v8 = first_log_file(FID, BASE, T3, existing, "0-1-1", 8)
    assert (v8.instant, v8.version) == (T3, 1)
    assert first_log_file(FID, BASE, T3, [*existing, v8], "0-1-2", 8).version == 2


def test_rollover_by_size() -> None:
    first = LogFileName(FID, BASE, 1, "0-1-1")
    files = plan_append_handle(ups(40), first, AppendHandleConfig(max_block_size=1000, max_log_file_size=2500),
                               block_size=lambda b: 100 * len(b.records) + 50)
    # 4 appends of 10 records (1050 bytes each): file 1 takes 3 (3150 > 2500 after the third), file 2 the last
    assert [(f.name.version, len(f.blocks)) for f in files] == [(1, 3), (2, 1)]
    assert files[1].name == roll_over(first)


def test_bad_config_is_a_typed_error() -> None:
    with pytest.raises(InvalidConfig):
        AppendHandleConfig(max_block_size=0)


def test_record_sizes_must_be_positive() -> None:
    # Hudi divides the block limit by the estimate; a zero size would make that a division by zero
    with pytest.raises(InvalidRecord):
        LogRecordOp("k", False, 0)


@given(st.lists(st.integers(1, 3), min_size=1, max_size=400))
def test_the_estimate_never_drops_below_one_byte(sizes: list[int]) -> None:
    # int(0.8·a + 0.2·s) >= 1 whenever a, s >= 1: tiny records never divide by zero
    plan_appends([LogRecordOp(f"k{i}", False, s) for i, s in enumerate(sizes)], AppendHandleConfig(max_block_size=50))
