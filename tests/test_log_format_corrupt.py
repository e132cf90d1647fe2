"""Corrupt blocks and fuzzing: the reader reports broken regions, resumes at the next magic,
raises nothing but typed errors, never hangs and never allocates more than the file."""

from __future__ import annotations

import contextlib
import json
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec.errors import HudiSpecError
from spec.file_group.log_file.delete_block import delete_block, delete_record
from spec.file_group.log_file.log_blocks import (
    avro_data_block,
    decode_parquet_records,
    decode_records,
    rollback_command_block,
)
from spec.file_group.log_file.log_format import MAGIC, BlockType, encode_block, read_blocks
from tests import processes

SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [
    {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
    {"name": "v", "type": ["null", "long"], "default": None}]})
T1, T2, T3 = "20240101000000001", "20240101000000002", "20240101000000003"


def data_block(instant: str, keys: list[str]) -> bytes:
    return encode_block(avro_data_block(instant, SCHEMA, [{"_hoodie_record_key": k, "v": 1} for k in keys]))


def kinds(data: bytes) -> list[str]:
    return ["CORRUPT" if r.is_corrupt else r.block.block_type.name for r in read_blocks(data)]  # type: ignore[union-attr]


def test_corrupt_block_in_the_middle_is_skipped_and_reading_resumes() -> None:
    good1, good2 = data_block(T1, ["a"]), data_block(T2, ["b"])
    torn = data_block(T1, ["x", "y", "z"])[:-20]  # a block cut short by a crash
    data = good1 + torn + good2
    records = list(read_blocks(data))
    assert kinds(data) == ["AVRO_DATA_BLOCK", "CORRUPT", "AVRO_DATA_BLOCK"]
    assert records[1].offset == len(good1) and records[1].length == len(torn)
    assert records[2].block is not None and records[2].block.instant_time == T2


def test_corrupt_block_at_the_tail() -> None:
    data = data_block(T1, ["a"]) + data_block(T2, ["b"])[:30]
    assert kinds(data) == ["AVRO_DATA_BLOCK", "CORRUPT"]


def test_back_to_back_corrupt_blocks() -> None:
    torn1, torn2 = data_block(T1, ["x"])[:-9], data_block(T2, ["y"])[:-3]
    data = data_block(T1, ["a"]) + torn1 + torn2 + data_block(T3, ["c"])
    assert kinds(data) == ["AVRO_DATA_BLOCK", "CORRUPT", "CORRUPT", "AVRO_DATA_BLOCK"]


def test_inconsistent_reverse_pointer_is_corrupt() -> None:
    block = bytearray(data_block(T1, ["a"]))
    block[-1] ^= 0xFF
    assert kinds(bytes(block) + data_block(T2, ["b"])) == ["CORRUPT", "AVRO_DATA_BLOCK"]


def test_garbage_after_a_block_makes_it_corrupt_as_in_hudi() -> None:
    # Hudi checks that a block is followed by EOF or a magic; anything else makes it corrupt
    data = data_block(T1, ["a"]) + b"garbage" + data_block(T2, ["b"])
    assert kinds(data) == ["CORRUPT", "AVRO_DATA_BLOCK"]


def test_a_tail_shorter_than_a_magic_leaves_the_block_before_it_sound() -> None:
    # Hudi's check after a block reads 6 bytes; end of file before 6 bytes counts as "EOF": block sound.
    # Hudi then stops reading; this reader also reports the piece, as a corrupt region.
    good = data_block(T1, ["a"])
    for tail in (b"#", b"#HUD", b"xxxxx"):
        records = list(read_blocks(good + tail))
        assert records[0].block is not None and records[0].length == len(good)
        assert records[1].corrupt is not None and records[1].corrupt.reason.startswith("trailing")
        assert (records[1].offset, records[1].length) == (len(good), len(tail))


