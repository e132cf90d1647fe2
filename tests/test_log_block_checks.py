"""What can be checked in a well-framed log block (``spec.file_group.log_file.block_checks``), by
``hudi-spec logfile`` and ``hudi-conformance check``: the log format has no checksum, so everything else
that is detectable is detected."""

from __future__ import annotations

import glob
import json
import random
import struct
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.checker import check_table
from reference.cli import main
from reference.write.client import WriteClient
from spec.errors import HudiSpecError
from spec.file_group.log_file.block_checks import check_block
from spec.file_group.log_file.log_blocks import decode_records
from spec.file_group.log_file.log_format import BlockType, encode_block, read_blocks
from spec.read.reader import read_table
from tests.test_bad_input import options

ROWS = [{"id": f"k{i}", "ts": i, "city": "sf", "v": f"value{i}", "n": i * 10} for i in range(4)]
UNCHECKABLE = {"v", "n", "ts"}
"""The columns nothing else in a table repeats: a flip inside one of their values decodes to another value."""


def mor_table(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A MOR v6 table: a base file, a log file with an Avro data block (two updates), one with a delete block."""
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(pa.Table.from_pylist(ROWS), "upsert", options("MERGE_ON_READ", 6))
    client.write(pa.Table.from_pylist([{**r, "v": "upd" + str(r["v"])} for r in ROWS[:2]]), "upsert",
                 options("MERGE_ON_READ", 6))
    client.write(pa.Table.from_pylist(ROWS[2:3]), "delete", options("MERGE_ON_READ", 6))
    logs = {next(r.block for r in read_blocks(Path(p).read_bytes())).block_type: Path(p)
            for p in glob.glob(str(path / "sf" / ".*.log.*"))}
    return path, logs[BlockType.AVRO_DATA_BLOCK], logs[BlockType.DELETE_BLOCK]


def blocks_of(log: Path) -> list[object]:
    return [r.block for r in read_blocks(log.read_bytes())]


def test_the_blocks_a_writer_wrote_have_no_problem(tmp_path: Path) -> None:
    path, data, delete = mor_table(tmp_path)
    for log in (data, delete):
        file_id = log.name[1:].split("_")[0]
        for r in read_blocks(log.read_bytes()):
            assert r.block is not None and check_block(r.block, 6, "sf", file_id) == []
    assert check_table(str(path)).ok
    assert main(["logfile", str(data), "--output", "json"]) == 0


def _flip(log: Path, at: int, bit: int = 0) -> None:
    data = bytearray(log.read_bytes())
    data[at] ^= 1 << bit
    log.write_bytes(bytes(data))


def _offset_of(log: Path, needle: bytes, skip: int = 0) -> int:
    data = log.read_bytes()
    at = -1
    for _ in range(skip + 1):
        at = data.index(needle, at + 1)
    return at


def test_a_flipped_commit_time_in_a_record_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``hudi-spec logfile`` said ok (exit 0) and ``check`` passed. After: the record's
    ``_hoodie_commit_time`` is not the block's instant: damaged (exit 1), and a ``log-block-content`` error."""
    path, data, _ = mor_table(tmp_path)
    instant = str(blocks_of(data)[0].instant_time)  # type: ignore[attr-defined]
    at = _offset_of(data, instant.encode(), skip=1)  # the header holds it first, the first record next
    _flip(data, at + len(instant) - 1)
    assert main(["logfile", str(data), "--output", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["damaged_blocks"] == 1 and "_hoodie_commit_time" in out["blocks"][0]["status"]
    assert "log-block-content" in check_table(str(path)).codes()


def test_trailing_bytes_and_a_footer_are_reported() -> None:
    from spec.file_group.log_file.log_blocks import avro_data_block

    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]})
    block = avro_data_block("20240101000000000", schema, [{"a": 1}])
    assert check_block(block) == []
    longer = replace(block, content=block.content + b"\x00\x00")
    assert any("follow the last" in p for p in check_block(longer))
    fewer = replace(block, content=block.content[:4] + struct.pack(">i", 0) + block.content[8:])
    assert any("follow the last" in p for p in check_block(fewer))
    footed = replace(block, footer=((0, "x"),))
    assert [r.block for r in read_blocks(encode_block(footed))] == [footed]  # it frames
    assert any("footer" in p for p in check_block(footed))
    bad_instant = replace(block, header=((0, "2024010100000000x"), (2, schema)))
    assert any("INSTANT_TIME" in p for p in check_block(bad_instant))


