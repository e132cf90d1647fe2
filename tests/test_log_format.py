"""The log format on real files and generated blocks: decoding, byte-exact re-encoding, round trips."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import LogFormatError, UnsupportedBlockContent
from spec.file_group.log_file.delete_block import decode_delete_records, delete_block, delete_record
from spec.file_group.log_file.log_blocks import (
    avro_data_block,
    block_record_count,
    decode_avro_records,
    decode_parquet_records,
    parquet_data_block,
    rollback_command_block,
)
from spec.file_group.log_file.log_format import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    encode_block,
    encode_blocks,
    read_blocks,
)
from tests.conftest import RealTable

SCHEMA = json.dumps({
    "type": "record", "name": "t_record", "namespace": "hoodie.t",
    "fields": [
        {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
        {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
        {"name": "id", "type": ["null", "long"], "default": None},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "score", "type": ["null", "double"], "default": None},
    ],
})

SHORT = {"avro": "AVRO_DATA_BLOCK", "parquet": "PARQUET_DATA_BLOCK", "delete": "DELETE_BLOCK",
         "command": "COMMAND_BLOCK", "hfile": "HFILE_DATA_BLOCK"}


def _log_files(root: Path, metadata: bool = True) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        if not metadata:
            dirnames[:] = [d for d in dirnames if d != ".hoodie"]
        out += [Path(dirpath) / f for f in filenames if ".log." in f and f.startswith(".")]
    return sorted(out)


def test_real_log_files_decode_and_reencode_exactly(real_table: RealTable) -> None:
    counts: Counter[str] = Counter()
    for path in _log_files(real_table.path):
        data = path.read_bytes()
        records = list(read_blocks(data))
        assert not any(r.is_corrupt for r in records), path.name
        assert encode_blocks([r.block for r in records if r.block]) == data, path.name
        in_data_table = ".hoodie" not in path.relative_to(real_table.path).parts
        for r in records:
            block = r.block
            assert block is not None and block.instant_time, "every block carries INSTANT_TIME"
            if in_data_table:
                counts[block.block_type.name] += 1
            if block.block_type == BlockType.HFILE_DATA_BLOCK:
                with pytest.raises(UnsupportedBlockContent):
                    block_record_count(block)
                continue
            n = block_record_count(block)
            if block.block_type == BlockType.AVRO_DATA_BLOCK:
                recs = decode_avro_records(block)
                assert len(recs) == n and (n > 0 or not in_data_table)
                assert all(rec["_hoodie_file_name"] == path.name[1:].split("_")[0] for rec in recs)
            elif block.block_type == BlockType.DELETE_BLOCK:
                dels = decode_delete_records(block)
                assert len(dels) == n and (n > 0 or not in_data_table) and all(d.record_key for d in dels)
                assert block.schema is not None or not in_data_table
            elif block.block_type == BlockType.PARQUET_DATA_BLOCK:
                assert decode_parquet_records(block).num_rows == n and (n > 0 or not in_data_table)
            elif block.block_type == BlockType.COMMAND_BLOCK:
                assert block.is_rollback and block.target_instant_time and block.content == b""
    data_logs = _log_files(real_table.path, metadata=False)
    assert len(data_logs) == int(real_table.manifest["n_log_files"])
    expected: Counter[str] = Counter()
    spec = real_table.manifest["log_blocks_on_disk"]
    for part in spec.split():
        if ":" in part:
            kind, n = part.split(":")
            expected[SHORT[kind]] += int(n)
    assert counts == expected


def test_real_delete_blocks_reencode_with_int_zero_ordering(real_tables: list[RealTable]) -> None:
    seen = 0
    for table in real_tables:
        for path in _log_files(table.path, metadata=False):
            for r in read_blocks(path.read_bytes()):
                if r.block and r.block.block_type == BlockType.DELETE_BLOCK:
                    dels = decode_delete_records(r.block)
                    # Spark SQL DELETE writes IntWrapper(0), branch 2 (HoodieDeleteBlock, DeleteRecord.create(key))
                    assert {(d.ordering_value, d.ordering_branch) for d in dels} == {(0, 2)}
                    rebuilt = delete_block(r.block.instant_time or "", r.block.schema or "", dels)
                    assert rebuilt.content == r.block.content
                    seen += 1
    assert seen >= 3


def test_deleted_keys_match_the_rows_hudi_rs_drops(real_tables: list[RealTable]) -> None:
    """Where a v6 table's logs hold only delete blocks, the distinct deleted keys are exactly the rows
    hudi-rs drops between its read-optimized and its snapshot read (MANIFEST.tsv counts)."""
    checked = 0
    for table in real_tables:
        if table.manifest["log_blocks_on_disk"].split(":")[0] != "delete" or " " in table.manifest[
                "log_blocks_on_disk"] or table.manifest["table_version"] != "6":
            continue
        keys = {d.record_key for path in _log_files(table.path, metadata=False)
                for r in read_blocks(path.read_bytes()) if r.block
                for d in decode_delete_records(r.block)}
        ro, snap = int(table.manifest["hudirs050_ro_rows"]), int(table.manifest["hudirs050_snapshot_rows"])
        assert len(keys) == ro - snap > 0, table.name
        checked += 1
    assert checked >= 1


records_st = st.lists(st.fixed_dictionaries({
    "_hoodie_commit_time": st.one_of(st.none(), st.from_regex(r"\d{17}", fullmatch=True)),
    "_hoodie_record_key": st.one_of(st.none(), st.text(max_size=10)),
    "id": st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    "name": st.one_of(st.none(), st.text(max_size=20)),
    "score": st.one_of(st.none(), st.floats(allow_nan=False)),
}), max_size=20)
ordering_st = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False),
                        st.text(max_size=8), st.binary(max_size=8))


@given(records_st, st.from_regex(r"\d{17}", fullmatch=True))
def test_avro_block_round_trip(records: list[dict[str, object]], instant: str) -> None:
    block = avro_data_block(instant, SCHEMA, records)
    (rec,) = list(read_blocks(encode_block(block)))
    assert rec.block == block and rec.length == len(encode_block(block))
    assert decode_avro_records(rec.block) == records


@given(st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12), ordering_st), max_size=15))
def test_delete_block_round_trip(items: list[tuple[str, str, object]]) -> None:
    deletes = [delete_record(k, p, o) for k, p, o in items]
    block = delete_block("20240101000000000", SCHEMA, deletes)
    (rec,) = list(read_blocks(encode_block(block)))
    assert rec.block is not None and decode_delete_records(rec.block) == deletes


@given(st.from_regex(r"\d{17}", fullmatch=True), st.from_regex(r"\d{17}", fullmatch=True))
def test_command_block_round_trip(instant: str, target: str) -> None:
    block = rollback_command_block(instant, target)
    (rec,) = list(read_blocks(encode_block(block)))
    assert rec.block == block and rec.block.is_rollback and rec.block.target_instant_time == target


@given(st.lists(st.tuples(st.integers(-1000, 1000), st.text(max_size=5)), min_size=1, max_size=10))
def test_parquet_block_round_trip(rows: list[tuple[int, str]]) -> None:
    table = pa.table({"id": [r[0] for r in rows], "name": [r[1] for r in rows]})
    block = parquet_data_block("20240101000000000", SCHEMA, table)
    (rec,) = list(read_blocks(encode_block(block)))
    assert rec.block is not None and decode_parquet_records(rec.block).equals(table)


@given(st.sampled_from([BlockType.HFILE_DATA_BLOCK, BlockType.CDC_DATA_BLOCK]), st.binary(max_size=50))
def test_hfile_and_cdc_frame_but_content_is_unsupported(kind: BlockType, content: bytes) -> None:
    block = LogBlock(kind, ((int(HeaderKey.INSTANT_TIME), "20240101000000000"),), content)
    (rec,) = list(read_blocks(encode_block(block)))
    assert rec.block == block
    with pytest.raises(UnsupportedBlockContent):
        block_record_count(block)


def test_framing_matches_the_reference_example() -> None:
    # HoodieLogFormatWriter.appendBlocks: a block of total T bytes has block size T-14 and reverse pointer T-8
    data = encode_block(avro_data_block("20240101000000000", SCHEMA, [{"id": 1}]))
    total = len(data)
    assert data[:6] == MAGIC
    assert int.from_bytes(data[6:14], "big") == total - 14
    assert int.from_bytes(data[-8:], "big") == total - 8
    assert data[14:18] == (1).to_bytes(4, "big") and data[18:22] == (3).to_bytes(4, "big")
    assert data[-12:-8] == b"\x00\x00\x00\x00"  # empty footer


def test_decoding_the_wrong_kind_is_a_typed_error() -> None:
    with pytest.raises(LogFormatError):
        decode_avro_records(rollback_command_block("20240101000000000", "20240101000000001"))


def test_append_handle_plan_written_through_storage_rolls_over_and_reads_back(tmp_path: Path) -> None:
    """The append handle's plan carried out with real blocks: each append goes to the current log
    file (``append_blocks`` returns where it starts); a file past the max size rolls to the next
    version; reading every file back gives the planned blocks, records and deletes in order."""
    from spec.file_group.file_naming import LogFileName
    from spec.file_group.log_file.log_format import append_blocks, read_log_file
    from spec.storage.hoodie_storage import Storage
    from spec.write.append_handle import AppendHandleConfig, LogRecordOp, PlannedBlock, plan_append_handle

    instant = "20240101000000000"
    rows = [{"_hoodie_commit_time": instant, "_hoodie_record_key": f"k{i}", "id": i, "name": "x" * 40,
             "score": float(i)} for i in range(60)]
    ops = [LogRecordOp(f"k{i}", i % 7 == 3, 64) for i in range(60)]

    def block_for(planned: PlannedBlock) -> LogBlock:
        if planned.kind == "delete":
            return delete_block(instant, SCHEMA, [delete_record(f"k{i}", "", 0) for i in planned.records])
        return avro_data_block(instant, SCHEMA, [rows[i] for i in planned.records])

    config = AppendHandleConfig(max_block_size=640, max_log_file_size=2000, table_version=8)
    first = LogFileName("f1-0", instant, 1, "0-1-1")
    plan = plan_append_handle(ops, first, config, lambda b: len(encode_block(block_for(b))))
    assert len(plan) >= 3 and [f.name.version for f in plan] == list(range(1, len(plan) + 1))

    storage = Storage(tmp_path)
    for planned_file in plan:
        offset = 0
        for planned in planned_file.blocks:
            assert append_blocks(storage, planned_file.name.format(), [block_for(planned)]) == offset
            offset += len(encode_block(block_for(planned)))
        size = storage.size(planned_file.name.format())
        assert size == offset
        if planned_file is not plan[-1]:
            assert size > config.max_log_file_size  # rolled over only once past the limit
    read_back = [r.block for f in plan for r in read_log_file(storage, f.name.format())]
    assert all(b is not None for b in read_back)
    kinds = [b.block_type for b in read_back if b]
    assert kinds.count(BlockType.DELETE_BLOCK) == 1 and kinds[-1] == BlockType.DELETE_BLOCK
    keys = [r["_hoodie_record_key"] for b in read_back if b and b.is_data for r in decode_avro_records(b)]
    assert keys == [f"k{i}" for i in range(60) if i % 7 != 3]
    last = read_back[-1]
    assert last is not None
    assert [d.record_key for d in decode_delete_records(last)] == [f"k{i}" for i in range(60) if i % 7 == 3]


@pytest.mark.parametrize("version", [6, 8, 9])
def test_our_delete_operation_writes_hudis_int_zero_ordering(tmp_path: Path, version: int) -> None:
    """Before: the reference writer's delete operation wrote a null ``orderingVal`` (branch 0), which Apache Hudi
    1.2.0's reader of a version 6 or 8 merge-on-read table fails on when the delete follows a logged update of its
    key (NullPointerException, "val2" is null). After: ``Integer`` 0 in the int branch, as Hudi's deletes are
    (``NATURAL_ORDERING``), and the spec reader still reads the key deleted."""
    import pyarrow as pa

    from reference.write.client import WriteClient
    from spec.read.reader import read_table

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.write.table.version": str(version),
               "hoodie.parquet.small.file.limit": "0"}
    client = WriteClient(str(path), engine="local")
    for op, ts in (("insert", 1), ("upsert", 2), ("delete", 3)):
        client.write(pa.Table.from_pylist([{"id": 1, "p": "a", "ts": ts, "v": f"v{ts}"},
                                           {"id": 2, "p": "a", "ts": 1, "v": "kept"}][:1 if op != "insert" else 2]),
                     op, options)
    dels = [d for f in _log_files(path, metadata=False) for r in read_blocks(f.read_bytes())
            if r.block and r.block.block_type == BlockType.DELETE_BLOCK for d in decode_delete_records(r.block)]
    assert [(d.record_key, d.ordering_value, d.ordering_branch) for d in dels] == [("1", 0, 2)]
    assert [r["id"] for r in read_table(str(path)).to_pylist()] == [2]
