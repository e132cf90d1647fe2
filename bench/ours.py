"""Our entries: the reference writer (bulk_insert, COW and MOR upsert, compaction) and reads of its tables
by the spec engine, the Spark engine and hudi-rs.

Every Spark entry gets its input as a cached Spark DataFrame read from the run's parquet input, the same
form the plain Spark write gets, so both time the write alone; the local-engine entries get an in-memory
Arrow table, the form the Arrow-native peers get.

The headline entries run the writer with Hudi's defaults, untouched, as a user runs it: gzip parquet
(at parquet-mr's level), the default small-file limit, the BLOOM index, table version 9 with its metadata
table; only the benchmark's key, partition and ordering fields are set. The ``_tuned`` entries beside them set
``hoodie.parquet.compression.codec=snappy`` (the peers' codec) and, on merge-on-read,
``hoodie.parquet.small.file.limit=0``, so updates go to the log as they do in a table of full-size files.
The merge-on-read reads and the compaction need a table with logs, so they use the merge-on-read table
written with the small-file limit at 0 and Hudi's default codec.

An entry whose API does not exist yet raises :class:`NotAvailable` with the reason; the result table
shows it as "not available: <reason>".
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bench.jobs import (
    READ,
    SERVICE,
    UPSERT,
    WRITE,
    Context,
    Job,
    Measurement,
    NotAvailable,
    arrow_input,
    cached_frame,
    spark_session,
    timed,
)

T = TypeVar("T")

TABLE_NAME = "bench"
# Hudi's defaults: nothing but the benchmark's fields, so a new table gets what a user's gets, table version 9
# with its metadata table (runs before this measured version 6)
OPTIONS: dict[str, str] = {
    "hoodie.table.name": TABLE_NAME,
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "true",
}
MOR_OPTIONS: dict[str, str] = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
# every base file here is far below Hudi's 100 MB small-file limit, and with the BLOOM index Hudi merges
# updates into small files (a copy-on-write rewrite); a table of full-size files sends them to the log,
# which the limit at 0 models
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}
MOR_LOG_OPTIONS: dict[str, str] = {**MOR_OPTIONS, **NO_SMALL_FILES}
# tuned: snappy, the codec of the peers (Spark, delta-rs, pyarrow), and updates to the log on merge-on-read
SNAPPY = {"hoodie.parquet.compression.codec": "snappy"}
TUNED_OPTIONS: dict[str, str] = {**OPTIONS, **SNAPPY}
TUNED_MOR_OPTIONS: dict[str, str] = {**MOR_OPTIONS, **SNAPPY, **NO_SMALL_FILES}
ENGINE = "hudi-spec (Spark)"
LOCAL_ENGINE = "hudi-spec (local)"


def hudi_table(path: Path) -> Any:
    from reference.api import HudiTable

    return HudiTable(str(path), spark_session())


def local_table(path: Path) -> Any:
    """The writer with ``engine="local"``: pyarrow in this process, no Spark session."""
    from reference.api import HudiTable

    return HudiTable(str(path), engine="local")


def count_rows(path: Path) -> int:
    """Rows of a table's snapshot, counted by the spec reader (only the key column is read)."""
    from spec.read.reader import read_table

    return int(read_table(str(path), columns=["_hoodie_record_key"]).num_rows)


# --- tables shared by several entries (built in prepare steps, never timed) ---------------------------

def _write(path: Path, data: Any, operation: str, options: dict[str, str]) -> None:
    from spec.errors import InvalidConfig, InvalidOperation

    try:
        hudi_table(path).write(data, operation, options)
    except (InvalidConfig, InvalidOperation) as e:
        raise NotAvailable(f"{options.get('hoodie.datasource.write.table.type', 'COPY_ON_WRITE')} writes: {e}") from e


Writer = Callable[[Path, Any, str, dict[str, str]], None]
"""A writer of the shared tables: ``(table, Spark DataFrame, operation, options)``."""


def shared_base(name: str, options: dict[str, str], write: Writer = _write,
                session: Callable[[], Any] = spark_session) -> Callable[[Context], Path]:
    """The N-row table ``write`` writes by bulk_insert with ``options`` (shared, built once per run, in the Spark
    session ``session`` starts before any input is loaded)."""

    def build(ctx: Context) -> Path:
        def make(p: Path) -> None:
            session()
            write(p, cached_frame(ctx.inputs.base), "bulk_insert", options)

        return ctx.cached(name, make)

    return build


