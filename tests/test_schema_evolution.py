"""Schema on write and on read: ``spec.schema.evolution`` and its use by the writer, the reader and the checker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import reference.write.client
from conformance.checker import check_table
from reference.write.client import WriteClient
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
    monkeypatch.setattr(reference.write.client, "check_schema", lambda storage, engine, frame, *args: frame)
    client.write(_batch([2], pa.array([True])), "insert", {**OPTIONS, "hoodie.parquet.small.file.limit": "0"})
    assert len(Timeline.load(client.storage, 1).commits_timeline().completed().instants) == 2
    report = check_table(path)
    assert not report.ok
    assert any("'n'" in f.message and "boolean" in f.message for f in report.errors)


# --- every depth: struct fields, list elements, map values ------------------------------------------

NESTED = pa.struct([("a", pa.int64()), ("b", pa.string())])
ONLY_A = pa.struct([("a", pa.int64())])


def _rows(ids: list[int], column: str, values: pa.Array) -> pa.Table:
    return pa.table({"id": ids, "ts": [1] * len(ids), "p": ["a"] * len(ids), column: values})


def _nested_table(tmp_path: Path, table_type: str, column: str, values: pa.Array) -> tuple[Path, WriteClient]:
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(_rows([1, 2], column, values), "upsert", {**OPTIONS, "hoodie.datasource.write.table.type": table_type})
    return path, client


TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
DROPS = {
    "struct field": ("s", pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], NESTED),
                     pa.array([{"a": 3}], ONLY_A), "s.b"),
    "list element field": ("l", pa.array([[{"a": 1, "b": "x"}], [{"a": 2, "b": "y"}]], pa.list_(NESTED)),
                           pa.array([[{"a": 3}]], pa.list_(ONLY_A)), "l.element.b"),
    "map value field": ("m", pa.array([[("k", {"a": 1, "b": "x"})], [("k", {"a": 2, "b": "y"})]],
                                      pa.map_(pa.string(), NESTED)),
                        pa.array([[("k", {"a": 3})]], pa.map_(pa.string(), ONLY_A)), "m.value.b"),
}


@pytest.mark.parametrize("table_type", TYPES)
@pytest.mark.parametrize("name", DROPS)
def test_a_dropped_nested_field_is_refused_at_every_depth(tmp_path: Path, table_type: str, name: str) -> None:
    """Before: accepted; the untouched row of the rewritten file group lost the field's value. After:
    SchemaMismatch naming the field's path (Hudi's ``AvroSchemaUtils.findAnyMissingFields``), the table
    unchanged."""
    from tests.test_bad_input import refused_unchanged

    column, first, second, where = DROPS[name]
    path, client = _nested_table(tmp_path, table_type, column, first)
    err = refused_unchanged(path, lambda: client.write(_rows([1], column, second), "upsert",
                                                       {**OPTIONS, "hoodie.datasource.write.table.type": table_type}),
                            SchemaMismatch)
    assert where in err.message


CHANGES = {
    # name: (column, the table's values, the batch's values, what the message names)
    "a long field to boolean": ("s", pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], NESTED),
                                pa.array([{"a": True, "b": "z"}], pa.struct([("a", pa.bool_()), ("b", pa.string())])),
                                "s.a"),
    "a struct to a string": ("s", pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], NESTED), pa.array(["z"]), "'s'"),
    "a long to a list": ("n", pa.array([1, 2], pa.int64()), pa.array([[3]], pa.list_(pa.int64())), "'n'"),
    "a list element to a struct": ("l", pa.array([[1], [2]], pa.list_(pa.int64())),
                                   pa.array([[{"a": 3}]], pa.list_(ONLY_A)), "l.element"),
    "a map value long to boolean": ("m", pa.array([[("k", 1)], [("k", 2)]], pa.map_(pa.string(), pa.int64())),
                                        pa.array([[("k", True)]], pa.map_(pa.string(), pa.bool_())), "m.value"),
}


@pytest.mark.parametrize("table_type", TYPES)
@pytest.mark.parametrize("name", CHANGES)
def test_a_type_change_hudi_does_not_allow_is_refused_at_every_depth(tmp_path: Path, table_type: str,
                                                                     name: str) -> None:
    """Before: a nested change was accepted (a stored long became ``True``), a changed kind raised
    ArrowNotImplementedError. After: SchemaMismatch naming the field, the table unchanged."""
    from tests.test_bad_input import refused_unchanged

    column, first, second, where = CHANGES[name]
    path, client = _nested_table(tmp_path, table_type, column, first)
    err = refused_unchanged(path, lambda: client.write(_rows([1], column, second), "upsert",
                                                       {**OPTIONS, "hoodie.datasource.write.table.type": table_type}),
                            SchemaMismatch)
    assert where in err.message


@pytest.mark.parametrize("table_type", TYPES)
@pytest.mark.parametrize("nested", [False, True])
def test_a_new_non_null_field_is_refused(tmp_path: Path, table_type: str, nested: bool) -> None:
    """Before: ArrowInvalid (the table's older rows have no value for it). After: SchemaMismatch saying
    the new field must be nullable (Avro: a reader field the writer lacks needs a default)."""
    from tests.test_bad_input import refused_unchanged

    if nested:
        path, client = _nested_table(tmp_path, table_type, "s", pa.array([{"a": 1}, {"a": 2}], ONLY_A))
        t = pa.struct([pa.field("a", pa.int64()), pa.field("c", pa.int64(), nullable=False)])
        batch = _rows([1], "s", pa.array([{"a": 3, "c": 4}], t))
        where = "s.c"
    else:
        path, client = _nested_table(tmp_path, table_type, "n", pa.array([1, 2], pa.int64()))
        batch = _rows([1], "n", pa.array([3], pa.int64()))
        batch = batch.append_column(pa.field("m", pa.int64(), nullable=False), pa.array([9], pa.int64()))
        where = "'m'"
    err = refused_unchanged(path, lambda: client.write(batch, "upsert",
                                                       {**OPTIONS, "hoodie.datasource.write.table.type": table_type}),
                            SchemaMismatch)
    assert where in err.message and "nullable" in (err.hint or "")


@pytest.mark.parametrize("table_type", TYPES)
def test_nested_changes_hudi_allows_keep_every_value(tmp_path: Path, table_type: str) -> None:
    """A nested field added (nullable), a nested int written into the table's long, and a nested int
    evolving to long: accepted, and both readers return every stored value."""
    from tests.hudi_rs import hudi_rs_read

    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    path, client = _nested_table(tmp_path, table_type, "s",
                                 pa.array([{"a": 1, "b": 10}, {"a": 2, "b": 20}],
                                          pa.struct([("a", pa.int64()), ("b", pa.int32())])))
    # a added field; a narrower a (written as the table's long); a wider b (the field evolves to long)
    t = pa.struct([("a", pa.int32()), ("b", pa.int64()), ("c", pa.string())])
    client.write(_rows([1], "s", pa.array([{"a": 3, "b": 2**40, "c": "new"}], t)), "upsert", opts)
    client.write(_rows([3], "s", pa.array([{"a": 4, "b": 5, "c": None}], t)), "upsert",
                 {**opts, "hoodie.parquet.small.file.limit": "0"})
    expected = {1: {"a": 3, "b": 2**40, "c": "new"}, 2: {"a": 2, "b": 20, "c": None},
                3: {"a": 4, "b": 5, "c": None}}
    ours = read_table(str(path))
    assert ours.schema.field("s").type == pa.struct([("a", pa.int64()), ("b", pa.int64()), ("c", pa.string())])
    assert dict(zip(ours.column("id").to_pylist(), ours.column("s").to_pylist(), strict=True)) == expected
    theirs = hudi_rs_read(str(path))
    assert theirs is not None
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("s").to_pylist(), strict=True)) == expected


@pytest.mark.spark
def test_the_spark_engine_casts_a_nested_promotion_and_refuses_a_nested_drop(spark: Any, tmp_path: Path) -> None:
    """The Spark engine writes a nested int into the table's long (cast field by field) and refuses a dropped
    struct field before anything is written, as the local engine does."""
    from tests.test_bad_input import refused_unchanged

    path = tmp_path / "t"
    client = WriteClient(str(path), spark)
    client.write(_rows([1, 2], "s", pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], NESTED)), "upsert", OPTIONS)
    t = pa.struct([("a", pa.int32()), ("b", pa.string())])
    client.write(_rows([1], "s", pa.array([{"a": 3, "b": "z"}], t)), "upsert", OPTIONS)
    got = read_table(str(path))
    assert got.schema.field("s").type == NESTED
    assert dict(zip(got.column("id").to_pylist(), got.column("s").to_pylist(), strict=True)) == {
        1: {"a": 3, "b": "z"}, 2: {"a": 2, "b": "y"}}
    err = refused_unchanged(path, lambda: client.write(_rows([1], "s", pa.array([{"a": 4}], ONLY_A)), "upsert",
                                                       OPTIONS), SchemaMismatch)
    assert "s.b" in err.message
