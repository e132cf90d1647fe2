"""hoodie.properties: Java properties syntax, the registry, checksum, creation, partition metadata."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.config.properties_file import format_properties, parse_properties
from spec.config.table_config import KEYS_BY_NAME, TABLE_CONFIG_KEYS, TableConfig, table_checksum
from spec.errors import ChecksumMismatch, InvalidConfig, InvalidTable, UnsupportedTableVersion
from spec.file_group.partition_metadata import PartitionMetadata, parse_partition_metadata, partition_depth

safe_text = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="\\=:#!"),
                    min_size=1, max_size=20)
safe_values = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="\\"),
                      max_size=30).map(str.strip)


@given(st.dictionaries(safe_text, safe_values, max_size=8))
def test_properties_round_trip(props: dict[str, str]) -> None:
    assert parse_properties(format_properties(props)) == props


def _hudi_rs_reading(data: bytes) -> dict[str, str]:
    """hudi-rs ``parse_data_for_options``: trim each line, skip blanks and '#', split at the first '=',
    trim both sides; then ``\\:`` becomes ':' in hoodie.table.create.schema (its schema resolver)."""
    out = {}
    for line in data.decode("utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    if "hoodie.table.create.schema" in out:
        out["hoodie.table.create.schema"] = out["hoodie.table.create.schema"].replace("\\:", ":")
    return out


@given(st.dictionaries(safe_text, safe_values, max_size=8), st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="\\"), max_size=40).map(str.strip))
def test_written_properties_read_alike_in_java_and_hudi_rs(props: dict[str, str], schema: str) -> None:
    props = {**props, "hoodie.table.create.schema": schema}
    data = format_properties(props)
    assert parse_properties(data) == props == _hudi_rs_reading(data)


@given(safe_text, st.sampled_from([" lead", "trail ", "back\\slash", "new\nline", "tab\tin", "caf\u00e9", "\x7f"]))
def test_unwritable_values_raise(key: str, value: str) -> None:
    with pytest.raises(InvalidConfig):
        format_properties({key: value})


@pytest.mark.parametrize("key", ["", "a=b", "a:b", "a b", "#a", "!a", "k\u00e9"])
def test_unwritable_keys_raise(key: str) -> None:
    with pytest.raises(InvalidConfig):
        format_properties({key: "v"})


def test_last_duplicate_wins_and_bad_unicode_escape_is_typed() -> None:
    assert parse_properties(b"a=1\na=2\n") == {"a": "2"}
    assert parse_properties(b"a=\xe9\n") == {"a": "\u00e9"}  # ISO-8859-1, as Properties.load(InputStream)
    assert parse_properties(b"\f  # comment after blanks\n  k\tv\n") == {"k": "v"}
    with pytest.raises(InvalidConfig):
        parse_properties(b"a=\\u12G4\n")


def test_java_escapes_and_continuations() -> None:
    data = b"#c\n! also comment\na\\:b=x\\:y\\=z\nkey2 : v2\nlong=one\\\n    two\nuni=\\u0041\n"
    assert parse_properties(data) == {"a:b": "x:y=z", "key2": "v2", "long": "onetwo", "uni": "A"}


def test_create_schema_colons_are_escaped_and_read_back() -> None:
    schema = '{"type":"record","name":"t_record","fields":[]}'
    cfg = TableConfig.create("t", record_key_fields=("id",), create_schema=schema)
    text = cfg.to_bytes().decode()
    assert '{"type"\\:"record"' in text
    assert TableConfig.from_bytes(cfg.to_bytes()).create_schema == schema


def test_checksum_known_value() -> None:
    # HoodieTableConfig.generateChecksum: CRC32 of "<db>.<name>"; the v6 trips table stores 3843273058
    assert table_checksum("default", "v6_trips_8i1u") == 3843273058


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_create_minimal_valid(version: int, table_type: str) -> None:
    cfg = TableConfig.create("trips", table_type, version, ("uuid",), "ts", ("city",), hive_style_partitioning=True)
    back = TableConfig.from_bytes(cfg.to_bytes()).validate()
    assert back.table_version == version and back.table_type == table_type
    assert back.timeline_layout == (2 if version == 8 else 1)
    assert back.record_key_fields == ("uuid",) and back.ordering_field == "ts" and back.partition_fields == ("city",)
    for key in back.props:
        spec = KEYS_BY_NAME.get(key)
        assert spec is None or spec.since_version <= version, key
    if version == 8:
        assert back.merge_mode == "EVENT_TIME_ORDERING" and back.merge_strategy_id
        assert back.keygen_type == "SIMPLE"
    else:
        assert back.keygen_class == "org.apache.hudi.keygen.SimpleKeyGenerator"
        assert "hoodie.record.merge.mode" not in back.props


def test_validation_errors() -> None:
    good = TableConfig.create("t", record_key_fields=("id",))
    with pytest.raises(ChecksumMismatch):
        good.with_props(**{"hoodie.table.checksum": "1"}).validate()
    with pytest.raises(UnsupportedTableVersion):
        good.with_props(**{"hoodie.table.version": "5"}).validate()
    with pytest.raises(InvalidTable):
        good.with_props(**{"hoodie.timeline.layout.version": "2"}).validate()
    with pytest.raises(InvalidTable):
        TableConfig({"hoodie.table.name": "t"}).validate()
    with pytest.raises(UnsupportedTableVersion):
        TableConfig.create("t", table_version=7)
    with pytest.raises(InvalidConfig):
        format_properties({"k": "line\nbreak"})


def test_load_missing_table(tmp_path: object) -> None:
    with pytest.raises(InvalidTable, match="not a Hudi table"):
        TableConfig.load(str(tmp_path))


@given(st.from_regex(r"[0-9]{17}", fullmatch=True), st.integers(0, 6))
def test_partition_metadata_round_trip(commit: str, depth: int) -> None:
    md = PartitionMetadata(commit, depth)
    assert parse_partition_metadata(md.format(datetime(2025, 1, 1, tzinfo=UTC))) == md


def test_partition_depth() -> None:
    assert [partition_depth(p) for p in ["", "city=sf", "2023/04/01/12"]] == [0, 1, 4]


def test_the_docs_key_table_is_the_registry() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "spec" / "table_config.md").read_text()
    block = text.split("<!-- config-keys:start -->")[1].split("<!-- config-keys:end -->")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block.strip().splitlines()[2:]]
    shown = [(r[0].strip("`"), None if r[1] == "—" else r[1].strip("`"), r[2] == "yes", int(r[3] or 0),
              tuple(a.strip().strip("`") for a in r[4].split(",") if a.strip()), r[5]) for r in rows]
    assert shown == [(k.key, k.default, k.required, k.since_version, k.alternatives, k.doc) for k in TABLE_CONFIG_KEYS]
