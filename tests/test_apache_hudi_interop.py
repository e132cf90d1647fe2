"""Apache Hudi itself as the oracle: its Spark datasource (the released bundle ``make apache-hudi`` fetches)
runs in the test run's one Spark session, beside the reference writer.

- Apache Hudi writes small copy-on-write and merge-on-read tables (table versions 9, 8 and 6, through
  ``hoodie.write.table.version``): the spec reader reads every query type exactly as Hudi's own reader does,
  meta columns included, and both read what was written.
- The reference writer (``HudiTable`` on both engines, and ``hudi-spec write``) writes copy-on-write and
  merge-on-read tables of versions 6, 8 and 9: Hudi's datasource reads each query type (snapshot,
  read-optimized, incremental, time travel) as what was written, and as the spec reader does.

Every table lives in a folder whose name has a hyphen, a space and non-ASCII letters, and so do its
partition folders. Without the bundle these tests skip, in one line with the reason (``tests/conftest.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import main as hudi_spec
from reference.engines.spark_arrow import arrow_to_spark, spark_to_arrow
from spec.config.table_config import TableConfig
from spec.read.reader import read_table
from spec.schema.table_schema import META_FIELDS
from spec.timeline.active_timeline import Timeline

pytestmark = pytest.mark.spark

FOLDER = "tabla-ñ 東京"
"""The table folder's name: a hyphen, a space, non-ASCII letters."""
SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.string())])

# three writes: inserts into three partitions (folder names with a hyphen, a space, non-ASCII letters);
# an upsert that updates one record, loses one merge by ordering value and inserts one; a delete
BATCHES: tuple[tuple[str, tuple[tuple[int, str, int, str], ...]], ...] = (
    ("insert", ((1, "são-paulo", 1, "a1"), (2, "são-paulo", 1, "b1"), (3, "new york", 1, "c1"),
                (4, "東京", 1, "d1"))),
    ("upsert", ((2, "são-paulo", 2, "b2"), (3, "new york", 0, "c-lost"), (5, "東京", 2, "e2"))),
    ("delete", ((1, "são-paulo", 3, "a1"),)),
)
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


def options(table_type: str, version: int) -> dict[str, str]:
    """The table's write options, as a Spark user of Hudi gives them."""
    return {
        "hoodie.table.name": "interop",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.write.table.version": str(version),
    }


def batch(rows: Sequence[tuple[int, str, int, str]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], schema=SCHEMA)


def expected_after(writes: int) -> dict[int, dict[str, Any]]:
    """What the first ``writes`` batches leave, by key: the latest by ordering value (``ts``, ties to the
    later write), deletes removing; each row with the index of the write whose value it holds."""
    state: dict[int, dict[str, Any]] = {}
    for n, (op, rows) in enumerate(BATCHES[:writes]):
        for row in batch(rows).to_pylist():
            if op == "delete":
                state.pop(row["id"], None)
            elif row["id"] not in state or row["ts"] >= state[row["id"]]["ts"]:
                state[row["id"]] = {**row, "write": n}
    return state


def lost_merges() -> list[dict[str, Any]]:
    """The records a later write sent that lost their merge by ordering value (``ts``): on merge-on-read
    they are in the log files of that write, and an incremental query returns them as they were written —
    Apache Hudi's (``MergeOnReadIncrementalRelationV2``: the window's own log blocks, not merged with the
    base files before the window) and, following it, the spec reader's (``spec.read.query_plan``)."""
    lost = []
    for n, (op, rows) in enumerate(BATCHES):
        before = expected_after(n)
        lost += [r for r in batch(rows).to_pylist()
                 if op != "delete" and n > 0 and r["id"] in before and r["ts"] < before[r["id"]]["ts"]]
    return lost


def data_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The data columns of rows, ordered by key."""
    return sorted(({k: r[k] for k in SCHEMA.names} for r in rows), key=lambda r: r["id"])


def full_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Every row with the meta columns and the data columns, ordered by record key."""
    if not table.num_columns:
        return []
    names = [*META_FIELDS, *SCHEMA.names]
    return sorted(table.select(names).to_pylist(), key=lambda r: r["id"])


