"""Update and delete by a condition, and tables with auto-generated keys, against Apache Hudi 1.2.0.

``HudiTable.update`` / ``HudiTable.delete`` (``reference.commands._update_delete``) on a copy of a table Apache Hudi
wrote, and Spark SQL's ``UPDATE t SET … WHERE …`` / ``DELETE FROM t WHERE …`` on Apache Hudi 1.2.0 on another copy:
the same rows remain (every column but the commit time, sequence number and file name, which name each writer's
own instant), and the same file groups are written (the write stats of the commit's metadata). Copy-on-write and
merge-on-read; a table with a record key field and one with auto-generated keys (``spec.keygen.auto_record_key``,
where both writers take each row's key from ``_hoodie_record_key``).

Then a table with auto-generated keys written in turn by Apache Hudi and by us: every reader (Hudi's datasource,
hudi-rs and the spec reader) reads every row written, each key in Hudi's format.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.hudi_spark_reader import hudi_rows
from conformance.interface.adapter import Query
from reference.api import HudiTable
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import read_instant_content
from tests.hudi_rs import hudi_rs_read

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROWS = [(1, "a", 1, "one"), (2, "a", 1, "two"), (3, "b", 1, "three"), (4, "b", 1, "four"), (5, "c", 1, "five")]
OWN = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")


NO_METADATA = {"hoodie.metadata.enable": "false"}
"""The comparisons run without a metadata table: quicker, and what they compare is in the data files and the
commit's metadata."""


