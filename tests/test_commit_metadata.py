"""Commit metadata: every commit-family timeline file of the real tables (data and metadata
tables, v6 JSON and v8 Avro) parses, means what docs/spec/commit_metadata.md says, and writes back byte
for byte; hypothesis round trips for v6 and v8; Java's reading rules on the edges."""

from __future__ import annotations

import io
import json
import posixpath
from dataclasses import fields, replace
from typing import Any

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.config.write_operation import WriteOperationType
from spec.errors import MetadataFormatError
from spec.timeline.avro_container import read_container
from spec.timeline.avro_schemas import commit_metadata_schema, replace_commit_metadata_schema, schema_json
from spec.timeline.commit_metadata import (
    AVRO_STAT_FIELDS,
    NULL_COMMIT,
    STAT_FIELDS,
    UNKNOWN_OPERATION,
    V6_BASE_STAT_FIELDS,
    V6_DELTA_STAT_EXTRA,
    CommitMetadata,
    RuntimeStats,
    WriteStat,
    format_commit_metadata,
    jackson_pretty,
    parse_commit_metadata,
    write_stat,
)
from spec.timeline.instant import State
from tests.conftest import RealTable
from tests.test_plans import timeline_files

COMMIT_FAMILY = ("commit", "deltacommit", "replacecommit")


def _commit_files(table: RealTable) -> list[tuple[Any, Any, str, bytes]]:
    out = []
    for inst, path, where in timeline_files(table):
        requested_replace = inst.action == "replacecommit" and inst.state == State.REQUESTED
        if inst.action in COMMIT_FAMILY and not requested_replace:
            out.append((inst, path, where, path.read_bytes()))
    return out


def test_real_commit_files_round_trip_exactly(any_real_table: RealTable) -> None:
    seen = 0
    for inst, path, where, data in _commit_files(any_real_table):
        md = parse_commit_metadata(data)
        if not data:
            assert md == CommitMetadata() and md.operation_type == "UNKNOWN"
            continue
        seen += 1
        is_avro = data.startswith(b"Obj\x01")
        assert is_avro == (any_real_table.table_version >= 8)
        replace_file = (read_container(data).record_name == "HoodieReplaceCommitMetadata" if is_avro
                        else "partitionToReplaceFileIds" in json.loads(data))
        if inst.state == State.COMPLETED:
            assert replace_file == (inst.action == "replacecommit") == md.is_replace
            if not where.startswith(".hoodie/metadata"):  # (an index bootstrap may write nothing)
                assert md.partition_to_write_stats, "a completed write lists the files it wrote"
            assert md.operation_type in WriteOperationType.__members__
        sync = read_container(data).sync_marker if is_avro else None
        again = format_commit_metadata(md, any_real_table.table_version, replace_file, sync)
        assert again == data, f"{where}/{path.name}"
        assert parse_commit_metadata(again) == md
        if not is_avro:
            assert json.loads(again) == json.loads(data)
        else:  # our container decodes, with fastavro, to the record Hudi wrote
            assert list(fastavro.reader(io.BytesIO(again))) == list(fastavro.reader(io.BytesIO(data)))
    expected = sum(int(kv.split(":")[1]) for kv in any_real_table.manifest.get("completed_instants", "").split()
                   if kv.split(":")[0] in COMMIT_FAMILY)
    assert seen >= expected


def test_completed_write_stats_mean_what_the_format_reference_says(any_real_table: RealTable) -> None:
    version = any_real_table.table_version
    for inst, _path, where, data in _commit_files(any_real_table):
        if inst.state != State.COMPLETED or not data:
            continue
        in_data_table = where in (".hoodie", ".hoodie/timeline")
        root = any_real_table.path if in_data_table else any_real_table.path / ".hoodie/metadata"
        md = parse_commit_metadata(data)
        if where in (".hoodie", ".hoodie/timeline") and md.schema:
            assert "_hoodie_commit_time" not in md.schema  # the writer schema, without meta fields
        assert md.compacted == (md.operation_type == "COMPACT")
        for partition, stats in md.partition_to_write_stats.items():
            for s in stats:
                assert s.partition_path == partition and s.path and s.file_id
                assert posixpath.dirname(s.path) == partition
                assert s.total_write_errors == 0 and s.runtime_stats is not None
                name = posixpath.basename(s.path)
                assert name.startswith(("." + s.file_id, s.file_id))
                if s.is_delta:  # a log file of a MOR deltacommit
                    # logFiles: the slice's log files so far, the one just written last
                    assert name.startswith(".") and s.log_files and s.log_files[-1] == name
                    assert s.log_offset == 0
                    assert all(f.startswith(f".{s.file_id}_") for f in s.log_files)
                    assert s.log_version == int(name.split(".log.")[1].split("_")[0])
                    if version >= 8:  # v8: prevCommit is the deltacommit itself, baseFile ""
                        assert s.prev_commit == inst.requested and s.base_file == ""
                    else:  # v6: the slice's base instant and base file name
                        assert s.base_file and s.base_file.endswith(f"_{s.prev_commit}.parquet")
                        assert (root / partition / s.base_file).exists()
                else:
                    assert s.log_version is None and s.log_files is None and s.base_file is None
                    assert name.rsplit(".", 1)[0].endswith(inst.requested)
                    assert s.prev_commit == NULL_COMMIT or s.prev_commit < inst.requested
                assert (root / s.path).exists(), s.path


