"""Bloom filters: the spec's filter reproduces every real footer bit for bit; the writer's vectorized
filter gives the spec's bytes; our base files carry the footer Hudi's BLOOM index reads."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.io.bloom import extended_footer, footer
from spec.file_group.bloom_filter import (
    FOOTER_KEY,
    FOOTER_TYPE_KEY,
    DynamicBloomFilter,
    bit_size,
    build_filter,
    from_footer,
    murmur,
    num_hashes,
)
from tests.conftest import RealTable


def test_defaults() -> None:
    assert bit_size(60_000, 1e-9) == 2_587_966 and num_hashes(2_587_966, 60_000) == 30


def test_real_footers_recompute_bit_for_bit(real_table: RealTable) -> None:
    for f in sorted(real_table.path.rglob("*.parquet")):
        meta = pq.ParquetFile(f).metadata.metadata or {}
        stored = meta.get(FOOTER_KEY.encode())
        if stored is None:
            continue
        keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert build_filter(keys).to_footer()[FOOTER_KEY] == stored.decode()
        assert footer(keys)[FOOTER_KEY] == stored.decode()
        loaded = from_footer(stored.decode())
        assert all(loaded.might_contain(k) for k in keys)


@given(st.lists(st.text(max_size=14), max_size=130))
def test_vectorized_filter_equals_the_spec(keys: list[str]) -> None:
    spec_filter = DynamicBloomFilter(row_entries=40, max_entries=100)  # small rows exercise the dynamic rows
    for k in keys:
        spec_filter.add(k)
    assert footer(keys, 40, 1e-9, 100) == spec_filter.to_footer()


@given(st.lists(st.text(max_size=14), min_size=1, max_size=130), st.lists(st.text(max_size=14), max_size=60),
       st.integers(1, 50))
def test_keys_hashed_a_chunk_at_a_time_give_the_spec_filter(keys: list[str], added: list[str], chunk: int) -> None:
    """The writer hashes a chunk of keys at a time (``HASH_CHUNK``); chunks that end inside and across the
    dynamic filter's rows (of 40) give the spec's bytes, for a new filter and an extended one."""
    from unittest import mock

    import reference.io.bloom as bloom

    spec_filter = DynamicBloomFilter(row_entries=40, max_entries=100)
    for k in keys + added:
        spec_filter.add(k)
    with mock.patch.object(bloom, "HASH_CHUNK", chunk):
        assert footer(keys + added, 40, 1e-9, 100) == spec_filter.to_footer()
        stored = _as_footer(footer(keys, 40, 1e-9, 100))
        assert extended_footer(stored, len(keys), added, 40, 1e-9, 100) == spec_filter.to_footer()


def _as_footer(value: dict[str, str]) -> dict[bytes, bytes]:
    return {k.encode(): v.encode() for k, v in value.items()}


@given(st.lists(st.text(max_size=14), min_size=1, max_size=130), st.lists(st.text(max_size=14), max_size=130))
def test_a_stored_filter_extended_is_the_filter_of_all_its_keys(stored: list[str], added: list[str]) -> None:
    """A merged file that keeps every stored key in its place and appends inserts carries the stored
    filter with the inserts added: the same bytes as the filter built from all its keys, in order, across
    the dynamic filter's new rows and its last row's count starting over (rows of 40, at most 100 keys)."""
    extended = extended_footer(_as_footer(footer(stored, 40, 1e-9, 100)), len(stored), added, 40, 1e-9, 100)
    assert extended == footer(stored + added, 40, 1e-9, 100)


def test_extending_the_default_filter_across_its_rows() -> None:
    """Hudi's defaults (rows of 60,000 keys, at most 100,000): stored files ending before, at and after a
    row's end, extended past the next row's end and past the maximum."""
    keys = [f"key-{i:07d}" for i in range(130_001)]
    for stored, total in ((59_990, 60_020), (60_000, 60_001), (100_000, 130_001), (1, 5)):
        base = _as_footer(footer(keys[:stored]))
        assert extended_footer(base, stored, keys[stored:total]) == footer(keys[:total]), (stored, total)


def test_a_filter_that_cannot_be_continued_is_rebuilt() -> None:
    """No stored filter, another filter type, a count of keys the filter does not hold, other settings
    or damaged bytes: ``extended_footer`` declines (the handle builds the filter from every key)."""
    keys = [f"k{i}" for i in range(50)]
    stored = _as_footer(footer(keys, 40, 1e-9, 100))
    assert extended_footer(None, 50, ["x"], 40, 1e-9, 100) is None
    assert extended_footer({**stored, FOOTER_TYPE_KEY.encode(): b"SIMPLE"}, 50, ["x"], 40, 1e-9, 100) is None
    assert extended_footer(stored, 49, ["x"], 40, 1e-9, 100) is None
    assert extended_footer(stored, 50, ["x"]) is None  # Hudi's default settings, not the file's
    damaged = stored[FOOTER_KEY.encode()][:-8]
    assert extended_footer({**stored, FOOTER_KEY.encode(): damaged}, 50, ["x"], 40, 1e-9, 100) is None
    assert extended_footer(stored, 50, ["x"], 40, 1e-9, 100) == footer([*keys, "x"], 40, 1e-9, 100)


def test_real_footers_extend_as_their_keys_plus_the_added(real_table: RealTable) -> None:
    """A filter Apache Hudi wrote continues as Hudi's writer would continue it: extended by new keys, it is
    the filter of the file's keys, in file order, then the new ones."""
    added = [f"added-{i}" for i in range(25)]
    for f in sorted(real_table.path.rglob("*.parquet")):
        meta = pq.ParquetFile(f).metadata.metadata or {}
        if FOOTER_KEY.encode() not in meta:
            continue
        keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert extended_footer(meta, len(keys), added) == footer(keys + added)


