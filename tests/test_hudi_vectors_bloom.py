"""Bloom filter vectors ported from Apache Hudi's unit tests (``spec.file_group.bloom_filter``).

Source: ``TestInternalDynamicBloomFilter`` (hudi-common): how the dynamic filter adds rows as keys
arrive, stops at its maximum, finds every key it was given, and survives serialization.
"""

from __future__ import annotations

import itertools

import pytest

from spec.file_group.bloom_filter import DynamicBloomFilter, deserialize_dynamic
from tests.hudi_vectors import Source, Vector, ids

DYNAMIC = Source("TestInternalDynamicBloomFilter", "",
                 "hudi-common/src/test/java/org/apache/hudi/common/bloom/TestInternalDynamicBloomFilter.java",
                 "1d5c37a6e549f680aa03f582b8b7891217120e2c")

# InternalDynamicBloomFilter(vectorSize 1000, nbHash 5, MURMUR, nr keys per row, maxNr 1000): the
# rules below are about rows, so the spec's filter takes the same keys per row and maximum.
ROW_VECTORS = [
    Vector(DYNAMIC.at("testAddGrowsMatrixAcrossNumberOfKeys"), "a new filter has one row",
           {"row_entries": 10, "keys": 0, "rows": 1}),
    Vector(DYNAMIC.at("testAddGrowsMatrixAcrossNumberOfKeys"), "a full row opens no row yet",
           {"row_entries": 10, "keys": 10, "rows": 1}),
    Vector(DYNAMIC.at("testAddGrowsMatrixAcrossNumberOfKeys"), "the next key opens the second row",
           {"row_entries": 10, "keys": 11, "rows": 2}),
    Vector(DYNAMIC.at("testMembershipTestFindsAddedKeyAcrossRows"), "20 keys, 2 per row: all found",
           {"row_entries": 2, "keys": 20, "min_rows": 2, "all_found": True}),
    Vector(DYNAMIC.at("testWriteAndReadFieldsRoundTrip"), "serialized and read back: same rows, keys found",
           {"row_entries": 2, "keys": 10, "min_rows": 2, "all_found": True, "round_trip": True}),
]


def _keys(n: int) -> list[str]:
    return [f"key{i}" for i in range(n)]


@pytest.mark.parametrize("vector", ROW_VECTORS, ids=ids(ROW_VECTORS))
def test_dynamic_filter_vector(vector: Vector) -> None:
    case = vector.case
    f = DynamicBloomFilter(row_entries=case["row_entries"], fpp=1e-6, max_entries=1000)
    for k in _keys(case["keys"]):
        f.add(k)
    if "rows" in case:
        assert len(f.rows) == case["rows"]
    if "min_rows" in case:
        assert len(f.rows) >= case["min_rows"]
    if case.get("round_trip"):
        f = deserialize_dynamic(f.serialize())
        assert len(f.rows) >= case["min_rows"]
    if case.get("all_found"):
        assert all(f.might_contain(k) for k in _keys(case["keys"]))


BOUNDED = Vector(DYNAMIC.at("testBoundedSize"),
                 "1000 per row, at most 100000: the serialized size grows until the maximum, then stays",
                 {"row_entries": 1000, "max_entries": 100_000, "batches": [1000, 10000, 10000, 100000, 100000, 10000],
                  "last_growing_batch": 3})


def test_bounded_size_vector() -> None:
    case = BOUNDED.case
    f = DynamicBloomFilter(row_entries=case["row_entries"], fpp=1e-6, max_entries=case["max_entries"])
    sizes = []
    for batch in case["batches"]:
        for _ in range(batch):
            f.add_positions([0])  # the rows depend on the number of keys, not on their bits
        sizes.append(len(f.serialize()))
    growing = case["last_growing_batch"]
    assert all(b > a for a, b in itertools.pairwise(sizes[:growing + 1]))
    assert sizes[growing + 1:] == [sizes[growing]] * (len(sizes) - growing - 1)


VECTORS = [*ROW_VECTORS, BOUNDED]
