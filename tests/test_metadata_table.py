"""The metadata table: every HFile Apache Hudi wrote (base files and HFILE log blocks) parses and every value
decodes to the record its key names; the ``files`` partition lists exactly the files on storage; record
indexes hold exactly the table's keys; readers list through it and read what listing storage reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.cli import main
from spec.config.table_config import TableConfig
from spec.errors import HFileFormatError
from spec.file_group.file_system_view import list_data_files
from spec.file_group.log_file.log_format import BlockType, encode_blocks, read_blocks
from spec.metadata.hfile import BLOCK_HEADER_SIZE, TRAILER_SIZE, parse_hfile, read_varint, read_vlong
from spec.metadata.hfile_writer import format_hfile, write_varint, write_vlong
from spec.metadata.metadata_table import (
    ALL_PARTITIONS_KEY,
    FILES_PARTITION,
    FileInfo,
    block_changes,
    combine_file_infos,
    decode_metadata_record,
    files_from_records,
    list_table_files,
    read_files_partition,
    uses_metadata_table,
)
from spec.read.reader import TableReader, read_table
from spec.schema.table_schema import RECORD_KEY
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset

# HoodieMetadataRecord.type by metadata partition (MetadataPartitionType)
RECORD_TYPES = {"files": {1, 2}, "column_stats": {3}, "bloom_filters": {4}, "record_index": {5},
                "partition_stats": {6}, "secondary_index": {7}}


def _metadata_files(table: RealTable) -> list[Path]:
    mdt = table.path / ".hoodie" / "metadata"
    return sorted(p for p in mdt.rglob("*") if p.is_file() and ".hoodie/metadata/.hoodie" not in str(p)
                  and not p.name.startswith(".hoodie_partition_metadata") and not p.name.endswith(".crc"))


def _partition(path: Path) -> str:
    return path.relative_to(path.parents[1]).parts[0]


def _hfiles(table: RealTable) -> list[tuple[str, str, bytes, str | None]]:
    """(metadata partition, where, HFile bytes, block schema) of every base HFile and HFILE log block."""
    out = []
    for f in _metadata_files(table):
        if f.suffix == ".hfile":
            out.append((_partition(f), f.name, f.read_bytes(), None))
        elif ".log." in f.name:
            for rec in read_blocks(f.read_bytes()):
                assert rec.block is not None, f"corrupt block in {f.name}"
                if rec.block.block_type == BlockType.HFILE_DATA_BLOCK:
                    out.append((_partition(f), f"{f.name}@{rec.offset}", rec.block.content,
                                rec.block.header_value(2)))
    return out


def _kind(partition: str) -> str:
    return "secondary_index" if partition.startswith("secondary_index_") else partition


def test_every_metadata_hfile_parses_and_every_value_is_the_record_its_key_names(any_real_table: RealTable) -> None:
    mdt_partitions = any_real_table.manifest["mdt_partitions"]
    hfiles = _hfiles(any_real_table)
    if mdt_partitions == "-":
        assert hfiles == []
        return
    assert {p for p, *_ in hfiles} <= set(mdt_partitions.split(","))
    entries = 0
    for partition, where, data, block_schema in hfiles:
        hf = parse_hfile(data)  # checks the index, counts, key order and last key against the blocks
        assert hf.trailer.major_version == 3 and hf.trailer.compression_codec in ("GZ", "NONE"), where
        assert hf.trailer.entry_count == len(hf.entries)
        schema = block_schema or hf.file_info["schema"].decode()
        for e in hf.entries:
            record = decode_metadata_record(e.value, schema)
            # the writer blanks the key field where the HFile key carries it (HoodieAvroHFileWriter)
            assert record["key"] in ("", e.key), where
            assert record["type"] in RECORD_TYPES[_kind(partition)], (where, record["type"])
            assert (e.family, e.qualifier, e.key_type, e.memstore_ts) == (b"", b"", 4, 0)
        entries += len(hf.entries)
    assert entries > 0


def test_every_metadata_hfile_and_log_file_round_trips_byte_for_byte(any_real_table: RealTable) -> None:
    """Parse, then re-encode from the parsed content (key/values, meta blocks, file info, trailer fields): the
    same bytes, for HFiles of Hudi 1.1's own writer and of HBase's (Hudi 1.0), and every log file of the
    metadata table re-encodes from its blocks."""
    hfiles = _hfiles(any_real_table)
    for _partition_name, where, data, _ in hfiles:
        assert format_hfile(parse_hfile(data)) == data, where
    logs = [f for f in _metadata_files(any_real_table) if ".log." in f.name]
    for log in logs:
        data = log.read_bytes()
        blocks = [r.block for r in read_blocks(data)]
        assert all(b is not None for b in blocks) and encode_blocks([b for b in blocks if b]) == data, log.name
    assert bool(hfiles) == (any_real_table.manifest["mdt_partitions"] != "-")


def test_the_files_partition_lists_exactly_the_files_on_storage(any_real_table: RealTable) -> None:
    storage = Storage(str(any_real_table.path))
    cfg = TableConfig.load(storage)
    assert uses_metadata_table(cfg) == (FILES_PARTITION in any_real_table.manifest["mdt_partitions"].split(","))
    if not uses_metadata_table(cfg):
        return
    timeline = Timeline.load(storage, cfg.timeline_layout)
    merged = read_files_partition(storage, timeline)
    from_mdt = sorted((f.partition_path, f.name, f.size) for f in files_from_records(merged))
    on_disk = sorted((f.partition_path, f.name, f.size) for f in list_data_files(storage))
    assert from_mdt == on_disk and from_mdt
    partitions = {f[0] for f in on_disk}
    assert {("" if p == "." else p) for p, i in merged[ALL_PARTITIONS_KEY].items() if not i.is_deleted} == partitions
    assert list_table_files(storage, cfg, timeline, use_metadata_table=False) == list_data_files(storage)


def test_record_indexes_hold_exactly_the_tables_keys(any_real_table: RealTable) -> None:
    """The record_index partition (base HFiles, then log blocks, a later record replacing an earlier one and a
    delete removing it) holds exactly the record keys a snapshot reads — a check of every one of its entries
    against the data files on disk."""
    if "record_index" not in any_real_table.manifest["mdt_partitions"].split(","):
        return
    folder = any_real_table.path / ".hoodie" / "metadata" / "record_index"
    keys: dict[str, bool] = {}
    files = sorted(folder.iterdir(), key=lambda p: (p.name.lstrip("."), p.suffix != ".hfile"))
    for group in sorted({p.name.lstrip(".").split("_")[0] for p in files if "record-index" in p.name}):
        members = [p for p in files if p.name.lstrip(".").startswith(group + "_")]
        base = [p for p in members if p.suffix == ".hfile"]
        latest = max(base, key=lambda p: p.stem.rsplit("_", 1)[1]) if base else None
        if latest is not None:
            keys.update({e.key: True for e in parse_hfile(latest.read_bytes()).entries})
        since = latest.stem.rsplit("_", 1)[1] if latest else ""
        for log in sorted((p for p in members if ".log." in p.name), key=lambda p: p.name):
            if log.name.lstrip(".").split("_")[1].split(".")[0] < since:
                continue
            for rec in read_blocks(log.read_bytes()):
                if rec.block is not None:
                    for key, record in block_changes(rec.block):
                        keys[key] = record is not None
    snapshot = read_table(str(any_real_table.path))
    assert {k for k, live in keys.items() if live} == set(snapshot.column(RECORD_KEY).to_pylist())


def test_reads_through_the_metadata_table_equal_reads_of_storage(any_real_table: RealTable) -> None:
    path = str(any_real_table.path)
    with_mdt, without = TableReader(path), TableReader(path, use_metadata_table=False)
    if not uses_metadata_table(with_mdt.config):
        return
    assert with_mdt.view().listing == tuple(list_table_files(with_mdt.storage, with_mdt.config, with_mdt.timeline))
    for as_of in [None, *(i.requested for i in with_mdt.timeline.completed().instants)]:
        assert [(g.partition_path, g.file_id, g.slices) for g in with_mdt.view(as_of).groups] == (
            [(g.partition_path, g.file_id, g.slices) for g in without.view(as_of).groups])
    assert as_multiset(read_table(path)) == as_multiset(read_table(path, use_metadata_table=False))


def test_read_lists_storage_on_request(any_real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(any_real_table.path)
    assert main(["read", path, "--format", "json"]) == 0
    through = capsys.readouterr().out
    assert main(["read", path, "--format", "json", "--list-file-system"]) == 0
    assert capsys.readouterr().out == through


def test_combining_file_listings_follows_hoodie_metadata_payload() -> None:
    a, b = FileInfo(10), FileInfo(20)
    gone = FileInfo(0, True)
    assert combine_file_infos({"f": a}, {"f": b}) == {"f": FileInfo(20)}
    assert combine_file_infos({"f": b}, {"f": a}) == {"f": FileInfo(20)}  # sizes only grow
    assert combine_file_infos({"f": a}, {"f": gone}) == {}  # a delete removes the file and itself
    assert combine_file_infos({}, {"f": gone}) == {"f": gone}  # kept, for older records merged later
    assert combine_file_infos({"f": gone}, {"f": gone}) == {"f": gone}
    assert combine_file_infos({"f": a, "g": a}, {"h": b}) == {"f": a, "g": a, "h": b}


def test_damaged_hfiles_are_typed_errors(real_tables_v9: list[RealTable]) -> None:
    table = next(t for t in real_tables_v9 if t.manifest["mdt_partitions"] != "-")
    data = next(f for f in _metadata_files(table) if f.suffix == ".hfile").read_bytes()
    with pytest.raises(HFileFormatError, match="no trailer magic"):
        parse_hfile(data[:-1])
    with pytest.raises(HFileFormatError, match="version 2"):
        parse_hfile(data[:-4] + b"\x00\x00\x00\x02")
    with pytest.raises(HFileFormatError):
        parse_hfile(b"XXXXXXXX" + data[8:])  # the first data block's magic
    gz_at = BLOCK_HEADER_SIZE + 10  # inside the first block's compressed payload
    with pytest.raises(HFileFormatError):
        parse_hfile(data[:gz_at] + bytes(b ^ 0xFF for b in data[gz_at:gz_at + 20]) + data[gz_at + 20:])
    assert len(data) > TRAILER_SIZE


@given(st.integers(-(2**63), 2**63 - 1))
def test_variable_length_numbers_round_trip(n: int) -> None:
    encoded = write_vlong(n)
    assert read_vlong(encoded, 0) == (n, len(encoded))
    if n >= 0:
        assert read_varint(write_varint(n), 0) == (n, len(write_varint(n)))


def test_a_damaged_checksum_is_found(real_tables: list[RealTable]) -> None:
    """HBase's writer (Hudi 1.0) checksums its blocks with CRC32C (checksum type 2)."""
    table = next(t for t in real_tables if t.manifest["mdt_partitions"] != "-")
    data = next(d for _, _, d, _ in _hfiles(table) if d[24] == 2)
    end = int.from_bytes(data[29:33], "big")  # the first block's data size: its checksum follows
    with pytest.raises(HFileFormatError, match="checksum mismatch"):
        parse_hfile(data[:end] + bytes([data[end] ^ 1]) + data[end + 1:])


