"""Benchmark jobs: what a job is, what its steps see and report, and the kinds and statuses of results.

A job (``Job``) has an optional ``prepare`` step and a ``run`` step, each given a ``Context`` (the
row count and the run's folder); ``run`` times only the operation (``timed``) and returns a
``Measurement``. The harness (``bench.harness``) runs every step in a fresh process; the jobs
themselves are listed in ``bench.ours`` (this project's writer and readers) and ``bench.peers``.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bench.data import Inputs, UpsertShape, write_inputs

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_ID = "hudi-spec-bench/1"

# kinds of job, and the job each kind's seconds are compared with
WRITE, UPSERT, READ, SERVICE, STARTUP = "write", "upsert", "read", "service", "startup"
SPARK_START_JOB = "spark_session_start"
SLOW_PEER_ROWS = 1_000_000  # --skip-slow-peers skips slow peers above this many rows

OK, NOT_AVAILABLE, SKIPPED, FAILED = "ok", "not available", "skipped", "failed"


class NotAvailable(Exception):
    """The job's implementation does not exist yet; the result table says so, with this reason."""


@dataclass(frozen=True)
class Context:
    """What a job step sees: the row count and the run's folder for that row count."""

    n: int
    work: Path

    @property
    def shape(self) -> UpsertShape:
        return UpsertShape(self.n)

    @property
    def inputs(self) -> Inputs:
        return write_inputs(self.n, self.work / "inputs")

    def table_dir(self, job: str) -> Path:
        """The folder of the table a job writes (its prepare step may fill it; its run step uses it)."""
        return self.work / "tables" / job

    def fresh_table_dir(self, job: str) -> Path:
        path = self.table_dir(job)
        shutil.rmtree(path, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def cached(self, name: str, build: Callable[[Path], None]) -> Path:
        """A table shared by several jobs, built once per run (into a temporary folder, then renamed)."""
        path = self.work / "cache" / name
        unavailable = path.with_name(name + ".unavailable")
        if unavailable.exists():  # an earlier job found it cannot be built: say so without trying again
            raise NotAvailable(unavailable.read_text())
        if not path.exists():
            tmp = path.with_name(name + ".building")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.parent.mkdir(parents=True, exist_ok=True)
            try:
                build(tmp)
            except NotAvailable as e:
                unavailable.write_text(str(e))
                raise
            tmp.rename(path)
        return path

    def copy_of(self, cached: Path, job: str) -> Path:
        path = self.fresh_table_dir(job)
        shutil.copytree(cached, path)
        return path


@dataclass(frozen=True)
class Measurement:
    """What a job's run step reports: the timed seconds, the rows it was given (writes, upserts) or
    returned (reads), the table it left, and an untimed row check: rows seen afterwards vs expected."""

    seconds: float
    rows: int
    table: Path | None
    rows_seen: int | None = None
    rows_expected: int | None = None
    steps: dict[str, float] | None = None  # our writes: seconds per step of the write path (WriteResult)
    extra: dict[str, Any] | None = None  # further figures of the job (e.g. a cluster job's driver peaks), kept as is


@dataclass(frozen=True)
class Job:
    """One benchmark entry."""

    name: str
    engine: str
    kind: str
    run: Callable[[Context], Measurement]
    prepare: Callable[[Context], None] | None = None
    spark: bool = False
    vs: str | None = None  # the job whose seconds this one's are divided by (same row count)
    slow: bool = False  # a slow peer: skipped above SLOW_PEER_ROWS when --skip-slow-peers is given
    warm: bool = False  # the run step runs twice in one process: the second run's seconds are the warm ones
    scale: bool = False  # runs at the scale row counts (--scale-rows), not at --rows: the curve of size
    note: str = ""


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Seconds of one call (perf_counter) and its value."""
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


def bytes_on_disk(path: Path) -> int:
    """Sum of the sizes of every file under ``path``."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


# --- the forms a job's input takes (loaded before any timer starts) ----------------------------------

def spark_session() -> Any:
    """The benchmark's Spark session (``local[2]``), started on first use."""
    from reference.engines.spark_session import get_or_create_session

    return get_or_create_session(app_name="hudi-spec-bench")


def cached_frame(path: Path) -> Any:
    """The input as a Spark DataFrame, cached and counted before any timer starts."""
    df = spark_session().read.parquet(str(path)).cache()
    df.count()
    return df


def arrow_input(path: Path) -> Any:
    """The input as an in-memory Arrow table, the form the Arrow-native writers get."""
    import pyarrow.parquet as pq

    return pq.read_table(path)
