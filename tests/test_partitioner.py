"""Bucket assignment (seed 002, UpsertPartitioner): worked examples with the numbers the rules imply."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from spec.partitioner import (
    PartitionerConfig,
    PartitionProfile,
    SmallFile,
    WorkloadProfile,
    assign_buckets,
    average_record_size,
    key_hash,
    route,
    route_insert,
)

MB = 1024 * 1024
CFG = PartitionerConfig(small_file_limit=100 * MB, max_file_size=120 * MB)


def ids() -> object:
    n = iter(range(10_000))
    return lambda: f"new-{next(n)}"


def test_small_file_takes_exactly_what_the_formula_says() -> None:
    # a 90 MB small file, 120 MB max file size, 1 KB records: (120 - 90) MB / 1 KB = 30720 inserts
    profile = WorkloadProfile({"p": PartitionProfile(inserts=100_000)})
    a = assign_buckets(profile, {"p": [SmallFile("f1", 90 * MB)]}, CFG, 1024, ids())
    assert a.expected_records[a.update_bucket["f1"]] == 30 * 1024
    # the remaining 69280 inserts: new buckets of 120 MB / 1 KB = 122880 records -> one bucket
    inserts = [b for b in a.buckets if b.kind == "INSERT"]
    assert len(inserts) == 1 and a.expected_records[inserts[0].number] == 100_000 - 30_720
    weights = [w.weight for w in a.insert_buckets["p"]]
    assert abs(sum(weights) - 1.0) < 1e-12 and abs(weights[0] - 0.3072) < 1e-12


def test_updates_get_one_bucket_per_file_group_and_small_files_reuse_them() -> None:
    profile = WorkloadProfile.from_counts({("p", "f1"): 10, ("p", "f2"): 3, ("p", None): 5})
    a = assign_buckets(profile, {"p": [SmallFile("f2", 1 * MB)]}, CFG, 1024, ids())
    assert [b.kind for b in a.buckets] == ["UPDATE", "UPDATE"]
    assert a.insert_buckets["p"][0].bucket == a.update_bucket["f2"]
    assert route("k", "p", "f1", a) == a.update_bucket["f1"]


def test_new_buckets_split_by_records_per_file() -> None:
    cfg = PartitionerConfig(max_file_size=10 * 1024, small_file_limit=0)
    profile = WorkloadProfile({"p": PartitionProfile(inserts=25)})
    a = assign_buckets(profile, {}, cfg, 1024, ids())
    assert [a.expected_records[b.number] for b in a.buckets] == [10, 10, 5]
    assert not PartitionerConfig(auto_split_inserts=False, insert_split_size=7).auto_split_inserts
    b = assign_buckets(profile, {}, PartitionerConfig(auto_split_inserts=False, insert_split_size=7), 1024, ids())
    assert [b.expected_records[x.number] for x in b.buckets] == [7, 7, 7, 4]


def test_key_hash_is_md5_little_endian_signed() -> None:
    digest = hashlib.md5(b"key-1").digest()
    expected = sum(digest[i] << (8 * i) for i in range(8))
    expected -= 1 << 64 if expected >= 1 << 63 else 0
    assert key_hash("key-1") == expected


@given(st.text(min_size=1, max_size=20), st.integers(1, 50))
def test_routing_is_deterministic_and_in_range(key: str, inserts: int) -> None:
    cfg = PartitionerConfig(max_file_size=4 * 1024, small_file_limit=0)
    a = assign_buckets(WorkloadProfile({"p": PartitionProfile(inserts=inserts)}), {}, cfg, 1024, ids())
    bucket = route_insert(key, "p", a)
    assert bucket == route_insert(key, "p", a)
    assert bucket in {w.bucket for w in a.insert_buckets["p"]}


def test_average_record_size_from_commits() -> None:
    cfg = PartitionerConfig(small_file_limit=1000)
    assert average_record_size([], cfg) == 1024
    assert average_record_size([(500, 10)], cfg) == 1024  # below threshold x small-file limit: estimate
    assert average_record_size([(3001, 10), (900, 9)], cfg) == 301  # the newest qualifying commit, rounded up


def test_small_file_selection_cow_vs_mor() -> None:
    from spec.partitioner import SmallFileCandidate, select_small_files

    cands = [SmallFileCandidate("big", 200), SmallFileCandidate("a", 50), SmallFileCandidate("b", 30, True),
             SmallFileCandidate("c", 40, under_pending_compaction=True), SmallFileCandidate("logonly", None, True)]
    assert [f.file_id for f in select_small_files(cands, 100, merge_on_read=False)] == ["b", "c", "a"]
    assert [f.file_id for f in select_small_files(cands, 100, merge_on_read=True)] == ["a"]
