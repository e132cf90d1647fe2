"""The spec reader reads file slices side by side (``spec.read.reader.in_order``) and parquet through
``Storage.read_parquet``: the same rows, in the same order, as one slice at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spec.read.reader as reader_module
from spec.errors import InvalidTable
from spec.read.reader import TableReader, in_order
from spec.storage.hoodie_storage import Storage

GOLDEN = sorted(p.parent.parent for p in (Path(__file__).resolve().parents[1] / "fixtures" / "tables").glob(
    "*/table/.hoodie/hoodie.properties"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=12), st.integers(1, 5), st.one_of(st.none(), st.integers(0, 11)))
def test_in_order_yields_in_order_at_most_workers_at_once(delays: list[int], workers: int,
                                                          failing: int | None) -> None:
    """Results come in item order whatever order the calls finish in; at most ``workers`` calls run at
    once; an error is raised where its item comes, after every result before it."""
    running = 0
    most = 0
    lock = threading.Lock()

    def work(i: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(delays[i] / 1000)
        with lock:
            running -= 1
        if i == failing:
            raise InvalidTable(f"item {i}")
        return i * 10

    items = list(range(len(delays)))
    got: list[tuple[int, int]] = []
    if failing is not None and failing < len(items):
        with pytest.raises(InvalidTable, match=f"item {failing}"):
            for pair in in_order(work, items, workers):
                got.append(pair)
        assert got == [(i, i * 10) for i in range(failing)]
    else:
        got = list(in_order(work, items, workers))
        assert got == [(i, i * 10) for i in items]
    assert most <= workers


@pytest.mark.parametrize("table", GOLDEN, ids=[p.parent.name for p in GOLDEN])
@pytest.mark.parametrize("query", ["snapshot", "read_optimized"])
def test_slices_read_side_by_side_are_the_slices_read_one_by_one(table: Path, query: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert GOLDEN, "the golden tables are missing"
    monkeypatch.setattr(reader_module, "SMALL_PLAN_BYTES", 0)  # these tables are small: read them on threads
    one = [(p.slice.file_id, p.table) for p in TableReader(str(table), workers=1).query(query)]
    four = [(p.slice.file_id, p.table) for p in TableReader(str(table), workers=4).query(query)]
    assert [f for f, _ in one] == [f for f, _ in four]
    for (_, a), (_, b) in zip(one, four, strict=True):
        assert a.equals(b)


def test_a_small_plan_is_read_on_the_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``SMALL_PLAN_BYTES`` no thread is started (threads cost more than such a read); above it, slices
    are read on the reader's threads."""
    seen: list[str] = []
    real = TableReader.read_slice

    def read_slice(self: TableReader, *args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TableReader, "read_slice", read_slice)
    table = max(GOLDEN, key=lambda t: len(list(TableReader(str(t)).query())))
    assert len(list(TableReader(str(table), workers=4).query())) > 1
    assert set(seen) == {threading.current_thread().name}
    seen.clear()
    monkeypatch.setattr(reader_module, "SMALL_PLAN_BYTES", 0)
    list(TableReader(str(table), workers=4).query())
    assert seen and all(name.startswith("hudi-read") for name in seen)


def test_read_parquet_is_a_plain_parquet_read() -> None:
    table = GOLDEN[0]
    storage = Storage(str(table))
    files = [f.path for f in storage.list("", recursive=True) if f.name.endswith(".parquet")]
    assert files
    for rel in files:
        assert storage.read_parquet(rel).equals(pq.read_table(storage.full(rel)))
        assert storage.read_parquet(rel, ["_hoodie_record_key"]).equals(
            pq.read_table(storage.full(rel), columns=["_hoodie_record_key"]))
