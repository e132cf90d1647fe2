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


SOURCE = [(1, "a", 2, "ONE"), (3, "b", 2, "x"), (6, "c", 2, "six"), (7, "a", 2, "x")]
"""A merge's source: keys 1 and 3 the table holds (partitions a and b), 6 and 7 new (c and a)."""

MERGE_FORMS: list[tuple[str, list[str], list[str], int]] = [
    # (ON, WHEN MATCHED clauses, WHEN NOT MATCHED clauses, the source's ordering value)
    ("t.id = s.id", ["UPDATE SET *"], [], 2),  # 6 and 7 ignored: group c is rewritten as it was
    ("t.id = s.id", [], ["INSERT *"], 2),  # 1 and 3 ignored: copy-on-write rewrites group b, merge-on-read does not
    ("t.id = s.id", ["DELETE"], [], 0),  # deletes whatever the ordering value
    ("t.id = s.id AND t.p = s.p", ["AND s.v = 'x' THEN DELETE", "UPDATE SET *"], ["AND s.v != 'x' THEN INSERT *"], 2),
    ("t.id = s.id", ["UPDATE SET id = s.id, p = s.p, ts = s.ts, v = 'u'"],
     ["INSERT (id, p, ts) VALUES (s.id, s.p, s.ts)"], 2),
    ("t.id = s.id", ["UPDATE SET *"], [], 0),  # the stored rows win by ordering value
]
"""Forms of MERGE INTO on both table types (in Hudi's SQL: ``WHEN MATCHED <clause>``, ``WHEN NOT MATCHED <clause>``)."""

COW_MERGE_FORMS = [("t.id = s.id", ["AND t.v = 'one' THEN UPDATE SET ts = s.ts, v = t.p"], [], 2),
                   ("t.id = s.id", ["AND s.v = 'x' THEN UPDATE SET ts = s.ts, v = s.v"], [], 2)]
"""Forms copy-on-write alone takes: target columns in a condition or a value, an UPDATE of some columns."""


def _sql_clause(clause: str) -> str:
    return clause if clause.upper().startswith("AND ") else f"THEN {clause}"


@pytest.mark.parametrize(("table_type", "engine"), [
    ("COPY_ON_WRITE", "local"), ("MERGE_ON_READ", "spark"),
    pytest.param("COPY_ON_WRITE", "spark", marks=EXPLORE), pytest.param("MERGE_ON_READ", "local", marks=EXPLORE)])
def test_merge_forms_match_spark_sql_merge_into_on_apache_hudi(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                               engine: str) -> None:
    """Each form of ``MERGE INTO`` (``reference.commands._merge``) on a copy of a table Apache Hudi wrote, and the same
    statement in Spark SQL on Apache Hudi 1.2.0 on another: the same rows, the same file groups written with the same
    counts (a source record no clause takes included), ``UPSERT``; then what both refuse, refused by both."""
    from spec.errors import InvalidOperation

    spark = apache_hudi
    original = tmp_path / "hudi"
    _hudi_table(spark, original, table_type, True, metadata=False)
    forms = MERGE_FORMS + (COW_MERGE_FORMS if table_type == "COPY_ON_WRITE" else [])
    spark.sql("set hoodie.metadata.enable=false")
    try:
        for n, (on, matched, not_matched, ts) in enumerate(forms):
            theirs, ours = tmp_path / f"sql{n}", tmp_path / f"ours{n}"
            shutil.copytree(original, theirs)
            shutil.copytree(original, ours)
            source = [(i, p, ts, v) for i, p, _, v in SOURCE]
            name = f"mf_{table_type.lower()}_{engine}_{n}"
            spark.createDataFrame(source, "id int, p string, ts long, v string").createOrReplaceTempView(f"{name}_s")
            spark.sql(f"create table {name} using hudi location '{theirs}'")
            clauses = " ".join([f"when matched {_sql_clause(c)}" for c in matched]
                               + [f"when not matched {_sql_clause(c)}" for c in not_matched])
            spark.sql(f"merge into {name} t using {name}_s s on {on} {clauses}")
            spark.sql(f"drop table {name}")
            HudiTable(str(ours), spark=spark if engine == "spark" else None, engine=engine).merge(
                _arrow(source), NO_METADATA, on=on, when_matched=matched, when_not_matched=not_matched)
            assert _rows(ours) == _rows(theirs), (on, matched, not_matched)
            assert _written_groups(ours) == _written_groups(theirs), (on, matched, not_matched)
            assert _written_groups(ours)[0] == "UPSERT"
            assert _rows(theirs) != _rows(original) or (ts == 0 and matched == ["UPDATE SET *"]), "it changed rows"
        refused = [(["AND s.v = 'x' THEN DELETE", "DELETE"], [], "Only one deleting action"),
                   (["UPDATE SET v = s.v"], [], "No matching assignment found for target table ordering field"),
                   ([], ["INSERT (id, p, v) VALUES (s.id, s.p, s.v)"], "No matching assignment found")]
        if table_type == "MERGE_ON_READ":
            refused.append((["UPDATE SET id = s.id, p = s.p, ts = s.ts, v = t.v"], [], "cannot be the right-value"))
        table = tmp_path / "refused"
        shutil.copytree(original, table)
        spark.sql(f"create table mf_refused using hudi location '{table}'")
        for matched, not_matched, text in refused:
            clauses = " ".join([f"when matched {_sql_clause(c)}" for c in matched]
                               + [f"when not matched {_sql_clause(c)}" for c in not_matched])
            with pytest.raises(Exception) as hudi_error:
                spark.sql(f"merge into mf_refused t using mf_{table_type.lower()}_{engine}_0_s s on t.id = s.id "
                          f"{clauses}")
            assert text in str(hudi_error.value), (matched, not_matched)
            with pytest.raises(InvalidOperation, match=text):
                HudiTable(str(table), engine="local").merge(_arrow(SOURCE), NO_METADATA, when_matched=matched,
                                                            when_not_matched=not_matched)
        spark.sql("drop table mf_refused")
        assert _rows(table) == _rows(original)
    finally:
        spark.sql("reset hoodie.metadata.enable")


