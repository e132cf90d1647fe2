"""Timeline plans and service metadata: every Avro timeline file of the 22 real tables (data
tables and their metadata tables) parses into the type its action and state call for, writes back
byte for byte with the schema Hudi embeds, and every plan type round-trips under hypothesis."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import MetadataFormatError
from spec.timeline.avro_container import read_container, write_container
from spec.timeline.avro_model import (
    PLAN_TYPES,
    HoodieActionInstant,
    HoodieCleanerPlan,
    HoodieCleanFileInfo,
    HoodieCleanMetadata,
    HoodieCleanPartitionMetadata,
    HoodieCompactionOperation,
    HoodieCompactionPlan,
    HoodieCompactionStrategy,
    HoodieIndexCommitMetadata,
    HoodieIndexPartitionInfo,
    HoodieIndexPlan,
    HoodieInstantInfo,
    HoodieRequestedReplaceMetadata,
    HoodieRestoreMetadata,
    HoodieRestorePlan,
    HoodieRollbackMetadata,
    HoodieRollbackPartitionMetadata,
    HoodieRollbackPlan,
    HoodieRollbackRequest,
    HoodieSavepointMetadata,
    HoodieSavepointPartitionMetadata,
    format_avro_metadata,
    parse_avro_metadata,
    parse_timeline_content,
)
from spec.timeline.avro_schemas import NAMESPACE, RECORD_NAMES, schema_for, schema_json
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata, parse_commit_metadata
from spec.timeline.instant import Instant, State
from spec.timeline.layout import is_instant_file_name, parse_instant_file_name
from tests.conftest import RealTable

# --- the real timeline files --------------------------------------------------------------------


def timeline_files(table: RealTable) -> list[tuple[Instant, Path, str]]:
    """Every instant file of the table's timeline and of its metadata table's, with where it lives."""
    layout = int(table.manifest.get("timeline_layout") or (2 if table.table_version >= 8 else 1))
    folder = ".hoodie/timeline" if layout == 2 else ".hoodie"
    out = []
    for where in (folder, f".hoodie/metadata/{folder}"):
        d = table.path / where
        if not d.is_dir():
            continue
        for f in sorted(d.iterdir()):
            if f.is_file() and is_instant_file_name(f.name, layout):
                out.append((parse_instant_file_name(f.name, layout), f, where))
    return out


# What each timeline file holds (docs/spec/timeline.md, "What the files hold"; None = empty file).
EXPECTED_TYPE: dict[tuple[str, State], type[Any] | None] = {
    ("commit", State.REQUESTED): None, ("deltacommit", State.REQUESTED): None,
    ("commit", State.INFLIGHT): CommitMetadata, ("deltacommit", State.INFLIGHT): CommitMetadata,
    ("commit", State.COMPLETED): CommitMetadata, ("deltacommit", State.COMPLETED): CommitMetadata,
    ("replacecommit", State.REQUESTED): HoodieRequestedReplaceMetadata,
    ("replacecommit", State.INFLIGHT): CommitMetadata, ("replacecommit", State.COMPLETED): CommitMetadata,
    ("compaction", State.REQUESTED): HoodieCompactionPlan, ("compaction", State.INFLIGHT): None,
    ("rollback", State.REQUESTED): HoodieRollbackPlan, ("rollback", State.INFLIGHT): None,
    ("rollback", State.COMPLETED): HoodieRollbackMetadata,
    ("indexing", State.REQUESTED): HoodieIndexPlan, ("indexing", State.INFLIGHT): None,
    ("indexing", State.COMPLETED): HoodieIndexCommitMetadata,
}


def _reformat(obj: Any, data: bytes, table_version: int) -> bytes:
    sync = read_container(data).sync_marker if data.startswith(b"Obj\x01") else None
    if isinstance(obj, CommitMetadata):
        replace = (read_container(data).record_name == "HoodieReplaceCommitMetadata") if sync else \
            "partitionToReplaceFileIds" in json.loads(data)
        return format_commit_metadata(obj, table_version, replace, sync)
    return format_avro_metadata(obj, table_version, sync)


def test_every_timeline_file_parses_into_its_type_and_writes_back_exactly(real_table: RealTable) -> None:
    version = real_table.table_version
    completed: dict[str, int] = {}
    for inst, path, where in timeline_files(real_table):
        data = path.read_bytes()
        obj = parse_timeline_content(inst, data)
        expected = EXPECTED_TYPE[(inst.action, inst.state)]
        if expected is None:
            assert data == b"", f"{where}/{path.name} should be empty"
        if not data:  # an empty commit-family file is empty metadata, as Hudi reads it
            commit_like = inst.action in ("commit", "deltacommit", "replacecommit") and (
                inst.action != "replacecommit" or inst.state != State.REQUESTED)
            assert obj == (CommitMetadata() if commit_like else None)
            continue
        assert expected is not None
        assert isinstance(obj, expected), f"{where}/{path.name}: {type(obj).__name__}"
        if inst.state == State.COMPLETED and not where.startswith(".hoodie/metadata"):
            completed[inst.action] = completed.get(inst.action, 0) + 1
        again = _reformat(obj, data, version)
        assert again == data, f"{where}/{path.name} is not reproduced byte for byte"
        reparsed = parse_timeline_content(inst, again)
        assert reparsed == obj
        if not data.startswith(b"Obj\x01"):  # v6 JSON: equal as JSON too
            assert json.loads(again) == json.loads(data)
    # the completed instants of the data table are the ones the MANIFEST counts
    manifest = dict(kv.split(":") for kv in real_table.manifest["completed_instants"].split()) \
        if real_table.manifest["completed_instants"] else {}
    assert {k: int(v) for k, v in manifest.items()} == completed


def test_avro_content_matches_the_v6_json_rule(real_table: RealTable) -> None:
    """v6: only commit / deltacommit / replacecommit (not requested) are JSON; v8: every non-empty
    file is Avro."""
    for inst, path, _ in timeline_files(real_table):
        data = path.read_bytes()
        if not data:
            continue
        commit_json = (inst.action in ("commit", "deltacommit", "replacecommit")
                       and inst.state != State.REQUESTED)
        is_avro = data.startswith(b"Obj\x01")
        assert is_avro == (real_table.table_version >= 8 or not commit_json), path.name


def _by_type(tables: list[RealTable], cls: type[Any]) -> list[tuple[RealTable, Instant, Path, Any]]:
    out = []
    for t in tables:
        for inst, path, _ in timeline_files(t):
            obj = parse_timeline_content(inst, path.read_bytes())
            if isinstance(obj, cls):
                out.append((t, inst, path, obj))
    return out


def test_compaction_plans_name_real_slices(real_tables: list[RealTable]) -> None:
    plans = _by_type(real_tables, HoodieCompactionPlan)
    assert len(plans) == 2  # data table and metadata table of v8_trips_8i3u1d
    for table, inst, path, plan in plans:
        root = path.parent.parent.parent if "metadata" in path.parts else table.path
        assert plan.version == 2 and plan.preserve_hoodie_metadata is False and plan.operations
        for op in plan.operations:
            folder = root / (op.partition_path or "")
            assert op.base_instant_time and op.base_instant_time < inst.requested
            if op.data_file_path is not None:  # a base file *name*, written at the base instant
                assert op.data_file_path.rsplit(".", 1)[0].endswith(f"_{op.base_instant_time}")
                assert (folder / op.data_file_path).exists()
                assert op.data_file_path.startswith(op.file_id or "?")
            for log in op.delta_file_paths or ():
                assert "/" not in log and log.startswith(f".{op.file_id}_") and (folder / log).exists()
            assert op.metrics is not None and op.metrics["TOTAL_LOG_FILES"] == len(op.delta_file_paths or ())


def test_rollback_plan_and_metadata_agree(real_tables: list[RealTable]) -> None:
    (_, pinst, _, plan), = _by_type(real_tables, HoodieRollbackPlan)
    (_, minst, _, meta), = _by_type(real_tables, HoodieRollbackMetadata)
    assert pinst.requested == minst.requested == meta.start_rollback_time
    assert plan.instant_to_rollback is not None
    assert meta.commits_rollback == (plan.instant_to_rollback.commit_time,)
    assert meta.instants_rollback == (plan.instant_to_rollback,)
    planned = {f for r in plan.rollback_requests or () for f in r.files_to_be_deleted}
    deleted = {f for pm in meta.partition_metadata.values() for f in pm.success_delete_files}
    assert deleted == planned and meta.total_files_deleted == len(deleted)


def test_insert_overwrite_requested_replace_is_all_null(real_tables: list[RealTable]) -> None:
    found = _by_type(real_tables, HoodieRequestedReplaceMetadata)
    assert len(found) == 2
    for _, _, _, obj in found:
        assert obj == HoodieRequestedReplaceMetadata(operation_type=None, clustering_plan=None,
                                                     extra_metadata=None, version=None)


def test_indexing_plan_names_the_built_partition(real_tables: list[RealTable]) -> None:
    (table, _, _, plan), = _by_type(real_tables, HoodieIndexPlan)
    (_, _, _, done), = _by_type(real_tables, HoodieIndexCommitMetadata)
    assert plan.index_partition_infos == done.index_partition_infos
    built = {i.metadata_partition_path for i in plan.index_partition_infos or ()}
    assert built <= set(table.manifest["mdt_partitions"].split(","))
    assert built == {"secondary_index_rider_idx"}


# --- schemas ----------------------------------------------------------------------------------------

# Field lists of Hudi's Avro models (in order), as in hudi-common/src/main/avro/*.avsc (docs/spec/avro_schemas.md).
APPENDIX_A = {
    "HoodieCompactionPlan": ["operations", "extraMetadata", "version", "strategy", "preserveHoodieMetadata",
                             "missingSchedulePartitions"],
    "HoodieRequestedReplaceMetadata": ["operationType", "clusteringPlan", "extraMetadata", "version"],
    "HoodieRollbackPlan": ["instantToRollback", "RollbackRequests", "version"],
    "HoodieRollbackMetadata": ["startRollbackTime", "timeTakenInMillis", "totalFilesDeleted",
                               "commitsRollback", "partitionMetadata", "version", "instantsRollback"],
    # the clean records as Apache Hudi 1.2.0 writes them (tests/test_hudi_tech_spec_measured.py reads its files)
    "HoodieCleanerPlan": ["earliestInstantToRetain", "lastCompletedCommitTimestamp", "policy",
                          "filesToBeDeletedPerPartition", "version", "filePathsToBeDeletedPerPartition",
                          "partitionsToBeDeleted", "extraMetadata"],
    "HoodieCleanMetadata": ["startCleanTime", "timeTakenInMillis", "totalFilesDeleted",
                            "earliestCommitToRetain", "lastCompletedCommitTimestamp", "partitionMetadata",
                            "version", "bootstrapPartitionMetadata", "extraMetadata"],
    "HoodieSavepointMetadata": ["savepointedBy", "savepointedAt", "comments", "partitionMetadata"],
    "HoodieRestorePlan": ["instantsToRollback", "version", "savepointToRestoreTimestamp"],
    "HoodieRestoreMetadata": ["startRestoreTime", "timeTakenInMillis", "instantsToRollback",
                              "hoodieRestoreMetadata", "version", "restoreInstantInfo", "extraMetadata"],
    "HoodieIndexPlan": ["version", "indexPartitionInfos"],
    "HoodieIndexCommitMetadata": ["version", "operationType", "indexPartitionInfos"],
}


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("name", RECORD_NAMES)
def test_schemas_are_valid_avro_with_hudis_full_names(name: str, version: int) -> None:
    schema = schema_for(name, version)
    parsed: dict[str, Any] = fastavro.parse_schema(json.loads(schema_json(schema)))  # type: ignore[assignment]
    assert parsed["name"] == f"{NAMESPACE}.{name}"
    if name in APPENDIX_A:
        assert [f["name"] for f in schema["fields"]] == APPENDIX_A[name]
        assert name == PLAN_TYPES[name].RECORD
    text = schema_json(schema)
    assert '"type":"string"' not in text.replace('"type":"string","avro.java.string":"String"', "")


def test_plan_dataclasses_cover_their_schemas() -> None:
    from dataclasses import fields

    from spec.timeline.avro_model_codec import avro_name
    for name, cls in PLAN_TYPES.items():
        assert [avro_name(f) for f in fields(cls)] == [f["name"] for f in schema_for(name, 8)["fields"]]


def test_clustering_plan_gains_missing_schedule_partitions_in_v8() -> None:
    def plan_fields(version: int) -> list[str]:
        plan = schema_for("HoodieRequestedReplaceMetadata", version)["fields"][1]["type"][1]
        return [f["name"] for f in plan["fields"]]
    assert "missingSchedulePartitions" not in plan_fields(6)
    assert plan_fields(8)[-1] == "missingSchedulePartitions"


# --- container ------------------------------------------------------------------------------------------


def test_container_is_what_java_writes() -> None:
    plan = HoodieRestorePlan(instants_to_rollback=(HoodieInstantInfo(commit_time="20240101000000000",
                                                                     action="commit"),))
    data = format_avro_metadata(plan, 8, sync_marker=b"0123456789abcdef")
    reader = fastavro.reader(io.BytesIO(data))
    assert set(reader.metadata) == {"avro.schema"}  # no avro.codec key: Java omits the null codec
    assert data.startswith(b"Obj\x01\x02\x16avro.schema")
    assert data.count(b"0123456789abcdef") == 2  # after the header and after the one block
    assert list(reader) == [{"instantsToRollback": [{"commitTime": "20240101000000000", "action": "commit"}],
                             "version": 2, "savepointToRestoreTimestamp": None}]
    assert format_avro_metadata(plan, 8) == format_avro_metadata(plan, 8)  # deterministic default marker


def test_bad_content_raises_typed_errors() -> None:
    plan = format_avro_metadata(HoodieIndexPlan(), 8)
    with pytest.raises(MetadataFormatError, match="HoodieIndexPlan"):
        parse_timeline_content(Instant("20240101000000000", "clean", State.REQUESTED), plan)
    with pytest.raises(MetadataFormatError):
        parse_avro_metadata(plan, HoodieCleanerPlan)
    with pytest.raises(MetadataFormatError):
        parse_timeline_content(Instant("20240101000000000", "rollback", State.REQUESTED), b"{}")
    with pytest.raises(MetadataFormatError):
        parse_avro_metadata(plan[:-20])
    with pytest.raises(MetadataFormatError):
        parse_avro_metadata(b"Obj\x01garbage")
    two = fastavro.parse_schema(json.loads(schema_json(schema_for("HoodieIndexPlan", 8))))
    buf = io.BytesIO()
    fastavro.writer(buf, two, [{"version": 1, "indexPartitionInfos": None}] * 2)
    with pytest.raises(MetadataFormatError, match="one record"):
        parse_avro_metadata(buf.getvalue())
    with pytest.raises(MetadataFormatError):
        format_avro_metadata(CommitMetadata(), 8)
    with pytest.raises(MetadataFormatError):
        write_container(schema_for("HoodieSavepointMetadata", 8), {"savepointedBy": "x"})
    with pytest.raises(MetadataFormatError, match="required"):
        parse_avro_metadata(write_container(
            {"type": "record", "name": "HoodieSavepointMetadata", "namespace": NAMESPACE,
             "fields": [{"name": "comments", "type": "string"}]}, {"comments": "c"}))


def test_empty_files_read_as_hudi_reads_them() -> None:
    assert parse_timeline_content(Instant("20240101000000000", "deltacommit", State.INFLIGHT), b"") == \
        CommitMetadata()
    assert parse_commit_metadata(b"") == CommitMetadata()
    assert parse_timeline_content(Instant("20240101000000000", "compaction", State.INFLIGHT), b"") is None
    assert parse_timeline_content(Instant("20240101000000000", "savepoint", State.INFLIGHT), b"") is None


# --- hypothesis round trips ---------------------------------------------------------------------------

texts = st.text(max_size=12)
opt_text = st.none() | texts
longs = st.integers(-(2**63), 2**63 - 1)
ints = st.integers(-(2**31), 2**31 - 1)
opt_int = st.none() | ints
strs = st.lists(texts, max_size=3).map(tuple)
opt_strs = st.none() | strs
str_map = st.dictionaries(texts, texts, max_size=3)
opt_str_map = st.none() | str_map
long_map = st.none() | st.dictionaries(texts, longs, max_size=3)
instant_info = st.builds(HoodieInstantInfo, commit_time=texts, action=texts)

compaction_plan = st.builds(
    HoodieCompactionPlan,
    operations=st.none() | st.lists(st.builds(
        HoodieCompactionOperation, base_instant_time=opt_text, delta_file_paths=opt_strs,
        data_file_path=opt_text, file_id=opt_text, partition_path=opt_text,
        metrics=st.none() | st.dictionaries(texts, st.floats(allow_nan=False), max_size=3),
        bootstrap_file_path=opt_text), max_size=3).map(tuple),
    extra_metadata=opt_str_map, version=opt_int,
    strategy=st.none() | st.builds(HoodieCompactionStrategy, compactor_class_name=opt_text,
                                   strategy_params=opt_str_map, version=opt_int),
    preserve_hoodie_metadata=st.none() | st.booleans(), missing_schedule_partitions=opt_strs)

clean_partition = st.builds(HoodieCleanPartitionMetadata, partition_path=texts, policy=texts,
                            delete_path_patterns=strs, success_delete_files=strs, failed_delete_files=strs,
                            is_partition_deleted=st.none() | st.booleans())
cleaner_plan = st.builds(
    HoodieCleanerPlan,
    earliest_instant_to_retain=st.none() | st.builds(HoodieActionInstant, timestamp=texts, action=texts,
                                                     state=texts),
    policy=texts, files_to_be_deleted_per_partition=st.none() | st.dictionaries(texts, strs, max_size=2),
    version=opt_int,
    file_paths_to_be_deleted_per_partition=st.none() | st.dictionaries(texts, st.lists(st.builds(
        HoodieCleanFileInfo, file_path=opt_text, is_bootstrap_base_file=st.none() | st.booleans()),
        max_size=2).map(tuple), max_size=2),
    partitions_to_be_deleted=opt_strs, last_completed_commit_timestamp=texts,
    extra_metadata=st.none() | st.dictionaries(texts, texts, max_size=3))
clean_metadata = st.builds(
    HoodieCleanMetadata, start_clean_time=texts, time_taken_in_millis=longs,
    total_files_deleted=ints,
    earliest_commit_to_retain=texts, last_completed_commit_timestamp=texts,
    partition_metadata=st.dictionaries(texts, clean_partition, max_size=2), version=opt_int,
    bootstrap_partition_metadata=st.none() | st.dictionaries(texts, clean_partition, max_size=2),
    extra_metadata=st.none() | st.dictionaries(texts, texts, max_size=3))
rollback_plan = st.builds(
    HoodieRollbackPlan, instant_to_rollback=st.none() | instant_info,
    rollback_requests=st.none() | st.lists(st.builds(
        HoodieRollbackRequest, partition_path=texts, file_id=opt_text, latest_base_instant=opt_text,
        files_to_be_deleted=strs, log_blocks_to_be_deleted=long_map), max_size=3).map(tuple),
    version=opt_int)
rollback_metadata = st.builds(
    HoodieRollbackMetadata, start_rollback_time=texts, time_taken_in_millis=longs, total_files_deleted=ints,
    commits_rollback=strs,
    partition_metadata=st.dictionaries(texts, st.builds(
        HoodieRollbackPartitionMetadata, partition_path=texts, success_delete_files=strs,
        failed_delete_files=strs, rollback_log_files=long_map, log_files_from_failed_commit=long_map),
        max_size=2),
    version=opt_int, instants_rollback=st.lists(instant_info, max_size=2).map(tuple))
savepoint_metadata = st.builds(
    HoodieSavepointMetadata, savepointed_by=texts, savepointed_at=longs, comments=texts,
    partition_metadata=st.dictionaries(texts, st.builds(HoodieSavepointPartitionMetadata,
                                                        partition_path=texts, savepoint_data_file=strs),
                                       max_size=2))
restore_plan = st.builds(HoodieRestorePlan,
                         instants_to_rollback=st.lists(instant_info, max_size=3).map(tuple),
                         version=opt_int, savepoint_to_restore_timestamp=opt_text)
restore_metadata = st.builds(
    HoodieRestoreMetadata, start_restore_time=texts, time_taken_in_millis=longs, instants_to_rollback=strs,
    hoodie_restore_metadata=st.dictionaries(
        texts, st.lists(st.none() | rollback_metadata, max_size=2).map(tuple), max_size=2),
    version=opt_int, restore_instant_info=st.lists(instant_info, max_size=2).map(tuple),
    extra_metadata=opt_str_map)
index_info = st.builds(HoodieIndexPartitionInfo, version=opt_int, metadata_partition_path=opt_text,
                       index_upto_instant=opt_text, extra_metadata=opt_str_map)
index_plan = st.builds(HoodieIndexPlan, version=opt_int,
                       index_partition_infos=st.none() | st.lists(index_info, max_size=2).map(tuple))
index_commit = st.builds(HoodieIndexCommitMetadata, version=opt_int, operation_type=opt_text,
                         index_partition_infos=st.none() | st.lists(index_info, max_size=2).map(tuple))
requested_replace = st.builds(HoodieRequestedReplaceMetadata, operation_type=opt_text,
                              clustering_plan=st.none(),
                              extra_metadata=opt_str_map, version=opt_int)

ANY_PLAN = st.one_of(compaction_plan, cleaner_plan, clean_metadata, rollback_plan, rollback_metadata,
                     savepoint_metadata, restore_plan, restore_metadata, index_plan, index_commit,
                     requested_replace)


@pytest.mark.parametrize("version", [6, 8])
@given(plan=ANY_PLAN)
def test_every_plan_type_round_trips(version: int, plan: Any) -> None:
    data = format_avro_metadata(plan, version)
    assert read_container(data).record_name == type(plan).RECORD
    assert parse_avro_metadata(data, type(plan)) == plan


@pytest.mark.parametrize("version", [6, 8])
@given(ops=st.lists(st.builds(HoodieCompactionOperation, base_instant_time=opt_text, file_id=opt_text,
                              delta_file_paths=opt_strs), max_size=2))
def test_compaction_plans_round_trip(version: int, ops: list[HoodieCompactionOperation]) -> None:
    plan = HoodieCompactionPlan(operations=tuple(ops), version=2)
    assert parse_avro_metadata(format_avro_metadata(plan, version)) == plan


def test_a_real_clustering_plan_shape_round_trips() -> None:
    """A clustering plan (kept as the decoded mapping) as Hudi's
    hudi-common/src/main/avro/HoodieClusteringPlan.avsc describes it."""
    plan = {"inputGroups": [{"slices": [{"dataFilePath": "file:/t/p/f1-0_0-1-1_20240101000000000.parquet",
                                         "deltaFilePaths": [], "fileId": "f1-0", "partitionPath": "p",
                                         "bootstrapFilePath": "", "version": 1}],
                             "metrics": {"TOTAL_IO_MB": 1.0}, "numOutputFileGroups": 1,
                             "extraMetadata": None, "version": 1}],
            "strategy": {"strategyClassName": "org.apache.hudi.client.clustering.run.strategy."
                                              "SparkSortAndSizeExecutionStrategy",
                         "strategyParams": {}, "version": 1},
            "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True,
            "missingSchedulePartitions": []}
    md = HoodieRequestedReplaceMetadata(operation_type="CLUSTER", clustering_plan=plan, extra_metadata={},
                                        version=1)
    back = parse_timeline_content(Instant("20240101000000000", "clustering", State.REQUESTED),
                                  format_avro_metadata(md, 8))
    assert back == md
    v6 = parse_avro_metadata(format_avro_metadata(md, 6))
    assert isinstance(v6, HoodieRequestedReplaceMetadata) and v6.clustering_plan is not None
    assert "missingSchedulePartitions" not in v6.clustering_plan  # v6 schema has no such field


# --- the docs' field tables are drawn from the schemas ------------------------------------------------


def _type_text(t: Any) -> str:
    if isinstance(t, list):
        return " | ".join(_type_text(b) for b in t)
    if isinstance(t, str):
        return t
    kind = t["type"]
    if kind == "record":
        return str(t["name"])
    if kind == "array":
        return f"array<{_type_text(t['items'])}>"
    if kind == "map":
        return f"map<{_type_text(t['values'])}>"
    if "logicalType" in t:
        return f"{kind} ({t['logicalType']})"
    return str(kind)


def _records_in(t: Any, out: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    if isinstance(t, list):
        for b in t:
            _records_in(b, out)
    elif isinstance(t, dict):
        if t.get("type") == "record":
            out.setdefault(t["name"], t)
            for f in t["fields"]:
                _records_in(f["type"], out)
        for key in ("items", "values"):
            if key in t:
                _records_in(t[key], out)
    return out


def field_table(record: dict[str, Any]) -> str:
    """A markdown table of a record's fields: name, Avro type, default (— when none)."""
    def cell(text: str) -> str:
        return f"`{text}`"  # a pipe inside a code span does not split the cell
    rows = ["| field | Avro type | default |", "|---|---|---|"]
    for f in record["fields"]:
        default = cell(json.dumps(f["default"])) if "default" in f else "—"
        rows.append(f"| {cell(f['name'])} | {cell(_type_text(f['type']))} | {default} |")
    return "\n".join(rows)


def all_records() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in RECORD_NAMES:
        _records_in(schema_for(name, 8), out)
    return out


DOC_PAGES = ("docs/spec/plans.md", "docs/spec/commit_metadata.md")


def _doc_tables(text: str) -> dict[str, str]:
    import re
    return {m.group(1): m.group(2).strip() for m in
            re.finditer(r"<!-- fields: (\w+) -->\n(.*?)<!-- /fields -->", text, re.S)}


def test_docs_field_tables_are_drawn_from_the_schemas() -> None:
    root = Path(__file__).resolve().parent.parent
    records = all_records()
    documented: set[str] = set()
    for page in DOC_PAGES:
        for name, table in _doc_tables((root / page).read_text()).items():
            assert table == field_table(records[name]), f"{page}: the {name} table is stale"
            documented.add(name)
    assert documented == set(records)  # every timeline record (nested ones too) has its table