def shared_upserted(name: str, base: Callable[[Context], Path], options: dict[str, str], write: Writer = _write,
                    session: Callable[[], Any] = spark_session) -> Callable[[Context], Path]:
    """``base`` after ``write``'s upsert of the batch with ``options`` (shared, built once per run)."""

    def build(ctx: Context) -> Path:
        def make(p: Path) -> None:
            import shutil

            shutil.copytree(base(ctx), p)
            session()
            write(p, cached_frame(ctx.inputs.upsert), "upsert", options)

        return ctx.cached(name, make)

    return build


cow_base = shared_base("hudi-cow-base", OPTIONS)
cow_upserted = shared_upserted("hudi-cow-upserted", cow_base, OPTIONS)
mor_base = shared_base("hudi-mor-base", MOR_OPTIONS)
mor_log_base = shared_base("hudi-mor-log-base", MOR_LOG_OPTIONS)
mor_upserted = shared_upserted("hudi-mor-upserted", mor_log_base, MOR_LOG_OPTIONS)  # with logs: reads, compaction
cow_base_tuned = shared_base("hudi-cow-base-tuned", TUNED_OPTIONS)
mor_base_tuned = shared_base("hudi-mor-base-tuned", TUNED_MOR_OPTIONS)


def needs(build: Callable[[Context], Path]) -> Callable[[Context], None]:
    """A prepare step that builds one shared table."""

    def prepare(ctx: Context) -> None:
        build(ctx)

    return prepare


# --- writes ---------------------------------------------------------------------------------------

_HOOKS: list[tuple[Callable[[], None], Callable[[], None]]] = []


def with_operation_hooks(start: Callable[[], None], stop: Callable[[], None], fn: Callable[[], T]) -> T:
    """``fn()`` with ``start`` called just before each timed operation of ours and ``stop`` just after it
    (e.g. to read the driver's peak memory of the operation alone)."""
    _HOOKS.append((start, stop))
    try:
        return fn()
    finally:
        _HOOKS.pop()


def timed_operation(fn: Callable[[], T]) -> tuple[float, T, dict[str, Any]]:
    """``timed(fn)``, the hooks around it, and the CPU seconds this Python process spent in it (user and
    system, every thread: for the local engine the whole write; for Spark the driver's Python side)."""
    for start, _ in _HOOKS:
        start()
    before = resource.getrusage(resource.RUSAGE_SELF)
    seconds, value = timed(fn)
    after = resource.getrusage(resource.RUSAGE_SELF)
    for _, stop in reversed(_HOOKS):
        stop()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, value, {"python_cpu_seconds": round(cpu, 3)}


def _timed_write(path: Path, table: Callable[[Path], Any], data: Any, operation: str, options: dict[str, str],
                 rows: int, rows_expected: int) -> Measurement:
    """One write timed alone (the table opened and the input loaded before the timer), its rows counted after."""
    writer = table(path)
    seconds, result, extra = timed_operation(lambda: writer.write(data, operation, options))
    return Measurement(seconds, rows, path, count_rows(path), rows_expected, steps=dict(result.step_seconds),
                       extra=extra)


def _engine(local: bool) -> tuple[Callable[[Path], Any], Callable[[Path], Any]]:
    """The writer and its input form: the Spark engine with a cached DataFrame, or the local one with an
    Arrow table."""
    return (local_table, arrow_input) if local else (hudi_table, cached_frame)


def bulk_insert(ctx: Context, job: str = "hudi_spec_bulk_insert", options: dict[str, str] = OPTIONS,
                local: bool = False) -> Measurement:
    table, load = _engine(local)
    data = load(ctx.inputs.base)
    return _timed_write(ctx.fresh_table_dir(job), table, data, "bulk_insert", options, ctx.n, ctx.n)


def _upsert(ctx: Context, job: str, base: Callable[[Context], Path], options: dict[str, str],
            local: bool = False) -> Measurement:
    table, load = _engine(local)
    path = ctx.copy_of(base(ctx), job)
    data = load(ctx.inputs.upsert)
    return _timed_write(path, table, data, "upsert", options, ctx.shape.batch, ctx.shape.rows_after)


def cow_upsert(ctx: Context) -> Measurement:
    return _upsert(ctx, "hudi_spec_cow_upsert", cow_base, OPTIONS)


def mor_upsert(ctx: Context) -> Measurement:
    return _upsert(ctx, "hudi_spec_mor_upsert", mor_base, MOR_OPTIONS)


def _require_compaction() -> None:
    from reference.api import HudiTable

    if not callable(getattr(HudiTable, "compact", None)):
        raise NotAvailable("reference.api.HudiTable has no compact() yet")


def prepare_compaction(ctx: Context) -> None:
    _require_compaction()
    mor_upserted(ctx)


