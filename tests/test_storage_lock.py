"""The table lock as Hudi's StorageBasedLockProvider keeps it, on S3 (moto on 127.0.0.1) and on local files.

- the lock file is Hudi's ``StorageLockData`` JSON, valid until ``validUntil`` (+ the drift buffer);
- of 8 processes taking the lock over and over, never two hold it at once: a counter they increment
  non-atomically inside the lock ends at the number of acquisitions, and their held intervals never
  overlap;
- renewal extends the lock; a lock taken over by another owner is lost, and releasing it leaves the
  new owner's lock alone;
- a holder killed on this host is taken over at once; a holder elsewhere only after its lock expires.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

import reference  # noqa: F401  (registers the S3 client)
from reference.transaction.lock import StorageBasedLock, holder_is_dead
from spec.errors import InvalidConfig, InvalidTable, WriteConflict
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import (
    CLOCK_DRIFT_BUFFER_MS,
    LOCK_FILE,
    StorageLockConfig,
    StorageLockData,
    is_lock_valid,
    new_lock,
)
from tests import processes

PROCESSES = 8
ROUNDS = 3
FAST = StorageLockConfig(validity_seconds=10, heartbeat_poll_seconds=1, wait_ms=60_000, retry_wait_ms=20)

CONTENDER = """
import json, sys, time
import reference
from reference.transaction.lock import StorageBasedLock
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
storage = Storage(sys.argv[1])
config = StorageLockConfig(validity_seconds=10, heartbeat_poll_seconds=1, wait_ms=120_000, retry_wait_ms=20)
for _ in range(int(sys.argv[2])):
    lock = StorageBasedLock(storage, config)
    lock.lock("contender")
    start = time.time_ns()
    n = int(storage.read("counter")) if storage.exists("counter") else 0
    time.sleep(0.01)
    storage.write_atomic("counter", str(n + 1).encode())
    end = time.time_ns()
    lock.unlock()
    print(json.dumps([start, end]), flush=True)
"""

HOLDER = """
import sys, time
import reference
from reference.transaction.lock import StorageBasedLock
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
lock = StorageBasedLock(Storage(sys.argv[1]), StorageLockConfig(10, 1, 0))
lock.lock("holder")
print("held", flush=True)
time.sleep(600)
"""


def _where(where: str, s3_server: Any, tmp_path: Path) -> str:
    return f"s3://{s3_server.new_bucket()}/t" if where == "s3" else str(tmp_path / "t")


def test_lock_file_is_hudis_storage_lock_data() -> None:
    data = new_lock("owner-1", 1_000, 300)
    assert json.loads(data.to_json()) == {"expired": False, "validUntil": 301_000, "owner": "owner-1"}
    assert StorageLockData.from_json(data.to_json()) == data
    assert is_lock_valid(data, 301_000 + CLOCK_DRIFT_BUFFER_MS) and not is_lock_valid(data, 301_001 + 500)
    assert not is_lock_valid(StorageLockData(True, 10**15, "o"), 0)  # released
    with pytest.raises(InvalidTable, match="not a lock file"):
        StorageLockData.from_json(b'{"owner": "x"}')
    with pytest.raises(InvalidConfig, match="at least 10 times"):
        StorageLockConfig(validity_seconds=20, heartbeat_poll_seconds=5)
    with pytest.raises(InvalidConfig, match="at least 10 seconds"):
        StorageLockConfig(validity_seconds=5, heartbeat_poll_seconds=0)


@pytest.mark.parametrize("where", [pytest.param("s3", marks=pytest.mark.slow), "local"])
def test_eight_processes_never_hold_the_lock_together(where: str, s3_server: Any, tmp_path: Path) -> None:
    path = _where(where, s3_server, tmp_path)
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(processes.start(processes.python("-c", CONTENDER, path, str(ROUNDS)),
                                                     env=processes.child_env())) for _ in range(PROCESSES)]
        ended = [p.finish().expect(0, "a contender took and released the lock") for p in procs]
    intervals = [tuple(json.loads(line)) for done in ended for line in done.stdout.splitlines()]
    assert len(intervals) == PROCESSES * ROUNDS
    assert int(Storage(path).read("counter")) == PROCESSES * ROUNDS  # no increment lost: one holder at a time
    intervals.sort()
    for (_, end), (start, _) in itertools.pairwise(intervals):
        assert end <= start, "two processes held the lock at once"


@pytest.mark.parametrize("where", ["s3", "local"])
def test_renewal_and_a_lock_lost_to_another_owner(where: str, s3_server: Any, tmp_path: Path) -> None:
    storage = Storage(_where(where, s3_server, tmp_path))
    clock = [1_000_000]
    lock = StorageBasedLock(storage, FAST, clock=lambda: clock[0])
    assert lock.try_lock() and lock.holds()
    first = lock.current()
    assert first is not None and first.valid_until == 1_010_000 and first.owner == lock.owner
    clock[0] += 5_000
    assert lock.renew()
    renewed = lock.current()
    assert renewed is not None and renewed.valid_until == 1_015_000
    other = StorageBasedLock(storage, FAST, clock=lambda: clock[0])
    assert not other.try_lock()  # still valid
    clock[0] += 10_000 + CLOCK_DRIFT_BUFFER_MS + 1  # the holder stalls past its validity
    assert not lock.holds()
    assert other.try_lock()  # the expired lock is taken over
    assert not lock.renew() and not lock.holds()  # the stalled holder learns it lost the lock
    lock.unlock()  # and leaves the new owner's lock alone
    current = lock.current()
    assert current is not None and current.owner == other.owner and not current.expired
    other.unlock()
    released = other.current()
    assert released is not None and released.expired and not other.holds()


@pytest.mark.parametrize("where", ["s3", "local"])
def test_a_killed_holder_is_recovered_without_a_hand(where: str, s3_server: Any, tmp_path: Path) -> None:
    path = _where(where, s3_server, tmp_path)
    storage = Storage(path)
    with processes.start(processes.python("-c", HOLDER, path), env=processes.child_env()) as holder:
        holder.wait_for_line("held")
        with pytest.raises(WriteConflict, match=f":{holder.pid}"):
            StorageBasedLock(storage, StorageLockConfig(10, 1, 0)).lock("second")
        holder.kill()
    held = StorageBasedLock(storage).current()
    assert held is not None and is_lock_valid(held, int(time.time() * 1000))  # still valid by its clock
    assert holder_is_dead(held.owner)
    nxt = StorageBasedLock(storage, StorageLockConfig(10, 1, 0))
    nxt.lock("next")  # taken over at once: its holder's process is gone
    nxt.unlock()


@pytest.mark.parametrize("where", ["s3", "local"])
def test_a_lock_held_elsewhere_is_taken_once_it_expires(where: str, s3_server: Any, tmp_path: Path) -> None:
    storage = Storage(_where(where, s3_server, tmp_path))
    expires = int(time.time() * 1000) + 1500
    storage.create_if_absent(LOCK_FILE, StorageLockData(False, expires, "a-writer@elsewhere:1").to_json())
    assert not holder_is_dead("a-writer@elsewhere:1")
    with pytest.raises(WriteConflict, match="a-writer@elsewhere"):  # tried before the expiry (its own clock says)
        StorageBasedLock(storage, StorageLockConfig(10, 1, 0), clock=lambda: expires - 1000).lock("impatient")
    waiting = StorageBasedLock(storage, StorageLockConfig(10, 1, 10_000, 50))
    waiting.lock("patient")  # waits for the expiry, then takes it
    assert time.time() * 1000 > expires + CLOCK_DRIFT_BUFFER_MS
    assert waiting.holds()
    waiting.unlock()


KILLED_WRITER = """
import socket, sys, time
socket.gethostname = lambda: "another-host"  # its owner id names another host: only expiry frees its lock
import pyarrow as pa
from reference.write.client import WriteClient
original = WriteClient._write
def stall(self, *args):
    md = original(self, *args)
    print("writing", flush=True)
    time.sleep(600)
    return md