@pytest.mark.explore
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_forms_we_refuse_are_surprising_in_apache_hudi(apache_hudi: Any, tmp_path: Path, table_type: str) -> None:
    """What ``reference.commands._merge`` refuses although Apache Hudi 1.2.0 runs it, and why: ``ON`` on no record
    key still matches by key; assigning the record key or the partition field keeps the row's key and file group;
    on merge-on-read, a condition on a target column does not see the stored row of a record routed to a log file."""
    from spec.errors import InvalidOperation

    spark = apache_hudi
    original = tmp_path / "hudi"
    _hudi_table(spark, original, table_type, True, metadata=False)
    spark.createDataFrame(SOURCE, "id int, p string, ts long, v string").createOrReplaceTempView("sf_s")
    cases: list[tuple[str, str, Any]] = [
        ("t.v = s.v", "update set *", lambda rows: (1, "a", 2, "ONE") in rows),  # no v matched, yet 1 was updated
        ("t.id = s.id", "update set id = s.id, ts = s.ts, v = s.v, p = 'c'", lambda rows: (1, "c", 2, "ONE") in rows),
    ]
    if table_type == "COPY_ON_WRITE":
        cases.append(("t.id = s.id", "update set p = s.p, ts = s.ts, v = s.v, id = s.id + 10",
                      lambda rows: (11, "a", 2, "ONE") in rows))
    else:
        cases.append(("t.id = s.id", "and t.v = 'three' then update set *",
                      lambda rows: (3, "b", 1, "three") in rows))  # its condition held, yet it was not updated
    for n, (on, clause, surprising) in enumerate(cases):
        path = tmp_path / f"c{n}"
        shutil.copytree(original, path)
        spark.sql(f"create table sf_{n} using hudi location '{path}'")
        when = clause if clause.startswith("and ") else f"then {clause}"
        spark.sql(f"merge into sf_{n} t using sf_s s on {on} when matched {when}")
        spark.sql(f"drop table sf_{n}")
        rows = sorted(tuple(r.values()) for r in read_table(str(path), "snapshot").select(["id", "p", "ts", "v"])
                      .to_pylist())
        assert surprising(rows), (on, clause, rows)
        ours = tmp_path / f"o{n}"
        shutil.copytree(original, ours)
        ours_clause = clause.replace("update set", "UPDATE SET").replace("and t.v", "AND t.v").replace(
            "then", "THEN").replace("s.id + 10", "s.id")
        if "+ 10" in clause:
            ours_clause = "UPDATE SET p = s.p, ts = s.ts, v = s.v, id = 11"
        with pytest.raises(InvalidOperation, match=r"Apache Hudi 1\.2\.0"):
            HudiTable(str(ours), engine="local").merge(_arrow(SOURCE), NO_METADATA, on=on, when_matched=[ours_clause])
        assert _rows(ours) == _rows(original)


@pytest.mark.explore
def test_apache_hudis_partial_update_blocks_are_read_as_hudi_reads_them(apache_hudi: Any, tmp_path: Path) -> None:
    """``MERGE INTO … WHEN MATCHED THEN UPDATE SET ts = s.ts, v = s.v`` on merge-on-read: Apache Hudi 1.2.0 writes a
    log block flagged ``IS_PARTIAL`` (the meta columns, ts and v) and reads the row merged with the stored one; the
    spec reader reads the same rows (``spec.read.merge.merge_partial``), while our ``merge`` refuses to write that
    form (it writes whole records alone)."""
    from spec.errors import InvalidOperation

    spark = apache_hudi
    path = tmp_path / "partial"
    _hudi_table(spark, path, "MERGE_ON_READ", True, metadata=False)
    spark.createDataFrame([(3, "b", 2, "x")], "id int, p string, ts long, v string").createOrReplaceTempView("pu_s")
    spark.sql(f"create table pu using hudi location '{path}'")
    spark.sql("set hoodie.metadata.enable=false")
    try:
        spark.sql("merge into pu t using pu_s s on t.id = s.id when matched then update set ts = s.ts, v = s.v")
    finally:
        spark.sql("reset hoodie.metadata.enable")
        spark.sql("drop table pu")
    theirs = hudi_rows(spark, str(path), Query("snapshot"))
    assert {r["id"]: r["v"] for r in theirs}[3] == "x" and len(theirs) == 5
    key = "_hoodie_record_key"
    assert sorted(read_table(str(path), "snapshot").to_pylist(), key=lambda r: r[key]) == \
        sorted(theirs, key=lambda r: r[key])
    with pytest.raises(InvalidOperation, match="partial-update log block"):
        HudiTable(str(path), engine="local").merge(_arrow([(3, "b", 2, "x")]),
                                                   when_matched=["UPDATE SET ts = s.ts, v = s.v"])
