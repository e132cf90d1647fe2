"""One benchmark job per function; each runs in its own process (``python -m bench.jobs JOB N DIR``).

A job prepares what it needs untimed (the data, the base table, the Spark session), times only its
operation, and prints one JSON line: seconds, rows, bytes on disk, and peak memory: the peak RSS of
the process plus the peak RSS of each live child (the Spark JVM) — an upper bound of their joint peak.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

from bench.data import base_rows, upsert_rows

HUDI_OPTIONS = {"hoodie.table.name": "bench", "hoodie.datasource.write.recordkey.field": "key",
                "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
                "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.combine.before.insert": "false"}


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _spark() -> Any:
    from reference.spark import get_or_create_session

    return get_or_create_session(app_name="hudi-spec-bench")


def spark_start(n: int, work: Path) -> tuple[float, int, Path]:
    t = time.perf_counter()
    _spark().range(1).count()
    return time.perf_counter() - t, 0, work


def _hudi_base(n: int, work: Path) -> Path:
    """A COW table of n rows written by bulk_insert (cached across jobs of one run)."""
    from reference.api import HudiTable

    path = work / f"hudi-cow-{n}"
    if not (path / ".hoodie").exists():
        HudiTable(str(path), _spark()).write(base_rows(n), "bulk_insert", HUDI_OPTIONS)
    return path


def hudi_bulk_insert(n: int, work: Path) -> tuple[float, int, Path]:
    from reference.api import HudiTable

    data, spark = base_rows(n), _spark()
    path = work / "hudi-bulk"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    HudiTable(str(path), spark).write(data, "bulk_insert", HUDI_OPTIONS)
    return time.perf_counter() - t, n, path


def hudi_cow_upsert(n: int, work: Path) -> tuple[float, int, Path]:
    from reference.api import HudiTable

    base = _hudi_base(n, work)
    path = work / "hudi-upsert"
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(base, path)
    batch, spark = upsert_rows(n), _spark()
    t = time.perf_counter()
    HudiTable(str(path), spark).write(batch, "upsert", HUDI_OPTIONS)
    return time.perf_counter() - t, batch.num_rows, path


def spec_snapshot_read(n: int, work: Path) -> tuple[float, int, Path]:
    from spec.reader import read_table

    base = _hudi_base(n, work)
    t = time.perf_counter()
    rows = read_table(str(base)).num_rows
    return time.perf_counter() - t, rows, base


def hudi_rs_read(n: int, work: Path) -> tuple[float, int, Path]:
    import hudi

    base = _hudi_base(n, work)
    t = time.perf_counter()
    batches = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
    rows = sum(b.num_rows for b in batches)
    return time.perf_counter() - t, rows, base


def delta_write(n: int, work: Path) -> tuple[float, int, Path]:
    from deltalake import write_deltalake

    data = base_rows(n)
    path = work / "delta-write"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    write_deltalake(str(path), data, partition_by=["part"])
    return time.perf_counter() - t, n, path


def delta_merge(n: int, work: Path) -> tuple[float, int, Path]:
    from deltalake import DeltaTable, write_deltalake

    path = work / "delta-merge"
    shutil.rmtree(path, ignore_errors=True)
    write_deltalake(str(path), base_rows(n), partition_by=["part"])
    batch = upsert_rows(n)
    t = time.perf_counter()
    (DeltaTable(str(path)).merge(batch, "t.key = s.key AND t.part = s.part", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    return time.perf_counter() - t, batch.num_rows, path


def pyarrow_write(n: int, work: Path) -> tuple[float, int, Path]:
    data = base_rows(n)
    path = work / "pyarrow"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    ds.write_dataset(data, path, format="parquet", partitioning=["part"], partitioning_flavor="hive")
    return time.perf_counter() - t, n, path


def spark_parquet_write(n: int, work: Path) -> tuple[float, int, Path]:
    spark = _spark()
    df = spark.createDataFrame(base_rows(n)).cache()
    df.count()
    path = work / "spark-parquet"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    df.write.partitionBy("part").parquet(str(path))
    return time.perf_counter() - t, n, path


def spark_full_rewrite(n: int, work: Path) -> tuple[float, int, Path]:
    """The naive upsert: read everything, replace changed keys, write everything again."""
    spark = _spark()
    src = work / "spark-rewrite-src"
    if not src.exists():
        spark.createDataFrame(base_rows(n)).write.partitionBy("part").parquet(str(src))
    batch = spark.createDataFrame(upsert_rows(n))
    path = work / "spark-rewrite"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    old = spark.read.parquet(str(src))
    old.join(batch.select("key"), "key", "left_anti").unionByName(batch).write.partitionBy("part").parquet(str(path))
    return time.perf_counter() - t, batch.count(), path


JOBS: dict[str, Callable[[int, Path], tuple[float, int, Path]]] = {
    "spark_start": spark_start,
    "hudi_spec_bulk_insert": hudi_bulk_insert,
    "hudi_spec_cow_upsert": hudi_cow_upsert,
    "hudi_spec_snapshot_read_spec_engine": spec_snapshot_read,
    "hudi_rs_read_our_table": hudi_rs_read,
    "delta_rs_write": delta_write,
    "delta_rs_merge": delta_merge,
    "pyarrow_dataset_write": pyarrow_write,
    "spark_parquet_write": spark_parquet_write,
    "spark_naive_full_rewrite": spark_full_rewrite,
}


def _descendants_peak_kb(root: int) -> int:
    """Sum of the peak RSS (VmHWM) of every live descendant process (the Spark JVM), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    total = 0
    for pid in parents:
        p = pid
        while p in parents and p != root:
            p = parents[p]
        if p == root and pid != root:
            try:
                for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
            except OSError:
                continue
    return total


def main() -> None:
    name, n, work = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    seconds, rows, path = JOBS[name](n, work)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = _descendants_peak_kb(os.getpid()) if Path("/proc").is_dir() else 0
    print(json.dumps({"job": name, "n": n, "seconds": seconds, "rows": rows,
                      "bytes": _bytes(path) if path.exists() and path != work else 0,
                      "peak_rss_mb": round((own + children) / 1024, 1), "pid": os.getpid()}))
    sys.stdout.flush()
    os._exit(0)  # do not wait for the JVM to shut down: it is not part of any measurement


if __name__ == "__main__":
    main()
