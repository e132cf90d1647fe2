"""A driver process for the standalone-cluster test: the engines test's write sequence through a Spark master.

Usage: python tests/cluster_child.py MASTER_URL TABLE TABLE_TYPE VERSION

Writes TABLE with ``test_local_engine``'s sequence (insert, upserts, a delete) on the Spark engine of a
session whose master is MASTER_URL (``spark://host:port``: executors in a worker's JVM, their Python
workers forked there, nothing shared with this process), then a bulk_insert into ``TABLE-bulk`` and, on
merge-on-read, a compaction. Prints the application id and the executors' host:port on its last line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_local_engine import _write_all

from conformance.adapters.reference_spark import START_EPOCH, FileIds, ReplayClock
from reference.api import HudiTable
from reference.engines.spark_session import get_or_create_session

BULK_OPTIONS = {"hoodie.table.name": "b", "hoodie.datasource.write.recordkey.field": "id",
                "hoodie.datasource.write.partitionpath.field": "city",
                "hoodie.datasource.write.precombine.field": "ts"}


def bulk_rows() -> pa.Table:
    return pa.table({"id": list(range(500)), "city": [f"c{i % 3}" for i in range(500)],
                     "ts": [1] * 500, "v": [float(i) for i in range(500)]})


def main() -> int:
    master, path, table_type, version = sys.argv[1:5]
    spark = get_or_create_session(master=master, app_name="hudi-spec-cluster-test")
    _write_all(Path(path), "spark", table_type, int(version), spark)
    HudiTable(f"{path}-bulk", spark, clock=ReplayClock(), file_id_prefix=FileIds()).write(
        bulk_rows(), "bulk_insert", BULK_OPTIONS)
    if table_type == "MERGE_ON_READ":
        HudiTable(path, spark, clock=ReplayClock(START_EPOCH + 10_000)).compact()
    sc = spark.sparkContext
    executors = str(sc._jsc.sc().getExecutorMemoryStatus().keySet().mkString(",")).split(",")
    print(json.dumps({"app": sc.applicationId, "master": sc.master, "block_managers": executors}))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
