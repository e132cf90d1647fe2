"""Write-path vectors ported from Apache Hudi's unit tests (``spec.write.partitioner``, ``spec.read.merge``).

Sources: ``TestUpsertPartitioner`` (hudi-spark-client: average record size, insert buckets and
their weights, small files), ``TestDefaultHoodieRecordPayload`` and
``TestOverwriteWithLatestAvroPayload`` (hudi-common: which version of a key survives).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from spec.config.table_config import DEFAULT_PAYLOAD, OVERWRITE_WITH_LATEST_PAYLOAD
from spec.read.merge import MergeMode, MergeRule, Version, as_version, combine_logs, merge_with_base
from spec.write.partitioner import (
    PartitionerConfig,
    SmallFile,
    SmallFileCandidate,
    WorkloadProfile,
    assign_buckets,
    average_record_size,
    select_small_files,
)
from tests.hudi_vectors import Source, Vector, ids

UPSERT = Source("TestUpsertPartitioner", "",
                "hudi-client/hudi-spark-client/src/test/java/org/apache/hudi/table/action/commit/"
                "TestUpsertPartitioner.java", "026a064bd957ef28ac6b85d2679729ada7d21ac5")
DEFAULT = Source("TestDefaultHoodieRecordPayload", "",
                 "hudi-common/src/test/java/org/apache/hudi/common/model/TestDefaultHoodieRecordPayload.java",
                 "1c86d714790b99729d931bc41571edeb58ab5dd6")
OVERWRITE = Source("TestOverwriteWithLatestAvroPayload", "",
                   "hudi-common/src/test/java/org/apache/hudi/common/model/TestOverwriteWithLatestAvroPayload.java",
                   "1279f1e8d8fb04b2f3de55fda8010fdf4097178d")

KB = 1024
PARTITION = "2016/09/26"

# --- average record size ------------------------------------------------------------------------
# testAverageBytesPerRecordForNonEmptyCommitTimeLine: six commits' (records, bytes), newest first as
# the timeline is walked: (2500, 0), (0, 1500), (0, 0), (100, 500), (1500, 7500), (2000, 10000);
# small file limit 1000, so the threshold is 1000 bytes.
AVG_VECTORS = [
    Vector(UPSERT.at("testAverageBytesPerRecordForNonEmptyCommitTimeLine"),
           "the newest commit above the threshold with records: ceil(7500 / 1500)",
           {"commits": [(10000, 2000), (7500, 1500), (500, 100), (0, 0), (1500, 0), (0, 2500)],
            "small_file_limit": 1000, "expected": 5}),
    Vector(UPSERT.at("testAverageBytesPerRecordForEmptyCommitTimeLine"), "no commit: the record size estimate",
           {"commits": [], "small_file_limit": 104857600, "expected": 1024}),
]


@pytest.mark.parametrize("vector", AVG_VECTORS, ids=ids(AVG_VECTORS))
def test_average_record_size_vector(vector: Vector) -> None:
    case = vector.case
    config = PartitionerConfig(small_file_limit=case["small_file_limit"])
    assert average_record_size(case["commits"], config) == case["expected"]


# --- buckets ------------------------------------------------------------------------------------
# getUpsertPartitioner(smallFileSize, inserts, updates, fileSize, partition, autoSplit): one base file
# "file1" of fileSize bytes; max file size 1000 KB; insert split size 100; the updates all go to
# file1; no commit metadata yet, so the average record size is the 1024-byte estimate.
def _upsert(small_file_limit: int, inserts: int, updates: int, file_size: int, auto_split: bool) -> dict[str, Any]:
    return {"small_file_limit": small_file_limit, "inserts": inserts, "updates": updates, "file_size": file_size,
            "auto_split": auto_split}


def _assign(case: dict[str, Any]) -> Any:
    config = PartitionerConfig(small_file_limit=case["small_file_limit"], max_file_size=1000 * KB,
                               insert_split_size=100, auto_split_inserts=case["auto_split"])
    profile = WorkloadProfile.from_counts({(PARTITION, None): case["inserts"], (PARTITION, "file1"): case["updates"]})
    candidates = [SmallFileCandidate("file1", case["file_size"])]
    small = select_small_files(candidates, case["small_file_limit"], merge_on_read=False, config=config)
    counter = itertools.count()
    return assign_buckets(profile, {PARTITION: small}, config, 1024, lambda: f"new-{next(counter)}")


BUCKET_VECTORS = [
    Vector(UPSERT.at("testUpsertPartitioner"), "200 inserts, split size 100, no small files: 2 insert buckets",
           {**_upsert(0, 200, 100, KB, False), "insert_buckets": 2}),
    Vector(UPSERT.at("testUpsertPartitioner"), "the update goes to bucket 0",
           {**_upsert(0, 200, 100, KB, False), "update_bucket": 0}),
    Vector(UPSERT.at("testUpsertPartitionerWithRecordsPerBucket"), "250 inserts: weights 0.4, 0.4, 0.2",
           {**_upsert(0, 250, 100, KB, False), "insert_buckets": 3, "weights": [0.4, 0.4, 0.2]}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallInsertHandling"), "a small file takes 200: 3 buckets",
           {**_upsert(1000 * KB, 400, 100, 800 * KB, False), "buckets": 3}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallInsertHandling"), "bucket kinds UPDATE, INSERT, INSERT",
           {**_upsert(1000 * KB, 400, 100, 800 * KB, False), "kinds": ["UPDATE", "INSERT", "INSERT"]}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallInsertHandling"), "weights 0.5, 0.25, 0.25",
           {**_upsert(1000 * KB, 400, 100, 800 * KB, False), "insert_buckets": 3, "weights": [0.5, 0.25, 0.25],
            "cumulative": [0.5, 0.75, 1.0], "numbers": [0, 1, 2]}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallInsertHandling"), "auto-split, 2400 inserts: 4 buckets",
           {**_upsert(1000 * KB, 2400, 100, 800 * KB, True), "buckets": 4,
            "kinds": ["UPDATE", "INSERT", "INSERT", "INSERT"]}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallInsertHandling"), "auto-split weights 0.08, 0.42, 0.42, 0.08",
           {**_upsert(1000 * KB, 2400, 100, 800 * KB, True), "insert_buckets": 4,
            "weights": [0.08, 0.42, 0.42, 0.08], "cumulative": [0.08, 0.5, 0.92, 1.0], "numbers": [0, 1, 2, 3]}),
]


@pytest.mark.parametrize("vector", BUCKET_VECTORS, ids=ids(BUCKET_VECTORS))
def test_bucket_vector(vector: Vector) -> None:
    case = vector.case
    assignment = _assign(case)
    inserts = assignment.insert_buckets[PARTITION]
    if "insert_buckets" in case:
        assert len(inserts) == case["insert_buckets"]
    if "update_bucket" in case:
        assert assignment.update_bucket["file1"] == case["update_bucket"]
    if "buckets" in case:
        assert len(assignment.buckets) == case["buckets"]
    if "kinds" in case:
        assert [b.kind for b in assignment.buckets] == case["kinds"]
    if "weights" in case:  # Hudi's test compares within 0.01
        assert [b.weight for b in inserts] == pytest.approx(case["weights"], abs=0.01)
    if "cumulative" in case:
        assert [b.cumulative_weight for b in inserts] == pytest.approx(case["cumulative"], abs=0.01)
    if "numbers" in case:
        assert [b.bucket for b in inserts] == case["numbers"]


# testUpsertPartitionerWithSmallFileHandlingWithCanIndexLogFiles: MOR, an index that indexes log
# files (HBASE), small-file limit 1024, max file size 1024: fg1 has only a 1-byte log file, fg2 a
# 1024-byte base file and a log file. One insert goes to fg1, as its only (UPDATE) bucket.
# testUpsertPartitionerWithSmallFileHandlingPickingMultipleCandidates: MOR, BLOOM index, three
# 1024-byte base files, max 2048, candidates limit 3: three UPDATE buckets fg-3, fg-2, fg-1
# (Hudi's order comes from the file-system view; the set is the rule).
SMALL_FILE_VECTORS = [
    Vector(UPSERT.at("testUpsertPartitionerWithSmallFileHandlingWithCanIndexLogFiles"),
           "a log-only file group is the small file",
           {"candidates": [SmallFileCandidate("fg1", None, True, log_sizes=(1,)),
                           SmallFileCandidate("fg2", 1024, True, log_sizes=(1,))],
            "limit": 1024, "max": 1024, "can_index_logs": True, "candidates_limit": 1, "inserts": 1,
            "buckets": [("UPDATE", "fg1")]}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallFileHandlingPickingMultipleCandidates"),
           "three small base files take one insert each",
           {"candidates": [SmallFileCandidate("fg-1", 1024), SmallFileCandidate("fg-2", 1024),
                           SmallFileCandidate("fg-3", 1024)],
            "limit": 104857600, "max": 2048, "can_index_logs": False, "candidates_limit": 3, "inserts": 3,
            "buckets": [("UPDATE", "fg-1"), ("UPDATE", "fg-2"), ("UPDATE", "fg-3")]}),
    Vector(UPSERT.at("testUpsertPartitionerWithSmallFileHandlingWithInflightCompactionWithCanIndexLogFiles"),
           "a file group under a pending compaction takes no inserts",
           {"candidates": [SmallFileCandidate("1", 1, under_pending_compaction=True), SmallFileCandidate("2", 1)],
            "limit": 1024, "max": 125829120, "can_index_logs": True, "candidates_limit": 1, "inserts": 100,
            "buckets": [("UPDATE", "2")]}),
]


@pytest.mark.parametrize("vector", SMALL_FILE_VECTORS, ids=ids(SMALL_FILE_VECTORS))
def test_small_file_vector(vector: Vector) -> None:
    case = vector.case
    config = PartitionerConfig(small_file_limit=case["limit"], max_file_size=case["max"],
                               small_file_group_candidates=case["candidates_limit"])
    small: list[SmallFile] = select_small_files(case["candidates"], case["limit"], merge_on_read=True,
                                                config=config, index_can_index_log_files=case["can_index_logs"])
    profile = WorkloadProfile.from_counts({(PARTITION, None): case["inserts"]})
    assignment = assign_buckets(profile, {PARTITION: small}, config, 1024, lambda: "new")
    assert sorted((b.kind, b.file_id) for b in assignment.buckets) == case["buckets"]


# --- payloads -----------------------------------------------------------------------------------
# Records (id, partition, ts, _hoodie_is_deleted); DefaultHoodieRecordPayload orders by ts,
# OverwriteWithLatestAvroPayload by the ordering value given to its constructor (1 and 2 below).
def _row(rid: str, ts: int, deleted: bool = False) -> dict[str, Any]:
    return {"id": rid, "partition": f"partition{int(rid) - 1}", "ts": ts, "_hoodie_is_deleted": deleted}


R1, R2, DEL2 = _row("1", 0), _row("2", 1), _row("2", 1, deleted=True)
EVENT_TIME_V6 = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", False, 6, DEFAULT_PAYLOAD)
EVENT_TIME_V8 = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", False, 8, DEFAULT_PAYLOAD)
OVERWRITE_V6 = MergeRule(MergeMode.EVENT_TIME_ORDERING, "ord", True, 6, OVERWRITE_WITH_LATEST_PAYLOAD)


def _pre(source: Source, method: str, label: str, rule: MergeRule, this: dict[str, Any],
         old: dict[str, Any], winner: dict[str, Any]) -> Vector:
    """``this.preCombine(old)``: ``this`` is the later version, ``old`` the earlier."""
    return Vector(source.at(method), label, {"op": "preCombine", "rule": rule, "this": this, "other": old,
                                             "winner": winner})


def _upd(source: Source, method: str, label: str, rule: MergeRule, this: dict[str, Any],
         stored: dict[str, Any], result: dict[str, Any] | None) -> Vector:
    """``this.combineAndGetUpdateValue(stored)``: the incoming version against the stored row;
    ``result`` None when the key is deleted."""
    return Vector(source.at(method), label, {"op": "combineAndGetUpdateValue", "rule": rule, "this": this,
                                             "other": stored, "result": result})


def _ow(row: dict[str, Any], ordering: int) -> dict[str, Any]:
    return {**row, "ord": ordering}


PAYLOAD_VECTORS = [
    *[v for rule, tag in ((EVENT_TIME_V6, "v6"), (EVENT_TIME_V8, "v8")) for v in (
        _pre(DEFAULT, "testActiveRecords", f"greater ts wins, later first ({tag})", rule, R1, R2, R2),
        _pre(DEFAULT, "testActiveRecords", f"greater ts wins, later second ({tag})", rule, R2, R1, R2),
        _upd(DEFAULT, "testActiveRecords", f"a stored row with a greater ts stays ({tag})", rule, R1, R2, R2),
        _upd(DEFAULT, "testActiveRecords", f"an incoming row with a greater ts wins ({tag})", rule, R2, R1, R2),
        _pre(DEFAULT, "testDeletedRecord", f"a delete with a greater ts wins, later first ({tag})", rule, R1, DEL2,
             DEL2),
        _pre(DEFAULT, "testDeletedRecord", f"a delete with a greater ts wins, later second ({tag})", rule, DEL2, R1,
             DEL2),
        _upd(DEFAULT, "testDeletedRecord", f"an incoming delete with a greater ts deletes ({tag})", rule, DEL2, R1,
             None),
    )],
    _pre(OVERWRITE, "testActiveRecords", "the greater ordering value wins, later first", OVERWRITE_V6,
         _ow(R1, 1), _ow(R2, 2), _ow(R2, 2)),
    _pre(OVERWRITE, "testActiveRecords", "the greater ordering value wins, later second", OVERWRITE_V6,
         _ow(R2, 2), _ow(R1, 1), _ow(R2, 2)),
    _upd(OVERWRITE, "testActiveRecords", "the incoming row always replaces the stored one", OVERWRITE_V6,
         _ow(R1, 1), _ow(R2, 2), _ow(R1, 1)),
    _upd(OVERWRITE, "testActiveRecords", "the incoming row replaces the stored one", OVERWRITE_V6,
         _ow(R2, 2), _ow(R1, 1), _ow(R2, 2)),
    _pre(OVERWRITE, "testDeletedRecord", "a delete with the greater ordering value wins, later first",
         OVERWRITE_V6, _ow(R1, 1), _ow(DEL2, 2), _ow(DEL2, 2)),
    _pre(OVERWRITE, "testDeletedRecord", "a delete with the greater ordering value wins, later second",
         OVERWRITE_V6, _ow(DEL2, 2), _ow(R1, 1), _ow(DEL2, 2)),
    _upd(OVERWRITE, "testDeletedRecord", "an incoming delete deletes the stored row", OVERWRITE_V6,
         _ow(DEL2, 2), _ow(R1, 1), None),
]


def _same(version: Version, row: dict[str, Any]) -> bool:
    if row.get("_hoodie_is_deleted"):
        return version.is_delete and version.ordering == row[version_field(row)]
    return version.row == row


def version_field(row: dict[str, Any]) -> str:
    """The ordering field of a payload vector's row (``ord`` for OverwriteWithLatestAvroPayload)."""
    return "ord" if "ord" in row else "ts"


@pytest.mark.parametrize("vector", PAYLOAD_VECTORS, ids=ids(PAYLOAD_VECTORS))
def test_payload_vector(vector: Vector) -> None:
    case = vector.case
    rule: MergeRule = case["rule"]
    this, other = as_version(case["this"], rule), as_version(case["other"], rule)
    if case["op"] == "preCombine":
        assert _same(combine_logs(older=other, newer=this, rule=rule), case["winner"])
        return
    merged = merge_with_base(other, this, rule)
    if case["result"] is None:
        assert merged.is_delete
    else:
        assert merged.row == case["result"]


VECTORS = AVG_VECTORS + BUCKET_VECTORS + SMALL_FILE_VECTORS + PAYLOAD_VECTORS