def test_the_next_magic_is_searched_after_the_corrupt_block_own_magic() -> None:
    # "#HUDI#HUDI#": a second magic overlaps the first; Hudi scans from after the first magic's
    # 6 bytes, so the overlapping one is not a block start
    data = b"#HUDI#HUDI#" + bytes(20) + data_block(T1, ["a"])
    records = list(read_blocks(data))
    assert [(r.offset, r.is_corrupt) for r in records] == [(0, True), (31, False)]


def test_block_and_content_lengths_are_read_as_java_ints() -> None:
    # Hudi reads both lengths as longs and casts to int: garbage in their high 4 bytes goes unnoticed
    good = bytearray(data_block(T1, ["a", "b"]))
    good[6] ^= 0x40  # block size, most significant byte
    (rec,) = list(read_blocks(bytes(good)))
    assert rec.block is not None and rec.length == len(good)
    schema_len = len(SCHEMA.encode())
    header_end = 6 + 8 + 4 + 4 + 4 + (8 + 17) + (8 + schema_len)
    assert int.from_bytes(good[header_end:header_end + 8], "big") == len(rec.block.content)
    good[header_end] ^= 0x01  # content length, most significant byte
    (rec,) = list(read_blocks(bytes(good)))
    assert rec.block is not None and len(decode_records(rec.block)) == 2


def test_several_data_blocks_then_one_delete_block_in_one_instant() -> None:
    blocks = [avro_data_block(T1, SCHEMA, [{"_hoodie_record_key": f"k{i}{j}", "v": j} for j in range(3)])
              for i in range(3)]
    blocks.append(delete_block(T1, SCHEMA, [delete_record("k00", "", 5)]))
    data = b"".join(encode_block(b) for b in blocks)
    assert kinds(data) == ["AVRO_DATA_BLOCK"] * 3 + ["DELETE_BLOCK"]
    decoded = [decode_records(r.block) for r in read_blocks(data) if r.block]
    assert sum(len(d) for d in decoded[:3]) == 9 and decoded[3][0]["recordKey"] == "k00"


def test_rollback_blocks_for_a_delete_block_and_a_non_latest_instant() -> None:
    data = (data_block(T1, ["a"]) + encode_block(delete_block(T2, SCHEMA, [delete_record("a", "", 0)]))
            + data_block(T3, ["c"]) + encode_block(rollback_command_block("20240101000000004", T2))
            + encode_block(rollback_command_block("20240101000000005", T1)))
    recs = [r.block for r in read_blocks(data) if r.block]
    assert [b.block_type for b in recs] == [BlockType.AVRO_DATA_BLOCK, BlockType.DELETE_BLOCK,
                                           BlockType.AVRO_DATA_BLOCK, BlockType.COMMAND_BLOCK,
                                           BlockType.COMMAND_BLOCK]
    assert [b.target_instant_time for b in recs if b.is_rollback] == [T2, T1]


# --- fuzzing -----------------------------------------------------------------------------------

GENERATED = [data_block(T1, ["a", "b"]) + encode_block(delete_block(T2, SCHEMA, [delete_record("a", "p", 7)]))
             + encode_block(rollback_command_block(T3, T2))]


@pytest.fixture
def corpus(request: pytest.FixtureRequest) -> list[bytes]:
    """Generated log files, plus every real log file when the real tables are configured."""
    found = list(GENERATED)
    if request.getfixturevalue("real_tables_source") is not None:
        for table in request.getfixturevalue("real_tables"):
            found += [p.read_bytes() for p in sorted(Path(table.path).rglob(".*.log.*"))]
    return found