def test_v6_inflight_is_the_planned_workload() -> None:
    """docs/spec/commit_metadata.md: an inflight commit lists per partition fileId "" (inserts) or the
    updated group, paths null."""
    planned = {"fileId": "", "path": None, "prevCommit": "null", "numInserts": 3}
    doc = {"partitionToWriteStats": {"p": [planned]},
           "compacted": False, "extraMetadata": {}, "operationType": "UPSERT"}
    md = parse_commit_metadata(json.dumps(doc).encode())
    (s,) = md.partition_to_write_stats["p"]
    assert s.file_id == "" and s.path is None and s.num_inserts == 3 and s.num_writes == 0
    assert md.file_ids_written() == set()


# --- Java's reading rules ----------------------------------------------------------------------------


def test_empty_and_damaged_files() -> None:
    assert parse_commit_metadata(b"") == CommitMetadata()
    assert CommitMetadata().operation_type == UNKNOWN_OPERATION == WriteOperationType.UNKNOWN.value
    assert parse_commit_metadata(b"  \n") == CommitMetadata()
    for bad in (b"{not json", b"[1, 2]", b"Obj\x01garbage", b"\xff\xfe"):
        with pytest.raises(MetadataFormatError):
            parse_commit_metadata(bad)
    with pytest.raises(MetadataFormatError, match="numWrites"):
        parse_commit_metadata(b'{"partitionToWriteStats": {"p": [{"numWrites": "many"}]}}')


def test_unknown_json_fields_are_ignored_and_null_counters_read_as_zero() -> None:
    doc = {"partitionToWriteStats": {"": [{"fileId": "f", "numWrites": None, "someNewField": 1}]},
           "compacted": None, "extraMetadata": None, "operationType": "INSERT", "newTopLevel": True}
    md = parse_commit_metadata(json.dumps(doc).encode())
    assert md.compacted is False and md.extra_metadata == {}
    assert md.partition_to_write_stats[""][0] == WriteStat(file_id="f")


def test_v8_never_writes_null_maps() -> None:
    """docs/spec/commit_metadata.md, v8: newer Java readers fail on a null partitionToWriteStats."""
    for replace_ in (False, True):
        rec = read_container(format_commit_metadata(CommitMetadata(), 8, replace_)).record
        assert rec["partitionToWriteStats"] == {} and rec["extraMetadata"] == {}
        assert rec["version"] is None  # Java writes null
        if replace_:
            assert rec["partitionToReplaceFileIds"] == {}


def test_v8_records_carry_hudis_full_names() -> None:
    for md, name in ((CommitMetadata(), "HoodieCommitMetadata"),
                     (CommitMetadata(partition_to_replace_file_ids={"p": ("f1-0",)}),
                      "HoodieReplaceCommitMetadata")):
        text = read_container(format_commit_metadata(md, 8)).schema_text
        parsed: dict[str, Any] = fastavro.parse_schema(json.loads(text))  # type: ignore[assignment]
        assert parsed["name"] == f"org.apache.hudi.avro.model.{name}"
        assert "org.apache.hudi.avro.model.HoodieWriteStat" in json.dumps(parsed)


