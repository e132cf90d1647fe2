"""Key generators reproduce the keys and partition paths Apache Hudi wrote, and reject bad keys."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidRecord
from spec.keys import KeyGenerator, java_string, key_generator_from_config, parse_partition_path
from spec.table_config import TableConfig
from tests.conftest import RealTable


def test_real_keys_and_partition_paths_recompute(real_table: RealTable) -> None:
    cfg = TableConfig.load(str(real_table.path))
    files = [p for p in real_table.path.rglob("*.parquet") if ".hoodie" not in p.relative_to(real_table.path).parts]
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    if not files:
        assert real_table.manifest["n_base_files"] == "0"
        return
    if not cfg.populate_meta_fields:
        assert all(r["_hoodie_record_key"] is None for r in rows)  # nothing to compare: keys are virtual
        return
    kg = key_generator_from_config(cfg.props)
    for r in rows:
        assert kg.record_key(r) == r["_hoodie_record_key"]
        assert kg.partition_path(r) == r["_hoodie_partition_path"]


def test_complex_keys_null_and_empty() -> None:
    kg = KeyGenerator("COMPLEX", ("id", "name"), ("a", "b"), hive_style=True)
    assert kg.record_key({"id": 2, "name": "Bob"}) == "id:2,name:Bob"
    assert kg.record_key({"id": 2, "name": None}) == "id:2,name:__null__"
    assert kg.record_key({"id": 2, "name": ""}) == "id:2,name:__empty__"
    assert kg.partition_path({"a": 1, "b": None}) == "a=1/b=__HIVE_DEFAULT_PARTITION__"
    with pytest.raises(InvalidRecord):
        kg.record_key({"id": None, "name": ""})


@pytest.mark.parametrize("bad", [None, ""])
def test_simple_null_or_empty_key_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidRecord, match="id"):
        KeyGenerator("SIMPLE", ("id",)).record_key({"id": bad})


@pytest.mark.parametrize("value", ["..", "a/b", "../x", "a\x00b"])
def test_escaping_partition_values_are_rejected(value: str) -> None:
    with pytest.raises(InvalidRecord):
        KeyGenerator("SIMPLE", ("id",), ("p",)).partition_path({"p": value})


def test_url_encoding_makes_separators_safe() -> None:
    kg = KeyGenerator("SIMPLE", ("id",), ("p",), url_encode=True)
    assert kg.partition_path({"p": "a/b c"}) == "a%2Fb%20c"


def test_java_string() -> None:
    assert [java_string(v) for v in (True, 1, 1.0, 0.5, 1e10, 1.5e-4, "x")] == [
        "true", "1", "1.0", "0.5", "1.0E10", "1.5E-4", "x"]


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.text(alphabet="xyz019_-", min_size=1, max_size=6),
                       min_size=3, max_size=3), st.booleans())
def test_partition_paths_round_trip(values: dict[str, str], hive: bool) -> None:
    kg = KeyGenerator("COMPLEX", ("k",), ("a", "b", "c"), hive_style=hive)
    path = kg.partition_path(values)
    assert parse_partition_path(path, ("a", "b", "c"), hive) == values