def hudi_read(spark: Any, path: Path, query: str = "snapshot", as_of: str | None = None,
              begin: str | None = None, end: str | None = None) -> pa.Table:
    """Apache Hudi's own read of the table (its Spark datasource), as Arrow."""
    reader = spark.read.format("hudi")
    if query == "read_optimized":
        reader = reader.option("hoodie.datasource.query.type", "read_optimized")
    elif query == "incremental":
        reader = reader.option("hoodie.datasource.query.type", "incremental").option(
            "hoodie.datasource.read.begin.instanttime", begin)
        if end is not None:
            reader = reader.option("hoodie.datasource.read.end.instanttime", end)
    if as_of is not None:
        reader = reader.option("as.of.instant", as_of)
    return spark_to_arrow(reader.load(str(path)))


def writes(path: Path) -> list[str]:
    """The completion time of each completed write, oldest first (the requested time in layout 1)."""
    timeline = Timeline.load(str(path)).commits_timeline().completed()
    return [timeline.completion_time(i.requested) or i.requested for i in timeline
            if i.action in ("commit", "deltacommit")]


def check_every_query(spark: Any, path: Path, compacted: bool = False) -> None:
    """Hudi's datasource and the spec reader read each query type alike (every column), and read what was
    written: the snapshot, time travel to every write, and the incremental query after the first write."""
    done = writes(path)
    assert len(done) == len(BATCHES) + compacted
    # snapshot: as written, read alike
    theirs = full_rows(hudi_read(spark, path))
    assert theirs == full_rows(read_table(str(path)))
    assert data_rows(theirs) == data_rows(list(expected_after(len(BATCHES)).values()))
    # time travel to each write
    for n, instant in enumerate(done[:len(BATCHES)], start=1):
        theirs = full_rows(hudi_read(spark, path, as_of=instant))
        assert theirs == full_rows(read_table(str(path), as_of=instant)), instant
        assert data_rows(theirs) == data_rows(list(expected_after(n).values())), instant
    # incremental after the first write, read alike: the latest version of each record a later write changed
    # and, on merge-on-read before a compaction, the log records of the window that lost their merge (once
    # compacted, the base files hold the merged records and both read them alone)
    mor = TableConfig.load(str(path)).table_type == "MERGE_ON_READ" and not compacted
    theirs = full_rows(hudi_read(spark, path, "incremental", begin=done[0]))
    ours = full_rows(read_table(str(path), "incremental", begin=done[0]))
    assert sorted(theirs, key=repr) == sorted(ours, key=repr)
    assert all(r["_hoodie_commit_time"] > done[0] for r in ours)
    changed = [r for r in expected_after(len(BATCHES)).values() if r["write"] > 0]
    expected = data_rows(changed) + (data_rows(lost_merges()) if mor else [])
    assert sorted(data_rows(ours), key=repr) == sorted(expected, key=repr)
    # read-optimized: the base files, read alike; for copy-on-write (or once compacted) the snapshot
    theirs = full_rows(hudi_read(spark, path, "read_optimized"))
    assert theirs == full_rows(read_table(str(path), "read_optimized"))
    if compacted or TableConfig.load(str(path)).table_type == "COPY_ON_WRITE":
        assert data_rows(theirs) == data_rows(list(expected_after(len(BATCHES)).values()))


# --- Apache Hudi writes, the spec reader reads ------------------------------------------------------


@pytest.mark.parametrize("version", [9, 8, 6])
@pytest.mark.parametrize("table_type", TYPES)
def test_the_spec_reader_reads_apache_hudis_tables_as_hudi_does(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                                 version: int) -> None:
    path = tmp_path / FOLDER
    for op, rows in BATCHES:
        (arrow_to_spark(apache_hudi, batch(rows)).write.format("hudi").options(**options(table_type, version))
         .option("hoodie.datasource.write.operation", op).mode("append").save(str(path)))
    config = TableConfig.load(str(path))
    assert (config.table_version, config.table_type) == (version, table_type)
    assert {p.name for p in path.iterdir()} >= {"são-paulo", "new york", "東京"}
    check_every_query(apache_hudi, path)


# --- the reference writer writes, Apache Hudi reads -------------------------------------------------


def write_ours(spark: Any, path: Path, engine: str, table_type: str, version: int) -> None:
    table = HudiTable(str(path), spark=spark if engine == "spark" else None, engine=engine)
    for op, rows in BATCHES:
        table.write(batch(rows), op, options(table_type, version))


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("table_type", TYPES)
@pytest.mark.parametrize("engine", ["local", "spark"])
def test_apache_hudi_reads_the_reference_writers_tables_as_written(apache_hudi: Any, tmp_path: Path, engine: str,
                                                                  table_type: str, version: int) -> None:
    path = tmp_path / FOLDER
    write_ours(apache_hudi, path, engine, table_type, version)
    assert TableConfig.load(str(path)).table_version == version
    check_every_query(apache_hudi, path)