def test_hadoop_variable_length_longs() -> None:
    assert read_vlong(b"\x00", 0) == (0, 1)
    assert read_vlong(b"\x7f", 0) == (127, 1)
    assert read_vlong(b"\x90", 0) == (-112, 1)
    assert read_vlong(b"\x8f\x80", 0) == (128, 2)  # -113: one positive byte follows
    assert read_vlong(b"\x8e\x01\x00", 0) == (256, 3)
    assert read_vlong(b"\x87\x80", 0) == (-129, 2)  # -121: one byte of the complement follows


def test_metadata_commits_record_hudis_record_schema(any_real_table: RealTable) -> None:
    """Every completed deltacommit and compaction of a real metadata table records ``HoodieMetadataRecord`` without
    meta fields as its schema, the text ``metadata_commit_schema_json`` gives (table version 6: Hudi 0.x's record
    has fields this writer does not model, so only that the schema names the record)."""
    from spec.metadata.record_schema import metadata_commit_schema_json
    from spec.timeline.commit_metadata import parse_commit_metadata
    from spec.timeline.instant import State
    from tests.test_plans import timeline_files

    seen = 0
    for inst, path, where in timeline_files(any_real_table):
        if "metadata" not in where or inst.state != State.COMPLETED or inst.action not in ("deltacommit", "commit"):
            continue
        schema = parse_commit_metadata(path.read_bytes()).schema
        if schema is None:
            continue
        seen += 1
        if any_real_table.table_version >= 8:
            assert schema == metadata_commit_schema_json(any_real_table.table_version), path.name
        else:
            assert '"name":"HoodieMetadataRecord"' in schema and "_hoodie_commit_time" not in schema
    if any_real_table.table_version >= 8 and "files" in any_real_table.manifest["mdt_partitions"].split(","):
        assert seen


def test_the_writers_metadata_commits_record_the_schema(tmp_path: Path) -> None:
    import pyarrow as pa

    from reference.api import HudiTable
    from spec.metadata.record_schema import metadata_commit_schema_json
    from spec.timeline.commit_metadata import parse_commit_metadata

    table = HudiTable(str(tmp_path), engine="local")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"}
    for i in range(3):
        table.write(pa.table({"id": [f"k{i}"], "p": ["a"], "ts": [i], "v": ["x"]}), "upsert", opts)
    folder = tmp_path / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    commits = sorted(p for p in folder.iterdir() if p.suffix in (".deltacommit", ".commit"))
    assert len(commits) >= 4  # files and record index initialized, then one a write
    for p in commits:
        assert parse_commit_metadata(p.read_bytes()).schema == metadata_commit_schema_json(9), p.name
