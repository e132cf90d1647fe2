"""Apache Hudi 1.2.0's record index validation (``tests.hudi_record_index_validation``: the count and content checks
of ``HoodieMetadataTableValidator``, run with Hudi's classes in the test's Spark session, and Hudi's metadata reader
looking every key up) on a table our writer alone writes through every operation that keeps the record index:
insert, upsert (a key named in another partition updated where it is), delete, a merge-on-read compaction,
clustering, insert_overwrite, delete_partition, rollback, a savepoint's restore, and clean. Then the sizing
options (``hoodie.metadata.record.index.*.filegroup.*``, ``growth.factor``): our writer builds as many record index
file groups as Apache Hudi for the same table and options, and Apache Hudi tags by our index; and the estimate
equals Hudi's ``estimateFileGroupCount`` called through py4j.

The merge-on-read version 9 case (about 30 s), the ``grown`` sizing (about 20 s) and the estimate (about 1 s) run in
``make ci-slow``, the others under ``explore``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.config.table_config import TableConfig
from spec.metadata.record_index import read_record_index
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from tests.hudi_record_index_validation import validate_record_index

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _options(version: int) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.hive_style_partitioning": "false",
            "hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"}


def _rows(*rows: tuple[str, str, int]) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "p": p, "ts": ts, "v": f"v{ts}"} for i, p, ts in rows])


@pytest.mark.parametrize("version", [9, pytest.param(8, marks=pytest.mark.explore)])
def test_hudi_validates_the_record_index_our_writer_keeps(apache_hudi: Any, tmp_path: Path, version: int) -> None:
    from reference.executors.restore import restore
    from reference.executors.rollback import rollback
    from reference.executors.savepoint import savepoint_create

    path = str(tmp_path / "t")
    table, opts, storage = HudiTable(path, engine="local"), _options(version), Storage(path)
    gone: set[str] = set()  # keys the table held and no longer holds

    def check(step: str) -> None:
        keys = {r["id"] for r in read_table(path).to_pylist()}
        assert validate_record_index(apache_hudi, path, gone - keys) == len(keys), step
        assert set(read_record_index(storage)) == keys, f"{step}: our reader of the index"

    table.write(_rows(*((f"k{n}", "abc"[n % 3], 1) for n in range(9))), "insert", opts)
    check("insert")
    table.write(_rows(("k0", "a", 2), ("k1", "c", 2), ("n1", "b", 2)), "upsert", opts)
    check("upsert (k1 named in c, updated in b)")
    table.write(_rows(("k2", "c", 3), ("k3", "z", 3)), "delete", opts)
    gone |= {"k2", "k3"}
    check("delete")
    assert table.compact(opts) is not None
    check("compaction")
    assert table.cluster(opts) is not None
    check("clustering")
    table.write(_rows(("o1", "a", 4)), "insert_overwrite", opts)
    gone |= {"k6"}
    check("insert_overwrite of a")
    table.delete_partitions(["b"], opts)
    gone |= {"k1", "k4", "k7", "n1"}
    check("delete_partition of b")
    table.write(_rows(("k5", "c", 5), ("r1", "c", 5)), "upsert", opts)
    check("upsert")
    rollback(storage, TableConfig.load(storage))
    gone |= {"r1"}
    check("rollback of the upsert")
    point = savepoint_create(storage, TableConfig.load(storage))
    table.write(_rows(("s1", "a", 6), ("k8", "a", 6)), "upsert", opts)
    table.write(_rows(("o1", "a", 7)), "delete", opts)
    check("upsert and delete after the savepoint")
    restore(storage, TableConfig.load(storage), point.instant)
    gone |= {"s1"}
    check("restore to the savepoint")
    table.clean({**opts, "hoodie.cleaner.commits.retained": "1"})
    check("clean")


def _index_groups(path: Path) -> int:
    return len({f.name.lstrip(".").split("_")[0] for f in (path / ".hoodie/metadata/record_index").iterdir()
                if "record-index-" in f.name})


SIZINGS = {
    "grown": {"hoodie.metadata.record.index.min.filegroup.count": "1",
              "hoodie.metadata.global.record.level.index.max.filegroup.count": "8",
              "hoodie.metadata.record.index.growth.factor": "2.0",
              "hoodie.metadata.record.index.max.filegroup.size": "96"},
    "bounded": {"hoodie.metadata.global.record.level.index.min.filegroup.count": "2",
                "hoodie.metadata.record.index.max.filegroup.count": "4"},
}
"""``grown``: two entries a file group, six keys grown twofold (six file groups); ``bounded``: between 2 and 4."""


@pytest.mark.parametrize("sizing", ["grown", pytest.param("bounded", marks=pytest.mark.explore)])
def test_the_sizing_options_give_as_many_file_groups_as_hudis(apache_hudi: Any, tmp_path: Path, sizing: str) -> None:
    """A copy-on-write table Apache Hudi wrote without a record index (six keys); on one copy Apache Hudi's upsert
    turns the index on with the sizing options, on the other ours: the same number of record index file groups.
    Then Apache Hudi upserts every key naming partition z into our table: each found by our index and updated
    where it is (no key twice), and Apache Hudi's record index validation passes."""
    import shutil

    from tests.test_record_index_hudi import _hudi_write, _options, _our_write

    hudi, ours = tmp_path / "hudi", tmp_path / "ours"
    plain = {k: v for k, v in _options(9).items() if "index" not in k}
    df = apache_hudi.createDataFrame([(f"k{i}", "ab"[i % 2], 1, "x") for i in range(6)],
                                     "id string, p string, ts long, v string")
    (df.write.format("hudi").options(**plain).option("hoodie.datasource.write.operation", "insert")
     .option("hoodie.insert.shuffle.parallelism", "2").mode("append").save(str(hudi)))
    shutil.copytree(hudi, ours)
    rows = (("k1", "a", 2, "y"),)
    (apache_hudi.createDataFrame(list(rows), "id string, p string, ts long, v string").write.format("hudi")
     .options(**_options(9), **SIZINGS[sizing]).option("hoodie.datasource.write.operation", "upsert")
     .option("hoodie.upsert.shuffle.parallelism", "2").mode("append").save(str(hudi)))
    HudiTable(str(ours), engine="local").write(
        pa.Table.from_pylist([{"id": i, "p": p, "ts": ts, "v": v} for i, p, ts, v in rows]), "upsert",
        {**_options(9), **SIZINGS[sizing]})
    assert _index_groups(ours) == _index_groups(hudi) == {"grown": 6, "bounded": 2}[sizing]
    before = {r["id"]: r["_hoodie_partition_path"] for r in read_table(str(ours)).to_pylist()}
    _hudi_write(apache_hudi, ours, 9, "upsert", tuple((k, "z", 10, "h") for k in sorted(before)))
    got = apache_hudi.read.format("hudi").load(str(ours)).select("id", "_hoodie_partition_path", "v").collect()
    assert sorted(tuple(r) for r in got) == sorted((k, p, "h") for k, p in before.items())
    assert validate_record_index(apache_hudi, str(ours)) == 6
    _our_write(ours, 9, "delete", (("k2", "a", 11, ""),))
    assert validate_record_index(apache_hudi, str(ours), ["k2"]) == 5


