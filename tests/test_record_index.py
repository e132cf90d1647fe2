"""The record index's rules (``spec.metadata.record_index``) against what Apache Hudi 1.2.0 wrote
(``tests/test_record_index_hudi.py`` measures the whole), and the writer's refusals of what it does not keep."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.errors import InvalidConfig, UnsupportedOption
from spec.metadata.index_keys import file_group_for_key, record_location
from spec.metadata.record_index import (
    Sizing,
    estimate_file_group_count,
    read_record_index,
    record_index_changes,
    record_index_info,
)
from spec.storage.hoodie_storage import Storage


def test_file_group_count_is_hudis_estimate() -> None:
    assert estimate_file_group_count(0) == 10  # Hudi 1.2.0's new record index: ten file groups (measured)
    per_group = (1 << 30) // 48
    assert estimate_file_group_count(per_group * 6) == 12  # twice the records, over what a group holds
    assert estimate_file_group_count(10**12) == 10000
    assert estimate_file_group_count(10**12, Sizing(5, 5)) == 5


def test_the_estimate_multiplies_in_java_floats_and_keeps_between_min_and_max() -> None:
    """``(float) count * growthFactor`` is a Java float product: 10 keys grown by 1.1f are 11.0 (in doubles,
    11.000000000000002, whose ceiling is 12); 2^24 + 1 keys are 2^24 as a float."""
    one_per_group = Sizing(1, 1 << 31, 1.1, 48)
    assert estimate_file_group_count(10, one_per_group) == 11
    assert estimate_file_group_count((1 << 24) + 1, Sizing(1, 1 << 31, 1.0, 48)) == 1 << 24
    assert estimate_file_group_count(6, Sizing(1, 8, 2.0, 96)) == 6  # 12 expected, two a group
    assert estimate_file_group_count(6, Sizing(2, 4, 2.0, 96)) == 4  # at least max: max
    assert estimate_file_group_count(0, Sizing(2, 4)) == 2  # at most min: min
    assert estimate_file_group_count(1, Sizing(1, 8, 2.0, 96)) == 1
    with pytest.raises(InvalidConfig, match="holds no entry"):
        estimate_file_group_count(1, Sizing(1, 8, 2.0, 47))


def _index_groups(path: Path) -> int:
    return len({f.name.lstrip(".").split("_")[0] for f in (path / ".hoodie/metadata/record_index").iterdir()
                if "record-index-" in f.name})


def test_the_sizing_options_count_a_new_record_indexs_file_groups(tmp_path: Path) -> None:
    """A new table's index (built before its first write's keys: none) takes min; an index turned on for a table
    of six keys takes six groups of two keys grown twofold; the older key names are aliases."""
    rows = pa.Table.from_pylist([{"id": f"k{i}", "p": "ab"[i % 2], "ts": 1} for i in range(6)])
    new = tmp_path / "new"
    HudiTable(str(new), engine="local").write(rows, "insert", {
        **OPTIONS, "hoodie.metadata.global.record.level.index.min.filegroup.count": "2",
        "hoodie.metadata.record.index.max.filegroup.count": "4"})
    assert _index_groups(new) == 2
    old = tmp_path / "old"
    table = HudiTable(str(old), engine="local")
    table.write(rows, "insert", {k: v for k, v in OPTIONS.items() if "index" not in k})
    table.write(rows.slice(0, 1), "upsert", {
        **OPTIONS, "hoodie.metadata.record.index.min.filegroup.count": "1",
        "hoodie.metadata.global.record.level.index.max.filegroup.count": "8",
        "hoodie.metadata.record.index.growth.factor": "2", "hoodie.metadata.record.index.max.filegroup.size": "96"})
    assert _index_groups(old) == 6
    assert sorted(read_record_index(Storage(str(old)))) == [f"k{i}" for i in range(6)]


@pytest.mark.parametrize(("key", "value"), [("hoodie.metadata.record.index.max.filegroup.size", "47"),
                                            ("hoodie.metadata.record.index.growth.factor", "-1"),
                                            ("hoodie.metadata.record.index.growth.factor", "fast"),
                                            ("hoodie.metadata.record.index.min.filegroup.count", "0")])
def test_a_bad_sizing_value_is_refused(tmp_path: Path, key: str, value: str) -> None:
    rows = pa.Table.from_pylist([{"id": "k1", "p": "a", "ts": 1}])
    with pytest.raises(InvalidConfig, match=r"\.".join(key.split(".")[-2:])):  # the key (its new name for an alias)
        HudiTable(str(tmp_path / "t"), engine="local").write(rows, "insert", {**OPTIONS, key: value})
    assert not (tmp_path / "t").exists()


def test_global_record_level_index_is_the_record_index(tmp_path: Path) -> None:
    """``hoodie.index.type=GLOBAL_RECORD_LEVEL_INDEX`` (any case), Apache Hudi 1.2's name of the global record index,
    tags as ``RECORD_INDEX`` does: an upsert naming another partition updates the key where it is."""
    from spec.read.reader import read_table

    table = HudiTable(str(tmp_path / "t"), engine="local")
    table.write(pa.Table.from_pylist([{"id": "k1", "p": "a", "ts": 1}]), "insert", OPTIONS)
    table.write(pa.Table.from_pylist([{"id": "k1", "p": "b", "ts": 2}]), "upsert",
                {**OPTIONS, "hoodie.index.type": "global_record_level_index"})
    rows = read_table(str(tmp_path / "t")).select(["id", "_hoodie_partition_path", "ts"]).to_pylist()
    assert rows == [{"id": "k1", "_hoodie_partition_path": "a", "ts": 2}]
    assert [loc.partition_path for loc in read_record_index(Storage(str(tmp_path / "t"))).values()] == ["a"]


def test_record_index_info_is_as_hudi_writes_it() -> None:
    """The values Apache Hudi 1.2.0 wrote for key k1 of file group 08ebbddc-…-0 at 20261127204803864 (UTC)."""
    info = record_index_info("a", "08ebbddc-eca1-4d82-8f0b-33f337c76db0-0", "20261127204803864")
    assert info == {"partitionName": "a", "fileIdHighBits": 642816128390876546,
                    "fileIdLowBits": -8139354781836153424, "fileIndex": 0, "fileId": "",
                    "instantTime": 1795812483864, "fileIdEncoding": 0, "position": None}
    loc = record_location(info)
    assert (loc.file_id, loc.instant_time) == ("08ebbddc-eca1-4d82-8f0b-33f337c76db0-0", "20261127204803864")
    assert record_index_info("a", "my-group", "20261127204803864")["fileIdEncoding"] == 1
    assert [file_group_for_key(k, 10) for k in ("k1", "k2", "k3", "k4")] == [6, 7, 8, 9]  # Hudi's file groups


def test_changes_are_inserts_moves_and_deletes_only() -> None:
    held = {"k1": ("a", "f1"), "k2": ("a", "f1"), "k3": ("b", "f2")}
    placed = {"k1": ("a", "f1"), "k4": ("b", "f2"), "k2": ("c", "f3")}
    upserts, deletes = record_index_changes(held, placed, {"k3": ("b", "f2"), "k2": ("a", "f1"), "k9": ("a", "f1")})
    assert upserts == {"k4": ("b", "f2"), "k2": ("c", "f3")} and deletes == {"k3"}


OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"}


def _frame() -> pa.Table:
    return pa.Table.from_pylist([{"id": "k1", "p": "a", "ts": 1}, {"id": "k2", "p": "b", "ts": 1}])


def test_the_writer_keeps_the_index_and_refuses_what_it_does_not_keep(tmp_path: Path) -> None:
    table = HudiTable(str(tmp_path / "t"), engine="local")
    table.write(_frame(), operation="insert", options=OPTIONS)
    index = read_record_index(Storage(str(tmp_path / "t")))
    assert {k: v.partition_path for k, v in index.items()} == {"k1": "a", "k2": "b"}
    table.write(_frame().slice(0, 1), operation="delete", options=OPTIONS)
    assert set(read_record_index(Storage(str(tmp_path / "t")))) == {"k2"}
    with pytest.raises(UnsupportedOption, match="versions 8 and 9"):
        HudiTable(str(tmp_path / "v6"), engine="local").write(
            _frame(), operation="insert", options={**OPTIONS, "hoodie.write.table.version": "6"})
    with pytest.raises(InvalidConfig, match="RECORD_INDEX"):
        HudiTable(str(tmp_path / "off"), engine="local").write(
            _frame(), operation="insert", options={**OPTIONS, "hoodie.metadata.record.index.enable": "false"})


def _index_is_the_snapshot(path: Path) -> None:
    from spec.read.reader import read_table

    snap = read_table(str(path)).to_pylist()
    want = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0])
            for r in snap}
    got = {k: (v.partition_path, v.file_id) for k, v in read_record_index(Storage(str(path))).items()}
    assert got == want


def test_the_index_follows_metadata_compaction_cleans_archival_and_rollback(tmp_path: Path) -> None:
    """Fourteen upserts and deletes (a metadata compaction merges the record index's file groups into base HFiles,
    data cleans and archival run), then a rollback of the latest commit: the index holds the snapshot's keys where
    the snapshot reads them, at every step checked."""
    from reference.executors.rollback import rollback
    from spec.config.table_config import TableConfig

    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    opts = {**OPTIONS, "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
            "hoodie.cleaner.commits.retained": "1"}
    for n in range(14):
        rows = [{"id": f"k{n}", "p": "ab"[n % 2], "ts": n}, {"id": f"k{n // 2}", "p": "c", "ts": n}]
        table.write(pa.Table.from_pylist(rows), operation="upsert", options=opts)
        if n % 5 == 4:
            table.write(pa.Table.from_pylist([{"id": f"k{n - 1}", "p": "a", "ts": n}]), operation="delete",
                        options=opts)
    _index_is_the_snapshot(path)
    assert list((path / ".hoodie/metadata/record_index").glob("record-index-*.hfile"))  # compacted
    storage = Storage(str(path))
    rollback(storage, TableConfig.load(storage))
    _index_is_the_snapshot(path)


def test_merge_on_read_logs_and_compaction_keep_the_index(tmp_path: Path) -> None:
    """On merge-on-read an update is a log block in the key's file group (the index unchanged), a delete a delete
    block (the key leaves the index), and a compaction writes every key's group again in a base file: the index
    still holds the snapshot's keys where it reads them."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    table.write(_frame(), operation="insert", options=opts)
    table.write(pa.Table.from_pylist([{"id": "k1", "p": "z", "ts": 2}, {"id": "k3", "p": "a", "ts": 2}]),
                operation="upsert", options=opts)
    table.write(_frame().slice(1, 1), operation="delete", options=opts)
    _index_is_the_snapshot(path)
    assert table.compact(opts) is not None
    _index_is_the_snapshot(path)
    assert sorted(read_record_index(Storage(str(path)))) == ["k1", "k3"]


