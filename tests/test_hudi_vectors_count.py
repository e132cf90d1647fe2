"""The ported Apache Hudi unit-test vectors, counted: at least 150, from at least 8 Hudi test classes.

Each vector module lists its vectors in ``VECTORS`` (its xfailed vectors, which state where the
specification departs from Hudi on purpose, are kept apart and not counted). Every vector names its
source: test class, method, file in apache/hudi and the commit of the version read.
"""

from __future__ import annotations

import re
from collections import Counter

from tests import (
    test_hudi_vectors_bloom,
    test_hudi_vectors_keys,
    test_hudi_vectors_naming,
    test_hudi_vectors_schema,
    test_hudi_vectors_write,
)
from tests.hudi_vectors import Vector

ALL: list[Vector] = (test_hudi_vectors_keys.KEYGEN_VECTORS + test_hudi_vectors_naming.VECTORS
                     + test_hudi_vectors_schema.VECTORS + test_hudi_vectors_write.VECTORS
                     + test_hudi_vectors_bloom.VECTORS)


def per_class() -> Counter[str]:
    """How many vectors each Hudi test class gave."""
    return Counter(v.source.test_class for v in ALL)


def test_at_least_150_vectors_from_at_least_8_hudi_test_classes() -> None:
    assert len(ALL) >= 150, per_class()
    assert len(per_class()) >= 8, per_class()


def test_every_vector_names_its_source() -> None:
    for v in ALL:
        s = v.source
        assert re.fullmatch(r"Test\w+", s.test_class), v.id
        assert s.method and s.path.endswith(f"/{s.test_class}.java"), v.id
        assert s.path.startswith("hudi-") and "/src/test/java/org/apache/hudi/" in s.path, v.id
        assert re.fullmatch(r"[0-9a-f]{40}", s.commit), v.id


def test_vector_ids_are_unique() -> None:
    counts = Counter(v.id for v in ALL)
    assert [i for i, n in counts.items() if n > 1] == []
