"""The Spark readers (``reference.engines.spark_reader``) against the spec reader, for every query type.

On every real table written by Apache Hudi, and on a table written by the reference writer, the
DataFrame ``read_spark`` returns, collected to Arrow, has the columns of ``spec.read.reader.read_table``
(same order, meta fields included) and the same rows (compared as sorted lists of canonical row
dicts; Spark's row order is its own). The quick run samples time-travel instants and incremental
windows per table; ``-m slow`` runs every completed instant and every window between them.
"""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import main
from reference.engines.spark_arrow import spark_to_arrow
from reference.engines.spark_reader import read_spark
from spec.errors import InvalidOperation, InvalidTable
from spec.read.reader import TableReader, read_table
from tests.conftest import RealTable

pytestmark = pytest.mark.spark

Query = tuple[str, dict[str, Any]]


def _canon(value: Any) -> Any:
    """A value in a form that compares equal across Arrow types of the same value (timestamp units and
    time zone objects, list field names, map entries)."""
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, datetime.date | decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return value


def rows_of(table: pa.Table) -> list[str]:
    """A table's rows as a sorted list of canonical JSON row dicts (a multiset over all columns)."""
    return sorted(json.dumps(_canon(r), sort_keys=True) for r in table.to_pylist())


def spark_rows(spark: Any, path: str, query: str = "snapshot", **kw: Any) -> pa.Table:
    df = read_spark(spark, path, query, **kw)
    if not df.columns:
        return pa.table({})
    table: pa.Table = spark_to_arrow(df)
    return table


def assert_same(spark: Any, path: str, query: str, kw: dict[str, Any]) -> int:
    """The Spark reader and the spec reader agree on one query; returns the row count."""
    expected = read_table(path, query, **kw)
    got = spark_rows(spark, path, query, **kw)
    assert rows_of(got) == rows_of(expected), (path, query, kw)
    if expected.num_rows:
        assert got.column_names == expected.column_names, (query, kw)
    elif not expected.num_columns:
        # nothing visible: no slice chosen gives no columns; slices whose rows are all filtered out
        # give the columns and no rows (a DataFrame's schema is known before it runs)
        assert got.num_rows == 0
    return int(expected.num_rows)


def _points(reader: TableReader) -> list[str]:
    """Every instant time of the completed timeline: requested times and (v8) completion times."""
    return sorted({t for i in reader.timeline.completed().instants for t in (i.requested, i.completed) if t})


def _all_queries(reader: TableReader) -> list[Query]:
    points = _points(reader)
    qs: list[Query] = [("snapshot", {}), ("read_optimized", {})]
    qs += [("snapshot", {"as_of": t}) for t in points]
    for k, end in enumerate(points):
        qs += [("incremental", {"begin": begin, "end": end}) for begin in [None, *points[:k]]]
    return qs


