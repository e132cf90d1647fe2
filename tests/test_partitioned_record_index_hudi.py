"""The partitioned record index (``hoodie.metadata.record.level.index.enable``, ``hoodie.index.type=
RECORD_LEVEL_INDEX``) against Apache Hudi 1.2.0 in the test's Spark session, on copy-on-write and merge-on-read
tables of versions 9 and 8 (Apache Hudi 1.2.0 writes it on both): Apache Hudi writes, our writer continues, then
Apache Hudi again — and the reverse. A twin table Apache Hudi writes alone takes the same operations.

The steps put one key in several partitions (a key is unique within its partition) and write a partition first
after the index was built. After every step Apache Hudi's reader, the spec reader and hudi-rs read the rows the
spec model predicts (no (partition, key) twice: each writer tagged by the other's index, an update landing in the
file group the index names); the index (``read_partitioned_record_index``) names, for every (partition, key), the
file group a snapshot reads it from; its file groups are the twin's (``record-index-<partition>-0000-0``: the names
are the same), and it equals the twin's, entry by entry: the same keys sharing a file group (data file ids are
random). One case runs in ``make ci-slow`` (under a minute), the others under ``explore``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.config.table_config import TableConfig
from spec.metadata.partitioned_record_index import read_partitioned_record_index
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from tests.test_record_index_hudi import model_rows, readers_read

pytestmark = [pytest.mark.spark, pytest.mark.slow]

Row = tuple[str, str, int, str]
STEPS: tuple[tuple[str, tuple[Row, ...]], ...] = (
    ("insert", (("k1", "a", 1, "x1"), ("k2", "a", 1, "x2"), ("k3", "b", 1, "x3"))),
    ("upsert", (("k1", "a", 2, "y1"), ("k4", "c", 2, "y4"), ("k2", "b", 2, "y2"))),
    ("delete", (("k3", "b", 3, ""), ("k1", "c", 3, ""))),
    ("upsert", (("k1", "b", 4, "z1"), ("k3", "a", 4, "z3"), ("k4", "c", 4, "z4"))),
    ("delete", (("k2", "a", 5, ""),)),
)
"""Insert; update k1 in a, insert k4 in c (a partition written first after the index was built) and k2 in b (k2 is
also in a); delete k3 from b and k1 from c (which does not hold it: nothing); insert k1 in b and k3 in a, update k4;
delete k2 from a (it stays in b)."""

State = dict[tuple[str, str], Row]


def options(version: int, table_type: str = "COPY_ON_WRITE") -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.hive_style_partitioning": "false",
            "hoodie.metadata.record.level.index.enable": "true", "hoodie.index.type": "RECORD_LEVEL_INDEX"}


def hudi_write(spark: Any, path: Path, version: int, op: str, rows: tuple[Row, ...],
               table_type: str = "COPY_ON_WRITE", opts: dict[str, str] | None = None) -> None:
    df = spark.createDataFrame(list(rows), "id string, p string, ts long, v string")
    (df.write.format("hudi").options(**(opts or options(version, table_type)))
     .option("hoodie.datasource.write.operation", op).option("hoodie.upsert.shuffle.parallelism", "2")
     .option("hoodie.insert.shuffle.parallelism", "2").option("hoodie.delete.shuffle.parallelism", "2")
     .mode("append").save(str(path)))


def our_write(path: Path, version: int, op: str, rows: tuple[Row, ...], table_type: str = "COPY_ON_WRITE",
              spark: Any = None, extra: dict[str, str] | None = None) -> None:
    """Our writer's step: in this process, or on Spark (``spark``: the session) with the batch as a DataFrame."""
    opts = {**options(version, table_type), **(extra or {})}
    if spark is not None:
        frame = spark.createDataFrame(list(rows), "id string, p string, ts long, v string")
        HudiTable(str(path), spark=spark).write(frame, operation=op, options=opts)
        return
    table = pa.Table.from_pylist([{"id": i, "p": p, "ts": ts, "v": v} for i, p, ts, v in rows])
    HudiTable(str(path), engine="local").write(table, operation=op, options=opts)


def expect(state: State, op: str, rows: tuple[Row, ...]) -> None:
    """The rows after a step, keyed by (partition, key): a delete removes the key from the partition it names."""
    for i, p, ts, v in rows:
        if op == "delete":
            state.pop((p, i), None)
        elif (p, i) not in state or ts >= state[(p, i)][2]:
            state[(p, i)] = (i, p, ts, v)