def test_v6_json_layout_is_jacksons() -> None:
    md = CommitMetadata({"p": (write_stat(fileId="f1-0", path="p/f1-0_0-1-1_20240101000000000.parquet",
                                          partitionPath="p", numWrites=2),)},
                        False, {"schema": '{"a":"é\n"}'}, "INSERT")
    text = format_commit_metadata(md, 6).decode("utf-8")
    assert text.startswith('{\n  "partitionToWriteStats" : {\n    "p" : [ {\n      "fileId" : "f1-0",\n')
    # UTF-8 kept, \n escaped
    assert '"extraMetadata" : {\n    "schema" : "{\\"a\\":\\"é\\n\\"}"\n  },' in text
    assert text.endswith('  "operationType" : "INSERT"\n}')
    assert '"runtimeStats" : {\n        "totalScanTime" : 0,\n        "totalUpsertTime" : 0,' in text
    assert jackson_pretty({"a": [], "b": {}, "c": [1, "x"]}) == \
        '{\n  "a" : [ ],\n  "b" : { },\n  "c" : [ 1, "x" ]\n}'
    assert jackson_pretty("\x01\t") == '"\\u0001\\t"'


def test_delta_stats_are_the_ones_with_a_log_version() -> None:
    base = write_stat(fileId="f", path="p/f_0-1-1_20240101000000000.parquet")
    log = write_stat(fileId="f", path="p/.f_20240101000000000.log.1_0-1-1", logVersion=1, logOffset=0,
                     baseFile="f_0-1-1_20240101000000000.parquet",
                     logFiles=[".f_20240101000000000.log.1_0-1-1"])
    assert not base.is_delta and log.is_delta and log.is_log
    doc = json.loads(format_commit_metadata(CommitMetadata({"p": (base, log)}), 6))
    b, lg = doc["partitionToWriteStats"]["p"]
    assert list(b) == list(V6_BASE_STAT_FIELDS)
    assert list(lg) == list(V6_BASE_STAT_FIELDS) + list(V6_DELTA_STAT_EXTRA)
    assert lg["recordsStats"] == {"val": None} and lg["logFiles"] == [".f_20240101000000000.log.1_0-1-1"]


def test_stat_field_tables_agree_with_the_schemas() -> None:
    attrs = [f.name for f in fields(WriteStat)]
    assert [a for a, _ in STAT_FIELDS] == attrs
    names = {n for _, n in STAT_FIELDS}
    assert set(AVRO_STAT_FIELDS) == names - {"recordsStats"}  # the v6-only Option wrapper has no Avro field
    assert set(V6_BASE_STAT_FIELDS + V6_DELTA_STAT_EXTRA) == names - {
        "totalLogFiles", "prevBaseFile", "totalLogReadTimeMs", "numUpdates"}  # v8-only Avro fields
    for schema in (commit_metadata_schema(), replace_commit_metadata_schema()):
        assert schema["fields"][0]["name"] == "partitionToWriteStats"
        assert '"name":"HoodieRuntimeStats"' in schema_json(schema)


def test_write_stat_helper_and_accessors() -> None:
    s = write_stat(fileId="f1-0", numWrites=4, numUpdateWrites=1, fileSizeInBytes=10, totalWriteErrors=0)
    assert s.prev_commit == "null" and s.runtime_stats == RuntimeStats()
    assert (s.num_updates, s.file_size, s.get("numWrites"), s.get("minEventTime", -1)) == (1, 10, 4, -1)
    with pytest.raises(MetadataFormatError, match="numWritez"):
        write_stat(numWritez=1)


def test_helpers() -> None:
    a = write_stat(fileId="a-0", partitionPath="p")
    md = CommitMetadata({"p": (a,), "q": (write_stat(fileId="b-0"),)}, extra_metadata={"schema": "{}"},
                        partition_to_replace_file_ids={"p": ("x-0", "y-0")})
    assert md.schema == "{}" and len(list(md.all_write_stats())) == 2
    assert md.file_ids_written() == {("p", "a-0"), ("q", "b-0")}
    assert md.replaced_file_ids() == {("p", "x-0"), ("p", "y-0")} and md.is_replace
    assert CommitMetadata().schema is None


# --- hypothesis ------------------------------------------------------------------------------------------

texts = st.text(max_size=10)
opt_text = st.none() | texts
longs = st.integers(-(2**63), 2**63 - 1)
opt_long = st.none() | longs
runtime = st.none() | st.builds(RuntimeStats, total_scan_time=longs, total_upsert_time=longs,
                                total_create_time=longs)
counters = {f.name: longs for f in fields(WriteStat) if f.default == 0}


