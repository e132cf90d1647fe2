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

from reference.bloom import footer
from spec.bloom_filter import FOOTER_KEY, DynamicBloomFilter, bit_size, build_filter, from_footer, murmur, num_hashes
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
    """The index's probe (``reference.index.might_contain``, hash by hash on the keys still alive, every
    row of a dynamic filter) says what ``DynamicBloomFilter.might_contain`` says, for members (always
    true) and other keys alike, with filters of up to three rows."""
    import numpy as np

    from reference.bloom import positions_by_hash
    from reference.index import might_contain

    stored = from_footer(footer(members, 40, 1e-9, 100)[FOOTER_KEY])
    probe = members + others
    row = stored.rows[0]
    positions = positions_by_hash(probe, row.hashes, row.bits)
    hit = np.zeros(len(probe), dtype=bool)
    for r in stored.rows:
        hit[might_contain(positions, np.frombuffer(bytes(r.data), dtype=np.uint8), np.arange(len(probe)))] = True
    assert hit.tolist() == [stored.might_contain(k) for k in probe]
    assert hit[: len(members)].all()