def test_murmur_known_values() -> None:
    # Hadoop MurmurHash: the empty input with seed 0 hashes to 0; results are signed 32-bit
    assert murmur(b"", 0) == 0
    values = [murmur(random.Random(i).randbytes(i % 9), i) for i in range(50)]
    assert all(-(2**31) <= v < 2**31 for v in values)


@pytest.mark.spark
def test_written_base_files_carry_a_working_bloom_filter(spark: Any, tmp_path: Path) -> None:
    from reference.api import HudiTable

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts"}
    HudiTable(str(path), spark).write(pa.table({"id": list(range(100)), "ts": [1] * 100}), "upsert", options)
    (base,) = path.glob("*.parquet")
    meta = pq.ParquetFile(base).metadata.metadata
    bloom = from_footer(meta[FOOTER_KEY.encode()].decode())
    assert all(bloom.might_contain(str(i)) for i in range(100))
    assert sum(bloom.might_contain(f"absent-{i}") for i in range(1000)) == 0
    assert meta[b"hoodie_min_record_key"] == b"0" and meta[b"hoodie_max_record_key"] == b"99"


@given(st.lists(st.text(max_size=12), min_size=1, max_size=150), st.lists(st.text(max_size=12), max_size=60))
def test_index_probe_of_every_filter_row_is_the_spec_filter(members: list[str], others: list[str]) -> None:
    """The index's probe (``reference.io.index.might_contain``, hash by hash on the keys still alive, every
    row of a dynamic filter) says what ``DynamicBloomFilter.might_contain`` says, for members (always
    true) and other keys alike, with filters of up to three rows."""
    import numpy as np

    from reference.io.bloom import positions_by_hash
    from reference.io.index import might_contain

    stored = from_footer(footer(members, 40, 1e-9, 100)[FOOTER_KEY])
    probe = members + others
    row = stored.rows[0]
    positions = positions_by_hash(probe, row.hashes, row.bits)
    hit = np.zeros(len(probe), dtype=bool)
    for r in stored.rows:
        hit[might_contain(positions, np.frombuffer(bytes(r.data), dtype=np.uint8), np.arange(len(probe)))] = True
    assert hit.tolist() == [stored.might_contain(k) for k in probe]
    assert hit[: len(members)].all()