def _compaction(ctx: Context, job: str, local: bool) -> Measurement:
    _require_compaction()
    path = ctx.copy_of(mor_upserted(ctx), job)
    table = local_table(path) if local else hudi_table(path)
    seconds, _, extra = timed_operation(lambda: table.compact(OPTIONS))  # Hudi's default codec, as the writes
    rows = count_rows(path)
    return Measurement(seconds, rows, path, rows, ctx.shape.rows_after, extra=extra)


def compaction(ctx: Context) -> Measurement:
    return _compaction(ctx, "hudi_spec_compaction", local=False)


def compaction_local(ctx: Context) -> Measurement:
    return _compaction(ctx, "hudi_spec_local_compaction", local=True)


# --- reads of our tables --------------------------------------------------------------------------

def _spec_read(path: Path, ctx: Context) -> Measurement:
    from spec.read.reader import read_table

    seconds, table = timed(lambda: read_table(str(path)))
    return Measurement(seconds, table.num_rows, path, table.num_rows, ctx.shape.rows_after)


def first_write(path: Path) -> str:
    """When a table's first write completed: an incremental query from it holds what came after (its completion
    time on table versions 8 and 9, whose incremental queries compare completion times; its instant on 6)."""
    from spec.storage.hoodie_storage import Storage
    from spec.timeline.active_timeline import Timeline

    return next(i.completed or i.requested for i in Timeline.load(Storage(str(path))).instants if i.is_completed)


def _spec_incremental_read(path: Path, ctx: Context) -> Measurement:
    """The incremental query of the upsert's commit alone (from the base's bulk_insert on), by the spec reader."""
    from spec.read.reader import read_table

    begin = first_write(path)
    seconds, table = timed(lambda: read_table(str(path), "incremental", begin=begin))
    return Measurement(seconds, table.num_rows, path, table.num_rows, ctx.shape.batch)


def _hudi_rs_read(path: Path, ctx: Context) -> Measurement:
    import hudi

    def read() -> int:
        batches = hudi.HudiTableBuilder.from_base_uri(str(path)).build().read()
        return sum(b.num_rows for b in batches)

    seconds, rows = timed(read)
    return Measurement(seconds, rows, path, rows, ctx.shape.rows_after)


def spark_reader() -> Callable[[Any, str], Any]:
    """The Spark engine's snapshot read from reference/engines/spark_reader.py: (spark, path) -> DataFrame."""
    from reference.engines.spark_reader import read_spark

    def read(session: Any, path: str) -> Any:
        return read_spark(session, path)

    return read


def _spark_read(path: Path, ctx: Context) -> Measurement:
    read = spark_reader()
    session = spark_session()
    # every column of every row is produced (the noop sink), nothing is written
    seconds, _ = timed(lambda: read(session, str(path)).write.format("noop").mode("overwrite").save())
    rows = int(read(session, str(path)).count())
    return Measurement(seconds, rows, path, rows, ctx.shape.rows_after)


def _prepare_spark_read(ctx: Context) -> None:
    spark_reader()
    cow_upserted(ctx)


DEFAULTS = "Hudi's defaults (gzip, default small-file limit)"
TUNED = "tuned: snappy"
TUNED_MOR = "tuned: snappy, small-file limit 0 (updates to the log)"

