"""A second writer while one is in flight gets WriteConflict, and the table stays as it was.

One writer at a time holds the table lock (``reference.lock``: ``.hoodie/.aux/lock`` created
atomically). These tests hold it from another process, as a concurrent writer would, and check that
every writing entry point refuses without touching the table; that the lock of a writer that died is
broken by the next one; and that a lock taken on another host is never broken automatically.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.client import WriteClient
from reference.lock import LOCK_FILE, table_lock
from reference.services import clean, open_table, rollback, savepoint_create
from spec.errors import WriteConflict
from spec.reader import read_table
from spec.storage import Storage

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parent.parent

OPTIONS = {"hoodie.table.name": "lock", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
HOLDER = """
import sys, time
from reference.lock import table_lock
from spec.storage import Storage
with table_lock(Storage(sys.argv[1]), "upsert"):
    print("held", flush=True)
    time.sleep(600)
"""


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not str(p.relative_to(path)).startswith(".hoodie/.aux/lock")}


@pytest.fixture
def table(spark: Any, tmp_path: Path) -> Path:
    path = tmp_path / "t"
    client = WriteClient(str(path), spark)
    client.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "v": ["a1", "b1"]}), "upsert", OPTIONS)
    client.write(pa.table({"id": ["a"], "ts": [2], "v": ["a2"]}), "upsert", OPTIONS)
    return path


def _hold(path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_second_writer_gets_write_conflict_and_the_table_is_untouched(spark: Any, table: Path) -> None:
    holder = _hold(table)
    try:
        before = _files(table)
        rows = read_table(str(table)).to_pylist()
        storage, cfg = open_table(str(table))
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
            assert f"process {holder.pid}" in str(err.value) and LOCK_FILE in str(err.value)
        assert _files(table) == before
        assert read_table(str(table)).to_pylist() == rows
        holder_record = json.loads((table / LOCK_FILE).read_text())
        assert holder_record["pid"] == holder.pid and holder_record["action"] == "upsert"
    finally:
        holder.kill()
        holder.wait()


def test_lock_of_a_dead_writer_is_broken_by_the_next(spark: Any, table: Path) -> None:
    holder = _hold(table)
    holder.send_signal(signal.SIGKILL)  # dies holding the lock
    holder.wait()
    assert (table / LOCK_FILE).exists()
    WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert", OPTIONS)
    assert not (table / LOCK_FILE).exists()
    assert sorted(r["id"] for r in read_table(str(table)).to_pylist()) == ["a", "b", "c"]


def test_lock_taken_on_another_host_is_never_broken(spark: Any, table: Path) -> None:
    record = {"owner": "x", "pid": 1, "host": f"not-{socket.gethostname()}", "action": "upsert",
              "acquired_ms": int(time.time() * 1000)}
    (table / LOCK_FILE).write_text(json.dumps(record))
    before = _files(table)
    with pytest.raises(WriteConflict) as err:
        WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert", OPTIONS)
    assert f"not-{socket.gethostname()}" in str(err.value)
    assert _files(table) == before
    (table / LOCK_FILE).unlink()  # what the error's hint says to do once that writer is known to be gone
    WriteClient(str(table), spark).write(pa.table({"id": ["c"], "ts": [1], "v": ["c1"]}), "upsert", OPTIONS)


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
    assert not (table / LOCK_FILE).exists()
    assert _files(table) == before
    with table_lock(Storage(str(table)), "test"):
        assert (table / LOCK_FILE).exists()
    assert not (table / LOCK_FILE).exists()
