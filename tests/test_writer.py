"""The reference COW writer: every operation, table versions 6 and 8, three key layouts.

After every write, the rows hudi-rs reads, the rows our spec reader reads, and the rows an
independent model of the operations predicts (written here, in the test) must be equal, and
``hudi-conformance check`` must pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.checker import check_table
from reference.api import HudiTable
from spec.errors import InvalidConfig, InvalidRecord, SchemaMismatch
from spec.read.reader import read_table
from spec.storage.lock import LOCKS_FOLDER as LOCKS  # the table lock: coordination, not table content
from tests.hudi_rs import hudi_rs_read

pytestmark = pytest.mark.spark

LAYOUTS = {
    "partitioned": {"hoodie.datasource.write.recordkey.field": "id",
                    "hoodie.datasource.write.partitionpath.field": "city",
                    "hoodie.datasource.write.hive_style_partitioning": "true"},
    "non_partitioned": {"hoodie.datasource.write.recordkey.field": "id"},
    "complex_key": {"hoodie.datasource.write.recordkey.field": "id,name",
                    "hoodie.datasource.write.partitionpath.field": "city,zone"},
}


def rows(ids: list[int], ts: int, city: str = "sf", zone: str = "z1") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "city": [city] * len(ids),
                     "zone": [zone] * len(ids), "v": [f"v{i}@{ts}" for i in ids]})


class Model:
    """What the table must hold: (partition, key) → row, computed from the operations alone."""

    def __init__(self, layout: str) -> None:
        self.layout = layout
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}

    def key(self, r: dict[str, Any]) -> tuple[str, str]:
        if self.layout == "partitioned":
            return f"city={r['city']}", str(r["id"])
        if self.layout == "non_partitioned":
            return "", str(r["id"])
        return f"{r['city']}/{r['zone']}", f"id:{r['id']},name:{r['name']}"

    def apply(self, op: str, table: pa.Table | None, partitions: list[str] | None = None) -> None:
        incoming = table.to_pylist() if table is not None else []
        if op in ("upsert", "insert", "bulk_insert"):
            for r in incoming:
                k = self.key(r)
                old = self.rows.get(k)
                if op != "upsert" or old is None or old["ts"] <= r["ts"]:
                    self.rows[k] = r
        elif op == "delete":
            for r in incoming:
                self.rows.pop(self.key(r), None)
        elif op == "insert_overwrite":
            parts = {self.key(r)[0] for r in incoming}
            self.rows = {k: v for k, v in self.rows.items() if k[0] not in parts}
            self.apply("insert", table)
        elif op == "insert_overwrite_table":
            self.rows = {}
            self.apply("insert", table)
        elif op == "delete_partition":
            self.rows = {k: v for k, v in self.rows.items() if k[0] not in set(partitions or [])}

    def expected(self) -> list[tuple[str, str, str]]:
        return sorted((p, k, r["v"]) for (p, k), r in self.rows.items())


def observed(table: pa.Table | None) -> list[tuple[str, str, str]]:
    if table is None or table.num_columns == 0:
        return []
    return sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"]) for r in table.to_pylist())


@pytest.mark.parametrize(("version", "index"), [("6", "BLOOM"), ("8", "BLOOM"), ("6", "SIMPLE")])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_operation_reads_the_same_everywhere(spark: Any, tmp_path: Path, version: str, index: str,
                                                   layout: str) -> None:
    path = str(tmp_path / "t")
    table = HudiTable(path, spark)
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.write.table.version": version, "hoodie.index.type": index, **LAYOUTS[layout]}
    model = Model(layout)
    other_city = "la" if layout != "non_partitioned" else "sf"
    steps: list[tuple[str, pa.Table | None]] = [
        ("insert", rows([1, 2, 3], ts=1)),
        ("upsert", pa.concat_tables([rows([1], ts=5), rows([2], ts=0), rows([10, 11], ts=1, city=other_city)])),
        ("delete", rows([3], ts=9)),
        ("bulk_insert", rows([20, 21], ts=1, city=other_city)),
        ("insert_overwrite", rows([30], ts=1)),
        ("upsert", rows([30, 31], ts=2, city=other_city)),
        ("insert_overwrite_table", rows([40, 41], ts=1)),
    ]
    for op, data in steps:
        table.write(data, op, options)
        model.apply(op, data)
        ours = read_table(path)
        assert observed(ours) == model.expected(), op
        assert observed(hudi_rs_read(path)) == model.expected(), op
        report = check_table(path)
        assert report.ok, report.errors
    if layout == "partitioned":
        table.write(rows([50], ts=1, city="ny"), "upsert", options)
        model.apply("upsert", rows([50], ts=1, city="ny"))
        table.delete_partitions(["city=sf"], options)
        model.apply("delete_partition", None, ["city=sf"])
        assert observed(read_table(path)) == model.expected()
        assert observed(hudi_rs_read(path)) == model.expected()
    timeline = table.timeline
    assert all(i.is_completed for i in timeline.instants)
    if version == "8":
        assert all(i.completed for i in timeline.instants)


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not str(p.relative_to(path)).startswith(LOCKS)}


def test_bad_input_is_typed_and_leaves_the_table_as_it_was(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = HudiTable(str(path), spark)
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    table.write(rows([1, 2], ts=1), "upsert", options)
    before = _snapshot(path)
    null_key = pa.table({"id": pa.array([None], pa.int64()), "name": ["x"], "ts": [1], "city": ["sf"],
                         "zone": ["z"], "v": ["v"]})
    with pytest.raises(InvalidRecord, match="null or empty record key"):
        table.write(null_key, "upsert", options)
    # a batch without the ordering field's column lacks a field of the table's: the schema check refuses it
    # before a record is keyed or combined, as Apache Hudi's writer does (case expect-errors-cow-v6)
    with pytest.raises(SchemaMismatch, match="ts"):
        table.write(rows([3], ts=1).drop_columns(["ts"]), "upsert", options)
    with pytest.raises(SchemaMismatch, match="drops column"):
        table.write(rows([3], ts=1).drop_columns(["v"]), "upsert", options)
    with pytest.raises(InvalidRecord, match="contains '/'"):
        table.write(rows([3], ts=1, city="../../etc"), "upsert", options)
    with pytest.raises(InvalidRecord, match="contains '/'"):
        table.write(rows([3], ts=1, city="a/b"), "upsert", options)
    with pytest.raises(InvalidConfig):
        table.write(rows([3], ts=1), "upsert", {**options, "hoodie.parquet.max.file.size": "-1"})
    assert _snapshot(path) == before


def test_duplicate_keys_with_equal_ordering_take_the_last(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    data = pa.table({"id": [1, 1, 1], "name": ["a", "b", "c"], "ts": [3, 3, 2], "city": ["sf"] * 3,
                     "zone": ["z"] * 3, "v": ["first", "second", "older"]})
    HudiTable(path, spark).write(data, "upsert", options)
    assert [r["v"] for r in read_table(path).to_pylist()] == ["second"]


def test_a_killed_write_is_rolled_back_by_the_next(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = HudiTable(str(path), spark)
    options = {"hoodie.table.name": "t", "hoodie.write.table.version": "6",  # a version 6 layout
               "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    table.write(rows([1], ts=1), "upsert", options)
    # what a writer killed after writing a data file leaves: requested + inflight, and a base file
    base = next(path.rglob("*.parquet"))
    failed = "20990101000000000"
    (path / ".hoodie" / f"{failed}.commit.requested").write_bytes(b"")
    (path / ".hoodie" / f"{failed}.inflight").write_bytes(b"")
    fid, token, _ = base.stem.split("_")
    orphan = base.parent / f"{fid}_{token}_{failed}.parquet"
    orphan.write_bytes(base.read_bytes())
    table._client.clock = None
    table.write(rows([2], ts=1), "upsert", options)
    assert not orphan.exists()
    assert not list((path / ".hoodie").glob(f"{failed}*"))
    assert observed(read_table(str(path))) == [("city=sf", "1", "v1@1"), ("city=sf", "2", "v2@1")]


def test_every_column_type_reads_the_same_in_hudi_rs(spark: Any, tmp_path: Path) -> None:
    import datetime as dt
    from decimal import Decimal

    from tests.hudi_rs import as_multiset

    path = str(tmp_path / "t")
    data = pa.table({
        "id": pa.array([1, 2], pa.int32()), "ts": pa.array([1, 2], pa.int64()), "city": ["a", "b"],
        "flag": [True, None], "ratio": pa.array([0.5, 1.5], pa.float32()), "price": [1.25, None],
        "amount": pa.array([Decimal("12.34"), Decimal("-0.01")], pa.decimal128(10, 2)),
        "day": pa.array([dt.date(2024, 1, 2), None], pa.date32()),
        "at": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC), None], pa.timestamp("us", tz="UTC")),
        "blob": [b"\x00\x01", b""],
    })
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    HudiTable(path, spark).write(data, "upsert", options)
    ours = read_table(path)
    assert ours.num_rows == 2
    assert as_multiset(ours) == as_multiset(hudi_rs_read(path))


@pytest.mark.parametrize("mode", ["NONE", "GLOBAL_SORT"])
def test_bulk_insert_sort_modes(spark: Any, tmp_path: Path, mode: str) -> None:
    import pyarrow.parquet as pq

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.bulkinsert.sort.mode": mode, "hoodie.parquet.compression.codec": "snappy",
               **LAYOUTS["non_partitioned"]}
    HudiTable(str(path), spark).write(rows([5, 3, 9, 1, 7], ts=1), "bulk_insert", options)
    (base,) = path.glob("*.parquet")
    keys = pq.read_table(base).column("_hoodie_record_key").to_pylist()
    assert sorted(keys) == ["1", "3", "5", "7", "9"]
    if mode != "NONE":
        assert keys == sorted(keys)
    assert pq.ParquetFile(base).metadata.row_group(0).column(0).compression == "SNAPPY"


@pytest.mark.parametrize(("mode", "files"), [("NONE", 4), ("PARTITION_SORT", 4), ("PARTITION_PATH_REPARTITION", 2)])
def test_bulk_insert_writes_a_file_per_partition_path_of_each_input_partition(spark: Any, tmp_path: Path, mode: str,
                                                                               files: int) -> None:
    """``spec.write.bulk_insert``: two Spark partitions, each with records of both partition paths."""
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.bulkinsert.sort.mode": mode, **LAYOUTS["partitioned"]}
    sf, ny = rows([1, 2, 3, 4], ts=1, city="sf").to_pylist(), rows([5, 6, 7, 8], ts=1, city="ny").to_pylist()
    interleaved = [r for pair in zip(sf, ny, strict=True) for r in pair]  # parallelize slices in order: 4 and 4
    batch = spark.createDataFrame(spark.sparkContext.parallelize(interleaved, 2))
    assert {(r["p"], r["c"]) for r in batch.selectExpr("spark_partition_id() as p", "city as c").collect()} == {
        (0, "sf"), (0, "ny"), (1, "sf"), (1, "ny")}
    HudiTable(str(path), spark).write(batch, "bulk_insert", options)
    assert len(list(path.rglob("*.parquet"))) == files
    assert sorted(read_table(str(path)).column("id").to_pylist()) == list(range(1, 9))


def test_a_table_with_a_metadata_table_is_refused_untouched(spark: Any, tmp_path: Path) -> None:
    from spec.errors import InvalidOperation

    path = tmp_path / "t"
    table = HudiTable(str(path), spark)
    options = {"hoodie.table.name": "t", "hoodie.write.table.version": "6",  # a version 6 layout
               "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    table.write(rows([1], ts=1), "upsert", options)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.metadata.partitions=files\n")
    before = _snapshot(path)
    with pytest.raises(InvalidOperation, match="metadata table"):
        table.write(rows([2], ts=1), "upsert", options)
    assert _snapshot(path) == before


def test_bloom_index_reads_only_candidate_files(spark: Any, tmp_path: Path) -> None:
    from reference.io.index import bloom_index, simple_index
    from spec.file_group.file_system_view import FileSystemView
    from spec.storage.hoodie_storage import Storage

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    table = HudiTable(str(path), spark)
    for start, city in ((0, "sf"), (100, "la"), (200, "ny")):
        table.write(rows(list(range(start, start + 20)), ts=1, city=city), "bulk_insert", options)
    storage = Storage(str(path))
    view = FileSystemView.load(storage)
    assert simple_index(storage, view).num_rows == 60
    probe = [("city=sf", "0"), ("city=ny", "219"), ("city=sf", "no-such-key"), ("city=zz", "1")]
    found, stats = bloom_index(storage, view, probe)
    assert sorted(zip(found.column(0).to_pylist(), found.column(1).to_pylist(), strict=True)) == [
        ("city=ny", "219"), ("city=sf", "0")]
    assert stats.footers_read == 2 and stats.key_files_read == 2  # the absent key read no keys


def test_markers_name_what_a_killed_write_created(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = HudiTable(str(path), spark)
    options = {"hoodie.table.name": "t", "hoodie.write.table.version": "6",  # a version 6 layout
               "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    table.write(rows([1], ts=1), "upsert", options)
    assert not list((path / ".hoodie" / ".temp").rglob("*.marker.*"))  # markers go when the commit completes
    base = next(path.rglob("*.parquet"))
    failed = "20990101000000000"
    (path / ".hoodie" / f"{failed}.commit.requested").write_bytes(b"")
    (path / ".hoodie" / f"{failed}.inflight").write_bytes(b"")
    partial = base.parent / f"{base.stem.split('_')[0]}_0-9-9_{failed}.parquet.inprogress"  # killed mid-file
    partial.write_bytes(b"PAR1 half a file")
    marker = path / ".hoodie" / ".temp" / failed / "city=sf" / (partial.name.removesuffix(".inprogress")
                                                                 + ".marker.CREATE")
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    table.write(rows([2], ts=1), "upsert", options)
    assert not partial.exists() and not (path / ".hoodie" / ".temp" / failed).exists()
    assert observed(read_table(str(path))) == [("city=sf", "1", "v1@1"), ("city=sf", "2", "v2@1")]


@pytest.mark.parametrize("engine", ["spark", "local"])
def test_step_seconds_account_for_the_write(spark: Any, tmp_path: Path, engine: str) -> None:
    """``WriteResult.step_seconds``: the steps of the write path that ran, in order, none negative, adding up
    to no more than the write's wall time; an upsert spends time in its index lookup and its handles."""
    import time

    from reference.instrumentation.step_times import StepTimes

    path = str(tmp_path / "t")
    table = HudiTable(path, spark) if engine == "spark" else HudiTable(path, engine="local")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts", **LAYOUTS["partitioned"]}
    first = table.write(rows(list(range(20)), ts=1), "bulk_insert", options)
    started = time.perf_counter()
    second = table.write(rows(list(range(10, 30)), ts=2), "upsert", options)
    wall = time.perf_counter() - started
    for result in (first, second):
        steps = result.step_seconds
        assert list(steps) == list(StepTimes.STEPS)
        assert all(v >= 0 for v in steps.values())
    assert second.step_seconds["index lookup"] > 0 and second.step_seconds["handles"] > 0
    assert sum(second.step_seconds.values()) <= wall


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["sf", "la", "zz"]), st.integers(0, 400)), min_size=1, max_size=120),
       st.sampled_from([40, 500]))
