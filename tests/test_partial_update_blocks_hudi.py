"""Partial-update log blocks Apache Hudi 1.2.0 writes (``MERGE INTO … WHEN MATCHED THEN UPDATE SET`` of some columns
on merge-on-read: data blocks flagged ``IS_PARTIAL`` holding the five meta columns and the assigned columns), read
by Hudi, the spec reader and hudi-rs, and compacted by Hudi and by us (``spec.read.merge.merge_partial``).

The table: an insert of keys 1-3 (ts 5), then partial updates of key 3 (ts 7, v), (ts 9, w), (ts 8, w), of key 2
with a smaller ordering value than its stored row (ts 2, v), a whole upsert of key 1 (ts 6), then a partial update
of key 1 (ts 8, w); inline compaction off.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.adapters.hudi_spark_reader import hudi_rows
from conformance.interface.adapter import Query
from reference.api import HudiTable
from spec.errors import InvalidTable, UnsupportedBlockContent
from spec.file_group.log_file.log_format import HeaderKey, read_blocks
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from tests.hudi_rs import hudi_rs_read
from tests.test_partial_update_blocks import _arrow

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROWS = [(1, "a", 5, "one", "w1"), (2, "a", 5, "two", "w2"), (3, "b", 5, "three", "w3")]
SCHEMA = "id int, p string, ts long, v string, w string"
OPTIONS = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.metadata.enable": "false",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.compact.inline": "false"}
META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


def _write(spark: Any, path: Path, name: str, rows: list[Any], operation: str, ordering: bool) -> None:
    opts = {**OPTIONS, "hoodie.table.name": name, "hoodie.datasource.write.operation": operation,
            **({"hoodie.datasource.write.precombine.field": "ts"} if ordering else {})}
    spark.createDataFrame(rows, SCHEMA).coalesce(1).write.format("hudi").options(**opts) \
        .mode("overwrite" if operation == "insert" else "append").save(str(path))


def _merge(spark: Any, name: str, rows: list[Any], assignments: str) -> None:
    spark.createDataFrame(rows, SCHEMA).createOrReplaceTempView(f"{name}_src")
    spark.sql(f"merge into {name} t using {name}_src s on t.id = s.id when matched then update set {assignments}")


def _hudi_partial_table(spark: Any, path: Path, name: str, ordering: bool = True) -> list[str]:
    """The table of the module docstring, written by Apache Hudi 1.2.0; its instants (requested times)."""
    _write(spark, path, name, ROWS, "insert", ordering)
    spark.sql(f"create table {name} using hudi location '{path}'")
    for key, value in (("hoodie.metadata.enable", "false"), ("hoodie.compact.inline", "false")):
        spark.sql(f"set {key}={value}")
    try:
        ts = "ts = s.ts, " if ordering else ""
        _merge(spark, name, [(3, "b", 7, "y", "-")], f"{ts}v = s.v")
        _merge(spark, name, [(3, "b", 9, "-", "ww")], f"{ts}w = s.w")
        _merge(spark, name, [(3, "b", 8, "-", "qq")], f"{ts}w = s.w")
        _merge(spark, name, [(2, "a", 2, "x", "-")], f"{ts}v = s.v")
        _write(spark, path, name, [(1, "a", 6, "full1", "wf1")], "upsert", ordering)
        _merge(spark, name, [(1, "a", 8, "-", "zz")], f"{ts}w = s.w")
    finally:
        for key in ("hoodie.metadata.enable", "hoodie.compact.inline"):
            spark.sql(f"reset {key}")
        spark.sql(f"drop table {name}")
    return [i.requested for i in Timeline.load(Storage(str(path))).commits_timeline().completed()]


def _by_key(rows: list[dict[str, Any]] | pa.Table | None, drop: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    listed = rows.to_pylist() if isinstance(rows, pa.Table) else rows or []
    return {r["_hoodie_record_key"]: {k: v for k, v in r.items() if k not in drop} for r in listed}


def _partial_blocks(path: Path) -> list[tuple[str, ...]]:
    """The columns of each data block flagged IS_PARTIAL."""
    import json

    out = []
    for log in sorted(path.glob("*/.*.log.*")):
        for r in read_blocks(log.read_bytes()):
            if r.block is not None and r.block.header_value(HeaderKey.IS_PARTIAL) == "true":
                out.append(tuple(f["name"] for f in json.loads(r.block.schema or "")["fields"]))
    return out


def test_partial_updates_read_and_compact_as_apache_hudi(apache_hudi: Any, tmp_path: Path) -> None:
    """Every column of every row (the meta columns too: a partial record's commit time, sequence number and file
    name, which is the file id, are the merged row's) is Hudi's, in a snapshot and as of two instants, and hudi-rs
    reads the same snapshot; compaction by Hudi and by us writes the same rows (but the file name)."""
    spark = apache_hudi
    path = tmp_path / "pu"
    instants = _hudi_partial_table(spark, path, "pu_event")
    assert set(_partial_blocks(path)) == {(*META, "ts", "v"), (*META, "ts", "w")}
    theirs = _by_key(hudi_rows(spark, str(path), Query("snapshot")))
    assert {k: (r["ts"], r["v"], r["w"]) for k, r in theirs.items()} == {
        "1": (8, "full1", "zz"), "2": (5, "two", "w2"), "3": (9, "y", "ww")}
    assert _by_key(read_table(str(path), "snapshot")) == theirs
    assert _by_key(hudi_rs_read(str(path))) == theirs
    for instant in (instants[2], instants[-2]):  # after two partial updates; before the last
        assert _by_key(read_table(str(path), "snapshot", as_of=instant)) == \
            _by_key(hudi_rows(spark, str(path), Query("time_travel", as_of=instant))), instant

    hudis, ours, continued = tmp_path / "hudi_compacted", tmp_path / "our_compacted", tmp_path / "continued"
    shutil.copytree(path, hudis)
    shutil.copytree(path, ours)
    shutil.copytree(path, continued)
    # our writer continues the table: a whole record of key 3 after its partial ones, of a smaller ordering value
    # than they merged to (the merged partial record stays), and one of key 2 of a greater one
    HudiTable(str(continued), engine="local").write(
        _arrow([(3, "b", 8, "eight", "w8"), (2, "a", 6, "six", "w6")]), "upsert",
        {**OPTIONS, "hoodie.table.name": "pu_event", "hoodie.datasource.write.precombine.field": "ts"})
    read_back = _by_key(hudi_rows(spark, str(continued), Query("snapshot")))
    assert {k: (r["ts"], r["v"], r["w"]) for k, r in read_back.items()} == {
        "1": (8, "full1", "zz"), "2": (6, "six", "w6"), "3": (9, "y", "ww")}
    assert _by_key(read_table(str(continued), "snapshot")) == read_back
    spark.sql(f"call run_compaction(op => 'scheduleAndExecute', path => '{hudis}')").collect()
    assert HudiTable(str(ours), engine="local").compact() is not None
    drop = ("_hoodie_file_name",)
    compacted = _by_key(read_table(str(hudis), "read_optimized"), drop)
    assert compacted == {k: {c: v for c, v in r.items() if c not in drop} for k, r in theirs.items()}
    assert _by_key(read_table(str(ours), "read_optimized"), drop) == compacted


@pytest.mark.explore
def test_hudi_rs_and_other_queries_on_partial_updates(apache_hudi: Any, tmp_path: Path) -> None:
    """Without an ordering field (commit-time ordering) the later record wins, a partial one filled from the
    other (hudi-rs reads the same rows); an incremental query: Hudi's answer and ours, or, for a window whose file
    slices lack the stored row of a partial record's key (those the window's files make), Hudi fails and the spec
    reader refuses (``UnsupportedBlockContent``); a record of a key after its delete in such a file group: Hudi
    fails, the spec reader refuses."""
    spark = apache_hudi
    path = tmp_path / "pu"
    instants = _hudi_partial_table(spark, path, "pu_commit", ordering=False)
    failed: list[str | None] = []
    theirs = _by_key(hudi_rows(spark, str(path), Query("snapshot")))
    assert {k: (r["ts"], r["v"], r["w"]) for k, r in theirs.items()} == {
        "1": (6, "full1", "zz"), "2": (5, "x", "w2"), "3": (5, "y", "qq")}
    assert _by_key(read_table(str(path), "snapshot")) == theirs
    # an incremental window whose slices lack the stored row of a partial record's key: Hudi fails the query
    # (ClassCastException, ArrayIndexOutOfBoundsException), the spec reader refuses it
    for begin in (None, *instants[:-1]):
        try:
            hudis = _by_key(hudi_rows(spark, str(path), Query("incremental", begin=begin)))
        except InvalidTable:
            with pytest.raises(UnsupportedBlockContent, match="partial-update record"):
                read_table(str(path), "incremental", begin=begin)
            failed.append(begin)
        else:
            assert _by_key(read_table(str(path), "incremental", begin=begin)) == hudis, begin
    assert None not in failed and failed
    assert _by_key(hudi_rs_read(str(path))) == theirs
    # a delete of key 2 after its partial record, then a whole record of key 2 again: Hudi fails to read the file
    # group (commit-time ordering; NullPointerException reading the log file), the spec reader refuses it
    spark.sql(f"create table pu_commit using hudi location '{path}'")
    for key, value in (("hoodie.metadata.enable", "false"), ("hoodie.compact.inline", "false")):
        spark.sql(f"set {key}={value}")
    try:
        spark.sql("delete from pu_commit where id = 2")
        assert "2" not in _by_key(read_table(str(path), "snapshot"))
        _write(spark, path, "pu_commit", [(2, "a", 1, "again", "wa")], "upsert", False)
    finally:
        for key in ("hoodie.metadata.enable", "hoodie.compact.inline"):
            spark.sql(f"reset {key}")
        spark.sql("drop table pu_commit")
    with pytest.raises(InvalidTable):
        hudi_rows(spark, str(path), Query("snapshot"))
    with pytest.raises(UnsupportedBlockContent, match="after its delete"):
        read_table(str(path), "snapshot")


@pytest.mark.explore
def test_partial_updates_after_a_column_is_added(apache_hudi: Any, tmp_path: Path) -> None:
    """``ALTER TABLE … ADD COLUMNS (x string)``, then partial updates of the new column and of an old one: the base
    file lacks ``x``, the partial records carry it; Hudi's reads and compaction and ours agree. (With
    ``hoodie.schema.on.read.enable`` Hudi refuses the partial ``MERGE INTO`` itself: "Partial updates are not
    supported for tables with schema on read evolution", measured.)"""
    spark = apache_hudi
    path = tmp_path / "pu"
    _write(spark, path, "pu_added", ROWS, "insert", True)
    spark.sql(f"create table pu_added using hudi location '{path}'")
    for key, value in (("hoodie.metadata.enable", "false"), ("hoodie.compact.inline", "false")):
        spark.sql(f"set {key}={value}")
    try:
        spark.sql("alter table pu_added add columns (x string)")
        for row, assignments in (((3, "b", 7, "X3"), "ts = s.ts, x = s.x"), ((3, "b", 8, "V3"), "ts = s.ts, v = s.x")):
            spark.createDataFrame([row], "id int, p string, ts long, x string").createOrReplaceTempView("pu_added_s")
            spark.sql(f"merge into pu_added t using pu_added_s s on t.id = s.id when matched then update set "
                      f"{assignments}")
    finally:
        for key in ("hoodie.metadata.enable", "hoodie.compact.inline"):
            spark.sql(f"reset {key}")
        spark.sql("drop table pu_added")
    assert set(_partial_blocks(path)) == {(*META, "ts", "x"), (*META, "ts", "v")}
    theirs = _by_key(hudi_rows(spark, str(path), Query("snapshot")))
    assert {k: (r["ts"], r["v"], r["x"]) for k, r in theirs.items()} == {
        "1": (5, "one", None), "2": (5, "two", None), "3": (8, "V3", "X3")}
    assert _by_key(read_table(str(path), "snapshot")) == theirs
    ours = tmp_path / "ours"
    shutil.copytree(path, ours)
    spark.sql("set hoodie.compact.inline.max.delta.commits=1")
    try:
        spark.sql(f"call run_compaction(op => 'scheduleAndExecute', path => '{path}')").collect()
    finally:
        spark.sql("reset hoodie.compact.inline.max.delta.commits")
    assert HudiTable(str(ours), engine="local").compact() is not None
    drop = ("_hoodie_file_name",)
    compacted = _by_key(read_table(str(path), "read_optimized"), drop)
    assert compacted["3"]["x"] == "X3"
    assert _by_key(read_table(str(ours), "read_optimized"), drop) == compacted


