"""A partition column reads as Apache Hudi's Spark datasource reads it: from the partition path, so a record of
``__HIVE_DEFAULT_PARTITION__`` reads null there even where its data file holds the empty string it was written
with (``spec.keygen.partition_path.default_partition_columns``; measured with Apache Hudi 1.2.0 on case
``null-ordering-partition-cow-v6``: Hudi's writer stores ``""`` and Hudi's reader returns null)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.interface.adapter import Query
from conformance.runner import execute, load_cases
from spec.keygen.partition_path import DEFAULT_PARTITION
from spec.read.reader import read_table

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def written(tmp_path: Path) -> str:
    """The first write of ``null-ordering-partition-cow-v6`` (a null and an empty partition value among its
    records) by the reference writer, local engine."""
    fc = next(fc for fc in load_cases(FIXTURES, suite="writes") if fc.case.id == "null-ordering-partition-cow-v6")
    writer = ReferenceLocalAdapter()
    for step in execute(writer, replace(fc.case, ops=fc.case.ops[:1]), ("L1",), tmp_path):
        assert not step.stop, step.outcome
    return str(writer.path)


def test_the_default_partition_reads_its_partition_column_as_null(tmp_path: Path) -> None:
    path = written(tmp_path)
    (base,) = (Path(path) / DEFAULT_PARTITION).glob("*.parquet")
    stored = {r["id"]: r["p"] for r in pq.read_table(base).to_pylist()}
    assert stored == {3: None, 4: ""}  # the file keeps the values as written
    for query in ("snapshot", "read_optimized", "incremental"):
        rows = {r["id"]: r["p"] for r in read_table(path, query).to_pylist()}
        assert rows == {1: "a", 2: "a", 3: None, 4: None}, query


def test_the_model_reads_it_alike(tmp_path: Path) -> None:
    fc = next(fc for fc in load_cases(FIXTURES, suite="writes") if fc.case.id == "null-ordering-partition-cow-v6")
    model = SpecModelAdapter()
    for step in execute(model, replace(fc.case, ops=fc.case.ops[:1]), ("L1",), tmp_path):
        assert not step.stop, step.outcome
    assert {r["id"]: r["p"] for r in model.rows(Query("snapshot"))} == {1: "a", 2: "a", 3: None, 4: None}