def test_a_flipped_instant_of_a_delete_block_is_reported(tmp_path: Path) -> None:
    """Before: readers ignored the delete block (its instant is on no timeline), the deleted row came back,
    and ``check`` passed. After: ``check`` reports the block's instant."""
    path, _, delete = mor_table(tmp_path)
    instant = str(blocks_of(delete)[0].instant_time)  # type: ignore[attr-defined]
    at = _offset_of(delete, instant.encode())
    _flip(delete, at + len(instant) - 2)  # another digit: still an instant time
    report = check_table(str(path))
    assert any(f.code == "log-block-content" and "on no timeline" in f.message for f in report.errors)


def test_a_flipped_field_name_and_partition_value_are_reported(tmp_path: Path) -> None:
    path, data, _ = mor_table(tmp_path)
    original = data.read_bytes()
    _flip(data, _offset_of(data, b'"city"') + 2)  # "city" in the SCHEMA header: the column reads as null
    assert any("schema's fields" in f.message for f in check_table(str(path)).errors)
    data.write_bytes(original)
    _flip(data, _offset_of(data, b"\x04sf", skip=1) + 2)  # the record's city value "sf": another partition
    assert any("its fields give" in f.message for f in check_table(str(path)).errors)


def test_every_flip_that_changes_what_is_read_is_detected_unless_it_is_inside_a_lone_value(tmp_path: Path) -> None:
    """200 single-bit flips per log file (seeded): each flip that changes the rows a read returns is caught by
    the framing, the decoding, ``check_block`` or ``hudi-conformance check`` — unless it changed only the
    value of a column nothing repeats (``UNCHECKABLE``) or the partition number of a sequence number."""
    path, data_log, delete_log = mor_table(tmp_path)
    expected = read_table(str(path)).sort_by("id").to_pylist()
    rng = random.Random(44)
    silent_before = silent_after = 0
    for log in (data_log, delete_log):
        original = log.read_bytes()
        file_id = log.name[1:].split("_")[0]
        for at in rng.sample(range(len(original)), 200):
            _flip(log, at, rng.randrange(8))
            framed = list(read_blocks(log.read_bytes()))
            rows = None
            if not any(r.is_corrupt for r in framed):  # the framing did not catch it
                try:
                    for r in framed:
                        decode_records(r.block)  # type: ignore[arg-type]
                    rows = read_table(str(path)).sort_by("id").to_pylist()
                except HudiSpecError:
                    rows = None  # the decoding caught it
            if rows is not None and rows != expected:
                silent_before += 1
                problems = [p for r in framed if r.block for p in check_block(r.block, 6, "sf", file_id)]
                if not problems and check_table(str(path)).ok:
                    silent_after += 1
                    changed = {k for a, b in zip(expected, rows, strict=True) for k in a if a[k] != b[k]}
                    seqno = [(a["_hoodie_commit_seqno"], b["_hoodie_commit_seqno"])
                             for a, b in zip(expected, rows, strict=True)]
                    assert changed <= UNCHECKABLE | {"_hoodie_commit_seqno"}, (at, changed)
                    if "_hoodie_commit_seqno" in changed:
                        assert all(x.split("_")[0::2] == y.split("_")[0::2] for x, y in seqno), seqno
            log.write_bytes(original)
    assert silent_before > silent_after
    print(f"flips that changed the rows read with no sign: {silent_before} before the checks, {silent_after} after")
