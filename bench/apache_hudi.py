"""Apache Hudi's own Spark writer and reader on the same data, options and ``local[2]`` setup as ours: the
entries a Hudi user would otherwise run, beside ours (issue: performance against Apache Hudi).

Each entry runs in a process of its own whose one Spark session is started with Hudi's bundle (``make
apache-hudi``; without it the entry is "not available" with that reason), Kryo with Hudi's registrar and Hudi's
SQL extension, as Hudi's quick start asks. The options are ``bench.ours.OPTIONS``: the benchmark's key, partition
and ordering fields and nothing else, so Hudi writes with its defaults (its release's table version, its metadata
table, gzip parquet, the BLOOM index, inline compaction of merge-on-read tables every 5 delta commits — never
reached by one upsert). The compaction entry schedules one now (the trigger at 1 delta commit, as the case
language's compaction does), on the merge-on-read table written with the small-file limit at 0, so it has logs.
Reads produce every column of every row (Spark's ``noop`` sink), as our Spark engine's read entry does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.jobs import READ, SERVICE, UPSERT, WRITE, Context, Job, Measurement, NotAvailable, cached_frame, timed
from bench.ours import (
    MOR_LOG_OPTIONS,
    MOR_OPTIONS,
    OPTIONS,
    count_rows,
    first_write,
    needs,
    shared_base,
    shared_upserted,
    timed_operation,
)

ENGINE = "Apache Hudi (Spark datasource)"
COMPACT_NOW = {"hoodie.compact.inline.trigger.strategy": "NUM_COMMITS", "hoodie.compact.inline.max.delta.commits": "1"}


def hudi_session(master: str | None = None) -> Any:
    """This process's Spark session, started with Apache Hudi's bundle (``NotAvailable`` without one), its SQL
    machinery running; on ``master`` if given (a standalone cluster's ``spark://`` URL: the bundle is in
    ``spark.jars``, so the executors fetch it from the driver), else ``local[2]``."""
    from conformance.adapters.hudi_spark import BUNDLE_ENV, bundle, hudi_conf
    from reference.engines.spark_session import get_or_create_session

    jar = bundle()
    if jar is None:
        raise NotAvailable(f"no hudi-spark bundle: run `make apache-hudi` or set {BUNDLE_ENV}")
    session = get_or_create_session(master=master, app_name="hudi-spec-bench", conf=hudi_conf(jar))
    session.sql("select 1").collect()  # the session's SQL state, Hudi's extension in it, built before any timer
    return session


def _hudi_write(path: Path, data: Any, operation: str, options: dict[str, str]) -> None:
    data.write.format("hudi").options(**options).option("hoodie.datasource.write.operation", operation) \
        .mode("append").save(str(path))


cow_base = shared_base("apache-hudi-cow-base", OPTIONS, _hudi_write, hudi_session)
cow_upserted = shared_upserted("apache-hudi-cow-upserted", cow_base, OPTIONS, _hudi_write, hudi_session)
mor_base = shared_base("apache-hudi-mor-base", MOR_OPTIONS, _hudi_write, hudi_session)
mor_log_base = shared_base("apache-hudi-mor-log-base", MOR_LOG_OPTIONS, _hudi_write, hudi_session)
mor_upserted = shared_upserted("apache-hudi-mor-upserted", mor_log_base, MOR_LOG_OPTIONS, _hudi_write, hudi_session)


# the writes and the compaction are timed by bench.ours.timed_operation, as ours are: the hooks a standalone
# cluster's job sets around each operation (bench.cluster: the driver's peaks) see Hudi's operations too

def bulk_insert(ctx: Context, job: str = "apache_hudi_bulk_insert") -> Measurement:
    """N rows into an empty copy-on-write table."""
    hudi_session()
    data = cached_frame(ctx.inputs.base)
    path = ctx.fresh_table_dir(job)
    seconds, _, extra = timed_operation(lambda: _hudi_write(path, data, "bulk_insert", OPTIONS))
    return Measurement(seconds, ctx.n, path, count_rows(path), ctx.n, extra=extra)


def _upsert(ctx: Context, job: str, base: Callable[[Context], Path], options: dict[str, str]) -> Measurement:
    hudi_session()
    path = ctx.copy_of(base(ctx), job)
    data = cached_frame(ctx.inputs.upsert)
    seconds, _, extra = timed_operation(lambda: _hudi_write(path, data, "upsert", options))
    return Measurement(seconds, ctx.shape.batch, path, count_rows(path), ctx.shape.rows_after, extra=extra)


def compaction(ctx: Context, job: str = "apache_hudi_compaction") -> Measurement:
    """``run_compaction`` scheduled and executed on a copy of the merge-on-read table with logs."""
    spark = hudi_session()
    path = ctx.copy_of(mor_upserted(ctx), job)
    for key, value in {**MOR_LOG_OPTIONS, **COMPACT_NOW}.items():
        spark.conf.set(key, value)
    seconds, rows, extra = timed_operation(lambda: spark.sql(
        f"CALL run_compaction(op => 'scheduleandexecute', path => '{path}')").collect())
    if not rows:
        raise RuntimeError("Apache Hudi scheduled no compaction")
    seen = count_rows(path)
    return Measurement(seconds, seen, path, seen, ctx.shape.rows_after, extra=extra)


def _read(path: Path, expected: int, **options: str) -> Measurement:
    spark = hudi_session()
    reader = spark.read.format("hudi").options(**options)
    seconds, _ = timed(lambda: reader.load(str(path)).write.format("noop").mode("overwrite").save())
    rows = int(reader.load(str(path)).count())
    return Measurement(seconds, rows, path, rows, expected)


def incremental_read(ctx: Context) -> Measurement:
    """The incremental query of the upsert's commit alone (from the base's bulk_insert on)."""
    path = cow_upserted(ctx)
    return _read(path, ctx.shape.batch, **{"hoodie.datasource.query.type": "incremental",
                                           "hoodie.datasource.read.begin.instanttime": first_write(path)})


NOTE = "Apache Hudi's defaults; only the benchmark's key, partition and ordering fields"

JOBS: tuple[Job, ...] = (
    Job("apache_hudi_bulk_insert", ENGINE, WRITE, bulk_insert, spark=True, warm=True,
        note=f"COW, N rows into an empty table; {NOTE}"),
    Job("apache_hudi_cow_upsert", ENGINE, UPSERT, lambda c: _upsert(c, "apache_hudi_cow_upsert", cow_base, OPTIONS),
        prepare=needs(cow_base), spark=True, warm=True, note=f"COW, the upsert batch into the N-row table; {NOTE}"),
    Job("apache_hudi_mor_upsert", ENGINE, UPSERT,
        lambda c: _upsert(c, "apache_hudi_mor_upsert", mor_base, MOR_OPTIONS), prepare=needs(mor_base), spark=True,
        warm=True, note=f"MOR, the upsert batch into the N-row table; {NOTE}"),
    Job("apache_hudi_compaction", ENGINE, SERVICE, compaction, prepare=needs(mor_upserted), spark=True,
        note="MOR table after the upsert (small-file limit 0, so it has logs): run_compaction, scheduled now"),
    Job("apache_hudi_cow_snapshot_read", ENGINE, READ, lambda c: _read(cow_upserted(c), c.shape.rows_after),
        prepare=needs(cow_upserted), spark=True, warm=True, note="Hudi's COW table after the upsert"),
    Job("apache_hudi_mor_snapshot_read", ENGINE, READ, lambda c: _read(mor_upserted(c), c.shape.rows_after),
        prepare=needs(mor_upserted), spark=True, warm=True,
        note="Hudi's MOR table after the upsert (small-file limit 0: base files + logs)"),
    Job("apache_hudi_incremental_read", ENGINE, READ, incremental_read, prepare=needs(cow_upserted), spark=True,
        warm=True, note="Hudi's COW table: the upsert's commit alone"),
)
