"""The local engine (``engine="local"``) and the column-at-a-time fast paths both engines use.

Every fast path is checked against the rule it stands for: the vectorised router against
``spec.write.partitioner.route``, the column-wise Avro encoder against ``spec.file_group.log_file.log_blocks``
(fastavro, one
record at a time), the column-wise merge against ``spec.read.merge`` record by record, the Arrow key
columns and dedupe against the Spark engine's. Then the two engines write the same sequence and
must leave the same table: the same file groups holding the same records with the same meta values
(only the sequence numbers' task ids and the write tokens, which name Spark tasks, may differ).
"""

from __future__ import annotations

import datetime as dt
import json
import string
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters.reference_spark import START_EPOCH, FileIds, ReplayClock
from reference.api import HudiTable
from reference.engines.local import dedupe, with_keys
from reference.engines.spark_arrow import arrow_to_spark, spark_to_arrow
from reference.io import handles
from reference.io.avro_columns import block_content, encode_records
from reference.io.partitioning import route_batch
from spec.config.table_config import TableConfig
from spec.errors import InvalidConfig, InvalidRecord
from spec.file_group.file_system_view import FileSystemView
from spec.file_group.log_file.log_blocks import encode_avro_records
from spec.read.reader import read_table
from spec.schema.table_schema import avro_schema_from_arrow, record_name_for_table, with_meta_fields
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCKS_FOLDER as LOCKS
from spec.write.partitioner import PartitionerConfig, SmallFile, WorkloadProfile, assign_buckets, route

# --- routing ------------------------------------------------------------------------------------------

KEYS = st.text(alphabet=string.ascii_letters + "0123456789-é€😀", min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(records=st.lists(st.tuples(KEYS, st.sampled_from(["a", "b", "c/d", ""]), st.booleans()), min_size=1,
                        max_size=200, unique_by=lambda r: (r[0], r[1])),
       per_bucket=st.integers(1, 40), small=st.integers(0, 3))
def test_route_batch_is_route_for_every_record(records: list[tuple[str, str, bool]], per_bucket: int,
                                               small: int) -> None:
    groups = {p: f"g-{p}" for p in ("a", "b", "c/d", "")}
    counts: dict[tuple[str, str | None], int] = {}
    for _, p, located in records:
        counts[(p, groups[p] if located else None)] = counts.get((p, groups[p] if located else None), 0) + 1
    profile = WorkloadProfile.from_counts(counts)
    small_files = {p: [SmallFile(f"s{i}-{p}", 100 * (i + 1)) for i in range(small)] for p in groups}
    ids = iter(range(10_000))
    assignment = assign_buckets(profile, small_files, PartitionerConfig(max_file_size=per_bucket * 10,
                                                                        record_size_estimate=10), 10,
                                lambda: f"new-{next(ids)}")
    keys = pa.array([k for k, _, _ in records])
    parts = pa.array([p for _, p, _ in records])
    fids = pa.array([groups[p] if located else None for _, p, located in records], pa.string())
    got = route_batch(keys, parts, fids, assignment).tolist()
    want = [route(k, p, groups[p] if located else None, assignment) for k, p, located in records]
    assert got == want


def test_route_batch_refuses_an_unknown_file_group() -> None:
    profile = WorkloadProfile.from_counts({("a", None): 1})
    assignment = assign_buckets(profile, {}, PartitionerConfig(), 100, lambda: "n")
    with pytest.raises(InvalidRecord, match="no update bucket"):
        route_batch(pa.array(["k"]), pa.array(["a"]), pa.array(["ghost"]), assignment)


# --- Avro, column-wise ----------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)


def _schema_json(table: pa.Table) -> str:
    user = pa.schema([f for f in table.schema if not f.name.startswith("_hoodie")])
    return json.dumps(with_meta_fields(avro_schema_from_arrow(user, *record_name_for_table("t"))))


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(TEXT, st.none() | TEXT, st.none() | st.integers(-2**31, 2**31 - 1),
                               st.integers(-2**63, 2**63 - 1), st.none() | st.floats(allow_nan=False),
                               st.none() | st.booleans(), st.none() | st.binary(max_size=6),
                               st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)),
                               st.integers(-62_135_596_800_000_000, 253_402_300_799_999_999)), max_size=60),
       picks=st.lists(st.integers(0, 59), max_size=30))