WriteClient._write = stall
WriteClient(sys.argv[1], engine="local").write(
    pa.table({"id": ["k9"], "ts": [2], "v": ["lost"]}), "upsert",
    {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
     "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.lock.storage.validity.timeout.secs": "10",
     "hoodie.write.lock.storage.heartbeat.poll.secs": "1"})
"""


@pytest.mark.parametrize("where", ["s3", pytest.param("local", marks=pytest.mark.slow)])
def test_a_writer_killed_holding_the_lock_is_recovered_once_its_lock_expires(where: str, s3_server: Any,
                                                                             tmp_path: Path) -> None:
    """A writer on another host (so only its lock's expiry can tell it is gone) is killed in the middle
    of its write, holding the lock: the next writer is refused until the lock's validUntil, then takes
    it, rolls the dead write back and commits; the dead write's row is nowhere."""
    import pyarrow as pa

    from reference.write.client import WriteClient
    from spec.read.reader import read_table
    from spec.timeline.active_timeline import Timeline

    path = _where(where, s3_server, tmp_path)
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts"}
    WriteClient(path, engine="local").write(pa.table({"id": ["k1"], "ts": [1], "v": ["a"]}), "upsert", options)
    with processes.start(processes.python("-c", KILLED_WRITER, path), env=processes.child_env()) as child:
        child.wait_for_line("writing")
        child.kill()
    held = StorageBasedLock(Storage(path)).current()
    assert held is not None and held.owner.endswith(f"@another-host:{child.pid}") and not holder_is_dead(held.owner)
    nxt = WriteClient(path, engine="local")
    with pytest.raises(WriteConflict, match="another-host"):
        nxt.write(pa.table({"id": ["k2"], "ts": [1], "v": ["b"]}), "upsert", options)
    deadline = time.time() + 300  # a hang guard: the lock is valid for 10 s after the writer's last renewal
    while True:
        try:
            nxt.write(pa.table({"id": ["k2"], "ts": [1], "v": ["b"]}), "upsert", options)
            break
        except WriteConflict:
            assert time.time() < deadline, "hang: the dead writer's lock was still refused after 300 s"
            time.sleep(0.5)
    assert time.time() * 1000 > held.valid_until + CLOCK_DRIFT_BUFFER_MS  # not before its expiry
    assert {r["id"]: r["v"] for r in read_table(path).to_pylist()} == {"k1": "a", "k2": "b"}
    timeline = Timeline.load(path)
    assert not timeline.pending_writes().instants
    assert any(i.action == "rollback" for i in timeline.instants)  # the dead write rolled back, not left
