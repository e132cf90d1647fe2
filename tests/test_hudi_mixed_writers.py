"""Our writer and Apache Hudi's Spark writer on one table at once, under optimistic concurrency control with
``FileSystemBasedLockProvider`` (local files; Hudi 1.2.0's bundle in the test run's Spark session).

Hudi's lock is taken by its own ``LockManager`` (through py4j, from the options its writer gets):
ours cannot take the lock meanwhile, and takes it (and commits) once Hudi releases it. Our lock keeps
Hudi's Spark writer out: it fails after its retries, or waits and commits once ours is released.

Hudi's write is paused between its write and its commit, the lock free, by a gate (a Python UDF that
waits for a file) in a pre-commit validator's query (``hoodie.precommit.validators``), which Hudi runs
before it takes the lock to commit. (A gate in its input does not pause it inside its transaction:
measured, Hudi 1.2.0 takes the lock only briefly while it starts, and computes its input without it.)

Conflicts resolve by Hudi's rule (``SimpleConcurrentFileWritesConflictResolutionStrategy``): of two
writes that touched one file group, the later to commit fails — ours with WriteConflict naming Hudi's
instant, Hudi's with ``HoodieWriteConflictException`` naming ours; either way its instant is left inflight
without a heartbeat, and rolled back by the next writer (ours here). Both orders,
copy-on-write and merge-on-read; writes to other file groups both commit. After every trial Hudi's
reader, hudi-rs and the spec reader read the same rows: the winner's, nothing lost, no key twice.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.transaction.file_system_lock import FileSystemBasedLock
from reference.write.client import WriteClient
from spec.errors import WriteConflict
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import StorageLockConfig
from spec.storage.lock_provider import FILE_SYSTEM_BASED
from tests.hudi_rs import check_hudi_rs_snapshot

pytestmark = [pytest.mark.spark, pytest.mark.slow]

COMMON = {"hoodie.table.name": "mixed", "hoodie.datasource.write.recordkey.field": "id",
          "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
          "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
          "hoodie.write.lock.provider": FILE_SYSTEM_BASED}
HUDI = {**COMMON, "hoodie.cleaner.policy.failed.writes": "LAZY", "hoodie.datasource.write.operation": "upsert"}
OURS = {**COMMON, "hoodie.write.table.version": "9", "hoodie.write.lock.wait_time_ms_between_retry": "100"}
SCHEMA = "id string, ts long, p string, v string"
Row = tuple[str, int, str, str]
FIRST: list[Row] = [("k1", 1, "a", "a1"), ("k2", 1, "a", "a2"), ("k3", 1, "b", "b3")]


class Gate:
    """A file whose absence holds a Hudi write at the UDF that checks it."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def wait(self) -> Callable[[Any], Any]:
        where = self.path

        def gate(value: Any) -> Any:
            import os as os_
            import time as time_

            while not os_.path.exists(where):
                time_.sleep(0.05)
            return value

        return gate

    def open(self) -> None:
        Path(self.path).touch()


class Background:
    """A call run in a thread, its outcome kept."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.done_at = 0.0

        def run() -> None:
            try:
                self.result = call()
            except BaseException as err:  # kept for the test to assert on
                self.error = err
            self.done_at = time.monotonic()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self) -> Background:
        self.thread.join(300)
        assert not self.thread.is_alive()
        return self


def hudi_write(spark: Any, base: Path, rows: list[Row], table_type: str, gate: Gate | None = None,
               **extra: str) -> None:
    """Apache Hudi's Spark datasource upserts ``rows``; a gate holds it in a pre-commit validator (after its
    write, before it takes the lock to commit)."""
    from pyspark.sql import types as T

    options = {**HUDI, "hoodie.datasource.write.table.type": table_type, **extra}
    if gate is not None:
        spark.udf.register("gate_wait", gate.wait(), T.LongType())
        options |= {"hoodie.precommit.validators":
                    "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator",
                    "hoodie.precommit.validators.single.value.sql.queries":
                    "select gate_wait(1 + 0 * count(*)) from <TABLE_NAME>#1"}
    spark.createDataFrame(rows, SCHEMA).write.format("hudi").options(**options).mode("append").save(str(base))


def our_write(base: Path, rows: list[Row], table_type: str, engine: str = "local", **extra: str) -> str:
    table = pa.Table.from_pylist([{"id": i, "ts": t, "p": p, "v": v} for i, t, p, v in rows])
    options = {**OURS, "hoodie.datasource.write.table.type": table_type, **extra}
    return WriteClient(str(base), engine=engine).write(table, "upsert", options).instant


def timeline(base: Path) -> set[str]:
    return {n for n in os.listdir(base / ".hoodie/timeline") if not n.startswith(".") and n != "history"}


def wait_for(what: Callable[[], bool], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def held_hudi_write(spark: Any, base: Path, rows: list[Row], table_type: str, gate: Gate) -> tuple[Background, str]:
    """Hudi's write in the background, held at ``gate`` before its commit: once its instant is inflight and the
    lock it took to start is free, the write and its instant time."""
    before = timeline(base)
    write = Background(lambda: hudi_write(spark, base, rows, table_type, gate))
    wait_for(lambda: any(n.endswith(".inflight") for n in timeline(base) - before)
             and not (base / ".hoodie/lock").exists())
    (instant,) = {n[:17] for n in timeline(base) - before}
    return write, instant


def rows_read(spark: Any, base: Path) -> dict[str, str]:
    """The rows as the spec reader reads them, after checking Hudi's reader and hudi-rs (the ``hudi`` package)
    read the same (no key twice)."""
    spec_rows = read_table(str(base)).to_pylist()
    ours = [(r["id"], r["v"]) for r in spec_rows]
    hudis = [(r.id, r.v) for r in spark.read.format("hudi").load(str(base)).select("id", "v").collect()]
    assert sorted(ours) == sorted(hudis)
    check_hudi_rs_snapshot(str(base), spec_rows, project=lambda r: (r["id"], r["v"]))
    assert len({k for k, _ in ours}) == len(ours)
    return dict(ours)


@pytest.fixture
def table(apache_hudi: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, str]]:
    table_type = getattr(request, "param", "COPY_ON_WRITE")
    base = tmp_path / "t"
    hudi_write(apache_hudi, base, FIRST, table_type)
    yield base, table_type


def hudi_lock_manager(spark: Any, base: Path) -> Any:
    """Apache Hudi's ``LockManager`` for the table, made from the write options its Spark writer gets: the
    lock Hudi's transactions take (``TransactionManager.beginTransaction``)."""
    jvm = spark._jvm
    props = jvm.java.util.Properties()
    for key, value in HUDI.items():
        props.setProperty(key, value)
    config = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(str(base)).withProps(props).build()
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    storage = jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(str(base), conf)
    return jvm.org.apache.hudi.client.transaction.lock.LockManager(config, storage)


