"""Schema on write and on read: ``spec.schema.evolution`` and its use by the writer, the reader and the checker."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import reference.client
from conformance.checker import check_table
from reference.client import WriteClient
from spec.errors import SchemaMismatch
from spec.read.reader import read_table
from spec.schema.evolution import avro_primitive, promotes, reconcile_type
from spec.timeline.active_timeline import Timeline

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.write.table.version": "6"}


@pytest.mark.parametrize(("source", "target"), [
    ("int", "long"), ("int", "double"), ("long", "float"), ("long", "double"), ("float", "double"),
    ("int", "string"), ("long", "string"), ("double", "string"), ("date", "string"), ("string", "string")])
def test_promotions_hudi_allows(source: str, target: str) -> None:
    assert promotes(source, target)


@pytest.mark.parametrize(("source", "target"), [
    ("long", "int"), ("double", "long"), ("string", "long"), ("boolean", "long"), ("long", "boolean"),
    ("bytes", "string"), ("string", "bytes")])
def test_changes_hudi_does_not_allow(source: str, target: str) -> None:
    assert not promotes(source, target)


def test_reconcile_keeps_the_table_type_evolves_to_a_wider_one_or_refuses() -> None:
    assert reconcile_type("n", "string", "long") == "string"  # the batch's longs are written as strings
    assert reconcile_type("n", "long", "double") == "double"  # the column evolves
    with pytest.raises(SchemaMismatch, match="'n' is long in the table and boolean"):
        reconcile_type("n", "long", "boolean")


def test_avro_primitive_of_arrow_types() -> None:
    assert [avro_primitive(t) for t in (pa.int32(), pa.int64(), pa.float64(), pa.string(), pa.bool_())] == [
        "int", "long", "double", "string", "boolean"]
    assert avro_primitive(pa.list_(pa.int64())) is None


def _batch(ids: list[int], n: pa.Array) -> pa.Table:
    return pa.table({"id": ids, "ts": [1] * len(ids), "p": ["a"] * len(ids), "n": n})


def test_an_evolved_column_reads_cast_and_a_refused_change_leaves_the_table_as_it_was(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    client = WriteClient(path, engine="local")
    client.write(_batch([1], pa.array([1], pa.int64())), "insert", OPTIONS)
    client.write(_batch([2], pa.array(["x"])), "insert", {**OPTIONS, "hoodie.parquet.small.file.limit": "0"})
    table = read_table(path)
    assert table.schema.field("n").type == pa.string()
    assert sorted(table.column("n").to_pylist()) == ["1", "x"]  # the long file's value read as a string
    before = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
    with pytest.raises(SchemaMismatch, match="'n' is string in the table and boolean"):
        client.write(_batch([3], pa.array([True])), "upsert", OPTIONS)
    assert sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir()) == before
    client.write(_batch([4], pa.array([7], pa.int64())), "upsert", OPTIONS)  # written as the table's string
    assert sorted(read_table(path).column("n").to_pylist()) == ["1", "7", "x"]


def test_the_checker_flags_files_that_disagree_incompatibly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "t")
    client = WriteClient(path, engine="local")
    client.write(_batch([1], pa.array([1], pa.int64())), "insert", OPTIONS)
    assert check_table(path).ok
    # a writer that skips the schema check
    monkeypatch.setattr(reference.client, "check_schema", lambda storage, engine, frame, *args: frame)
    client.write(_batch([2], pa.array([True])), "insert", {**OPTIONS, "hoodie.parquet.small.file.limit": "0"})
    assert len(Timeline.load(client.storage, 1).commits_timeline().completed().instants) == 2
    report = check_table(path)
    assert not report.ok
    assert any("'n'" in f.message and "boolean" in f.message for f in report.errors)
