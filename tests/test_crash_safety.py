"""Crash safety: a writer killed with SIGKILL at any point of a write loses nothing.

Each trial copies a small table (COW or MOR; v6 or v8, and v9 in the random trials), starts a writer
process that upserts into it with a fault point armed (``reference.instrumentation.faults``: before any
data file, half way through a base file, half way through a log block, after the data files, half way
through the completed instant), and checks that the process died there. Then:

1. the table reads (spec reader and hudi-rs) exactly as before the killed write;
2. the next write succeeds — it rolls the killed one back first — and the table then reads as the
   spec model predicts for the writes that completed (the killed one left out): no row lost, none
   duplicated;
3. ``hudi-conformance check`` finds no orphan, pending or damaged file, and no stale lock remains.

CI runs one trial per (table type, fault point); ``make slow`` runs 100 random ones.
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import signal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.checker import check_table
from conformance.interface.ops import CreateTable
from reference.instrumentation.faults import FAULT_ENV
from reference.write.client import WriteClient
from spec.model import Env, TableModel
from spec.model.operations import Write
from spec.model.queries import snapshot
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCK_FILE
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieRollbackMetadata, parse_avro_metadata
from spec.timeline.instant import Action
from spec.timeline.layout import read_instant_content
from tests import processes
from tests.hudi_rs import hudi_rs_read

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parent.parent

COW_POINTS = ("after_start", "mid_base_file", "before_commit", "mid_commit")
MOR_POINTS = (*COW_POINTS, "mid_log_block")


def options(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "crash", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0"}


def rec(i: int, ts: int) -> dict[str, Any]:
    return {"id": f"k{i:03d}", "ts": ts, "city": ("sf", "la")[i % 2], "v": f"v{i}@{ts}"}


BASE = [[rec(i, 1) for i in range(16)], [rec(i, 2) for i in range(0, 16, 3)]]
KILLED = [rec(i, 3) for i in range(4, 12)] + [rec(i, 3) for i in range(100, 104)]  # updates and inserts
NEXT = [rec(i, 4) for i in range(8, 14)] + [rec(i, 4) for i in range(200, 202)]


def _rows(table: pa.Table | None) -> list[tuple[Any, ...]]:
    if table is None:
        return []
    return sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"]) for r in table.to_pylist())


def _model_rows(table_type: str, version: int, batches: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    times = (f"20240101{i:06d}000" for i in itertools.count(1))
    ids = itertools.count(1)
    model = TableModel(CreateTable(table_type=table_type, table_version=version, partition_fields=("city",),
                                   small_file_limit=0),
                       Env(lambda: next(times), lambda: f"00000000-0000-4000-8000-{next(ids):012d}"))
    for batch in batches:
        model.apply(Write("upsert", tuple(batch)))
    return sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"]) for r in snapshot(model.state))


_BASES: dict[tuple[str, int], Path] = {}


@pytest.fixture(scope="module")
def base_tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    def get(table_type: str, version: int) -> Path:
        key = (table_type, version)
        if key not in _BASES:
            path = tmp_path_factory.mktemp("crash-base") / "t"
            client = WriteClient(str(path), spark)
            for batch in BASE:
                client.write(pa.Table.from_pylist(batch), "upsert", options(table_type, version))
            _BASES[key] = path
        return _BASES[key]
    return get


def run_killed_write(path: str | Path, table_type: str, version: int, point: str,
                     engine: str = "spark", operation: str = "upsert") -> processes.Ended:
    """Run the write (``operation`` of ``KILLED``) in a new session (its own process group, which the fault
    kills whole); it must die there, killed by SIGKILL."""
    done = processes.run(processes.python(str(ROOT / "tests" / "crash_child.py"), str(path), operation,
                                          json.dumps(KILLED), json.dumps(options(table_type, version)), engine),
                         env=processes.child_env(**{FAULT_ENV: point}), new_session=True)
    return done.expect(-signal.SIGKILL, f"the {operation} killed at {point}")


def crash_trial(spark: Any, base: Path, work: Path, table_type: str, version: int, point: str,
                engine: str = "spark", operation: str = "upsert") -> None:
    """The write (``operation``) killed at ``point`` on ``engine`` (Spark: the driver, its JVM and workers
    killed together), then the next write (an upsert) on the same engine."""
    path = work / "t"
    shutil.copytree(base, path)
    before = _rows(read_table(str(path)))
    run_killed_write(path, table_type, version, point, engine, operation)
    pending = Timeline.load(str(path)).pending_writes().instants
    assert pending, "the killed write left no pending instant"
    # 1. the killed write is invisible
    assert _rows(read_table(str(path))) == before
    assert _rows(hudi_rs_read(str(path))) == before
    # 2. the next write rolls it back and succeeds
    client = WriteClient(str(path), spark) if engine == "spark" else WriteClient(str(path), engine=engine)
    client.write(pa.Table.from_pylist(NEXT), "upsert", options(table_type, version))
    expected = _model_rows(table_type, version, [*BASE, NEXT])
    assert _rows(read_table(str(path))) == expected
    assert _rows(hudi_rs_read(str(path))) == expected
    # 3. nothing left behind
    report = check_table(str(path))
    problems = [f for f in report.findings if f.level == "error" or f.code == "pending-files"]
    assert not problems, problems
    lock = path / LOCK_FILE  # released: marked expired (Hudi's unlock), never left held
    assert json.loads(lock.read_bytes())["expired"] is True
    timeline = Timeline.load(str(path))
    assert not timeline.pending_writes().instants
    # the killed write was rolled back under a rollback instant that names it, before the next write's
    # (Hudi's startCommit rolls back failed writes, then takes the new instant time)
    rollbacks = [i for i in timeline.instants if i.action == Action.ROLLBACK]
    assert len(rollbacks) == 1 and rollbacks[0].is_completed
    md = parse_avro_metadata(read_instant_content(Storage(str(path)), rollbacks[0], timeline.layout),
                             HoodieRollbackMetadata)
    assert md.commits_rollback == (pending[0].requested,)
    next_write = max(i.requested for i in timeline.instants if i.action != Action.ROLLBACK)
    assert next_write > rollbacks[0].requested > pending[0].requested


# In `make test`: every fault point of both table types and both versions once, on the local engine
# (seconds a trial), and one on Spark, whose trials start a JVM in the killed process (about twenty
# seconds each): a merge-on-read log block half written by a Spark task. Every point on Spark is under
# `make slow` (the random trials below).
CI_TRIALS = [("COPY_ON_WRITE", 6 if i % 2 else 8, p, "local") for i, p in enumerate(COW_POINTS)] + \
            [("MERGE_ON_READ", 8 if i % 2 else 6, p, "local") for i, p in enumerate(MOR_POINTS)] + \
            [("MERGE_ON_READ", 8, "mid_log_block", "local"), ("MERGE_ON_READ", 6, "mid_log_block", "spark")]


@pytest.mark.parametrize(("table_type", "version", "point", "engine"), CI_TRIALS)
def test_killed_write_loses_nothing(spark: Any, base_tables: Any, tmp_path: Path, table_type: str, version: int,
                                    point: str, engine: str) -> None:
    crash_trial(spark, base_tables(table_type, version), tmp_path, table_type, version, point, engine)


def seeds(seeds: range, in_ci: int) -> list[Any]:
    """The seeds of random trials: the first ``in_ci`` run in ``make ci-slow``, the rest are explorations
    (``make slow`` only)."""
    return [seed if i < in_ci else pytest.param(seed, marks=pytest.mark.explore) for i, seed in enumerate(seeds)]


def write_trial_for(seed: int) -> tuple[str, int, str]:
    """The table type, version and fault point of a random trial."""
    rng = random.Random(seed)
    table_type = rng.choice(("COPY_ON_WRITE", "MERGE_ON_READ"))
    version = rng.choice((6, 8, 9))
    point = rng.choice(MOR_POINTS if table_type == "MERGE_ON_READ" else COW_POINTS)
    if (point, table_type) in (("mid_base_file", "COPY_ON_WRITE"), ("mid_log_block", "MERGE_ON_READ")):
        point = f"{point}@{rng.choice((0, 1))}"  # which handle dies: the first or the second update bucket
    return table_type, version, point


RANDOM_SEEDS = range(100)


@pytest.mark.slow
@pytest.mark.parametrize("seed", seeds(RANDOM_SEEDS, in_ci=8))
def test_killed_write_loses_nothing_random(spark: Any, base_tables: Any, tmp_path: Path, seed: int) -> None:
    table_type, version, point = write_trial_for(seed)
    crash_trial(spark, base_tables(table_type, version), tmp_path, table_type, version, point)


# --- on S3 (moto on 127.0.0.1) -----------------------------------------------------------------------


def crash_trial_s3(s3_server: Any, table_type: str, version: int, point: str) -> None:
    """The trial above on an S3 table (local engine): built there, the writer killed there; what it left
    is judged by the spec reader, hudi-rs (the endpoint as storage options) and the checker."""
    path = f"s3://{s3_server.new_bucket()}/t"
    for batch in BASE:
        WriteClient(path, engine="local").write(pa.Table.from_pylist(batch), "upsert", options(table_type, version))
    before = _rows(read_table(path))
    run_killed_write(path, table_type, version, point, "local")
    pending = Timeline.load(path).pending_writes().instants
    assert pending, "the killed write left no pending instant"
    assert _rows(read_table(path)) == before
    assert _rows(hudi_rs_read(path, storage_options=s3_server.storage_options())) == before
    WriteClient(path, engine="local").write(pa.Table.from_pylist(NEXT), "upsert", options(table_type, version))
    expected = _model_rows(table_type, version, [*BASE, NEXT])
    assert _rows(read_table(path)) == expected
    assert _rows(hudi_rs_read(path, storage_options=s3_server.storage_options())) == expected
    report = check_table(path)
    problems = [f for f in report.findings if f.level == "error" or f.code == "pending-files"]
    assert not problems, problems
    assert json.loads(Storage(path).read(LOCK_FILE))["expired"] is True
    timeline = Timeline.load(path)
    assert not timeline.pending_writes().instants
    rollbacks = [i for i in timeline.instants if i.action == Action.ROLLBACK]
    assert len(rollbacks) == 1 and rollbacks[0].is_completed
    md = parse_avro_metadata(read_instant_content(Storage(path), rollbacks[0], timeline.layout),
                             HoodieRollbackMetadata)
    assert md.commits_rollback == (pending[0].requested,)


S3_CI_TRIALS = [("COPY_ON_WRITE", 8, "mid_commit"), ("MERGE_ON_READ", 6, "mid_log_block")]


@pytest.mark.parametrize(("table_type", "version", "point"), S3_CI_TRIALS)
def test_killed_write_on_s3_loses_nothing(s3_server: Any, table_type: str, version: int, point: str) -> None:
    crash_trial_s3(s3_server, table_type, version, point)


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "version", "point"),
                         [(t, v, p) for t, points in (("COPY_ON_WRITE", COW_POINTS), ("MERGE_ON_READ", MOR_POINTS))
                          for v in (6, 8, 9) for p in points if (t, v, p) not in S3_CI_TRIALS])
def test_killed_write_on_s3_loses_nothing_every_point(s3_server: Any, table_type: str, version: int,
                                                      point: str) -> None:
    crash_trial_s3(s3_server, table_type, version, point)
