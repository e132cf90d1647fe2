"""The peers: delta-rs, pyiceberg, plain Spark and pyarrow on the same data, plus Spark session start.

Each peer does what its own API offers for the operation, with its defaults:

* delta-rs: ``write_deltalake`` partitioned by ``part``; ``DeltaTable.merge`` on key and partition,
  update all matched, insert all unmatched;
* pyiceberg: a SQL catalog on sqlite in the job's own folder, the table partitioned by identity on
  ``part``; ``Table.append``, then ``Table.upsert`` joined on ``key``;
* plain Spark: a partitioned parquet write of the cached input; the naive upsert reads the whole
  hive-partitioned parquet table (the one pyarrow wrote for its read), drops the changed keys (left
  anti join), adds the batch and writes everything again;
* pyarrow: ``pyarrow.dataset.write_dataset`` hive-partitioned, and a full read of it back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from bench.jobs import (
    READ,
    SPARK_START_JOB,
    STARTUP,
    UPSERT,
    WRITE,
    Context,
    Job,
    Measurement,
    arrow_input,
    cached_frame,
    spark_session,
    timed,
)

PARTITION = "part"


def _parquet_rows(path: Path) -> int:
    return int(ds.dataset(path, format="parquet", partitioning="hive").count_rows())


# --- Spark ------------------------------------------------------------------------------------------

def spark_session_start(ctx: Context) -> Measurement:
    """A new session and its first (trivial) job: what every Spark job pays before its timer."""
    seconds, _ = timed(lambda: spark_session().range(1).count())
    return Measurement(seconds, 0, None)


def spark_parquet_write(ctx: Context) -> Measurement:
    df = cached_frame(ctx.inputs.base)
    path = ctx.fresh_table_dir("spark_parquet_write")
    seconds, _ = timed(lambda: df.write.partitionBy(PARTITION).parquet(str(path)))
    return Measurement(seconds, ctx.n, path, _parquet_rows(path), ctx.n)


def spark_naive_full_rewrite(ctx: Context) -> Measurement:
    spark = spark_session()
    src = _pyarrow_base(ctx)  # the same hive-partitioned parquet the pyarrow read reads
    batch = cached_frame(ctx.inputs.upsert)
    path = ctx.fresh_table_dir("spark_naive_full_rewrite")

    def rewrite() -> None:
        old = spark.read.parquet(str(src))
        kept = old.join(batch.select("key", PARTITION), ["key", PARTITION], "left_anti")
        kept.unionByName(batch).write.partitionBy(PARTITION).parquet(str(path))

    seconds, _ = timed(rewrite)
    return Measurement(seconds, ctx.shape.batch, path, _parquet_rows(path), ctx.shape.rows_after)


# --- pyarrow ------------------------------------------------------------------------------------------

def _timed_base_write(ctx: Context, job: str, write: Callable[[pa.Table, Path], None],
                      rows: Callable[[Path], int]) -> Measurement:
    """The N-row input (in memory before the timer) written by ``write`` into the job's fresh folder, timed;
    the rows ``rows`` counts there afterwards checked against N."""
    data = arrow_input(ctx.inputs.base)
    path = ctx.fresh_table_dir(job)
    seconds, _ = timed(lambda: write(data, path))
    return Measurement(seconds, ctx.n, path, rows(path), ctx.n)


def _cached_base(ctx: Context, name: str, write: Callable[[pa.Table, Path], None]) -> Path:
    """The N-row input written by ``write`` into a table shared by several jobs (built once, never timed)."""
    return ctx.cached(name, lambda p: write(arrow_input(ctx.inputs.base), p))


def _pyarrow_write(data: pa.Table, path: Path) -> None:
    ds.write_dataset(data, path, format="parquet", partitioning=[PARTITION], partitioning_flavor="hive")


def pyarrow_dataset_write(ctx: Context) -> Measurement:
    return _timed_base_write(ctx, "pyarrow_dataset_write", _pyarrow_write, _parquet_rows)


def _pyarrow_base(ctx: Context) -> Path:
    return _cached_base(ctx, "pyarrow-base", _pyarrow_write)


def prepare_pyarrow_read(ctx: Context) -> None:
    _pyarrow_base(ctx)


def pyarrow_dataset_read(ctx: Context) -> Measurement:
    path = _pyarrow_base(ctx)
    seconds, table = timed(lambda: ds.dataset(path, format="parquet", partitioning="hive").to_table())
    return Measurement(seconds, table.num_rows, path, table.num_rows, ctx.n)


# --- delta-rs -----------------------------------------------------------------------------------------

def _delta_rows(path: Path) -> int:
    from deltalake import DeltaTable

    return int(DeltaTable(str(path)).to_pyarrow_dataset().count_rows())


def _delta_write(data: pa.Table, path: Path) -> None:
    from deltalake import write_deltalake

    write_deltalake(str(path), data, partition_by=[PARTITION])


def delta_rs_write(ctx: Context) -> Measurement:
    return _timed_base_write(ctx, "delta_rs_write", _delta_write, _delta_rows)


def _delta_base(ctx: Context) -> Path:
    return _cached_base(ctx, "delta-base", _delta_write)


def prepare_delta_merge(ctx: Context) -> None:
    _delta_base(ctx)


def delta_rs_merge(ctx: Context) -> Measurement:
    from deltalake import DeltaTable

    batch = arrow_input(ctx.inputs.upsert)
    path = ctx.copy_of(_delta_base(ctx), "delta_rs_merge")
    table = DeltaTable(str(path))

    def merge() -> None:
        (table.merge(batch, "t.key = s.key AND t.part = s.part", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())

    seconds, _ = timed(merge)
    return Measurement(seconds, batch.num_rows, path, _delta_rows(path), ctx.shape.rows_after)


# --- pyiceberg -----------------------------------------------------------------------------------------

def _iceberg_catalog(folder: Path) -> Any:
    """The SQL catalog on sqlite inside ``folder``, its warehouse beside it."""
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("bench", uri=f"sqlite:///{folder / 'catalog.db'}", warehouse=(folder / "warehouse").as_uri())


def _iceberg_table(folder: Path, schema: pa.Schema) -> Any:
    """A new partitioned table in a SQL catalog on sqlite, both inside ``folder``."""
    (folder / "warehouse").mkdir(parents=True, exist_ok=True)
    catalog = _iceberg_catalog(folder)
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.t", schema=schema)
    with table.update_spec() as spec:
        spec.add_identity(PARTITION)
    return catalog.load_table("bench.t")


def _iceberg_load(folder: Path) -> Any:
    return _iceberg_catalog(folder).load_table("bench.t")


def _iceberg_rows(folder: Path) -> int:
    return int(_iceberg_load(folder).scan(selected_fields=("key",)).to_arrow().num_rows)


def pyiceberg_append(ctx: Context) -> Measurement:
    data = arrow_input(ctx.inputs.base)
    folder = ctx.fresh_table_dir("pyiceberg_append")
    table = _iceberg_table(folder, data.schema)
    seconds, _ = timed(lambda: table.append(data))
    return Measurement(seconds, ctx.n, folder / "warehouse", _iceberg_rows(folder), ctx.n)


def prepare_iceberg_upsert(ctx: Context) -> None:
    data = arrow_input(ctx.inputs.base)
    _iceberg_table(ctx.fresh_table_dir("pyiceberg_upsert"), data.schema).append(data)


def pyiceberg_upsert(ctx: Context) -> Measurement:
    batch = arrow_input(ctx.inputs.upsert)
    folder = ctx.table_dir("pyiceberg_upsert")
    table = _iceberg_load(folder)
    seconds, _ = timed(lambda: table.upsert(batch, join_cols=["key"]))
    return Measurement(seconds, batch.num_rows, folder / "warehouse", _iceberg_rows(folder), ctx.shape.rows_after)


STARTUP_JOBS: tuple[Job, ...] = (
    Job(SPARK_START_JOB, "Spark", STARTUP, spark_session_start, spark=True,
        note="new local[2] session and a trivial job; excluded from every Spark job's seconds"),
)

JOBS: tuple[Job, ...] = (
    Job("spark_parquet_write", "Spark", WRITE, spark_parquet_write, spark=True, vs="spark_parquet_write",
        warm=True, note="partitioned parquet, snappy"),
    Job("spark_naive_full_rewrite", "Spark", UPSERT, spark_naive_full_rewrite, prepare=prepare_pyarrow_read,
        spark=True, vs="delta_rs_merge", warm=True, note="read all, anti-join the batch's keys, write all again"),
    Job("delta_rs_write", "delta-rs", WRITE, delta_rs_write, vs="spark_parquet_write", warm=True),
    Job("delta_rs_merge", "delta-rs", UPSERT, delta_rs_merge, prepare=prepare_delta_merge, vs="delta_rs_merge",
        warm=True, note="merge on key and partition"),
    Job("pyiceberg_append", "pyiceberg", WRITE, pyiceberg_append, vs="spark_parquet_write",
        warm=True, note="SQL catalog on sqlite"),
    Job("pyiceberg_upsert", "pyiceberg", UPSERT, pyiceberg_upsert, prepare=prepare_iceberg_upsert,
        vs="delta_rs_merge", slow=True, note="Table.upsert joined on key"),
    Job("pyarrow_dataset_write", "pyarrow", WRITE, pyarrow_dataset_write, vs="spark_parquet_write",
        warm=True, note="hive-partitioned parquet, snappy"),
    Job("pyarrow_dataset_read", "pyarrow", READ, pyarrow_dataset_read, prepare=prepare_pyarrow_read,
        warm=True, note="the N-row dataset, every column"),
)
