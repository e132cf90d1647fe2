"""The CDC query (``spec.read.cdc``) against Apache Hudi 1.2.0's, on tables Apache Hudi wrote with change data
capture on: every supplemental logging mode, copy-on-write and merge-on-read (the small-file limit at 0, so that
merge-on-read updates go to log files). The writes cover every inference case: inserts into new file groups
(BASE_FILE_INSERT), updates and inserts a merge handle logged (AS_IS), updates and deletes appended to logs
(LOG_FILE), an update older than the stored row (no change), a delete of every record of a file group
(BASE_FILE_DELETE on copy-on-write) and an insert_overwrite (REPLACE_COMMIT). Hudi's ``before`` and ``after`` are
JSON text; they are compared parsed, as the records' mappings, change by change (as multisets: Hudi's order of the
changes of one instant is its hash maps')."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spec.read.cdc import DATA_BEFORE, DATA_BEFORE_AFTER, OP_KEY_ONLY, CdcRecord, read_cdc

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id long, p string, ts long, v string"
WRITES: tuple[tuple[str, tuple[tuple[int, str, int, str], ...]], ...] = (
    ("insert", ((1, "a", 1, "v1"), (2, "a", 1, "v2"), (3, "b", 1, "v3"))),
    ("upsert", ((1, "a", 2, "v1b"), (4, "a", 2, "v4"))),
    ("delete", ((2, "a", 3, "v2"),)),
    ("upsert", ((1, "a", 4, "v1c"), (3, "b", 0, "stale"))),
    ("delete", ((3, "b", 5, "v3"),)),
    ("insert_overwrite", ((5, "a", 6, "v5"),)),
)


def hudi_cdc_table(spark: Any, path: Path, table_type: str, mode: str) -> None:
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type, "hoodie.table.cdc.enabled": "true",
               "hoodie.table.cdc.supplemental.logging.mode": mode, "hoodie.metadata.enable": "false",
               "hoodie.parquet.small.file.limit": "0"}
    for operation, rows in WRITES:
        spark.createDataFrame(list(rows), SCHEMA).write.format("hudi").options(**options).option(
            "hoodie.datasource.write.operation", operation).mode("append").save(str(path))


def _image(value: Any) -> str:
    parsed = json.loads(value) if isinstance(value, str) else value
    return json.dumps(parsed, sort_keys=True)


def hudis(spark: Any, path: Path, begin: str = "0", end: str | None = None) -> Counter[tuple[str, str, str, str]]:
    reader = spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental").option(
        "hoodie.datasource.query.incremental.format", "cdc").option("hoodie.datasource.read.begin.instanttime", begin)
    if end is not None:
        reader = reader.option("hoodie.datasource.read.end.instanttime", end)
    rows = reader.load(str(path)).collect()
    return Counter((r.op, r.ts_ms, _image(r.before), _image(r.after)) for r in rows)


def ours(records: list[CdcRecord]) -> Counter[tuple[str, str, str, str]]:
    return Counter((r.op, r.ts_ms, _image(r.before), _image(r.after)) for r in records)


@pytest.mark.parametrize(("table_type", "mode"), [
    ("COPY_ON_WRITE", DATA_BEFORE_AFTER), ("MERGE_ON_READ", OP_KEY_ONLY),
    pytest.param("COPY_ON_WRITE", OP_KEY_ONLY, marks=pytest.mark.explore),
    pytest.param("COPY_ON_WRITE", DATA_BEFORE, marks=pytest.mark.explore),
    pytest.param("MERGE_ON_READ", DATA_BEFORE_AFTER, marks=pytest.mark.explore),
    pytest.param("MERGE_ON_READ", DATA_BEFORE, marks=pytest.mark.explore)])
def test_the_cdc_query_reads_what_apache_hudis_reads(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                      mode: str) -> None:
    path = tmp_path / "t"
    hudi_cdc_table(apache_hudi, path, table_type, mode)
    expected = hudis(apache_hudi, path)
    got = ours(read_cdc(str(path)))
    assert got == expected, (sorted((expected - got).elements()), sorted((got - expected).elements()))
    ops = Counter(op for op, *_ in expected.elements())
    assert ops["i"] and ops["u"] and ops["d"]  # every kind of change was read
    times = sorted({ts for _, ts, *_ in expected.elements()})
    window = ours(read_cdc(str(path), begin=times[1], end=times[3]))
    assert window and window == hudis(apache_hudi, path, times[1], times[3])  # a window, bounds as Hudi takes them


def test_apache_hudi_refuses_the_cdc_query_of_a_table_without_cdc_as_the_spec_reader_does(apache_hudi: Any,
                                                                                       tmp_path: Path) -> None:
    import pyarrow as pa

    from reference.write.client import WriteClient
    from spec.errors import InvalidOperation
    from tests.test_bad_input import options, rows

    path = tmp_path / "t"
    WriteClient(str(path), engine="local").write(pa.Table.from_pylist(rows()), "upsert", options("COPY_ON_WRITE", 9))
    with pytest.raises(InvalidOperation, match="change data capture"):
        read_cdc(str(path))
    with pytest.raises(Exception, match="It isn't a CDC hudi table"):  # IllegalArgumentException, from the JVM
        hudis(apache_hudi, path)
