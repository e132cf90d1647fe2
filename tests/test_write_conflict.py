"""A second writer while one is in flight gets WriteConflict, and the table stays as it was.

In single-writer mode one writer at a time holds the table lock (``reference.transaction.lock``: Hudi's
``.hoodie/.locks/table_lock.json``, written conditionally). These tests hold it from another process,
as a concurrent writer would, and check that every writing entry point refuses without touching the
table; that the lock of a writer that died on this host is taken over by the next one; and that a lock
of a writer elsewhere is taken over only once it has expired, never by hand.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.executors.clean import clean
from reference.executors.common import load_table
from reference.executors.rollback import rollback
from reference.executors.savepoint import savepoint_create
from reference.transaction.lock import SINGLE_WRITER_LOCK, table_lock
from reference.write.client import WriteClient
from spec.errors import WriteConflict
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import CLOCK_DRIFT_BUFFER_MS, LOCK_FILE, StorageLockData, is_lock_valid
from tests import processes

pytestmark = pytest.mark.spark

OPTIONS = {"hoodie.table.name": "lock", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
HOLDER = """
import sys, time
from reference.transaction.lock import SINGLE_WRITER_LOCK, table_lock
from spec.storage.hoodie_storage import Storage
with table_lock(Storage(sys.argv[1]), "upsert", SINGLE_WRITER_LOCK):
    print("held", flush=True)
    time.sleep(600)
"""


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not str(p.relative_to(path)).startswith(".hoodie/.locks")}


def _held(path: Path) -> bool:
    """Whether the table lock is held by someone (its file exists and is valid)."""
    lock = path / LOCK_FILE
    return lock.exists() and is_lock_valid(StorageLockData.from_json(lock.read_bytes()), int(time.time() * 1000))


@pytest.fixture
def table(spark: Any, tmp_path: Path) -> Path:
    path = tmp_path / "t"
    client = WriteClient(str(path), spark)
    client.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "v": ["a1", "b1"]}), "upsert", OPTIONS)
    client.write(pa.table({"id": ["a"], "ts": [2], "v": ["a2"]}), "upsert", OPTIONS)
    return path


def _hold(path: Path) -> processes.Running:
    """A process holding the table lock (killed at the latest when the test leaves its ``with``)."""
    holder = processes.start(processes.python("-c", HOLDER, str(path)), env=processes.child_env())
    holder.wait_for_line("held")
    return holder


def test_second_writer_gets_write_conflict_and_the_table_is_untouched(spark: Any, table: Path) -> None:
    with _hold(table) as holder:
        before = _files(table)
        rows = read_table(str(table)).to_pylist()
        storage, cfg = load_table(str(table))
        attempts = [
            lambda: WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert",
                                                         OPTIONS),
            lambda: WriteClient(str(table), spark).write(pa.table({"id": ["a"], "ts": [1], "v": ["x"]}), "delete",
                                                         OPTIONS),
            lambda: clean(storage, cfg),
            lambda: rollback(storage, cfg),
            lambda: savepoint_create(storage, cfg),
        ]
        for attempt in attempts:
            with pytest.raises(WriteConflict) as err:
                attempt()
            assert f":{holder.pid}" in str(err.value) and LOCK_FILE in str(err.value)
        assert _files(table) == before
        assert read_table(str(table)).to_pylist() == rows
        holder_record = json.loads((table / LOCK_FILE).read_text())
        assert set(holder_record) == {"expired", "validUntil", "owner"}  # Hudi's StorageLockData, nothing more
        assert holder_record["owner"].endswith(f":{holder.pid}") and holder_record["expired"] is False


def test_lock_of_a_dead_writer_is_broken_by_the_next(spark: Any, table: Path) -> None:
    with _hold(table) as holder:
        holder.kill()  # dies holding the lock
    assert _held(table)  # still valid by its time: only its dead process gives it away
    WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert", OPTIONS)
    assert not _held(table)
    assert sorted(r["id"] for r in read_table(str(table)).to_pylist()) == ["a", "b", "c"]


def test_lock_of_a_writer_elsewhere_is_taken_only_after_it_expires(spark: Any, table: Path) -> None:
    """The other writer's lock refuses the write while it is valid (for an hour here: no wall-clock race) and
    is taken once its validUntil and the drift buffer have passed (written as already past)."""
    owner = f"6f1c7f0e-0000-4000-8000-000000000000@not-{socket.gethostname()}:1"
    now = int(time.time() * 1000)
    (table / LOCK_FILE).write_bytes(StorageLockData(False, now + 3_600_000, owner).to_json())
    before = _files(table)
    with pytest.raises(WriteConflict) as err:
        WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert", OPTIONS)
    assert owner in str(err.value) and "expires by itself" in err.value.hint
    assert _files(table) == before
    (table / LOCK_FILE).write_bytes(StorageLockData(False, now - CLOCK_DRIFT_BUFFER_MS - 1, owner).to_json())
    WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert", OPTIONS)
    assert sorted(r["id"] for r in read_table(str(table)).to_pylist()) == ["a", "b", "c"]
    assert not _held(table)


def test_a_write_failing_inside_the_lock_is_undone_and_releases_it(spark: Any, table: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    before = _files(table)
    original = WriteClient._write

    def failing(self: WriteClient, *args: Any) -> Any:
        original(self, *args)  # the data files are written, then the write fails before its commit
        raise RuntimeError("disk full")

    monkeypatch.setattr(WriteClient, "_write", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        WriteClient(str(table), spark).write(pa.table({"id": ["a", "c"], "ts": [3, 1], "v": ["a3", "c1"]}),
                                             "upsert", OPTIONS)
    assert not _held(table)
    assert _files(table) == before
    with table_lock(Storage(str(table)), "test", SINGLE_WRITER_LOCK):
        assert _held(table)
    assert not _held(table)
