"""Bucket assignment (UpsertPartitioner): worked examples with the numbers the rules imply.

Every expected number is worked out by hand from Hudi's formulas (long division of bytes, double
weights), or taken from Hudi's own TestAverageRecordSizeUtils cases.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidConfig, InvalidRecord
from spec.write.partitioner import (
    BucketAssignment,
    CommitSizes,
    InsertBucket,
    PartitionerConfig,
    PartitionProfile,
    SmallFile,
    SmallFileCandidate,
    TaggedRecord,
    WorkloadProfile,
    assign_buckets,
    average_record_size,
    key_hash,
    records_per_insert_bucket,
    route,
    route_insert,
    route_update,
    select_small_files,
)

MB = 1024 * 1024
CFG = PartitionerConfig(small_file_limit=100 * MB, max_file_size=120 * MB)


def ids() -> Callable[[], str]:
    n = iter(range(10_000))
    return lambda: f"new-{next(n)}"


def test_defaults_are_hudis() -> None:
    c = PartitionerConfig()
    assert (
        c.small_file_limit,
        c.max_file_size,
        c.insert_split_size,
        c.auto_split_inserts,
        c.record_size_estimate,
        c.record_size_estimation_threshold,
        c.small_file_group_candidates,
        c.log_to_parquet_ratio,
    ) == (104857600, 125829120, 500000, True, 1024, 1.0, 1, 0.35)


def test_small_file_takes_exactly_what_the_formula_says() -> None:
    """Seed 002: a 90 MB small file, 120 MB max file size, 1 KB records: (120 - 90) MB // 1 KB = 30720."""
    profile = WorkloadProfile({"p": PartitionProfile(inserts=100_000)})
    a = assign_buckets(profile, {"p": [SmallFile("f1", 90 * MB)]}, CFG, 1024, ids())
    assert a.expected_records[a.update_bucket["f1"]] == 30 * 1024
    # the remaining 69280 inserts: new buckets of 120 MB // 1 KB = 122880 records -> one bucket
    inserts = [b for b in a.buckets if b.kind == "INSERT"]
    assert len(inserts) == 1 and a.expected_records[inserts[0].number] == 100_000 - 30_720
    assert [w.weight for w in a.insert_buckets["p"]] == [0.3072, 0.6928]
    assert a.insert_buckets["p"][-1].cumulative_weight == 1.0


def test_worked_example_of_the_spec_page() -> None:
    """docs/spec/partitioner.md: 250,000 inserts and 1,000 updates of f1 into one partition with
    small files f2 (60 MB) and f3 (90 MB); max file size 120 MB; records of 1 KB."""
    profile = WorkloadProfile.from_counts({("2024/01/01", "f1"): 1000, ("2024/01/01", None): 250_000})
    small = select_small_files(
        [
            SmallFileCandidate("f1", 110 * MB),
            SmallFileCandidate("f3", 90 * MB),
            SmallFileCandidate("f2", 60 * MB),
        ],
        CFG.small_file_limit,
        merge_on_read=False,
    )
    assert small == [SmallFile("f2", 60 * MB), SmallFile("f3", 90 * MB)]  # f1 is not small (110 MB >= 100 MB)
    a = assign_buckets(profile, {"2024/01/01": small}, CFG, 1024, ids())
    assert [(b.number, b.kind, b.file_id) for b in a.buckets] == [
        (0, "UPDATE", "f1"),
        (1, "UPDATE", "f2"),
        (2, "UPDATE", "f3"),
        (3, "INSERT", "new-0"),
        (4, "INSERT", "new-1"),
    ]
    assert [a.expected_records[n] for n in (1, 2, 3, 4)] == [61440, 30720, 122880, 34960]
    weights = a.insert_buckets["2024/01/01"]
    assert [w.weight for w in weights] == [0.24576, 0.12288, 0.49152, 0.13984]
    assert [round(w.cumulative_weight, 12) for w in weights] == [0.24576, 0.36864, 0.86016, 1.0]
    # routing: r = floorMod(hash, 250000) / 250000 (the hashes below are negative longs)
    assert [key_hash(k) for k in ("trip-42", "trip-7", "trip-1000")] == [
        -496555526839008316,
        -825688572274350086,
        -8207261380074204123,
    ]
    assert [route_insert(k, "2024/01/01", a) for k in ("trip-42", "trip-7", "trip-1000")] == [4, 3, 1]
    assert route("trip-1", "2024/01/01", "f1", a) == 0