def check(spark: Any, path: Path, state: State, step: str) -> dict[tuple[str, str], Any]:
    """Every reader reads ``state``; the partitioned index is the snapshot's locations. The index, returned."""
    spec = readers_read(spark, path, sorted(state.values()), step)
    index = read_partitioned_record_index(Storage(str(path)))
    located = {(r["_hoodie_partition_path"], r["id"]): r["_hoodie_file_name"].split("_")[0] for r in spec}
    assert {pk: loc.file_id for pk, loc in index.items()} == located, f"{step}: record index"
    assert all(loc.partition_path == p for (p, _), loc in index.items()), f"{step}: record index partitions"
    return index


def index_file_groups(path: Path) -> set[str]:
    """The partitioned index's file groups, as its files name them."""
    return {f.name.lstrip(".").split("_")[0] for f in (path / ".hoodie/metadata/record_index").iterdir()
            if f.name.lstrip(".").startswith("record-index-")}


def shape(index: dict[tuple[str, str], Any]) -> set[frozenset[tuple[str, str]]]:
    """A partitioned index without its random data file ids: which (partition, key) entries share a file group."""
    groups: dict[str, set[tuple[str, str]]] = {}
    for pk, loc in index.items():
        groups.setdefault(loc.file_id, set()).add(pk)
    return {frozenset(g) for g in groups.values()}


def _model_rows(version: int, table_type: str, steps: tuple[tuple[str, tuple[Row, ...]], ...]) -> list[Row]:
    """The snapshot the spec model predicts after ``steps``. The case language does not hold the partitioned record
    index: the model tags as a non-global index does (SIMPLE), which is the partitioned record index's rule — a key
    is unique within its partition."""
    return model_rows(version, table_type, steps, index_type="SIMPLE", options=())


@pytest.mark.parametrize(("first", "version", "table_type"), [
    ("ours", 9, "MERGE_ON_READ"),
    pytest.param("hudi", 9, "COPY_ON_WRITE", marks=pytest.mark.explore),
    pytest.param("ours-spark", 8, "MERGE_ON_READ", marks=pytest.mark.explore),
    pytest.param("ours", 9, "COPY_ON_WRITE", marks=pytest.mark.explore),
    pytest.param("ours", 8, "COPY_ON_WRITE", marks=pytest.mark.explore),
    pytest.param("hudi", 9, "MERGE_ON_READ", marks=pytest.mark.explore),
    pytest.param("hudi", 8, "MERGE_ON_READ", marks=pytest.mark.explore),
    pytest.param("ours-spark", 9, "COPY_ON_WRITE", marks=pytest.mark.explore)])
def test_hudi_and_our_writer_keep_one_partitioned_record_index(apache_hudi: Any, tmp_path: Path, first: str,
                                                               version: int, table_type: str) -> None:
    table, twin = tmp_path / "t", tmp_path / "twin"
    state: State = {}
    for n, (op, rows) in enumerate(STEPS):
        ours = (n % 2 == 1) == (first == "hudi")
        if ours:
            our_write(table, version, op, rows, table_type, apache_hudi if first == "ours-spark" else None)
        else:
            hudi_write(apache_hudi, table, version, op, rows, table_type)
        hudi_write(apache_hudi, twin, version, op, rows, table_type)
        expect(state, op, rows)
        step = f"step {n} ({op}, {'ours' if ours else 'Apache Hudi'})"
        assert _model_rows(version, table_type, STEPS[:n + 1]) == sorted(state.values()), f"{step}: the spec model"
        index = check(apache_hudi, table, state, step)
        twin_index = check(apache_hudi, twin, state, step + " twin")
        assert shape(index) == shape(twin_index), f"{step}: record index against Apache Hudi's"
        assert index_file_groups(table) == index_file_groups(twin), f"{step}: index file groups"


