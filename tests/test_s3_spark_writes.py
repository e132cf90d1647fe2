"""The Spark engine writing on S3 (moto on 127.0.0.1): inserts, upserts (merge-on-read: log files,
each a new object), deletes and compaction run as Spark jobs, their tasks reaching the bucket as the
driver does (``s3://`` URIs, the AWS variables); after each step the spec reader and hudi-rs read
exactly the rows the spec model predicts. One Spark session for the test process (``spark``)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from conformance.interface.ops import CreateTable
from reference.api import HudiTable
from reference.engines.spark_arrow import arrow_to_spark
from spec.model import Env, TableModel
from spec.model.operations import Compact, Write
from tests.test_s3_writes import _options, _rec, check_against_model

pytestmark = pytest.mark.spark

STEPS: list[tuple[str, list[dict[str, Any]]]] = [
    ("insert", [_rec(1, 1), _rec(2, 1), _rec(3, 1, "la")]),
    ("upsert", [_rec(1, 5), _rec(2, 0), _rec(4, 1, "la")]),
    ("upsert", [_rec(3, 6, "la"), _rec(5, 1, "ny")]),
    ("delete", [_rec(2, 9)]),
]


def _spark_steps(path: str, s3_server: Any, spark: Any, table_type: str, version: int) -> None:
    model = TableModel(CreateTable(table_type=table_type, table_version=version, partition_fields=("city",),
                                   clean_commits_retained=1), Env.deterministic())
    table = HudiTable(path, spark=spark)
    options = _options(table_type, version)

    def check(step: str) -> None:
        check_against_model(path, model, s3_server, step)

    for op, batch in STEPS:
        table.write(arrow_to_spark(spark, pa.Table.from_pylist(batch)), op, options)
        model.apply(Write(op, tuple(batch)))
        check(op)
    if table_type == "MERGE_ON_READ":
        keys = [o["Key"] for o in s3_server.client().list_objects_v2(Bucket=path.split("/")[2])["Contents"]]
        assert any(".log." in k for k in keys), "the merge-on-read upserts wrote no log files"
        assert table.compact(options) is not None
        model.apply(Compact())
        check("compaction")


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 8), ("MERGE_ON_READ", 6)])
def test_spark_engine_writes_on_s3_read_as_the_model_predicts(table_type: str, version: int, spark: Any,
                                                              s3_server: Any, s3_path: str) -> None:
    """(The session is asked for first: its tasks start without the AWS settings, which the driver sends.)"""
    _spark_steps(s3_path, s3_server, spark, table_type, version)


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("COPY_ON_WRITE", 9),
                                                     ("MERGE_ON_READ", 8), ("MERGE_ON_READ", 9)])
def test_spark_engine_writes_on_s3_every_kind(table_type: str, version: int, spark: Any, s3_server: Any,
                                              s3_path: str) -> None:
    _spark_steps(s3_path, s3_server, spark, table_type, version)