@pytest.mark.parametrize(
    ("inserts", "config", "expected"),
    [
        (500_000, PartitionerConfig(), [122880, 122880, 122880, 122880, 8480]),  # 125829120 // 1024 = 122880
        (122_880, PartitionerConfig(), [122880]),
        (122_881, PartitionerConfig(), [122880, 1]),
        (1_200_000, PartitionerConfig(auto_split_inserts=False), [500000, 500000, 200000]),
        (25, PartitionerConfig(max_file_size=10 * 1024, small_file_limit=0), [10, 10, 5]),
        (3, PartitionerConfig(max_file_size=100), [1, 1, 1]),  # a record bigger than a file: 1 per bucket
    ],
)
def test_number_of_insert_buckets(inserts: int, config: PartitionerConfig, expected: list[int]) -> None:
    a = assign_buckets(WorkloadProfile({"p": PartitionProfile(inserts=inserts)}), {}, config, 1024, ids())
    assert [a.expected_records[b.number] for b in a.buckets] == expected
    assert all(b.kind == "INSERT" for b in a.buckets)


def test_small_files_in_turn_reusing_update_buckets() -> None:
    profile = WorkloadProfile.from_counts({("p", "f1"): 10, ("p", "f2"): 3, ("p", None): 5})
    a = assign_buckets(profile, {"p": [SmallFile("f2", 1 * MB), SmallFile("f9", 1 * MB)]}, CFG, 1024, ids())
    assert [b.kind for b in a.buckets] == ["UPDATE", "UPDATE"]  # f9 is not needed: f2 takes all 5
    assert a.insert_buckets["p"] == (InsertBucket(a.update_bucket["f2"], 1.0, 1.0),)
    # a file with less than one record of room takes none: (120 MB - (120 MB - 1023)) // 1024 = 0
    b = assign_buckets(
        WorkloadProfile({"p": PartitionProfile(3)}),
        {"p": [SmallFile("full", 120 * MB - 1023)]},
        CFG,
        1024,
        ids(),
    )
    assert [x.kind for x in b.buckets] == ["INSERT"] and "full" not in b.update_bucket


def test_key_hash_is_md5_little_endian_signed() -> None:
    digest = hashlib.md5(b"key-1").digest()
    expected = sum(digest[i] << (8 * i) for i in range(8))
    expected -= 1 << 64 if expected >= 1 << 63 else 0
    assert key_hash("key-1") == expected
    assert key_hash("é") == int.from_bytes(hashlib.md5("é".encode()).digest()[:8], "little", signed=True)


def test_binary_search_hit_and_fallback() -> None:
    # four equal buckets: cumulative 0.25, 0.5, 0.75, 1.0; a key with floorMod(hash, 4) == 1 has r = 0.25,
    # an exact hit of bucket 0's cumulative weight (binarySearch returns it, not the next bucket)
    a = assign_buckets(
        WorkloadProfile({"p": PartitionProfile(4)}), {}, PartitionerConfig(max_file_size=1024), 1024, ids()
    )
    key = next(f"k{i}" for i in range(100) if key_hash(f"k{i}") % 4 == 1)
    assert route_insert(key, "p", a) == 0
    key0 = next(f"k{i}" for i in range(100) if key_hash(f"k{i}") % 4 == 0)
    assert route_insert(key0, "p", a) == 0  # r = 0: insertion point 0
    # weights that (by rounding) sum to less than r: binarySearch runs off the end -> the first bucket
    short = BucketAssignment(
        (), {}, {"p": (InsertBucket(7, 0.5, 0.5), InsertBucket(8, 0.25, 0.75))}, {"p": 8}, {}
    )
    key7 = next(f"k{i}" for i in range(100) if key_hash(f"k{i}") % 8 == 7)  # r = 0.875 > 0.75
    assert route_insert(key7, "p", short) == 7