@pytest.mark.parametrize("version", [6, 8, 9])
def test_apache_hudi_reads_a_merge_on_read_table_the_reference_writer_compacted(apache_hudi: Any, tmp_path: Path,
                                                                                 version: int) -> None:
    path = tmp_path / FOLDER
    write_ours(apache_hudi, path, "local", "MERGE_ON_READ", version)
    assert HudiTable(str(path), engine="local").compact() is not None
    check_every_query(apache_hudi, path, compacted=True)


@pytest.mark.parametrize("table_type", TYPES)
def test_apache_hudi_reads_what_hudi_spec_write_wrote(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / FOLDER
    for n, (op, rows) in enumerate(BATCHES):
        source = tmp_path / f"batch-{n}.json"
        source.write_text("".join(json.dumps(r) + "\n" for r in batch(rows).to_pylist()))
        code = hudi_spec(["write", str(path), "--input", str(source), "--operation", op, "--record-key", "id",
                          "--ordering-field", "ts", "--partition-field", "p", "--table-type", table_type,
                          "--table-version", "9", "--table-name", "interop", "--engine", "local"])
        assert code == 0, capsys.readouterr().err
    check_every_query(apache_hudi, path)


# every operation of `hudi-spec write`, one after the other, with what each leaves (by key: partition, value)
EVERY_OPERATION: tuple[tuple[str, tuple[tuple[int, str, int, str], ...], dict[str, str], dict[int, str]], ...] = (
    ("bulk_insert", ((1, "são-paulo", 1, "a1"), (2, "são-paulo", 1, "b1"), (3, "new york", 1, "c1"),
                     (4, "東京", 1, "d1")), {}, {1: "a1", 2: "b1", 3: "c1", 4: "d1"}),
    ("insert", ((6, "東京", 1, "f1"),), {}, {1: "a1", 2: "b1", 3: "c1", 4: "d1", 6: "f1"}),
    ("upsert", ((2, "são-paulo", 2, "b2"), (4, "東京", 0, "d-lost")), {},
     {1: "a1", 2: "b2", 3: "c1", 4: "d1", 6: "f1"}),
    ("delete", ((6, "東京", 2, "f1"),), {}, {1: "a1", 2: "b2", 3: "c1", 4: "d1"}),
    ("insert_overwrite", ((7, "são-paulo", 1, "g1"),), {}, {3: "c1", 4: "d1", 7: "g1"}),
    ("delete_partition", ((3, "new york", 1, "c1"),), {"hoodie.datasource.write.partitions.to.delete": "new york"},
     {4: "d1", 7: "g1"}),
    ("insert_overwrite_table", ((8, "東京", 1, "h1"),), {}, {8: "h1"}),
)


@pytest.mark.slow
@pytest.mark.parametrize("version", [9, 8, 6])
@pytest.mark.parametrize("table_type", TYPES)
def test_apache_hudi_reads_every_operation_hudi_spec_write_wrote(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                                 version: int,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every operation of ``hudi-spec write`` (COW and MOR, versions 9, 8 and 6), in a folder whose name has a
    hyphen, a space and non-ASCII letters: after each, Apache Hudi's snapshot is what was written."""
    path = tmp_path / FOLDER
    for n, (op, rows, opts, after) in enumerate(EVERY_OPERATION):
        source = tmp_path / f"batch-{n}.json"
        source.write_text("".join(json.dumps(r) + "\n" for r in batch(rows).to_pylist()))
        extra = [a for k, v in opts.items() for a in ("--option", f"{k}={v}")]
        code = hudi_spec(["write", str(path), "--input", str(source), "--operation", op, "--record-key", "id",
                          "--ordering-field", "ts", "--partition-field", "p", "--table-type", table_type,
                          "--table-version", str(version), "--table-name", "interop", "--engine", "local", *extra])
        assert code == 0, capsys.readouterr().err
        theirs = {r["id"]: r["v"] for r in hudi_read(apache_hudi, path).to_pylist()}
        assert theirs == after, op
    assert TableConfig.load(str(path)).table_version == version