JOBS: tuple[Job, ...] = (
    Job("hudi_spec_bulk_insert", ENGINE, WRITE, bulk_insert, spark=True, vs="spark_parquet_write",
        warm=True, note=f"COW, N rows into an empty table; {DEFAULTS}"),
    Job("hudi_spec_cow_upsert", ENGINE, UPSERT, cow_upsert, prepare=needs(cow_base),
        spark=True, vs="delta_rs_merge", warm=True, note=f"COW, the upsert batch into the N-row table; {DEFAULTS}"),
    Job("hudi_spec_mor_upsert", ENGINE, UPSERT, mor_upsert, prepare=needs(mor_base),
        spark=True, vs="delta_rs_merge", warm=True, note=f"MOR, the upsert batch into the N-row table; {DEFAULTS}"),
    Job("hudi_spec_local_bulk_insert", LOCAL_ENGINE, WRITE,
        lambda c: bulk_insert(c, "hudi_spec_local_bulk_insert", local=True), vs="spark_parquet_write",
        warm=True, note=f"COW, N rows into an empty table; Arrow input, no Spark; {DEFAULTS}"),
    Job("hudi_spec_local_cow_upsert", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_cow_upsert", cow_base, OPTIONS, local=True), prepare=needs(cow_base),
        vs="delta_rs_merge", warm=True, note=f"COW, the upsert batch; Arrow input, no Spark; {DEFAULTS}"),
    Job("hudi_spec_local_mor_upsert", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_mor_upsert", mor_base, MOR_OPTIONS, local=True), prepare=needs(mor_base),
        vs="delta_rs_merge", warm=True, note=f"MOR, the upsert batch; Arrow input, no Spark; {DEFAULTS}"),
    Job("hudi_spec_bulk_insert_tuned", ENGINE, WRITE,
        lambda c: bulk_insert(c, "hudi_spec_bulk_insert_tuned", TUNED_OPTIONS), spark=True,
        vs="spark_parquet_write", warm=True, note=f"COW, N rows into an empty table; {TUNED}"),
    Job("hudi_spec_cow_upsert_tuned", ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_cow_upsert_tuned", cow_base_tuned, TUNED_OPTIONS),
        prepare=needs(cow_base_tuned), spark=True, vs="delta_rs_merge", warm=True,
        note=f"COW, the upsert batch; {TUNED}"),
    Job("hudi_spec_mor_upsert_tuned", ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_mor_upsert_tuned", mor_base_tuned, TUNED_MOR_OPTIONS),
        prepare=needs(mor_base_tuned), spark=True, vs="delta_rs_merge", warm=True,
        note=f"MOR, the upsert batch; {TUNED_MOR}"),
    Job("hudi_spec_local_bulk_insert_tuned", LOCAL_ENGINE, WRITE,
        lambda c: bulk_insert(c, "hudi_spec_local_bulk_insert_tuned", TUNED_OPTIONS, local=True),
        vs="spark_parquet_write", warm=True, note=f"COW, N rows; Arrow input, no Spark; {TUNED}"),
    Job("hudi_spec_local_cow_upsert_tuned", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_cow_upsert_tuned", cow_base_tuned, TUNED_OPTIONS, local=True),
        prepare=needs(cow_base_tuned), vs="delta_rs_merge", warm=True,
        note=f"COW, the upsert batch; Arrow input, no Spark; {TUNED}"),
    Job("hudi_spec_local_mor_upsert_tuned", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_mor_upsert_tuned", mor_base_tuned, TUNED_MOR_OPTIONS, local=True),
        prepare=needs(mor_base_tuned), vs="delta_rs_merge", warm=True,
        note=f"MOR, the upsert batch; Arrow input, no Spark; {TUNED_MOR}"),
    Job("hudi_spec_compaction", ENGINE, SERVICE, compaction, prepare=prepare_compaction, spark=True,
        note="MOR table after the upsert (small-file limit 0, so it has logs): every log into new base files, gzip"),
    Job("hudi_spec_local_compaction", LOCAL_ENGINE, SERVICE, compaction_local, prepare=prepare_compaction,
        note="the same compaction on threads of one process, no Spark; gzip"),
    Job("hudi_spec_snapshot_read_spec_engine", "hudi-spec spec.read.reader", READ,
        lambda c: _spec_read(cow_upserted(c), c), prepare=needs(cow_upserted),
        vs="hudi_rs_read_our_cow_table", warm=True, note="COW table after the upsert"),
    Job("hudi_spec_snapshot_read_spark_engine", "hudi-spec reference.engines.spark_reader (Spark)", READ,
        lambda c: _spark_read(cow_upserted(c), c), prepare=_prepare_spark_read, spark=True,
        vs="hudi_rs_read_our_cow_table", warm=True, note="COW table after the upsert"),
    Job("hudi_spec_incremental_read_spec_engine", "hudi-spec spec.read.reader", READ,
        lambda c: _spec_incremental_read(cow_upserted(c), c), prepare=needs(cow_upserted),
        vs="apache_hudi_incremental_read", warm=True, note="COW table after the upsert: the upsert's commit alone"),
    Job("hudi_rs_read_our_cow_table", "hudi-rs", READ, lambda c: _hudi_rs_read(cow_upserted(c), c),
        prepare=needs(cow_upserted), vs="pyarrow_dataset_read",
        warm=True, note="COW table after the upsert"),
    Job("hudi_spec_mor_snapshot_read_spec_engine", "hudi-spec spec.read.reader", READ,
        lambda c: _spec_read(mor_upserted(c), c), prepare=needs(mor_upserted),
        vs="hudi_rs_read_our_mor_table", warm=True,
        note="MOR table after the upsert (small-file limit 0: base files + logs)"),
    Job("hudi_rs_read_our_mor_table", "hudi-rs", READ, lambda c: _hudi_rs_read(mor_upserted(c), c),
        prepare=needs(mor_upserted), vs="pyarrow_dataset_read",
        warm=True, note="MOR table after the upsert (small-file limit 0: base files + logs)"),

)