@pytest.mark.explore
def test_apache_hudi_combines_one_key_of_two_partitions_into_one_record(apache_hudi: Any, tmp_path: Path) -> None:
    """Apache Hudi 1.2.0's bug, the smallest reproducer: with the partitioned record index, on a table holding
    ``k1`` in partition ``a``, an upsert of ``k1`` in ``a`` and ``k1`` in ``b`` (two records: a key is unique within
    its partition) writes one row — ``k1`` of ``a`` with ``b``'s values —, where the SIMPLE index (also
    partition-scoped) writes both. Our writer refuses a batch naming a key in two partitions
    (``tests/test_partitioned_record_index.py``)."""
    simple = {k: v for k, v in options(9).items() if k != "hoodie.metadata.record.level.index.enable"}
    for name, opts in (("rli", options(9)), ("simple", {**simple, "hoodie.index.type": "SIMPLE"})):
        hudi_write(apache_hudi, tmp_path / name, 9, "insert", (("k0", "a", 1, "x"), ("k1", "a", 1, "x")), opts=opts)
        hudi_write(apache_hudi, tmp_path / name, 9, "upsert", (("k1", "a", 2, "in a"), ("k1", "b", 2, "in b")),
                   opts=opts)

    def keys(name: str) -> list[tuple[str, str]]:
        read = apache_hudi.read.format("hudi").load(str(tmp_path / name))
        return sorted(tuple(r) for r in read.select("id", "_hoodie_partition_path", "v").collect())

    assert keys("simple") == [("k0", "a", "x"), ("k1", "a", "in a"), ("k1", "b", "in b")]
    assert keys("rli") == [("k0", "a", "x"), ("k1", "a", "in b")]  # k1 of b lost, its values in a


@pytest.mark.explore
def test_replacing_operations_compaction_and_restore_across_writers(apache_hudi: Any, tmp_path: Path) -> None:
    """Our insert_overwrite, delete_partition and clustering, then Apache Hudi upserts every (partition, key) (each
    found by our index, updated where it is); enough of our upserts for a metadata compaction (the index merged into
    base HFiles per file group), then Apache Hudi's upsert of every entry; our savepoint, upsert and restore (the
    index rebuilt per partition), then Apache Hudi's upsert of every entry. No entry twice, the index the snapshot."""
    from reference.executors.restore import restore
    from reference.executors.savepoint import savepoint_create

    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    opts = options(9)
    rows = [{"id": f"k{i % 4}", "p": "abc"[i % 3], "ts": 1, "v": "x"} for i in range(9)]
    table.write(pa.Table.from_pylist(rows), operation="insert", options=opts)
    table.write(pa.Table.from_pylist([{"id": "k1", "p": "a", "ts": 2, "v": "n"}]), operation="insert_overwrite",
                options=opts)
    table.write(pa.Table.from_pylist([{"id": "x", "p": "b", "ts": 3, "v": "x"}]), operation="delete_partition",
                options={**opts, "hoodie.datasource.write.partitions.to.delete": "b"})
    assert table.cluster(opts) is not None
    state: State = {(r["_hoodie_partition_path"], r["id"]): (r["id"], r["_hoodie_partition_path"], 10, "h")
                    for r in read_table(str(path)).to_pylist()}
    assert sorted(state) == [("a", "k1"), ("c", "k0"), ("c", "k1"), ("c", "k2")]
    hudi_write(apache_hudi, path, 9, "upsert", tuple(sorted(state.values())))
    check(apache_hudi, path, state, "Apache Hudi after our replacing operations")
    for n in range(12):
        our_write(path, 9, "upsert", (("k1", "a", 20 + n, "o"), (f"m{n}", "ab"[n % 2], 20 + n, "o")))
        expect(state, "upsert", (("k1", "a", 20 + n, "o"), (f"m{n}", "ab"[n % 2], 20 + n, "o")))
    assert any(f.name.endswith(".hfile") for f in (path / ".hoodie/metadata/record_index").iterdir())
    everything = tuple((i, p, 50, "h2") for i, p, _, _ in sorted(state.values()))
    hudi_write(apache_hudi, path, 9, "upsert", everything)
    expect(state, "upsert", everything)
    check(apache_hudi, path, state, "Apache Hudi after our compacted index")
    storage = Storage(str(path))
    point = savepoint_create(storage, TableConfig.load(storage))
    our_write(path, 9, "upsert", (("n3", "a", 60, "o"), ("k1", "b", 60, "late")))
    restore(storage, TableConfig.load(storage), point.instant)
    again = tuple((i, p, 70, "r") for i, p, _, _ in sorted(state.values()))
    hudi_write(apache_hudi, path, 9, "upsert", again)
    expect(state, "upsert", again)
    check(apache_hudi, path, state, "Apache Hudi after our restore")


def _layout(path: Path) -> list[str]:
    """The index's files without write tokens and data instants: file group, kind, and the instant when it is the
    initialization's (``0000…``)."""
    out = []
    for f in (path / ".hoodie/metadata/record_index").iterdir():
        name = f.name
        if "record-index-" not in name or name.endswith(".crc"):
            continue
        instant = name.split("_")[1].split(".")[0] if name.startswith(".") else name.rsplit("_", 1)[1].split(".")[0]
        out.append(f"{name.lstrip('.').split('_')[0]} {'hfile' if name.endswith('.hfile') else 'log'} "
                   f"{instant if instant < '1' else 'data'}")
    return sorted(out)