def test_routing_follows_the_weights() -> None:
    a = assign_buckets(
        WorkloadProfile({"p": PartitionProfile(100_000)}), {"p": [SmallFile("f1", 90 * MB)]}, CFG, 1024, ids()
    )
    sent = [route_insert(f"key-{i}", "p", a) for i in range(20_000)]
    share = sent.count(a.update_bucket["f1"]) / len(sent)
    assert abs(share - 0.3072) < 0.02  # MD5 spreads keys as the weights say


def test_routes_reject_unknown_targets() -> None:
    a = assign_buckets(WorkloadProfile({"p": PartitionProfile(1)}), {}, CFG, 1024, ids())
    with pytest.raises(InvalidRecord, match="no update bucket"):
        route_update("ghost", a)
    with pytest.raises(InvalidRecord, match="no insert bucket"):
        route_insert("k", "other", a)
    with pytest.raises(InvalidConfig):
        assign_buckets(WorkloadProfile({"p": PartitionProfile(1)}), {}, CFG, 0, ids())


@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(1, 3000), min_size=1),
    st.lists(st.integers(0, 10_000), max_size=4),
    st.integers(100, 10_000),
    st.integers(1, 500),
    st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=20),
)
def test_assignment_properties(
    inserts: dict[str, int], small_sizes: list[int], max_size: int, avg: int, keys: list[str]
) -> None:
    """Weights sum to 1; every insert is assigned once; ceil(rest / per bucket) new buckets; no
    small file gets more than its room; a key always lands in the same bucket of its partition."""
    cfg = PartitionerConfig(max_file_size=max_size, small_file_limit=max_size)
    small = {
        p: [SmallFile(f"{p}-s{i}", s) for i, s in enumerate(small_sizes) if s < max_size] for p in inserts
    }
    a = assign_buckets(
        WorkloadProfile({p: PartitionProfile(n) for p, n in inserts.items()}), small, cfg, avg, ids()
    )
    per_bucket = records_per_insert_bucket(cfg, avg)
    for p, n in inserts.items():
        shares = a.insert_buckets[p]
        assert abs(sum(s.weight for s in shares) - 1.0) < 1e-9
        assert sum(a.expected_records[s.bucket] for s in shares) == n
        room = {sf.file_id: (max_size - sf.size) // avg for sf in small[p]}
        for s in shares:
            b = a.bucket(s.bucket)
            assert b.partition == p
            assert a.expected_records[s.bucket] <= (room[b.file_id] if b.kind == "UPDATE" else per_bucket)
        rest = n - sum(a.expected_records[s.bucket] for s in shares if a.bucket(s.bucket).kind == "UPDATE")
        assert sum(a.bucket(s.bucket).kind == "INSERT" for s in shares) == -(-rest // per_bucket)
        for k in keys:
            assert route_insert(k, p, a) == route_insert(k, p, a) in {s.bucket for s in shares}


def test_average_record_size_as_hudis_own_cases() -> None:
    """TestAverageRecordSizeUtils (records × bytes per record; threshold 1.0 × 100 MB)."""
    cfg = PartitionerConfig()
    n = 10_000_000
    assert average_record_size([], cfg) == 1024
    assert average_record_size([CommitSizes("commit", n * 100, n)], cfg) == 100
    assert (
        average_record_size([CommitSizes("commit", n * 100, n), CommitSizes("commit", n * 200, n)], cfg)
        == 200
    )
    assert (
        average_record_size(
            [CommitSizes("commit", n * 100, n), CommitSizes("deltacommit", 10_000 * 200, 10_000)], cfg
        )
        == 100
    )  # too small to judge by
    assert (
        average_record_size(
            [CommitSizes("commit", n * 100, n), CommitSizes("replacecommit", n * 200, n)], cfg
        )
        == 200
    )
    assert (
        average_record_size(
            [
                CommitSizes("commit", n * 100, n),
                CommitSizes("deltacommit", n * 200, n, log_bytes=n * 300, log_records=n),
            ],
            cfg,
        )
        == 200
    )
    assert (
        average_record_size(
            [
                CommitSizes("deltacommit", n * 100, n),
                CommitSizes("deltacommit", 0, 0, log_bytes=n * 300, log_records=n),
            ],
            cfg,
        )
        == 100
    )
    assert average_record_size([CommitSizes("clean", n * 9, n)], cfg) == 1024


def test_average_record_size_arithmetic() -> None:
    cfg = PartitionerConfig(small_file_limit=1000)
    assert average_record_size([(500, 10)], cfg) == 1024  # 500 bytes <= 1.0 x 1000: the estimate
    assert average_record_size([(3001, 10), (900, 9)], cfg) == 301  # newest qualifying, ceil(300.1)
    half = PartitionerConfig(
        small_file_limit=1001, record_size_estimation_threshold=0.5
    )  # (long) 500.5 = 500
    assert average_record_size([(501, 1)], half) == 501 and average_record_size([(500, 1)], half) == 1024
    assert average_record_size([(10**6, 0)], cfg) == 1024  # no records written


def test_small_file_selection_cow_vs_mor() -> None:
    cands = [
        SmallFileCandidate("big", 200),
        SmallFileCandidate("a", 50),
        SmallFileCandidate("b", 30, True),
        SmallFileCandidate("c", 40, under_pending_compaction=True),
        SmallFileCandidate("logonly", None, True),
        SmallFileCandidate("clustering", 10, under_pending_clustering=True),
    ]
    assert [f.file_id for f in select_small_files(cands, 100, merge_on_read=False)] == ["b", "c", "a"]
    assert [f.file_id for f in select_small_files(cands, 100, merge_on_read=True)] == ["a"]
    two = PartitionerConfig(small_file_limit=100, small_file_group_candidates=2)
    assert select_small_files([*cands, SmallFileCandidate("d", 60)], 100, True, config=two) == [
        SmallFile("a", 50),
        SmallFile("d", 60),
    ]
    assert select_small_files(cands, 0, merge_on_read=False) == []  # limit <= 0: no small files


def test_small_files_when_the_index_covers_log_files() -> None:
    """MOR with an index that can index log files: slices under the *max* file size, sized as
    base + (long)(log bytes × 0.35), log-only slices too; pending compaction excluded."""
    cfg = PartitionerConfig(small_file_limit=100, max_file_size=200)
    cands = [
        SmallFileCandidate("a", 150, True, log_sizes=(100, 0)),  # 150 + 35 = 185 < 200
        SmallFileCandidate("b", 150, True, log_sizes=(143,)),  # 150 + int(50.05) = 200: not small
        SmallFileCandidate("logonly", None, True, log_sizes=(300,)),  # int(105.0) = 105
        SmallFileCandidate("c", 10, under_pending_compaction=True),
    ]
    assert select_small_files(cands, 100, True, config=cfg, index_can_index_log_files=True) == [
        SmallFile("logonly", 105),
        SmallFile("a", 185),
    ]


def test_profile_from_tagged_records() -> None:
    recs = [
        TaggedRecord("k1", "p"),
        TaggedRecord("k2", "p", "f1"),
        TaggedRecord("k3", "p", "f1"),
        TaggedRecord("k4", "q"),
    ]
    assert WorkloadProfile.from_records(recs) == WorkloadProfile(
        {"p": PartitionProfile(1, {"f1": 2}), "q": PartitionProfile(1, {})}
    )