def test_avro_columns_encode_as_fastavro_does(rows: list[tuple[Any, ...]], picks: list[int]) -> None:
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in range(9)]
    table = pa.table({
        "_hoodie_commit_time": pa.array(["20240101000000000"] * n, pa.string()),
        "_hoodie_commit_seqno": pa.array(list(cols[0]), pa.string()),
        "_hoodie_record_key": pa.array(list(cols[0]), pa.string()),
        "_hoodie_partition_path": pa.array(["p"] * n, pa.string()),
        "_hoodie_file_name": pa.array(["f"] * n, pa.string()),
        "s": pa.array(list(cols[1]), pa.string()), "i": pa.array(list(cols[2]), pa.int32()),
        "l": pa.array(list(cols[3]), pa.int64()), "d": pa.array(list(cols[4]), pa.float64()),
        "b": pa.array(list(cols[5]), pa.bool_()), "bin": pa.array(list(cols[6]), pa.binary()),
        "day": pa.array(list(cols[7]), pa.date32()),
        "at": pa.array(list(cols[8]), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
    })
    schema = _schema_json(table)
    runs = encode_records(table, schema)
    assert runs is not None
    chosen = np.array(sorted({p for p in picks if p < n}), dtype=np.int64)
    records = table.to_pylist()
    assert block_content(runs, chosen) == encode_avro_records([records[i] for i in chosen], schema)
    assert block_content(runs, np.arange(n)) == encode_avro_records(records, schema)


def test_avro_columns_leave_uncovered_types_to_the_rule() -> None:
    table = pa.table({"_hoodie_record_key": ["k"], "m": pa.array([[1, 2]], pa.list_(pa.int64()))})
    schema = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "_hoodie_record_key", "type": ["null", "string"]},
        {"name": "m", "type": ["null", {"type": "array", "items": "long"}]}]})
    assert encode_records(table, schema) is None
    # a null in a field the schema does not let be null: the rule (fastavro) must decide and raise
    strict = json.dumps({"type": "record", "name": "r", "fields": [{"name": "x", "type": "long"}]})
    assert encode_records(pa.table({"x": pa.array([None], pa.int64())}), strict) is None


# --- keys and dedupe: the Arrow rules against the Spark engine's -----------------------------------------

def _config(keys: tuple[str, ...], parts: tuple[str, ...], hive: bool) -> TableConfig:
    return TableConfig.create("t", "COPY_ON_WRITE", 6, keys, "ts", parts, None, hive, False)


KEY_TABLE = pa.table({
    "id": pa.array([1, 2, 3, -4, 5], pa.int64()), "name": ["a", "", None, "é€", "x"],
    "city": ["sf", None, "", "la", "sf"], "ts": pa.array([1, 2, 3, 4, 5], pa.int64()),
})


@pytest.mark.spark
@pytest.mark.parametrize(("keys", "parts", "hive"), [(("id",), ("city",), True), (("id", "name"), ("city",), False),
                                                    (("name", "id"), (), False), (("id",), ("city", "id"), True)])
def test_key_columns_match_the_spark_engine(spark: Any, keys: tuple[str, ...], parts: tuple[str, ...],
                                            hive: bool) -> None:
    from reference.engines.spark import key_columns

    config = _config(keys, parts, hive)
    table = KEY_TABLE if len(keys) > 1 else KEY_TABLE.filter(pc.is_valid(KEY_TABLE["id"]))
    local = with_keys(table, config)
    remote = spark_to_arrow(key_columns(arrow_to_spark(spark, table), config))
    assert local["_hoodie_record_key"].to_pylist() == remote["_hoodie_record_key"].to_pylist()
    assert local["_hoodie_partition_path"].to_pylist() == remote["_hoodie_partition_path"].to_pylist()


@pytest.mark.spark
def test_dedupe_matches_the_spark_engine(spark: Any) -> None:
    from reference.engines.spark import SparkEngine, key_columns

    rows = [{"id": i % 7, "city": "sf" if i % 3 else "la", "ts": (i * 5) % 4 if i % 5 else None, "v": i}
            for i in range(60)]
    table = pa.Table.from_pylist(rows, pa.schema([("id", pa.int64()), ("city", pa.string()), ("ts", pa.int64()),
                                                 ("v", pa.int64())]))
    config = _config(("id",), ("city",), False)
    local = dedupe(with_keys(table, config), "ts").select(["_hoodie_record_key", "_hoodie_partition_path", "v"])
    engine = SparkEngine(spark)
    remote = spark_to_arrow(engine.dedupe(key_columns(arrow_to_spark(spark, table).coalesce(1), config), "ts"))
    remote = remote.select(["_hoodie_record_key", "_hoodie_partition_path", "v"])

    def ordered(t: pa.Table) -> list[dict[str, Any]]:
        return sorted(t.to_pylist(), key=lambda r: (r["_hoodie_partition_path"], r["_hoodie_record_key"]))

    assert ordered(local) == ordered(remote)
    assert local.num_rows == len({(r["id"], r["city"]) for r in rows})


