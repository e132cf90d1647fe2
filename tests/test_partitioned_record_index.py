"""The partitioned record index's rules (``spec.metadata.partitioned_record_index``) and the writer keeping it
(``reference.metadata.partitioned_record_index``) on the local engine: what Apache Hudi 1.2.0 writes is measured by
``tests/test_partitioned_record_index_hudi.py``; here every step's index is checked against the snapshot, and the
refusals leave the table unchanged."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.config.table_config import TableConfig
from spec.errors import InvalidConfig, UnsupportedOption
from spec.metadata.index_definition import parse_index_definitions
from spec.metadata.index_keys import file_group_for_key
from spec.metadata.partitioned_record_index import (
    PartitionedSizing,
    by_index_file_group,
    check_index_form,
    definition,
    file_group_counts,
    file_group_of,
    is_partitioned,
    keys_in_two_partitions,
    new_partition_file_group_count,
    partition_file_group_count,
    partitioned_changes,
    read_partitioned_record_index,
)
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.datasource.write.hive_style_partitioning": "false",
           "hoodie.metadata.record.level.index.enable": "true", "hoodie.index.type": "RECORD_LEVEL_INDEX"}


def test_file_group_counts_are_hudis_partitioned_bounds() -> None:
    """One file group per data partition for any table below some ten million keys a partition (Apache Hudi
    1.2.0's bounds 1 and 10, measured: ``record-index-<p>-0000-0`` only); a partition written first later gets the
    minimum."""
    assert partition_file_group_count(0) == 1 and partition_file_group_count(1000) == 1
    per_group = (1 << 30) // 48
    # twice the keys, in Java floats: exactly two file groups' worth rounds down to 89478480 (three), a few more is
    # four (spec.metadata.record_index.estimate_file_group_count)
    assert partition_file_group_count(per_group * 2) == 3 and partition_file_group_count(per_group * 2 + 100) == 4
    assert partition_file_group_count(10**12) == 10
    assert partition_file_group_count(10**12, PartitionedSizing(2, 3)) == 3
    assert new_partition_file_group_count() == 1 and new_partition_file_group_count(PartitionedSizing(3, 5)) == 3


def test_file_groups_are_named_for_their_partition() -> None:
    assert file_group_of("city=new-york_1", "k1", 1) == "record-index-city%3Dnew%2Dyork%5F1-0000-0"
    assert file_group_of("a", "k4", 10) == f"record-index-a-{file_group_for_key('k4', 10):04d}-0"
    assert file_group_counts(["record-index-a-0000-0", "record-index-a-0002-0", "record-index-b%2Dc-0000-0",
                              "files-0000-0"]) == {"a": 3, "b-c": 1}
    grouped = by_index_file_group([("a", "k2"), ("b", "k1"), ("a", "k1")], {"a": 1})
    assert grouped == {"record-index-a-0000-0": ["k1", "k2"], "record-index-b-0000-0": ["k1"]}


def test_changes_are_keyed_by_partition_and_key() -> None:
    """The same key in two partitions is two entries: an insert in ``b`` of a key ``a`` holds is an upsert of
    (b, k1) and leaves (a, k1); a delete naming a partition that does not hold the key changes nothing."""
    held = {("a", "k1"): "f1", ("a", "k2"): "f1", ("b", "k3"): "f2"}
    placed = {("a", "k1"): "f1", ("b", "k1"): "f2", ("c", "k4"): "f3"}
    removed = {("b", "k3"): "f2", ("c", "k1"): "f3", ("a", "k2"): "f9"}
    upserts, deletes = partitioned_changes(held, placed, removed)
    assert upserts == {("b", "k1"): "f2", ("c", "k4"): "f3"} and deletes == {("b", "k3")}
    assert keys_in_two_partitions([("a", "k1"), ("a", "k1"), ("b", "k2"), ("c", "k1")]) == ["k1"]


def test_the_definition_and_the_form_check() -> None:
    found = definition(True)
    assert found.to_json() == {"indexName": "record_index", "indexType": "record_index", "indexFunction": "",
                               "sourceFields": [], "indexOptions": {"isPartitioned": "true"}, "version": "V1"}
    assert is_partitioned(found) and not is_partitioned(definition(False)) and not is_partitioned(None)
    check_index_form(None, True)
    check_index_form(True, True)
    with pytest.raises(InvalidConfig, match="the global one, and this write asks for the partitioned one"):
        check_index_form(False, True)


def _rows(rows: list[tuple[str, str, int]]) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "p": p, "ts": ts} for i, p, ts in rows])


def _index_is_the_snapshot(path: Path) -> dict[tuple[str, str], str]:
    snapshot = {(r["_hoodie_partition_path"], r["id"]): r["_hoodie_file_name"].split("_")[0]
                for r in read_table(str(path)).to_pylist()}
    index = {pk: loc.file_id for pk, loc in read_partitioned_record_index(Storage(str(path))).items()}
    assert index == snapshot
    return index


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_writer_keeps_the_partitioned_index_through_writes_and_services(tmp_path: Path, table_type: str) -> None:
    """Inserts, one key in two partitions, a partition written first after the index was built, deletes, a
    clustering, a rollback and a restore: after each the index is the snapshot's locations, keyed by
    (partition, key); a new partition's file group starts with an empty delete block at its first commit."""
    from reference.executors.restore import restore
    from reference.executors.rollback import rollback
    from reference.executors.savepoint import savepoint_create
    from spec.timeline.active_timeline import Timeline

    path = tmp_path / "t"
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    table = HudiTable(str(path), engine="local")
    table.write(_rows([("k1", "a", 1), ("k2", "a", 1), ("k3", "b", 1)]), operation="insert", options=opts)
    defs = parse_index_definitions((path / ".hoodie/.index_defs/index.json").read_text())
    assert is_partitioned(defs["record_index"])
    assert _index_is_the_snapshot(path).keys() == {("a", "k1"), ("a", "k2"), ("b", "k3")}
    table.write(_rows([("k1", "b", 2), ("k4", "c", 2)]), operation="upsert", options=opts)
    files = sorted(f.name for f in (path / ".hoodie/metadata/record_index").iterdir())
    storage = Storage(str(path))
    last = Timeline.load(storage, TableConfig.load(storage).timeline_layout).latest_completed()
    assert last is not None
    assert f".record-index-c-0000-0_{last.requested}.log.1_0-0-0" in files  # c's file group, created there
    assert _index_is_the_snapshot(path).keys() == {("a", "k1"), ("a", "k2"), ("b", "k1"), ("b", "k3"), ("c", "k4")}
    table.write(_rows([("k1", "a", 3), ("k4", "a", 3)]), operation="delete", options=opts)
    assert _index_is_the_snapshot(path).keys() == {("a", "k2"), ("b", "k1"), ("b", "k3"), ("c", "k4")}
    assert table.cluster(opts) is not None
    kept = _index_is_the_snapshot(path)
    point = savepoint_create(storage, TableConfig.load(storage))
    table.write(_rows([("k5", "d", 4), ("k2", "b", 4)]), operation="upsert", options=opts)
    added = Timeline.load(storage, TableConfig.load(storage).timeline_layout).latest_completed()
    assert added is not None and ("d", "k5") in _index_is_the_snapshot(path)
    rollback(storage, TableConfig.load(storage), added.requested)
    assert _index_is_the_snapshot(path) == kept
    table.write(_rows([("k6", "e", 5)]), operation="upsert", options=opts)
    restore(storage, TableConfig.load(storage), point.instant)
    assert _index_is_the_snapshot(path) == kept
    defs = parse_index_definitions((path / ".hoodie/.index_defs/index.json").read_text())
    assert is_partitioned(defs["record_index"])  # rebuilt in its own form
    table.write(_rows([("k2", "b", 6)]), operation="upsert", options=opts)
    assert ("b", "k2") in _index_is_the_snapshot(path)


def test_turning_it_on_builds_each_partitions_file_groups(tmp_path: Path) -> None:
    """A table without a record index gets the partitioned one on an upsert: each data partition's file group
    with an empty delete block and a base HFile of its keys, then the upsert's changes."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    plain = {k: v for k, v in OPTIONS.items() if k not in ("hoodie.metadata.record.level.index.enable",
                                                           "hoodie.index.type")}
    table.write(_rows([("k1", "a", 1), ("k2", "b", 1), ("k1", "b", 1)]), operation="insert", options=plain)
    table.write(_rows([("k3", "a", 2)]), operation="upsert", options=OPTIONS)
    names = sorted(f.name for f in (path / ".hoodie/metadata/record_index").iterdir())
    assert sum(n.endswith(".hfile") for n in names) == 2
    assert {n.lstrip(".").split("_")[0] for n in names if "record-index-" in n} == {
        "record-index-a-0000-0", "record-index-b-0000-0"}
    assert _index_is_the_snapshot(path).keys() == {("a", "k1"), ("a", "k3"), ("b", "k1"), ("b", "k2")}


def test_what_the_writer_does_not_keep_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    table.write(_rows([("k1", "a", 1)]), operation="insert", options=OPTIONS)
    before = sorted((p.name, p.stat().st_size) for p in path.rglob("*") if p.is_file())
    with pytest.raises(UnsupportedOption, match="record key 'k1' in two partitions"):
        table.write(_rows([("k1", "a", 2), ("k1", "b", 2)]), operation="upsert", options=OPTIONS)
    with pytest.raises(InvalidConfig, match="ask for both forms"):
        table.write(_rows([("k2", "a", 2)]), operation="upsert",
                    options={**OPTIONS, "hoodie.metadata.record.index.enable": "true"})
    without = {k: v for k, v in OPTIONS.items() if k != "hoodie.metadata.record.level.index.enable"}
    with pytest.raises(InvalidConfig, match="RECORD_LEVEL_INDEX tags records"):
        table.write(_rows([("k2", "a", 2)]), operation="upsert", options=without)
    global_form = {**without, "hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"}
    with pytest.raises(InvalidConfig, match="the partitioned one, and this write asks for the global one"):
        table.write(_rows([("k2", "a", 2)]), operation="upsert", options=global_form)
    with pytest.raises(UnsupportedOption, match=r"record\.level\.index\.max\.filegroup\.count"):
        table.write(_rows([("k2", "a", 2)]), operation="upsert",
                    options={**OPTIONS, "hoodie.metadata.record.level.index.max.filegroup.count": "4"})
    assert sorted((p.name, p.stat().st_size) for p in path.rglob("*") if p.is_file()) == before
