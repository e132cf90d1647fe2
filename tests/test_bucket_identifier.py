"""The bucket index's rule (``spec.index.bucket_identifier``, ``spec.keygen.record_key_parts``), against Apache
Hudi's own ``BucketIdentifier`` and ``KeyGenUtils`` (1.2.0's bundle, through py4j) and the file groups Hudi's
Spark writer gives a bucket-indexed table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec.errors import InvalidConfig, InvalidTable
from spec.index.bucket_identifier import (
    bucket_file_id_prefix,
    bucket_id,
    format_bucket_id,
    java_list_hash,
    nbcc_bucket_file_id,
    parse_bucket_id,
)
from spec.keygen.record_key_parts import hudi_never_answers, record_key_values

KEYS = [
    "1", "abc", "", "id:1", "id:1,name:a", "name:a,id:1", "id:__null__,name:__empty__",
    "c1:2014-10-22 13:50:42,c2:x", "c1:a,b,c2:d", "c1:x:y:z", "a:1,b", "a:1,,b:2", "ü:é,ß:日本", "k:😀,v:1",
]
"""Simple keys, complex keys (values holding ``:`` and ``,``, placeholders, non-ASCII and surrogate pairs)."""
FIELDS = [[], ["id"], ["name"], ["id", "name"], ["name", "id"], ["c1"], ["c2"], ["c1", "c2"], ["a", "b"], [""],
          ["missing"], ["ü"], ["k", "v"]]


def test_java_list_hash_is_javas() -> None:
    assert java_list_hash([]) == 1
    assert java_list_hash(["a"]) == 31 + 97
    assert java_list_hash([None]) == 31
    assert java_list_hash(["a", None]) == (31 + 97) * 31
    assert java_list_hash(["a", "b"]) == 31 * (31 + 97) + 98
    assert java_list_hash(["polygenelubricants"]) == 31 - 2**31  # its String.hashCode is Integer.MIN_VALUE


def test_a_record_keys_values_are_read_back_as_hudi_reads_them() -> None:
    assert record_key_values("1", ["id"]) == ("1",)
    assert record_key_values("id:1", ["id"]) == ("id:1",)  # no ',': one value, the key
    assert record_key_values("id:1,name:a", ["name"]) == ("a",)
    assert record_key_values("id:1,name:a", []) == ("1", "a")
    assert record_key_values("id:__null__,name:__empty__", []) == (None, "")
    assert record_key_values("c1:2014-10-22 13:50:42,c2:x", ["c1"]) == ("2014-10-22 13:50:42",)
    assert record_key_values("id:1,name:a", ["missing"]) == ("id:1,name:a",)


def test_the_keys_hudi_never_answers_for_are_named() -> None:
    assert hudi_never_answers("a:1,b:x:y", ["a"])
    assert hudi_never_answers("a:1,b:x,c:y:z", ["a"])
    assert not hudi_never_answers("a:1,b:x:y", ["b"]) and not hudi_never_answers("a:1,b:x:y", [])
    assert not hudi_never_answers("a:1,b:x", ["a"]) and not hudi_never_answers("c1:x:y:z", ["c2"])
    assert record_key_values("a:1,b:x:y", ["a"]) == ("1",)


def test_bucket_file_ids_round_trip() -> None:
    assert format_bucket_id(7) == "00000007" and parse_bucket_id("00000007-1b2c-4d5e-8f90-123456789abc-0") == 7
    assert bucket_file_id_prefix(12, "abcdef01-1b2c-4d5e-8f90-123456789abc") == "00000012-1b2c-4d5e-8f90-123456789abc"
    assert nbcc_bucket_file_id(3) == "00000003-0000-0000-0000-000000000000-0"
    assert parse_bucket_id(nbcc_bucket_file_id(3)) == 3
    with pytest.raises(InvalidTable, match="bucket number"):
        parse_bucket_id("abcdef01-1b2c")
    with pytest.raises(InvalidConfig, match=r"num\.buckets is 0"):
        bucket_id("1", ["id"], 0)


def _hudis(spark: Any) -> tuple[Any, Any, Any]:
    jvm = spark._jvm
    return jvm.org.apache.hudi.index.bucket.BucketIdentifier, jvm.org.apache.hudi.keygen.KeyGenUtils, jvm


def _java_list(jvm: Any, items: list[str]) -> Any:
    out = jvm.java.util.ArrayList()
    for i in items:
        out.add(i)
    return out


@pytest.mark.spark
def test_buckets_and_hash_keys_equal_hudis_for_tricky_keys(apache_hudi: Any) -> None:
    identifier, keygen, jvm = _hudis(apache_hudi)
    for key in KEYS:
        for fields in FIELDS:
            if hudi_never_answers(key, fields):
                continue
            jfields = _java_list(jvm, fields)
            hudis = tuple(keygen.extractRecordKeysByFields(key, jfields))
            assert record_key_values(key, fields) == hudis, (key, fields)
            for n in (1, 2, 7, 256):
                assert bucket_id(key, fields, n) == identifier.getBucketId(key, jfields, n), (key, fields, n)


_PIECE = st.text(alphabet=st.sampled_from("ab:,_ é😀0"), max_size=6)


@pytest.mark.spark
@settings(max_examples=300, derandomize=True, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), _PIECE), min_size=1, max_size=3),
       fields=st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True), n=st.integers(1, 64))
def test_buckets_equal_hudis_for_any_complex_key(apache_hudi: Any, pairs: list[tuple[str, str]], fields: list[str],
                                                 n: int) -> None:
    """Values holding ``:`` and ``,`` included; a key Hudi never answers for is not asked
    (``spec.keygen.record_key_parts.hudi_never_answers``)."""
    key = ",".join(f"{f}:{v}" for f, v in pairs)
    if hudi_never_answers(key, fields):
        return
    identifier, keygen, jvm = _hudis(apache_hudi)
    jfields = _java_list(jvm, fields)
    assert record_key_values(key, fields) == tuple(keygen.extractRecordKeysByFields(key, jfields))
    assert bucket_id(key, fields, n) == identifier.getBucketId(key, jfields, n)


@pytest.mark.spark
@pytest.mark.parametrize(("key_fields", "hash_fields"), [(("id",), ("id",)), (("id", "name"), ("name",))])
def test_every_key_hudi_writes_lands_in_the_bucket_the_spec_gives_it(apache_hudi: Any, tmp_path: Path,
                                                                     key_fields: tuple[str, ...],
                                                                     hash_fields: tuple[str, ...]) -> None:
    """Apache Hudi's Spark writer, bucket index (SIMPLE engine, 5 buckets): every record's file group starts with
    the bucket number the spec computes from its record key."""
    rows = [(i, f"n{i % 7}:{i}, x", "a" if i % 2 else "b", i) for i in range(60)]
    df = apache_hudi.createDataFrame(rows, "id long, name string, p string, ts long")
    options = {
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": ",".join(key_fields),
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": "5", "hoodie.bucket.index.hash.field": ",".join(hash_fields),
        "hoodie.datasource.write.operation": "upsert",
    }
    if len(key_fields) > 1:
        options["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.ComplexKeyGenerator"
    df.write.format("hudi").options(**options).mode("overwrite").save(str(tmp_path / "t"))
    written = apache_hudi.read.format("hudi").load(str(tmp_path / "t")).select(
        "_hoodie_record_key", "_hoodie_file_name").collect()
    assert len(written) == 60
    for key, file_name in written:
        assert parse_bucket_id(file_name) == bucket_id(key, hash_fields, 5), (key, file_name)
    assert len({parse_bucket_id(f) for _, f in written}) > 1