@pytest.mark.parametrize(("rows", "match"), [
    ([{"id": None, "city": "sf", "ts": 1}], "null or empty record key"),
    ([{"id": "", "city": "sf", "ts": 1}], "null or empty record key"),
    ([{"id": "a", "city": "sf/../x", "ts": 1}], "a value contains '/'"),
])
@pytest.mark.parametrize(("engine", "operation"), [("local", "upsert"), ("local", "bulk_insert"),
                                                   pytest.param("spark", "upsert", marks=pytest.mark.spark),
                                                   pytest.param("spark", "insert", marks=pytest.mark.spark)])
def test_bad_keys_are_refused_and_the_table_is_unchanged(request: pytest.FixtureRequest, tmp_path: Path,
                                                         rows: list[dict[str, Any]], match: str, engine: str,
                                                         operation: str) -> None:
    """Either engine, whichever job first reads the keys (the index's, or the workload profile's)."""
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts"}
    session = request.getfixturevalue("spark") if engine == "spark" else None
    table = HudiTable(str(tmp_path / "t"), session, engine=engine)
    table.write(pa.Table.from_pylist([{"id": "k", "city": "sf", "ts": 0}]), "insert", opts)
    before = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in tmp_path.rglob("*")
                    if p.is_file() and LOCKS not in str(p))  # the table lock: coordination, not table content
    schema = pa.schema([("id", pa.string()), ("city", pa.string()), ("ts", pa.int64())])
    with pytest.raises(InvalidRecord, match=match):
        table.write(pa.Table.from_pylist(rows, schema), operation, opts)
    after = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in tmp_path.rglob("*")
                   if p.is_file() and LOCKS not in str(p))
    assert after == before


def test_an_unknown_engine_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidConfig, match="engine 'flink' is unknown"):
        HudiTable(str(tmp_path / "t"), engine="flink")


# --- the column-wise merge and Avro paths against the record-by-record rule ------------------------------

def _writes(version: int) -> list[tuple[str, list[dict[str, Any]]]]:
    day = dt.date(2024, 1, 1)
    first = [{"id": f"k{i:03d}", "city": ["sf", "la", "ny"][i % 3], "ts": i % 5, "v": float(i), "note": f"n{i}",
              "day": day} for i in range(90)]
    update = [{"id": f"k{i:03d}", "city": ["sf", "la", "ny"][i % 3], "ts": (i * 7) % 6, "v": -float(i),
               "note": None if i % 4 else "u", "day": day + dt.timedelta(days=i)} for i in range(0, 120, 2)]
    same = [{**r, "v": 99.0} for r in update[:20]]  # equal ordering values: the incoming record wins
    return [("insert", first), ("upsert", update), ("upsert", same), ("delete", update[:10]),
            ("upsert", [{**r, "ts": 100} for r in first[40:50]])]


def _write_all(path: Path, engine: str, table_type: str, version: int, spark: Any = None) -> None:
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0"}
    table = HudiTable(str(path), spark, clock=ReplayClock(), file_id_prefix=FileIds(), engine=engine)
    for op, rows in _writes(version):
        table.write(pa.Table.from_pylist(rows), op, opts)