@pytest.mark.explore
def test_the_cdc_query_over_a_partial_update(apache_hudi: Any, tmp_path: Path) -> None:
    """A table with ``hoodie.table.cdc.enabled``: Hudi writes no CDC file for the partial ``MERGE INTO`` on
    merge-on-read and infers the change from the log block; its update's after image is the merged row (measured),
    as ours is (``spec.read.cdc``)."""
    import json

    from spec.read.cdc import read_cdc

    spark = apache_hudi
    path = tmp_path / "pu"
    opts = {**OPTIONS, "hoodie.table.name": "pu_cdc", "hoodie.datasource.write.operation": "insert",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.table.cdc.enabled": "true"}
    spark.createDataFrame(ROWS, SCHEMA).coalesce(1).write.format("hudi").options(**opts).mode("overwrite") \
        .save(str(path))
    spark.sql(f"create table pu_cdc using hudi location '{path}'")
    for key, value in (("hoodie.metadata.enable", "false"), ("hoodie.compact.inline", "false")):
        spark.sql(f"set {key}={value}")
    try:
        _merge(spark, "pu_cdc", [(3, "b", 7, "y", "-")], "ts = s.ts, v = s.v")
    finally:
        for key in ("hoodie.metadata.enable", "hoodie.compact.inline"):
            spark.sql(f"reset {key}")
        spark.sql("drop table pu_cdc")
    assert _partial_blocks(path) == [(*META, "ts", "v")]
    theirs = (spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental")
              .option("hoodie.datasource.query.incremental.format", "cdc")
              .option("hoodie.datasource.read.begin.instanttime", "0").load(str(path)).collect())
    (update,) = [json.loads(r["after"]) for r in theirs if r["op"] == "u"]
    (ours,) = [c.after for c in read_cdc(str(path), None, None) if c.op == "u"]
    assert ours is not None and (update["ts"], update["v"], update["w"]) == (7, "y", "w3")
    assert {k: ours[k] for k in update} == update