@st.composite
def write_stats(draw: st.DrawFn, version: int) -> WriteStat:
    delta = draw(st.booleans())
    values: dict[str, Any] = {name: draw(s) for name, s in counters.items()}
    values.update(file_id=draw(opt_text), path=draw(opt_text), prev_commit=draw(opt_text),
                  partition_path=draw(opt_text), min_event_time=draw(opt_long), max_event_time=draw(opt_long),
                  runtime_stats=draw(runtime), temp_path=draw(opt_text),
                  cdc_stats=draw(st.none() | st.dictionaries(texts, longs, max_size=2)))
    if delta:
        values.update(log_version=draw(st.integers(-(2**31), 2**31 - 1)), log_offset=draw(longs),
                      base_file=draw(opt_text), log_files=tuple(draw(st.lists(texts, max_size=3))))
    if version >= 8:
        values.update(total_log_files=draw(opt_long), prev_base_file=draw(opt_text))
    else:  # fields v6 JSON does not have keep their defaults
        values.update(total_log_read_time_ms=0, num_updates_v8=0)
    return WriteStat(**values)


@st.composite
def metadata(draw: st.DrawFn, version: int) -> CommitMetadata:
    parts = draw(st.lists(texts, max_size=3, unique=True))
    stats = {p: tuple(draw(st.lists(write_stats(version), max_size=2))) for p in parts}
    replace_ids = draw(st.none() | st.dictionaries(texts, st.lists(texts, max_size=2).map(tuple), max_size=2))
    return CommitMetadata(stats, draw(st.booleans()), draw(st.dictionaries(texts, texts, max_size=3)),
                          draw(st.none() | st.sampled_from([o.value for o in WriteOperationType])),
                          replace_ids,
                          draw(st.none() | st.integers(-(2**31), 2**31 - 1)) if version >= 8 else None)


@given(md=metadata(6))
def test_v6_round_trip(md: CommitMetadata) -> None:
    data = format_commit_metadata(md, 6)
    assert parse_commit_metadata(data) == md
    assert jackson_pretty(json.loads(data)) == data.decode("utf-8")  # the layout is a fixed point


@given(md=metadata(8))
def test_v8_round_trip(md: CommitMetadata) -> None:
    data = format_commit_metadata(md, 8)
    assert parse_commit_metadata(data) == md
    assert read_container(data).record_name == ("HoodieReplaceCommitMetadata" if md.is_replace
                                                else "HoodieCommitMetadata")


@given(md=metadata(8))
def test_v8_to_v6_keeps_what_v6_can_hold(md: CommitMetadata) -> None:
    v6 = parse_commit_metadata(format_commit_metadata(md, 6))
    for (p, stats), (q, back) in zip(md.partition_to_write_stats.items(), v6.partition_to_write_stats.items(),
                                     strict=True):
        assert p == q
        for s, b in zip(stats, back, strict=True):
            expected = replace(s, total_log_files=None, prev_base_file=None, total_log_read_time_ms=0,
                               num_updates_v8=0)
            assert b == expected


@pytest.mark.parametrize("version", [6, 9])
def test_a_delta_stat_names_the_log_files_hudi_names(tmp_path: Any, version: int) -> None:
    """``logFiles`` of an append's delta stat, as Apache Hudi 1.2.0's append handle writes it (measured: a
    merge-on-read table, three upserts of the same two keys with ``hoodie.parquet.small.file.limit=0``): on table
    version 6 the slice's log files so far, its own last (the third deltacommit names ``log.1`` and ``log.2``); on
    version 9 its own alone (each deltacommit writes a log file of its own instant)."""
    import pyarrow as pa

    from reference.api import HudiTable
    from spec.config.table_config import TableConfig
    from spec.storage.hoodie_storage import Storage
    from spec.timeline.active_timeline import Timeline
    from spec.timeline.layout import read_instant_content

    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0"}
    table = HudiTable(str(tmp_path), engine="local")
    for i in range(3):
        table.write(pa.table({"id": ["k1", "k2"], "p": ["a", "a"], "ts": [i, i], "v": [f"v{i}", f"w{i}"]}), "upsert",
                    opts)
    storage = Storage(str(tmp_path))
    layout = TableConfig.load(storage).timeline_layout
    named = []
    for inst in Timeline.load(storage, layout).completed().filter_actions("deltacommit").instants[1:]:
        (stat,) = parse_commit_metadata(read_instant_content(storage, inst, layout)).partition_to_write_stats["a"]
        named.append([name.split(".log.")[1].split("_")[0] for name in stat.log_files or ()])
        assert (stat.log_files or ())[-1] == posixpath.basename(stat.path)
    assert named == ([["1"], ["1", "2"]] if version == 6 else [["1"], ["1"]])