def _files(path: Path) -> dict[str, bytes]:
    """Every data and log file (partition metadata, which carries the wall-clock time, left out)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*")
            if p.is_file() and ".hoodie" not in p.parts and p.name != ".hoodie_partition_metadata"}


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 6),
                                                     ("MERGE_ON_READ", 8)])
def test_fast_paths_write_the_bytes_the_record_rules_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           table_type: str, version: int) -> None:
    taken: list[str] = []

    def spy(name: str) -> Any:
        real = getattr(handles, name)

        def call(*args: Any) -> Any:
            out = real(*args)
            if out is not None:
                taken.append(name)
            return out
        return call

    for name in ("_merge_columnwise", "_encode_columnwise"):
        monkeypatch.setattr(handles, name, spy(name))
    fast = tmp_path / "fast"
    _write_all(fast, "local", table_type, version)
    assert ("_encode_columnwise" if table_type == "MERGE_ON_READ" else "_merge_columnwise") in taken
    monkeypatch.setattr(handles, "_merge_columnwise", lambda *a: None)
    monkeypatch.setattr(handles, "_encode_columnwise", lambda *a: None)
    slow = tmp_path / "slow"
    _write_all(slow, "local", table_type, version)
    assert _files(fast) == _files(slow)
    assert read_table(str(fast)).sort_by("_hoodie_record_key").equals(read_table(str(slow)).sort_by(
        "_hoodie_record_key"))


def test_a_merge_keeps_the_old_files_order_and_continues_its_bloom_filter(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Hudi's merge handle writes the old file's rows in their order, each touched key's merged record in
    its place, then the inserts; the records this commit writes are numbered in that order. Where every
    old row keeps its place, the new file's bloom filter is the old one continued, byte for byte the
    filter of all its keys in file order; after a delete it is built again from the keys."""
    from reference.io.bloom import footer
    from spec.file_group.bloom_filter import FOOTER_KEY

    continued: list[bool] = []
    real = handles.extended_footer

    def spy(*args: Any) -> Any:
        out = real(*args)
        continued.append(out is not None)
        return out

    monkeypatch.setattr(handles, "extended_footer", spy)
    path = tmp_path / "t"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts"}
    table = HudiTable(str(path), engine="local")
    first = [{"id": f"k{(i * 37) % 100:03d}", "ts": 5, "v": float(i)} for i in range(100)]  # not in key order
    table.write(pa.Table.from_pylist(first), "insert", opts)

    def latest() -> tuple[pa.Table, dict[bytes, bytes]]:
        view = FileSystemView.load(Storage(str(path)))
        (group,) = view.groups
        f = pq.ParquetFile(path / group.slices[-1].base_file.path)
        return f.read(), f.metadata.metadata

    old, _ = latest()
    old_keys = old.column("_hoodie_record_key").to_pylist()
    # k090..k099 lose to the stored rows (older ts), the rest of the touched keys win; n000.. are inserts
    batch = [{"id": k, "ts": 1 if k >= "k090" else 9, "v": -1.0} for k in sorted(old_keys)[::3]]
    batch += [{"id": f"n{i:03d}", "ts": 9, "v": 0.0} for i in range(7)]
    result = table.write(pa.Table.from_pylist(batch[::-1]), "upsert", opts)
    new, meta = latest()
    keys = new.column("_hoodie_record_key").to_pylist()
    assert keys[: len(old_keys)] == old_keys and sorted(keys[len(old_keys):]) == [f"n{i:03d}" for i in range(7)]
    instant = result.instant
    won = {r["id"] for r in batch if r["ts"] == 9}
    rows = new.to_pylist()
    assert [r["_hoodie_record_key"] for r in rows if r["_hoodie_commit_time"] == instant] == [
        k for k in keys if k in won]
    numbers = [int(r["_hoodie_commit_seqno"].rsplit("_", 1)[1]) for r in rows if r["_hoodie_commit_time"] == instant]
    assert numbers == list(range(len(won)))
    assert continued == [True] and meta[FOOTER_KEY.encode()].decode() == footer(keys)[FOOTER_KEY]

    gone = {keys[3], keys[50]}
    table.write(pa.Table.from_pylist([{"id": k, "ts": 9, "v": 0.0} for k in gone]), "delete", opts)
    after, meta = latest()
    assert after.column("_hoodie_record_key").to_pylist() == [k for k in keys if k not in gone]
    assert continued == [True] and meta[FOOTER_KEY.encode()].decode() == footer(
        after.column("_hoodie_record_key"))[FOOTER_KEY]


# --- the two engines leave the same table -----------------------------------------------------------------

def _groups(path: Path) -> dict[tuple[str, str], list[str]]:
    view = FileSystemView.load(Storage(str(path)))
    return {(g.partition_path, g.file_id): [s.base_instant for s in g.slices] for g in view.groups}