def test_hudis_lock_manager_holding_the_lock_keeps_ours_out_until_it_releases(apache_hudi: Any,
                                                                             table: tuple[Path, str]) -> None:
    base, table_type = table
    before = timeline(base)
    manager = hudi_lock_manager(apache_hudi, base)
    manager.lock()
    try:
        with pytest.raises(WriteConflict, match=r"\.hoodie/lock"):  # Hudi holds the lock: ours does not start
            our_write(base, [("k3", 2, "b", "ours")], table_type, **{"hoodie.write.lock.wait_time_ms": "1000"})
        assert timeline(base) == before
        ours = Background(lambda: our_write(base, [("k3", 2, "b", "ours")], table_type))
        time.sleep(2)
        assert ours.done_at == 0.0 and timeline(base) == before  # still waiting for the lock
        released = time.monotonic()
    finally:
        manager.unlock()
    assert ours.join().error is None and ours.done_at > released
    assert rows_read(apache_hudi, base) == {"k1": "a1", "k2": "a2", "k3": "ours"}


def test_our_lock_keeps_hudis_write_out_until_it_releases(apache_hudi: Any, table: tuple[Path, str]) -> None:
    base, table_type = table
    before = timeline(base)
    lock = FileSystemBasedLock(Storage(str(base)), StorageLockConfig(wait_ms=0, provider=FILE_SYSTEM_BASED))
    assert lock.try_lock()
    quick = {"hoodie.write.lock.client.num_retries": "1", "hoodie.write.lock.client.wait_time_ms_between_retry": "500"}
    with pytest.raises(Exception, match="Unable to acquire the lock") as err:
        hudi_write(apache_hudi, base, [("k1", 2, "a", "hudi")], table_type, **quick)
    assert lock.owner in str(err.value)  # Hudi names our writer as the holder
    assert timeline(base) == before
    hudi = Background(lambda: hudi_write(apache_hudi, base, [("k1", 2, "a", "hudi")], table_type))
    time.sleep(3)
    assert hudi.done_at == 0.0 and timeline(base) == before
    released = time.monotonic()
    lock.unlock()
    assert hudi.join().error is None and hudi.done_at > released
    assert rows_read(apache_hudi, base)["k1"] == "hudi"


@pytest.mark.parametrize(("table", "engine"), [("COPY_ON_WRITE", "local"), ("MERGE_ON_READ", "local"),
                                               ("MERGE_ON_READ", "spark")], indirect=["table"])