def test_the_estimate_is_hudis_estimate_file_group_count(apache_hudi: Any) -> None:
    """``spec.metadata.record_index.estimate_file_group_count`` against Apache Hudi 1.2.0's
    ``HoodieTableMetadataUtil.estimateFileGroupCount`` called through py4j, over key counts, bounds, growth factors
    and sizes. The key count reaches Hudi through a ``Supplier<Long>`` implemented in Python, which py4j hands over
    as a Long only from 2^31 on, so the counts are large ones — where Java's float product differs from a double's
    (fifteen of these cases)."""
    from pyspark.java_gateway import ensure_callback_server_started

    from spec.metadata.record_index import Sizing, estimate_file_group_count

    ensure_callback_server_started(apache_hudi.sparkContext._gateway)
    jvm = apache_hudi._jvm

    class Count:
        def __init__(self, n: int) -> None:
            self.n = n

        def get(self) -> int:
            return self.n

        class Java:
            implements: ClassVar[list[str]] = ["java.util.function.Supplier"]

    util = jvm.org.apache.hudi.metadata.HoodieTableMetadataUtil
    kind = jvm.org.apache.hudi.metadata.MetadataPartitionType.RECORD_INDEX
    cases = [(n, lo, hi, g, size) for n in (2**31, 2**31 + 1, 3 * 10**9 + 7, 10**10, 123456789012, 2**40 + 12345)
             for lo, hi in ((10, 10000), (1, 8), (2, 4), (1, (1 << 31) - 1), (5, 5), (8, 2))
             for g in (2.0, 1.1, 0.5, 3.7) for size in (48, 95, 96, 1000, 1 << 30)]
    differ = [c for c in cases if estimate_file_group_count(c[0], Sizing(*c[1:]))
              != util.estimateFileGroupCount(kind, Count(c[0]), 48, *c[1:])]
    assert not differ, differ