def _records(path: Path, **query: Any) -> list[dict[str, Any]]:
    rows = read_table(str(path), **query).to_pylist()
    for r in rows:
        r.pop("_hoodie_commit_seqno")  # <instant>_<task id>_<n>: the task ids are the engine's own
        r["_hoodie_file_name"] = r["_hoodie_file_name"].split("_")[0]  # the write token names a Spark task
    return sorted(rows, key=lambda r: (r["_hoodie_partition_path"], r["_hoodie_record_key"]))


@pytest.mark.spark
@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("COPY_ON_WRITE", 8),
                                                     ("MERGE_ON_READ", 6), ("MERGE_ON_READ", 8)])
def test_both_engines_write_the_same_table(spark: Any, tmp_path: Path, table_type: str, version: int) -> None:
    _write_all(tmp_path / "spark", "spark", table_type, version, spark)
    _write_all(tmp_path / "local", "local", table_type, version)
    assert _groups(tmp_path / "spark") == _groups(tmp_path / "local")
    assert _records(tmp_path / "spark") == _records(tmp_path / "local")
    timeline = [(i.requested, i.action, i.state) for i in HudiTable(str(tmp_path / "spark")).timeline.instants]
    assert timeline == [(i.requested, i.action, i.state) for i in HudiTable(str(tmp_path / "local")).timeline.instants]
    first = timeline[1][0]
    assert _records(tmp_path / "spark", query="incremental", begin=first) == _records(
        tmp_path / "local", query="incremental", begin=first)
    if table_type == "MERGE_ON_READ":  # compaction on Spark tasks and on threads: the same new slices
        snappy = {"hoodie.parquet.compression.codec": "snappy"}
        later = START_EPOCH + 10_000
        t = HudiTable(str(tmp_path / "spark"), spark, clock=ReplayClock(later)).compact(snappy)
        assert t is not None
        assert HudiTable(str(tmp_path / "local"), clock=ReplayClock(later), engine="local").compact(snappy) == t
        assert _groups(tmp_path / "spark") == _groups(tmp_path / "local")
        assert _records(tmp_path / "spark") == _records(tmp_path / "local")
        assert _records(tmp_path / "local", query="read_optimized") == _records(tmp_path / "local")
        compacted = [f for f in (tmp_path / "local").rglob(f"*_{t}.parquet")]
        assert compacted and all(pq.ParquetFile(f).metadata.row_group(0).column(0).compression == "SNAPPY"
                                 for f in compacted)


# --- repeated keys: deduplicated once the index has the batch's keys ------------------------------------

@pytest.mark.spark
@pytest.mark.parametrize("engine", ["spark", "local"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_repeated_keys_in_an_upsert_and_a_delete_are_written_once(spark: Any, tmp_path: Path, engine: str,
                                                                   table_type: str) -> None:
    """The BLOOM path collects the batch's keys before deduplicating: a batch that repeats a key is
    deduplicated (greatest ordering value, then the last), and the workload profile and the write stats
    count each key once — as a batch without repeats, which is written as it is."""
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type}
    path = str(tmp_path / "t")
    table = HudiTable(path, spark, engine=engine) if engine == "spark" else HudiTable(path, engine="local")
    table.write(pa.table({"id": [1, 2, 3], "city": ["a", "a", "b"], "ts": [1, 1, 1], "v": ["x", "y", "z"]}),
                "upsert", options)
    # key 1 three times (ts 5 wins over a later ts 4), key 2 twice with equal ts (the later wins), key 9 new twice
    batch = pa.table({"id": [1, 2, 1, 9, 2, 1, 9], "city": ["a", "a", "a", "b", "a", "a", "b"],
                      "ts": [2, 7, 5, 3, 7, 4, 3], "v": ["1a", "2a", "1b", "9a", "2b", "1c", "9b"]})
    result = table.write(batch, "upsert", options)
    stats = list(result.metadata.all_write_stats())
    assert sum(s.num_update_writes for s in stats) == 2
    assert sum(s.num_inserts for s in stats) == 1
    rows = {r["id"]: r["v"] for r in read_table(path).to_pylist()}
    assert rows == {1: "1b", 2: "2b", 3: "z", 9: "9b"}
    gone = table.write(pa.table({"id": [3, 3, 2], "city": ["b", "b", "a"], "ts": [9, 9, 9], "v": ["", "", ""]}),
                       "delete", options)
    assert sum(s.num_deletes for s in gone.metadata.all_write_stats()) == 2
    assert {r["id"] for r in read_table(path).to_pylist()} == {1, 9}