def test_bloom_index_finds_what_the_simple_index_holds(tmp_path: Path, probe: list[tuple[str, int]],
                                                       split: int) -> None:
    """The BLOOM lookup of an Arrow batch (footer key ranges, filter rows tested hash by hash, the
    candidates' keys confirmed in the file) locates exactly the keys the SIMPLE index (every key of
    every latest base file) holds, in the same file groups — also with several files per partition
    (``split`` records per insert bucket) and keys or partitions the table does not have."""
    import uuid

    from reference.io.index import bloom_index, simple_index
    from spec.file_group.file_system_view import FileSystemView
    from spec.storage.hoodie_storage import Storage

    path = tmp_path / uuid.uuid4().hex
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.copyonwrite.insert.split.size": str(split), "hoodie.copyonwrite.insert.auto.split": "false",
               **LAYOUTS["partitioned"]}
    table = HudiTable(str(path), engine="local")
    table.write(rows([i for i in range(0, 300, 2)], ts=1, city="sf"), "bulk_insert", options)
    table.write(rows(list(range(100, 200)), ts=1, city="la"), "bulk_insert", options)
    storage = Storage(str(path))
    view = FileSystemView.load(storage)
    held = simple_index(storage, view)
    where = {(p, k): f for p, k, f in zip(*(held.column(i).to_pylist() for i in range(3)), strict=True)}
    partition = {"sf": "city=sf", "la": "city=la", "zz": "city=zz"}
    pairs = [(partition[c], str(i)) for c, i in probe]
    batch = pa.table({"_hoodie_partition_path": [p for p, _ in pairs], "_hoodie_record_key": [k for _, k in pairs]})
    expected = {(p, k, where[(p, k)]) for p, k in pairs if (p, k) in where}
    for incoming in (batch, pairs):
        found, _ = bloom_index(storage, view, incoming)
        got = list(zip(*(found.column(i).to_pylist() for i in range(3)), strict=True))
        assert len(got) == len(set(got)) and set(got) == expected