@pytest.mark.explore
def test_compacted_record_index_hfiles_are_laid_out_as_hudis(apache_hudi: Any, tmp_path: Path) -> None:
    """The same twelve commits by Apache Hudi and by our writer (twenty keys, then one new key a commit), until
    each compacts its metadata table: each record index file group whose base HFile holds the same keys in both has
    the same layout — one data block, the same trailer but for offsets and sizes, the same file info but for the
    creation time and the average value length, the same bloom filter meta block byte for byte — and the same
    entries but for what cannot be the same: the file ids' bits (random UUIDs), the instants, and the write token
    in ``_hoodie_file_name`` (Apache Hudi's Spark task ids, ``4-155-402``; ours ``0-0-0``), which makes Hudi's
    values a few bytes longer. (File groups whose keys differ were compacted at another commit: Apache Hudi's
    metadata table counts two more initialization deltacommits, its column stats and partition stats.)"""
    import dataclasses

    from spec.metadata.hfile import parse_hfile
    from spec.metadata.metadata_table import hfile_records
    from tests.test_record_index_hudi import _hudi_write, _our_write

    steps = [("insert", tuple((f"k{i:02d}", "ab"[i % 2], 1, "x") for i in range(20)))]
    steps += [("upsert", ((f"n{j:02d}", "ab"[j % 2], 2 + j, "y"),)) for j in range(11)]
    for op, rows in steps:
        _hudi_write(apache_hudi, tmp_path / "hudi", 9, op, rows)
        _our_write(tmp_path / "ours", 9, op, rows)

    def bases(who: str) -> dict[str, bytes]:
        files = sorted((tmp_path / who / ".hoodie/metadata/record_index").glob("*.hfile"), key=lambda f: f.name)
        return {f.name.split("_")[0]: f.read_bytes() for f in files}  # the latest base of each file group

    def entries(data: bytes) -> dict[str, Any]:
        out = {}
        for k, r in hfile_records(data).items():
            info = {f: v for f, v in r["recordIndexMetadata"].items()
                    if f not in ("fileIdHighBits", "fileIdLowBits", "instantTime")}
            name = r["_hoodie_file_name"].split("_")
            out[k] = {**r, "recordIndexMetadata": info, "_hoodie_file_name": name[0]}  # the file group alone
        return out

    theirs, ours = bases("hudi"), bases("ours")
    same = [g for g in theirs if g in ours and sorted(hfile_records(theirs[g])) == sorted(hfile_records(ours[g]))]
    assert len(same) >= 5, same
    skip = {"file_info_offset", "load_on_open_data_offset", "uncompressed_data_index_size", "total_uncompressed_bytes",
            "last_data_block_offset"}
    for g in same:
        h, o = parse_hfile(theirs[g]), parse_hfile(ours[g])
        assert h.block_counts == o.block_counts == (len(h.entries),), g
        assert {f.name: getattr(h.trailer, f.name) for f in dataclasses.fields(h.trailer) if f.name not in skip} == \
            {f.name: getattr(o.trailer, f.name) for f in dataclasses.fields(o.trailer) if f.name not in skip}, g
        vary = ("hfile.CREATE_TIME_TS", "hfile.AVG_VALUE_LEN")
        assert {k: v for k, v in h.file_info.items() if k not in vary} == \
            {k: v for k, v in o.file_info.items() if k not in vary}, g
        assert h.meta_blocks == o.meta_blocks, g
        assert (h.checksum_type, h.bytes_per_checksum) == (o.checksum_type, o.bytes_per_checksum), g
        assert entries(theirs[g]) == entries(ours[g]), g
