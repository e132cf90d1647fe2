"""The bucket index, SIMPLE engine (``spec.index.bucket_index``, ``spec.write.bucket_index_partitioner``): its
settings and refusals, its tags and buckets, and the writer on the local engine (file ids that start with each
key's bucket, a file group per bucket, merge-on-read updates to log files, a delete of a key never written
reaching its bucket's group), pure and fast; Apache Hudi's side is ``tests/test_bucket_index_hudi.py``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from reference.config.options import parse_options
from reference.write.client import WriteClient
from spec.errors import InvalidConfig, InvalidTable, UnsupportedOption
from spec.index.bucket_identifier import bucket_id, parse_bucket_id
from spec.index.bucket_index import BucketIndexConfig, bucket_file_groups, bucket_index_config, locate
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import read_instant_content
from spec.write.bucket_index_partitioner import assign_bucket_index, route_bucket
from spec.write.stream_buckets import BucketStreamAssigner

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}


def test_settings_are_hudis_and_bad_ones_are_refused() -> None:
    cfg = parse_options({"hoodie.index.type": "bucket"})
    assert (cfg.index_type, cfg.bucket_index_engine, cfg.bucket_index_num_buckets, cfg.bucket_index_hash_fields) == (
        "BUCKET", "SIMPLE", 256, ())
    assert bucket_index_config("BUCKET", "SIMPLE", 4, (), ("id", "name")) == BucketIndexConfig(4, ("id", "name"))
    assert bucket_index_config("BUCKET", "SIMPLE", 2, ("name",), ("id", "name")) == BucketIndexConfig(2, ("name",))
    assert bucket_index_config("BLOOM", "CONSISTENT_HASHING", 0, ("x",), ("id",)) is None
    with pytest.raises(InvalidConfig, match="not a subset of the record key"):
        bucket_index_config("BUCKET", "SIMPLE", 4, ("v",), ("id",))
    with pytest.raises(UnsupportedOption, match="CONSISTENT_HASHING") as err:
        bucket_index_config("BUCKET", "CONSISTENT_HASHING", 4, (), ("id",))
    assert "hoodie.index.bucket.engine=SIMPLE" in (err.value.hint or "")
    with pytest.raises(InvalidConfig, match=r"num\.buckets is 0"):
        bucket_index_config("BUCKET", "SIMPLE", 0, (), ("id",))
    with pytest.raises(UnsupportedOption, match=r"hoodie\.bucket\.index\.max\.num\.buckets"):
        parse_options({"hoodie.bucket.index.max.num.buckets": "8"})


def test_tags_are_the_buckets_groups_held_or_not() -> None:
    cfg = BucketIndexConfig(4, ("id",))
    groups = bucket_file_groups("a", ["00000001-aaaa-0", "00000003-bbbb-0"])
    assert groups == {1: "00000001-aaaa-0", 3: "00000003-bbbb-0"}
    for key in map(str, range(40)):
        assert locate(cfg, groups, key) == groups.get(bucket_id(key, ("id",), 4))
    with pytest.raises(InvalidTable, match="two file groups of bucket 1"):
        bucket_file_groups("a", ["00000001-aaaa-0", "00000001-cccc-0"])


def test_buckets_route_every_record_to_its_keys_bucket() -> None:
    cfg = BucketIndexConfig(4, ("id",))
    prefixes = iter(["aaaaaaaa-1111-4000-8000-000000000001", "bbbbbbbb-2222-4000-8000-000000000002"])
    a = assign_bucket_index({"a": ("00000001-x-0",)}, {("b", 2), ("a", 3)}, lambda: next(prefixes))
    assert [(b.number, b.kind, b.partition, b.file_id) for b in a.buckets] == [
        (0, "UPDATE", "a", "00000001-x-0"), (1, "INSERT", "a", "00000003-1111-4000-8000-000000000001"),
        (2, "INSERT", "b", "00000002-2222-4000-8000-000000000002")]
    key = next(k for k in map(str, range(100)) if bucket_id(k, ("id",), 4) == 3)
    assert route_bucket(cfg, key, "a", a) == 1
    with pytest.raises(InvalidTable, match="has a file group and takes a new one"):
        assign_bucket_index({"a": ("00000001-x-0",)}, {("a", 1)}, lambda: "cccccccc-0")


def _write(client: WriteClient, rows: list[tuple[int, str, int, str]], operation: str,
           **options: str) -> None:
    client.write(pa.table({"id": [r[0] for r in rows], "p": [r[1] for r in rows], "ts": [r[2] for r in rows],
                           "v": [r[3] for r in rows]}), operation, {**OPTIONS, **options})


def _files(path: Path) -> list[str]:
    return sorted(str(f.relative_to(path)) for f in path.rglob("*") if f.is_file() and ".hoodie" not in f.parts
                  and not f.name.startswith(".hoodie_partition"))


def _stats(path: Path) -> dict[str, tuple[int, int, int, int]]:
    storage = Storage(str(path))
    timeline = Timeline.load(storage)
    last = timeline.commits_timeline().completed().instants[-1]
    md = parse_commit_metadata(read_instant_content(storage, last, timeline.layout))
    return {s.path: (s.num_writes, s.num_inserts, s.num_update_writes, s.num_deletes) for s in md.all_write_stats()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_local_writer_puts_every_key_in_its_buckets_group(tmp_path: Path, table_type: str) -> None:
    """The layout Apache Hudi 1.2.0 leaves for the same writes (measured: ``tests/test_bucket_index_hudi.py``)."""
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    mor = {"hoodie.datasource.write.table.type": table_type}
    _write(client, [(i, "a" if i % 2 else "b", 1, f"v{i}") for i in range(1, 5)], "insert", **mor)
    first = _files(path)
    assert len(first) == 4 and all(f.endswith(".parquet") for f in first)  # a group per bucket written
    _write(client, [(1, "a", 2, "u1"), (9, "a", 2, "n9"), (10, "b", 2, "n10"), (11, "a", 2, "n11")], "upsert", **mor)
    # 99 shares bucket 3 of "a" with 11, though no file holds it; 97's bucket 1 of "a" has no group
    assert (bucket_id("99", ("id",), 4), bucket_id("11", ("id",), 4), bucket_id("97", ("id",), 4)) == (3, 3, 1)
    _write(client, [(2, "b", 3, "x"), (99, "a", 3, "x"), (97, "a", 3, "x")], "delete", **mor)
    stats = _stats(path)
    rows = read_table(str(path))
    keys = rows.column("_hoodie_record_key").to_pylist()
    assert sorted(keys, key=int) == ["1", "3", "4", "9", "10", "11"]
    groups = {p: {parse_bucket_id(f.split("/")[1].lstrip(".")): f.split("/")[1].lstrip(".")[:36]
                  for f in _files(path) if f.startswith(p)} for p in ("a", "b")}
    assert sorted(groups["a"]) == [0, 2, 3] and sorted(groups["b"]) == [1, 2, 3]
    for key, partition, name in zip(keys, rows.column("_hoodie_partition_path").to_pylist(),
                                    rows.column("_hoodie_file_name").to_pylist(), strict=True):
        assert parse_bucket_id(name) == bucket_id(key, ("id",), 4)
        assert name.startswith(groups[partition][parse_bucket_id(name)])  # one group per bucket
    # the delete reached the groups of 2 and of 99 (counted there, as Hudi counts it), and no other
    assert sorted((p.split("/")[0], parse_bucket_id(p.split("/")[1].lstrip(".")), s[3]) for p, s in stats.items()) \
        == [("a", 3, 1), ("b", 1, 1)]
    if table_type == "MERGE_ON_READ":  # updates and new keys of a bucket went to a log file of its group
        assert any(f.startswith("a/.") and ".log." in f for f in _files(path))
    with pytest.raises(UnsupportedOption, match=r"bulk_insert with hoodie\.index\.type=BUCKET"):
        _write(client, [(5, "a", 4, "x")], "bulk_insert", **mor)
    with pytest.raises(InvalidConfig, match="not a subset"):
        _write(client, [(5, "a", 4, "x")], "upsert", **{**mor, "hoodie.bucket.index.hash.field": "v"})
    assert _stats(path) == stats  # nothing written by the refused writes


def test_the_streaming_assigner_uses_the_batch_writers_rule() -> None:
    """``BucketStreamAssigner``: the group of the key's bucket (U), a new group of the bucket (I for the rest of the
    checkpoint), whatever the keys the groups hold."""
    cfg = BucketIndexConfig(4, ("id",))
    key_in = {n: next(k for k in map(str, range(100)) if bucket_id(k, ("id",), 4) == n) for n in range(4)}
    state = BucketStreamAssigner(cfg, {"a": {0: "00000000-on-disk-0"}})
    state, first = state.assign("a", key_in[0], lambda n: f"ffffffff-new-{n}")
    assert (first.file_id, first.bucket_type, first.kind) == ("00000000-on-disk-0", "U", "UPDATE")
    state, opened = state.assign("a", key_in[2], lambda n: f"ffffffff-new-{n}")
    assert (opened.file_id, opened.bucket_type, opened.kind) == ("00000002-new-1", "I", "INSERT")
    assert state.location("a", key_in[2]) == "00000002-new-1" and state.location("a", key_in[3]) is None
    state, again = state.assign("a", key_in[2])
    assert (again.file_id, again.bucket_type) == ("00000002-new-1", "I")
    state, later = state.checkpoint().assign("a", key_in[2])
    assert (later.file_id, later.bucket_type, later.kind) == ("00000002-new-1", "U", "UPDATE")
