"""Apache Hudi 1.2.0 reading a metadata table as a Hudi table (``spark.read.format("hudi").load(<table>/.hoodie/
metadata)``), in a fresh Spark session: a bug of Hudi's, named with its smallest reproducer, and the same read of
the metadata table this writer keeps.

The read fails on the metadata table Apache Hudi itself wrote — two inserts, each a deltacommit logging the files
partition's records — with ``ArrayIndexOutOfBoundsException: Index 7 out of bounds for length 7`` in
``HoodieMetadataPayload.getInsertValue``: merging two log records of a key, Hudi builds the merged record in the
read schema (``HoodieMetadataRecord``'s seven fields) at offsets that assume the five meta fields before them. It
succeeds in a session where Hudi's writer ran first (that session holds Hudi's own schema object, which takes
another path), which is why the test reads in a process of its own. Our writer's metadata table behaves the same
way, so neither the record index validation (``tests.hudi_record_index_validation``) nor any other test reads a
metadata table through Hudi's datasource; Hudi's metadata reader (``HoodieBackedTableMetadata``) reads both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.explore]

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.write.table.version": "9"}
BATCHES = ((("k1", "a", 1, "x"), ("k2", "b", 1, "y")), (("k3", "a", 2, "z"),))
READ = """
import sys
from conformance.adapters.hudi_spark import bundle, hudi_conf
from reference.engines.spark_session import get_or_create_session
spark = get_or_create_session(master="local[1]", app_name="fresh", conf=hudi_conf(bundle()))
try:
    print("rows", len(spark.read.format("hudi").load(sys.argv[1] + "/.hoodie/metadata").collect()))
except Exception as err:
    print("failed", "ArrayIndexOutOfBoundsException" in str(err))
"""


def _read_in_a_fresh_session(table: Path) -> str:
    done = subprocess.run([sys.executable, "-c", READ, str(table)], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parent.parent, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(("rows", "failed"))]
    assert lines, done.stderr[-2000:]
    return lines[-1]


def test_apache_hudi_cannot_read_its_own_metadata_table_in_a_fresh_session(apache_hudi: Any, tmp_path: Path) -> None:
    for rows in BATCHES:
        (apache_hudi.createDataFrame(list(rows), "id string, p string, ts long, v string").write.format("hudi")
         .options(**OPTIONS).option("hoodie.datasource.write.operation", "insert").mode("append")
         .save(str(tmp_path)))
    assert len(apache_hudi.read.format("hudi").load(f"{tmp_path}/.hoodie/metadata").collect()) > 0  # this session
    assert _read_in_a_fresh_session(tmp_path) == "failed True"


def test_our_metadata_table_reads_as_hudis_does(apache_hudi: Any, tmp_path: Path) -> None:
    table = HudiTable(str(tmp_path), engine="local")
    for rows in BATCHES:
        table.write(pa.Table.from_pylist([dict(zip(("id", "p", "ts", "v"), r, strict=True)) for r in rows]),
                    "insert", OPTIONS)
    assert _read_in_a_fresh_session(tmp_path) == "failed True"