def mutate(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    pos = rng.randrange(len(data) + 1)
    if kind == 0:
        return data[:pos]
    buf = bytearray(data)
    if kind == 1 and buf:
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    elif kind == 2:
        # a bogus length: in a block-size field (after a magic) or in any 4- or 8-byte field
        width = rng.choice([4, 8])
        if rng.random() < 0.5:
            at = data.find(MAGIC, rng.randrange(max(len(data), 1)))
            at, width = (at + 6 if at >= 0 else 0), 8
        else:
            at = pos
        bogus = rng.choice([0, -1, 2 ** (8 * width - 1) - 1, len(data) * 2, rng.randrange(1, 200)])
        buf[at:at + width] = bogus.to_bytes(width, "big", signed=True)
    else:
        buf[pos:pos] = rng.randbytes(rng.randrange(1, 16))
    return bytes(buf)


def _check(data: bytes) -> None:
    """Frame ``data`` and decode every block: regions tile the input, only typed errors escape."""
    total = 0
    for rec in read_blocks(data):
        assert rec.length > 0 and rec.offset == total
        total += rec.length
        if rec.block is not None:
            try:
                if rec.block.block_type == BlockType.PARQUET_DATA_BLOCK:
                    decode_parquet_records(rec.block)  # Arrow memory; parquet is compressed by design
                else:
                    decode_records(rec.block)
            except HudiSpecError:
                pass  # typed errors are the only acceptable failure
    assert total == len(data)


def _framing_and_record_decoding(data: bytes) -> None:
    for rec in read_blocks(data):
        if rec.block is not None and rec.block.block_type != BlockType.PARQUET_DATA_BLOCK:
            with contextlib.suppress(HudiSpecError):
                decode_records(rec.block)


def _trace_allocations() -> None:
    """Start tracemalloc for the rest of this process, which is a fresh one (``processes.call``): a test worker
    keeps the native threads of the tests before it (Spark's, Arrow's pools, the S3 server).

    It is never stopped. In CPython 3.11, ``tracemalloc.stop()`` races with a native thread that enters the
    traced raw allocator (a thread taking the GIL for the first time allocates its thread state there): the
    thread goes on after ``stop()`` has freed tracemalloc's traceback buffer and crashes the process
    (CPython issue gh-128679, fixed only in later versions). The fuzz's own process has such threads
    (pyarrow's jemalloc and decoding threads), and under a loaded machine one of them crashed it at the
    ``stop()`` that ended the fuzz. ``processes.call`` ends its child with ``os._exit``, without the
    interpreter finalization that would stop tracemalloc too."""
    tracemalloc.start()


def _fuzz(corpus: list[bytes], cases: int, seed: int) -> None:
    rng = random.Random(seed)
    _trace_allocations()
    for _ in range(cases):
        base = rng.choice(corpus)
        data = mutate(mutate(base, rng), rng) if rng.random() < 0.3 else mutate(base, rng)
        _check(data)
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        _framing_and_record_decoding(data)
        grown = tracemalloc.get_traced_memory()[1] - before
        assert grown < 64 * len(data) + 1_000_000, f"reading {len(data)} bytes allocated {grown}"


BOGUS_INTS = [-1, 0, 1, 0x7FFFFFFF, -(2**31)]


def test_bogus_lengths_at_every_offset() -> None:
    """Every 4-byte window of a generated file (record counts, key ordinals, value, content and
    record lengths all live in such windows) overwritten with extreme values: typed errors only."""
    processes.call(_bogus_lengths)


def _bogus_lengths() -> None:
    base = GENERATED[0]
    _trace_allocations()
    for at in range(len(base) - 3):
        for value in BOGUS_INTS:
            data = base[:at] + value.to_bytes(4, "big", signed=True) + base[at + 4:]
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            _check(data)
            assert tracemalloc.get_traced_memory()[1] - before < 64 * len(data) + 1_000_000


def test_fuzz_ci_profile(corpus: list[bytes]) -> None:
    processes.call(_fuzz, corpus, 2_000, 20261122)


@pytest.mark.slow
@pytest.mark.explore
@pytest.mark.timeout(3600)
def test_fuzz_long_profile(corpus: list[bytes]) -> None:
    processes.call(_fuzz, corpus, 100_000, 7, hang_after=3000)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    _check(data)
    _check(MAGIC + data)