def _hudi_table(spark: Any, path: Path, table_type: str, keyed: bool, metadata: bool = True) -> None:
    """Apache Hudi writes three partitions, two Spark partitions of input."""
    df = spark.createDataFrame(ROWS, "id int, p string, ts long, v string").repartition(2)
    opts = {"hoodie.table.name": "ud", "hoodie.datasource.write.table.type": table_type,
            **({} if metadata else NO_METADATA),
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "insert"}
    if keyed:
        opts |= {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts"}
    df.write.format("hudi").options(**opts).mode("overwrite").save(str(path))


def _rows(path: Path) -> list[tuple[Any, ...]]:
    """Every row, its values by column name (Hudi's ``MERGE INTO`` writes the catalog's column order, partition
    columns last)."""
    table = read_table(str(path), "snapshot")
    names = sorted(c for c in table.column_names if c not in OWN)
    return sorted(tuple(r[c] for c in names) for r in table.to_pylist())


def _written_groups(path: Path) -> tuple[str | None, set[tuple[str, str, int, int, int]]]:
    """The latest commit's operation type, and (partition, file id, writes, updates, deletes) of each write stat."""
    storage = Storage(str(path))
    timeline = Timeline.load(storage)
    latest = timeline.commits_timeline().latest_completed()
    assert latest is not None
    md = parse_commit_metadata(read_instant_content(storage, latest, timeline.layout))
    return md.operation_type, {(s.partition_path, s.file_id, s.num_writes, s.num_updates, s.num_deletes)
                               for s in md.all_write_stats()}


_STATEMENTS = [
    ("update", "p = 'a' OR id = 4", "v = 'changed'"),
    ("delete", "id IN (2, 3)", None),
]


EXPLORE = pytest.mark.explore
"""Rounds ``make slow`` alone runs: CI runs one round per table type, each engine once."""


@pytest.mark.parametrize(("table_type", "keyed", "engine"), [
    ("COPY_ON_WRITE", True, "local"), pytest.param("MERGE_ON_READ", True, "spark", marks=EXPLORE),
    pytest.param("COPY_ON_WRITE", False, "spark", marks=EXPLORE), ("MERGE_ON_READ", False, "spark")])
def test_update_and_delete_match_spark_sql_on_apache_hudi(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                          keyed: bool, engine: str) -> None:
    spark = apache_hudi
    original = tmp_path / "hudi"
    _hudi_table(spark, original, table_type, keyed, metadata=False)
    theirs, ours = tmp_path / "sql", tmp_path / "ours"
    shutil.copytree(original, theirs)
    shutil.copytree(original, ours)
    name = f"ud_{table_type.lower()}_{int(keyed)}_{engine}"
    spark.sql(f"create table {name} using hudi location '{theirs}'")
    spark.sql("set hoodie.metadata.enable=false")
    try:
        for verb, where, assignments in _STATEMENTS:
            if verb == "update":
                spark.sql(f"update {name} set {assignments} where {where}")
                result = HudiTable(str(ours), spark=spark if engine == "spark" else None,
                                   engine=engine).update(where, assignments or "", NO_METADATA)
            else:
                spark.sql(f"delete from {name} where {where}")
                result = HudiTable(str(ours), spark=spark if engine == "spark" else None,
                                   engine=engine).delete(where, NO_METADATA)
            assert result is not None
            assert _rows(ours) == _rows(theirs), verb
            assert _written_groups(ours) == _written_groups(theirs), verb
    finally:
        spark.sql("reset hoodie.metadata.enable")
        spark.sql(f"drop table if exists {name}")
    assert not (ours / ".hoodie" / "metadata").exists() and not (theirs / ".hoodie" / "metadata").exists()
    remaining = {r["id"]: r["v"] for r in read_table(str(ours), "snapshot").to_pylist()}
    assert remaining == {1: "changed", 4: "changed", 5: "five"}  # the statements did something


@pytest.mark.parametrize(("table_type", "ts", "engine"), [
    ("COPY_ON_WRITE", 2, "local"), pytest.param("MERGE_ON_READ", 2, "spark", marks=EXPLORE),
    pytest.param("COPY_ON_WRITE", 0, "local", marks=EXPLORE)])
def test_merge_matches_spark_sql_merge_into_on_apache_hudi(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                           ts: int, engine: str) -> None:
    """``HudiTable.merge`` and ``MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT
    MATCHED THEN INSERT *``: the same rows (by column name: Hudi's statement writes the catalog's column order,
    partition columns last), the same write stats, the same operation (``UPSERT``); a source row whose ordering
    value is below the stored row's (``ts`` 0) too."""
    spark = apache_hudi
    original = tmp_path / "hudi"
    _hudi_table(spark, original, table_type, True, metadata=False)
    theirs, ours = tmp_path / "sql", tmp_path / "ours"
    shutil.copytree(original, theirs)
    shutil.copytree(original, ours)
    source = [(1, "a", ts, "ONE"), (6, "c", ts, "six")]
    name = f"mg_{table_type.lower()}_{ts}"
    spark.sql(f"create table {name} using hudi location '{theirs}'")
    spark.sql("set hoodie.metadata.enable=false")
    try:
        spark.createDataFrame(source, "id int, p string, ts long, v string").createOrReplaceTempView(f"{name}_src")
        spark.sql(f"merge into {name} t using {name}_src s on t.id = s.id "
                  "when matched then update set * when not matched then insert *")
    finally:
        spark.sql("reset hoodie.metadata.enable")
        spark.sql(f"drop table if exists {name}")
    result = HudiTable(str(ours), spark=spark if engine == "spark" else None, engine=engine).merge(
        _arrow(source), NO_METADATA)
    assert result is not None
    assert _rows(ours) == _rows(theirs)
    assert _written_groups(ours) == _written_groups(theirs)
    ids = {r["id"]: r["v"] for r in read_table(str(ours), "snapshot").to_pylist()}
    assert ids[6] == "six" and ids[1] == ("ONE" if ts >= 1 else "one")


KEY = re.compile(r"^(\d{17})_(\d+)_(\d+)$")


@pytest.mark.parametrize(("table_type", "creator"), [("MERGE_ON_READ", "hudi"), ("COPY_ON_WRITE", "ours"),
                                                     pytest.param("COPY_ON_WRITE", "hudi", marks=EXPLORE),
                                                     pytest.param("MERGE_ON_READ", "ours", marks=EXPLORE)])
def test_keyless_tables_continue_each_other(apache_hudi: Any, tmp_path: Path, table_type: str, creator: str) -> None:
    """Hudi or we create a keyless table, we insert (local engine) and upsert (Spark engine), Hudi inserts: Hudi's
    datasource, hudi-rs and the spec reader read the same rows, every row written once, and every key is
    ``<instant>_<input partition>_<row>`` of the commit that wrote it."""
    spark = apache_hudi
    path = tmp_path / "keyless"
    if creator == "hudi":
        _hudi_table(spark, path, table_type, keyed=False)
    else:
        HudiTable(str(path), engine="local").write(_arrow(ROWS), "insert", {
            "hoodie.table.name": "ud", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.partitionpath.field": "p"})
    HudiTable(str(path), engine="local").write(_arrow([(6, "a", 2, "six"), (7, "d", 2, "seven")]), "insert")
    HudiTable(str(path), spark=spark, engine="spark").write(_arrow([(8, "a", 3, "eight")]), "upsert")
    spark.createDataFrame([(9, "b", 4, "nine")], "id int, p string, ts long, v string").write.format("hudi") \
        .options(**{"hoodie.datasource.write.operation": "insert", "hoodie.table.name": "ud"}).mode("append") \
        .save(str(path))
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.recordkey.fields" not in props
    if creator == "ours":  # once a table type in CI
        _both_refuse(spark, path)
    ours = read_table(str(path), "snapshot").to_pylist()
    theirs = hudi_rows(spark, str(path), Query("snapshot"))
    rs = hudi_rs_read(str(path))
    shown = ("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time", "id", "p", "v")
    expected = sorted(tuple(r[c] for c in shown) for r in ours)
    assert expected == sorted(tuple(r[c] for c in shown) for r in theirs)  # Apache Hudi's datasource
    assert rs is not None and expected == sorted(tuple(r[c] for c in shown) for r in rs.to_pylist())  # hudi-rs
    assert sorted(r["id"] for r in ours) == list(range(1, 10))
    keys = [r["_hoodie_record_key"] for r in ours]
    assert len(set(keys)) == len(keys)
    for r in ours:
        m = KEY.match(r["_hoodie_record_key"])
        assert m is not None and m.group(1) == r["_hoodie_commit_time"], r
    by_id = {r["id"]: r["_hoodie_record_key"] for r in ours}
    assert by_id[6].endswith("_0_0") and by_id[7].endswith("_0_1")  # the local engine: one input partition, 0


def _both_refuse(spark: Any, path: Path) -> None:
    """What Apache Hudi refuses on a keyless table, we refuse: ``hoodie.combine.before.insert`` (the same message),
    a delete of rows that do not carry their keys (Hudi's task fails on the generated key's missing partition id;
    ours is an ``InvalidOperation`` before anything is written). Neither writes a commit."""
    from spec.errors import InvalidOperation, UnsupportedOption

    before = read_table(str(path), "snapshot").num_rows
    one = spark.createDataFrame([(1, "a", 9, "x")], "id int, p string, ts long, v string")
    combine = {"hoodie.combine.before.insert": "true"}
    for operation, extra, ours_error, hudi_text in [
            ("insert", combine, UnsupportedOption, "Enabling hoodie.combine.before.insert is not supported with auto "
                                                   "generation of record keys"),
            ("delete", {}, InvalidOperation, "_hoodie.record.key.gen.partition.id")]:
        with pytest.raises(Exception) as hudi_error:
            one.write.format("hudi").options(**{"hoodie.datasource.write.operation": operation,
                                                "hoodie.table.name": "ud", **extra}).mode("append").save(str(path))
        assert hudi_text in str(hudi_error.value), operation
        with pytest.raises(ours_error) as our_error:
            HudiTable(str(path), engine="local").write(_arrow([(1, "a", 9, "x")]), operation, extra)
        assert operation != "insert" or hudi_text in str(our_error.value)
    assert read_table(str(path), "snapshot").num_rows == before


def _arrow(rows: list[tuple[int, str, int, str]]) -> Any:
    import pyarrow as pa

    return pa.table({"id": pa.array([r[0] for r in rows], pa.int32()), "p": [r[1] for r in rows],
                     "ts": [r[2] for r in rows], "v": [r[3] for r in rows]})