def _sampled_queries(reader: TableReader) -> list[Query]:
    """Snapshot, read-optimized, time travel to the first and a middle instant, and two incremental
    windows: the latest instant alone, and one from the first instant to the middle one."""
    points = _points(reader)
    qs: list[Query] = [("snapshot", {}), ("read_optimized", {})]
    if not points:
        return qs
    picks = sorted({points[0], points[len(points) // 2]})
    qs += [("snapshot", {"as_of": t}) for t in picks]
    windows = {(points[-2] if len(points) > 1 else None, points[-1]), (points[0], points[len(points) // 2])}
    qs += [("incremental", {"begin": b, "end": e}) for b, e in sorted(windows, key=str)]
    return qs


def _check_table(spark: Any, table: RealTable, queries: list[Query]) -> None:
    path = str(table.path)
    reader = TableReader(path)
    for query, kw in queries:
        if query == "incremental" and not reader.config.populate_meta_fields:
            with pytest.raises(InvalidOperation, match="meta column"):
                read_spark(spark, path, query, **kw)
            with pytest.raises(InvalidOperation, match="meta column"):
                read_table(path, query, **kw)
            continue
        assert_same(spark, path, query, kw)


def test_spark_reader_equals_spec_reader(spark: Any, real_table: RealTable) -> None:
    reader = TableReader(str(real_table.path))
    _check_table(spark, real_table, _sampled_queries(reader))
    # the snapshot row count is what hudi-rs 0.5.0 read (a baseline independent of both readers)
    snapshot = spark_rows(spark, str(real_table.path))
    assert snapshot.num_rows == int(real_table.manifest["hudirs050_snapshot_rows"])


@pytest.mark.slow
def test_spark_reader_equals_spec_reader_on_every_instant_and_window(spark: Any, real_table: RealTable) -> None:
    reader = TableReader(str(real_table.path))
    _check_table(spark, real_table, _all_queries(reader))


def _table(tables: list[RealTable], name: str) -> str:
    return str(next(t for t in tables if t.name.endswith(name)).path)


def test_mor_slices_are_merged_in_spark_tasks(spark: Any, real_tables: list[RealTable]) -> None:
    """On a merge-on-read table with log files, snapshot merges them (rows differ from
    read-optimized) and the merge runs as Spark tasks, one per file slice with logs."""
    path = _table(real_tables, "v6_trips_8i1u")
    reader = TableReader(path)
    plan = reader.plan()
    assert plan.merged(), "the table has a file slice with log files"
    snapshot = spark_rows(spark, path)
    optimized = spark_rows(spark, path, "read_optimized")
    assert rows_of(snapshot) != rows_of(optimized)
    assert rows_of(snapshot) == rows_of(read_table(path))
    df = read_spark(spark, path)
    assert "MapInArrow" in df._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in df._jdf.queryExecution().executedPlan().toString()


def test_a_slice_of_log_files_only(spark: Any, real_tables: list[RealTable], real_table_copy: Any,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A file slice without a base file (here: a copy of a real table with that slice's base file
    removed) is merged from its logs alone; its schema comes from a Spark job over such slices. The
    timeline still names the removed file, so the readers' missing-file check would refuse the table
    (``spec.read.query_plan.check_files_present``): it is switched off to build the slice."""
    import spec.read.query_plan

    table = next(t for t in real_tables if t.name.endswith("v6_trips_8i1u"))
    path = real_table_copy(table)
    (base,) = [sl.base_file for sl in TableReader(str(path)).plan().slices if sl.log_files]
    assert base is not None
    (path / base.path).unlink()
    with pytest.raises(InvalidTable, match=base.name):
        TableReader(str(path)).plan()
    monkeypatch.setattr(spec.read.query_plan, "check_files_present", lambda *args, **kwargs: None)
    reader = TableReader(str(path))
    assert [k for k, sl in enumerate(reader.plan().slices) if sl.base_file is None] == reader.plan().merged()
    # a version 6 incremental window whose writes wrote the removed file reads that file (the window's view is
    # built over every file its writes wrote: spec.read.query_plan.check_window_files refuses it, as a cleaned
    # one): those windows are left out
    written_at = base.name.rsplit("_", 1)[-1].removesuffix(".parquet")
    queries = [(q, kw) for q, kw in _all_queries(reader)
               if not (q == "incremental" and (kw["begin"] or "") < written_at <= kw["end"])]
    counts = [assert_same(spark, str(path), q, kw) for q, kw in queries]
    assert counts[:2] == [5, 4]  # snapshot: the other groups' 4 rows and the log's 1; read-optimized: 4


def test_columns_and_partition_filter(spark: Any, real_tables: list[RealTable]) -> None:
    path = _table(real_tables, "v8_trips_8i3u1d")
    cols = ["fare", "_hoodie_record_key", "city"]
    got = spark_rows(spark, path, columns=cols)
    assert got.column_names == cols
    assert rows_of(got) == rows_of(read_table(path, columns=cols))
    partitions = TableReader(path).view().partitions()
    assert len(partitions) > 1
    one = partitions[0]
    got = spark_rows(spark, path, partition_filter=[one])
    assert got.num_rows > 0
    assert {r["_hoodie_partition_path"] for r in got.to_pylist()} == {one}
    assert rows_of(got) == rows_of(read_table(path, partition_filter=[one]))
    pred = spark_rows(spark, path, partition_filter=lambda p: p != one)
    assert rows_of(pred) == rows_of(read_table(path, partition_filter=lambda p: p != one))
    assert pred.num_rows + got.num_rows == read_table(path).num_rows


@pytest.mark.parametrize(("query", "kw", "match"), [
    ("latest", {}, "unknown query type"),
    ("snapshot", {"as_of": "yesterday"}, "not an instant time"),
    ("incremental", {"begin": "2025"}, "not an instant time"),
    ("incremental", {"as_of": "20250101000000000"}, "has no as_of"),
    ("read_optimized", {"begin": "20250101000000000"}, "apply to incremental"),
    ("snapshot", {"columns": ["no_such_column"]}, "no column 'no_such_column'"),
])
def test_errors_are_the_spec_readers(spark: Any, real_tables: list[RealTable], query: str, kw: dict[str, Any],
                                     match: str) -> None:
    path = _table(real_tables, "v6_trips_8i1u")
    with pytest.raises(InvalidOperation, match=match) as spec_error:
        read_table(path, query, **kw)
    with pytest.raises(InvalidOperation, match=match) as spark_error:
        read_spark(spark, path, query, **kw)
    assert str(spark_error.value) == str(spec_error.value)


def test_empty_tables_read_as_empty(spark: Any, real_tables: list[RealTable]) -> None:
    for name in ("cow/v6_empty", "cow/v8_empty", "mor/parquet/v6_empty"):
        df = read_spark(spark, _table(real_tables, name))
        assert df.columns == [] and not df.take(1)


def test_jobs_are_labelled(spark: Any, real_tables: list[RealTable]) -> None:
    path = _table(real_tables, "v6_trips_8i1u")
    read_spark(spark, path, "incremental", begin=None, end=None)
    label = spark.sparkContext.getLocalProperty("spark.job.description")
    assert label.startswith("hudi read incremental ")


def _rows(ids: list[int], ts: int, city: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "city": [city] * len(ids), "v": [f"v{i}@{ts}" for i in ids]})


@pytest.mark.parametrize("version", ["6", pytest.param("8", marks=pytest.mark.slow)])
def test_table_written_by_the_reference_writer(spark: Any, tmp_path: Path, version: str) -> None:
    path = str(tmp_path / "t")
    table = HudiTable(path, spark)
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.write.table.version": version}
    table.write(_rows([1, 2, 3], 1, "sf"), "insert", options)
    table.write(pa.concat_tables([_rows([1], 5, "sf"), _rows([7, 8], 1, "la")]), "upsert", options)
    table.write(_rows([2], 9, "sf"), "delete", options)
    reader = TableReader(path)
    queries = _all_queries(reader)
    assert len(_points(reader)) >= 3
    counts = [assert_same(spark, path, q, kw) for q, kw in queries]
    assert counts[0] == 4  # 1 (updated), 3, 7, 8
    assert any(c for (q, _), c in zip(queries, counts, strict=True) if q == "incremental")


def test_cli_spark_engine_equals_spec_engine(real_tables: list[RealTable], spark: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _table(real_tables, "v8_trips_8i3u1d")
    reader = TableReader(path)
    points = _points(reader)
    for extra in ([], ["--query", "read_optimized"], ["--as-of", points[len(points) // 2]],
                  ["--query", "incremental", "--begin", points[0]]):
        outputs = []
        for engine in ("spec", "spark"):
            assert main(["read", path, *extra, "--engine", engine, "--output", "json"]) == 0
            outputs.append(sorted(json.dumps(r, sort_keys=True) for r in json.loads(capsys.readouterr().out)))
        assert outputs[0] == outputs[1], extra
        assert outputs[0], extra
    assert main(["read", path, "--engine", "spark", "--as-of", "soon"]) == 2
    assert "not an instant time" in capsys.readouterr().err


def test_the_default_partitions_column_reads_as_null(spark: Any, tmp_path: Path) -> None:
    """A record written with an empty partition value: its file keeps ``""``, both readers read null
    (``spec.read.reader.TableReader.partition_values``; here the Spark reader's base files)."""
    from tests.test_reader_partition_values import written

    path = written(tmp_path)
    for query in ("snapshot", "read_optimized"):
        rows = {r["id"]: r["p"] for r in spark_rows(spark, path, query).to_pylist()}
        assert rows == {1: "a", 2: "a", 3: None, 4: None}, query
        assert rows_of(spark_rows(spark, path, query)) == rows_of(read_table(path, query))
