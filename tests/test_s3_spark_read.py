"""The Spark reader on an S3 table (moto on 127.0.0.1) without Hadoop's S3 connector.

pyspark ships no ``s3://`` file system; the reader reads object-store slices through pyarrow inside
its tasks, as the writer writes them. Every query type answers the rows the spec reader answers.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.engines.spark_reader import read_spark
from spec.read.reader import read_table

pytestmark = pytest.mark.spark


def _canonical(rows: Any) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_reads_an_s3_table_as_the_spec_reader(table_type: str, s3_server: Any, s3_path: str,
                                                    spark: Any) -> None:
    options = {"hoodie.table.name": "s3spark", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "8"}
    table = HudiTable(s3_path, engine="local")
    first = table.write(pa.table({"id": [1, 2, 3], "ts": [1, 1, 1], "p": ["a", "a", "b"], "v": ["x", "y", "z"]}),
                        "upsert", options)
    table.write(pa.table({"id": [2, 4], "ts": [2, 2], "p": ["a", "b"], "v": ["y2", "w"]}), "upsert", options)
    for query, kw in (("snapshot", {}), ("read_optimized", {}), ("incremental", {"begin": first.instant}),
                      ("snapshot", {"as_of": first.instant})):
        ours = read_table(s3_path, query, **kw)
        theirs = read_spark(spark, s3_path, query, **kw).toPandas()
        assert _canonical(theirs.to_dict("records")) == _canonical(ours.to_pandas().to_dict("records")), query
    assert {r["v"] for r in read_table(s3_path).to_pylist()} == {"x", "y2", "z", "w"}
