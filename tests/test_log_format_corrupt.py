"""Corrupt blocks and fuzzing: the reader reports broken regions, resumes at the next magic,
raises nothing but typed errors, never hangs and never allocates more than the file."""

from __future__ import annotations

import contextlib
import json
import os
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec.errors import HudiSpecError
from spec.log_blocks import (
    avro_data_block,
    decode_parquet_records,
    decode_records,
    delete_block,
    delete_record,
    rollback_command_block,
)
from spec.log_format import MAGIC, BlockType, encode_block, read_blocks

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
    if request.config.getoption("--hudi-rs-tables") or os.environ.get("HUDI_RS_TABLES"):
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
        at = data.find(MAGIC, rng.randrange(max(len(data), 1)))
        at = at if at >= 0 else 0
        bogus = rng.choice([0, -1, 2**62, len(data) * 2, rng.randrange(1, 200)])
        buf[at + 6:at + 14] = bogus.to_bytes(8, "big", signed=True)
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


def _fuzz(corpus: list[bytes], cases: int, seed: int) -> None:
    rng = random.Random(seed)
    tracemalloc.start()
    try:
        for _ in range(cases):
            base = rng.choice(corpus)
            data = mutate(mutate(base, rng), rng) if rng.random() < 0.3 else mutate(base, rng)
            _check(data)
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            _framing_and_record_decoding(data)
            grown = tracemalloc.get_traced_memory()[1] - before
            assert grown < 64 * len(data) + 1_000_000, f"reading {len(data)} bytes allocated {grown}"
    finally:
        tracemalloc.stop()


@pytest.mark.timeout(120)
def test_fuzz_ci_profile(corpus: list[bytes]) -> None:
    _fuzz(corpus, 2_000, seed=20261122)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_fuzz_long_profile(corpus: list[bytes]) -> None:
    _fuzz(corpus, 100_000, seed=7)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    _check(data)
    _check(MAGIC + data)