def test_hudi_commits_first_and_our_write_to_the_same_file_group_aborts(apache_hudi: Any, table: tuple[Path, str],
                                                                        engine: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    base, table_type = table
    original, seen = WriteClient._write, {}

    def write_then_hudi(self: WriteClient, *args: Any) -> Any:
        md = original(self, *args)  # our files are written, our instant inflight: Hudi upserts and commits
        before = timeline(base)
        hudi_write(apache_hudi, base, [("k1", 3, "a", "hudi")], table_type)
        seen["hudi"] = min(n[:17] for n in timeline(base) - before)
        return md

    monkeypatch.setattr(WriteClient, "_write", write_then_hudi)
    with pytest.raises(WriteConflict, match="conflicts with") as err:
        our_write(base, [("k2", 3, "a", "ours")], table_type, engine)
    monkeypatch.undo()
    assert seen["hudi"] in err.value.message and "rolled back" in err.value.message
    assert rows_read(apache_hudi, base) == {"k1": "hudi", "k2": "a2", "k3": "b3"}
    assert not (base / ".hoodie/lock").exists()


@pytest.mark.parametrize(("table", "engine"), [("COPY_ON_WRITE", "local"), ("MERGE_ON_READ", "local"),
                                               ("COPY_ON_WRITE", "spark")], indirect=["table"])
def test_our_write_commits_first_and_hudis_to_the_same_file_group_aborts(apache_hudi: Any, table: tuple[Path, str],
                                                                         engine: str, tmp_path: Path) -> None:
    base, table_type = table
    gate = Gate(tmp_path / "gate")
    hudi, hudi_instant = held_hudi_write(apache_hudi, base, [("k1", 3, "a", "hudi")], table_type, gate)
    ours = our_write(base, [("k2", 3, "a", "ours")], table_type, engine)
    gate.open()
    error = hudi.join().error
    assert error is not None and "HoodieWriteConflictException" in str(error)
    assert hudi_instant in str(error) and ours in str(error)
    assert rows_read(apache_hudi, base) == {"k1": "a1", "k2": "ours", "k3": "b3"}
    assert f"{hudi_instant}.inflight" in {n.split(".", 1)[0] + "." + n.split(".")[-1] for n in timeline(base)}
    assert not (base / f".hoodie/.heartbeat/{hudi_instant}").exists()  # a failed write: the next writer undoes it
    our_write(base, [("k3", 4, "b", "ours")], table_type)
    assert not any(n.startswith(hudi_instant) for n in timeline(base))
    assert any(n.endswith(".rollback") for n in timeline(base))
    assert not [p for p in base.rglob(f"*{hudi_instant}*") if ".hoodie" not in p.parts]  # its files are gone
    assert rows_read(apache_hudi, base) == {"k1": "a1", "k2": "ours", "k3": "ours"}


def test_writes_to_other_file_groups_both_commit(apache_hudi: Any, table: tuple[Path, str], tmp_path: Path) -> None:
    base, table_type = table
    gate = Gate(tmp_path / "gate")
    hudi, _ = held_hudi_write(apache_hudi, base, [("k1", 3, "a", "hudi")], table_type, gate)
    our_write(base, [("k3", 3, "b", "ours")], table_type)  # partition b: another file group
    gate.open()
    assert hudi.join().error is None
    assert rows_read(apache_hudi, base) == {"k1": "hudi", "k2": "a2", "k3": "ours"}


def test_hudis_single_writer_cannot_roll_back_a_loser_behind_a_commit(apache_hudi: Any, table: tuple[Path, str],
                                                                        tmp_path: Path) -> None:
    """Apache Hudi's bug ``hudi_spark_bugs.EAGER_ROLLBACK_BEHIND_A_COMMIT``, with Hudi's writers alone: the write
    that started first loses to one that started after it and committed first; Hudi's next single writer (failed
    writes EAGER) fails to roll it back (``BaseRollbackActionExecutor.validateRollbackCommitSequence``), every time.
    Our writer rolls it back, after which Hudi's single writer writes again. (Fails when Hudi fixes the bug.)"""
    from conformance.adapters.hudi_spark_bugs import EAGER_ROLLBACK_BEHIND_A_COMMIT

    base, table_type = table
    gate = Gate(tmp_path / "gate")
    first, loser = held_hudi_write(apache_hudi, base, [("k1", 2, "a", "first")], table_type, gate)
    hudi_write(apache_hudi, base, [("k2", 2, "a", "second")], table_type)  # started after, commits first
    gate.open()
    error = first.join().error
    assert error is not None and "HoodieWriteConflictException" in str(error)
    single = {k: v for k, v in HUDI.items() if not k.startswith(("hoodie.write.concurrency", "hoodie.write.lock",
                                                                  "hoodie.cleaner.policy.failed"))}
    for _ in range(2):
        with pytest.raises(Exception, match="Found commits after time") as err:
            apache_hudi.createDataFrame([("k3", 3, "b", "single")], SCHEMA).write.format("hudi").options(
                **single, **{"hoodie.datasource.write.table.type": table_type}).mode("append").save(str(base))
        assert f"Found commits after time :{loser}" in str(err.value)
    assert "Found commits after time" in EAGER_ROLLBACK_BEHIND_A_COMMIT
    assert any(n.startswith(loser) for n in timeline(base))  # still there
    our_write(base, [("k3", 4, "b", "ours")], table_type)  # rolls the loser back
    assert not any(n.startswith(loser) for n in timeline(base))
    apache_hudi.createDataFrame([("k3", 5, "b", "single")], SCHEMA).write.format("hudi").options(
        **single, **{"hoodie.datasource.write.table.type": table_type}).mode("append").save(str(base))
    assert rows_read(apache_hudi, base) == {"k1": "a1", "k2": "second", "k3": "single"}