def test_replacing_operations_and_clustering_keep_the_index(tmp_path: Path) -> None:
    """insert_overwrite (the replaced groups' keys leave the index), delete_partition (its keys leave), clustering
    (every key moves to its new group), as Apache Hudi 1.2.0 keeps its record index through them (measured: its index
    equals its snapshot after each)."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    rows = [{"id": f"k{i}", "p": "abc"[i % 3], "ts": 1} for i in range(6)]
    table.write(pa.Table.from_pylist(rows), operation="insert", options=OPTIONS)
    table.write(pa.Table.from_pylist([{"id": "n1", "p": "a", "ts": 2}]), operation="insert_overwrite",
                options=OPTIONS)
    _index_is_the_snapshot(path)
    table.write(pa.Table.from_pylist([{"id": "x", "p": "b", "ts": 3}]), operation="delete_partition",
                options={**OPTIONS, "hoodie.datasource.write.partitions.to.delete": "b"})
    _index_is_the_snapshot(path)
    table.write(pa.Table.from_pylist([{"id": "n2", "p": "c", "ts": 4}]), operation="insert", options=OPTIONS)
    assert table.cluster(OPTIONS) is not None
    _index_is_the_snapshot(path)
    assert sorted(read_record_index(Storage(str(path)))) == ["k2", "k5", "n1", "n2"]


def test_a_restore_rebuilds_the_index(tmp_path: Path) -> None:
    """A restore lists the metadata table anew, its record index with it (from the restored table's keys)."""
    from reference.executors.restore import restore
    from reference.executors.savepoint import savepoint_create
    from spec.config.table_config import TableConfig

    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    table.write(pa.Table.from_pylist([{"id": f"k{i}", "p": "ab"[i % 2], "ts": 1} for i in range(4)]),
                operation="insert", options=OPTIONS)
    storage = Storage(str(path))
    point = savepoint_create(storage, TableConfig.load(storage))
    table.write(pa.Table.from_pylist([{"id": "k9", "p": "a", "ts": 2}, {"id": "k1", "p": "a", "ts": 2}]),
                operation="upsert", options=OPTIONS)
    table.write(_frame().slice(0, 1), operation="delete", options=OPTIONS)
    restore(storage, TableConfig.load(storage), point.instant)
    assert "record_index" in TableConfig.load(storage).metadata_partitions
    _index_is_the_snapshot(path)
    assert sorted(read_record_index(storage)) == ["k0", "k1", "k2", "k3"]


def test_a_write_without_the_option_deletes_the_index_as_hudi_does(tmp_path: Path) -> None:
    """Apache Hudi 1.2.0's upsert without ``hoodie.metadata.record.index.enable`` deletes the table's record index
    (measured: ``record_index`` left ``hoodie.table.metadata.partitions``); so does ours. A compaction keeps it."""
    from spec.config.table_config import TableConfig

    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    table.write(_frame(), operation="insert", options=opts)
    table.write(_frame().slice(0, 1), operation="upsert", options=opts)
    assert table.compact() is not None
    assert "record_index" in TableConfig.load(str(path)).metadata_partitions
    _index_is_the_snapshot(path)
    plain = {k: v for k, v in opts.items() if k not in ("hoodie.metadata.record.index.enable", "hoodie.index.type")}
    table.write(_frame().slice(1, 1), operation="upsert", options=plain)
    assert TableConfig.load(str(path)).metadata_partitions == ("files",)
    assert not (path / ".hoodie/metadata/record_index").exists()


def test_the_other_form_of_the_record_index_is_refused(tmp_path: Path) -> None:
    """A table whose record index is the partitioned one (its definition's ``isPartitioned`` true: file groups per
    data partition, ``hoodie.metadata.record.level.index.enable``) is not written with the global record index
    asked for, nor a global one with the partitioned one: nothing is changed."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    table.write(_frame(), operation="insert", options=OPTIONS)
    before = sorted(p.name for p in path.rglob("*"))
    level = {**OPTIONS, "hoodie.metadata.record.index.enable": "false",
             "hoodie.metadata.record.level.index.enable": "true", "hoodie.index.type": "RECORD_LEVEL_INDEX"}
    with pytest.raises(InvalidConfig, match="the global one, and this write asks for the partitioned one"):
        table.write(_frame(), operation="upsert", options=level)
    assert sorted(p.name for p in path.rglob("*")) == before
    defs = path / ".hoodie/.index_defs/index.json"
    defs.write_text(defs.read_text().replace('"isPartitioned" : "false"', '"isPartitioned" : "true"'))
    with pytest.raises(InvalidConfig, match="the partitioned one, and this write asks for the global one"):
        table.write(_frame(), operation="upsert", options=OPTIONS)
    assert sorted(p.name for p in path.rglob("*")) == before


def test_an_initialization_a_killed_writer_left_is_done_again(tmp_path: Path) -> None:
    """A writer killed while it built the record index leaves ``record_index`` inflight and a pending metadata
    deltacommit with some of its files; the next write discards them and builds the index again."""
    from spec.config.table_config import TableConfig

    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    plain = {k: v for k, v in OPTIONS.items() if k not in ("hoodie.metadata.record.index.enable", "hoodie.index.type")}
    table.write(_frame(), operation="insert", options=plain)
    timeline = path / ".hoodie/metadata/.hoodie/timeline"
    (timeline / "00000000000000001.deltacommit.requested").write_bytes(b"")
    (timeline / "00000000000000001.deltacommit.inflight").write_bytes(b"")
    (path / ".hoodie/metadata/record_index").mkdir()
    (path / ".hoodie/metadata/record_index/.record-index-0000-0_00000000000000001.log.1_0-0-0").write_bytes(b"x")
    props = path / ".hoodie/hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.metadata.partitions.inflight=record_index\n")
    table.write(_frame().slice(0, 1), operation="upsert", options=OPTIONS)
    assert "record_index" in TableConfig.load(str(path)).metadata_partitions
    # the killed writer's instant discarded, its time taken again by the new initialization, which completed
    assert len(list(timeline.glob("00000000000000001_*.deltacommit"))) == 1
    assert not list(timeline.glob("00000000000000002*"))
    assert (path / ".hoodie/metadata/record_index/.record-index-0000-0_00000000000000001.log.1_0-0-0").read_bytes() \
        != b"x"
    _index_is_the_snapshot(path)