@pytest.mark.explore
def test_turning_it_on_builds_what_apache_hudi_builds(apache_hudi: Any, tmp_path: Path) -> None:
    """A table Apache Hudi wrote without a record index (``k1`` in two partitions); its copy gets the same upsert
    from Apache Hudi and from our writer, both turning the partitioned index on: both build it at the same instant
    (``00000000000000003``) with a file group per data partition, an empty delete block and a base HFile each, the
    same entries at the same instants — only the upsert's new entry differs, by its commit's instant."""
    import shutil

    hudi, ours = tmp_path / "hudi", tmp_path / "ours"
    plain = {k: v for k, v in options(9).items()
             if k not in ("hoodie.metadata.record.level.index.enable", "hoodie.index.type")}
    hudi_write(apache_hudi, hudi, 9, "insert", (("k1", "a", 1, "x"), ("k2", "b", 1, "x"), ("k1", "b", 1, "x")),
               opts=plain)
    shutil.copytree(hudi, ours)
    rows = (("k3", "a", 2, "y"), ("k2", "b", 2, "y"))
    hudi_write(apache_hudi, hudi, 9, "upsert", rows)
    our_write(ours, 9, "upsert", rows)
    assert _layout(hudi) == _layout(ours)
    assert [f for f in _layout(ours) if "hfile" in f] == ["record-index-a-0000-0 hfile 00000000000000003",
                                                          "record-index-b-0000-0 hfile 00000000000000003"]
    theirs, mine = (read_partitioned_record_index(Storage(str(p))) for p in (hudi, ours))
    assert {pk: v for pk, v in theirs.items() if pk != ("a", "k3")} == {
        pk: v for pk, v in mine.items() if pk != ("a", "k3")}
    assert theirs[("a", "k3")].file_id == mine[("a", "k3")].file_id


@pytest.mark.explore
def test_replacing_operations_keep_what_apache_hudi_keeps(apache_hudi: Any, tmp_path: Path) -> None:
    """insert_overwrite of partition a, delete_partition of b, then an upsert into b again, by our writer on one
    table and by Apache Hudi on a twin: Apache Hudi keeps the replaced partitions' file groups (their keys deleted in
    log files), and so does our writer — the same file groups, the same entries sharing them, every reader reading
    the same rows. And an unpartitioned table: its file group is ``record-index--0000-0`` (the empty partition)."""
    table, twin = tmp_path / "t", tmp_path / "twin"
    start = (("k1", "a", 1, "x"), ("k2", "b", 1, "x"), ("k1", "b", 1, "x"))
    steps: tuple[tuple[str, tuple[Row, ...], dict[str, str]], ...] = (
        ("insert", start, {}), ("insert_overwrite", (("k9", "a", 3, "o"),), {}),
        ("delete_partition", (("k2", "b", 4, ""),), {"hoodie.datasource.write.partitions.to.delete": "b"}),
        ("upsert", (("k2", "b", 5, "back"),), {}))
    state: State = {}
    for op, rows, extra in steps:
        our_write(table, 9, op, rows, extra=extra)
        hudi_write(apache_hudi, twin, 9, op, rows, opts={**options(9), **extra})
        if op == "insert_overwrite":
            state = {pk: r for pk, r in state.items() if pk[0] != "a"}
        if op == "delete_partition":
            state = {pk: r for pk, r in state.items() if pk[0] != "b"}
        else:
            expect(state, "upsert", rows)
        index, twin_index = check(apache_hudi, table, state, op), check(apache_hudi, twin, state, op + " twin")
        assert shape(index) == shape(twin_index) and index_file_groups(table) == index_file_groups(twin), op
    unpartitioned = {**options(9), "hoodie.datasource.write.partitionpath.field": "",
                     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}
    for name in ("np-ours", "np-hudi"):
        rows = (("k1", "", 1, "x"), ("k2", "", 1, "x"))
        if name == "np-ours":
            our_write(tmp_path / name, 9, "insert", rows, extra=unpartitioned)
        else:
            hudi_write(apache_hudi, tmp_path / name, 9, "insert", rows, opts=unpartitioned)
        assert index_file_groups(tmp_path / name) == {"record-index--0000-0"}, name
        assert set(read_partitioned_record_index(Storage(str(tmp_path / name)))) == {("", "k1"), ("", "k2")}
