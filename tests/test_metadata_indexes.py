"""The metadata table's index partitions, against every one of the real tables: partition names, record types and
file group ids (``spec.metadata.partition_type``); the hashed keys of column and partition statistics, secondary
index keys, the file group each key lands in, record index locations (``spec.metadata.index_keys``); and the index
definitions file (``spec.metadata.index_definition``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.config.table_config import TableConfig
from spec.errors import MetadataFormatError
from spec.file_group.log_file.log_format import read_blocks
from spec.metadata.index_definition import (
    DEFAULT_INDEX_DEFS_PATH,
    IndexDefinition,
    format_index_definitions,
    index_definitions_path,
    is_valid_for,
    parse_index_definitions,
)
from spec.metadata.index_keys import (
    NULL_CHAR,
    bloom_filter_key,
    column_stats_key,
    escape,
    file_group_for_key,
    file_group_of,
    java_hash_map_order,
    java_string_hash,
    name_id,
    parse_secondary_index_key,
    partition_stats_key,
    record_location,
    secondary_index_key,
    unescape,
    xxh64,
)
from spec.metadata.metadata_table import block_changes, hfile_records
from spec.metadata.partition_type import (
    COLUMN_STATS,
    EXPRESSION_INDEX,
    FILES,
    SECONDARY_INDEX,
    V1,
    V2,
    current_index_version,
    data_partition_of,
    file_group_id,
    file_group_index,
    partition_type,
    partitioned_file_group_id,
)
from spec.read.reader import read_table
from tests.conftest import RealTable


def _mdt(table: RealTable) -> Path:
    return table.path / ".hoodie" / "metadata"


def _partitions(table: RealTable) -> list[str]:
    mdt = _mdt(table)
    return sorted(p.name for p in mdt.iterdir() if p.is_dir() and p.name != ".hoodie") if mdt.is_dir() else []


def _group(name: str) -> str:
    return name.lstrip(".").split("_")[0]


def _records(folder: Path) -> Iterator[tuple[str, str, dict[str, Any] | None]]:
    """(file group id, key, record or None for a delete) of every file group's latest slice, in write order."""
    files = [p for p in folder.iterdir() if not p.name.startswith(".hoodie")]
    for group in sorted({_group(p.name) for p in files}):
        members = [p for p in files if _group(p.name) == group]
        bases = [p for p in members if p.suffix == ".hfile"]
        latest = max(bases, key=lambda p: p.stem.rsplit("_", 1)[1]) if bases else None
        since = latest.stem.rsplit("_", 1)[1] if latest else ""
        if latest is not None:
            yield from ((group, k, r) for k, r in hfile_records(latest.read_bytes()).items())
        for log in sorted((p for p in members if ".log." in p.name), key=lambda p: p.name):
            if log.name.lstrip(".").split("_")[1].split(".")[0] >= since:
                for rec in read_blocks(log.read_bytes()):
                    if rec.block is not None:
                        yield from ((group, k, r) for k, r in block_changes(rec.block))


def _definitions(table: RealTable) -> dict[str, IndexDefinition]:
    rel = index_definitions_path(TableConfig.load(str(table.path)).props)
    path = table.path / rel if rel else None
    return parse_index_definitions(path.read_text()) if path and path.is_file() else {}


# --- partitions and file groups -------------------------------------------------------------------


def test_every_metadata_file_is_in_a_file_group_its_partition_names(any_real_table: RealTable) -> None:
    """Each partition directory is a partition type; its file groups are <prefix>0000-0 .. <prefix>(n-1)-0 with the
    prefix of its type (the partition name with dashes for secondary indexes); every record has a type its
    partition holds."""
    partitions = _partitions(any_real_table)
    if any_real_table.manifest["mdt_partitions"] != "-":
        assert set(partitions) == set(any_real_table.manifest["mdt_partitions"].split(","))
    for partition in partitions:
        groups = sorted({_group(p.name) for p in (_mdt(any_real_table) / partition).iterdir()
                         if not p.name.startswith(".hoodie")})
        assert groups == [file_group_id(partition, i) for i in range(len(groups))], partition
        assert [file_group_index(partition, g) for g in groups] == list(range(len(groups)))
        kinds = {r["type"] for _, _, r in _records(_mdt(any_real_table) / partition) if r is not None}
        assert kinds and kinds <= set(partition_type(partition).record_types), (partition, kinds)


def test_partition_names_and_file_ids() -> None:
    assert partition_type("files") is FILES and partition_type("column_stats") is COLUMN_STATS
    assert partition_type("secondary_index_city") is SECONDARY_INDEX
    assert partition_type("expr_index_day") is EXPRESSION_INDEX
    assert file_group_id("secondary_index_merchant_idx", 3) == "secondary-index-merchant-idx-0003-0"
    assert file_group_id("column_stats", 1) == "col-stats-0001-0"
    assert SECONDARY_INDEX.partition_for("city") == "secondary_index_city"
    for bad in ("column-stats", "secondary_index_", "files2"):
        with pytest.raises(MetadataFormatError):
            partition_type(bad)
    with pytest.raises(MetadataFormatError, match="not a file group"):
        file_group_index("files", "col-stats-0000-0")
    with pytest.raises(MetadataFormatError):
        file_group_id("files", -1)


def test_partitioned_record_index_file_ids() -> None:
    """A partitioned record index names each file group for its data partition, escaped by ``escapeFileName``
    (as Apache Hudi 1.2.0 writes them: ``tests/test_hudi_tech_spec_measured.py``)."""
    group = partitioned_file_group_id("record_index", "city=new-york_1", 2)
    assert group == "record-index-city%3Dnew%2Dyork%5F1-0002-0"
    assert data_partition_of(group) == "city=new-york_1" and file_group_index("record_index", group) == 2
    assert file_group_index("record_index", "record-index-0003-0") == 3
    with pytest.raises(MetadataFormatError):
        partitioned_file_group_id("column_stats", "city=la", 0)
    for bad in ("record-index-0000-0", "col-stats-city%3Dla-0000-0"):
        with pytest.raises(MetadataFormatError):
            data_partition_of(bad)
    with pytest.raises(MetadataFormatError, match="not a file group"):
        file_group_index("record_index", "record-index-city=la-0000-0")


# --- hashed keys ----------------------------------------------------------------------------------


def test_xxh64_matches_the_published_test_values() -> None:
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"abc") == 0x44BC2CF5AD770999
    long = bytes(range(256)) * 3
    assert xxh64(long) != xxh64(long[:-1]) and xxh64(long, 1) != xxh64(long)
    assert len(name_id("currency")) == 12 and name_id("currency") == "/m6lxu4Dh5w="


def _file_partitions(table: RealTable) -> dict[str, str]:
    return {p.name: str(p.parent.relative_to(table.path)).replace(".", "") if p.parent != table.path else ""
            for p in table.path.rglob("*") if p.is_file() and ".hoodie" not in p.parts}


def test_every_hashed_key_is_built_from_the_names_it_records(any_real_table: RealTable) -> None:
    """Every column_stats key is column + partition + file id of the file and column its record names (the
    file's partition as on disk, ``.`` for a non-partitioned table); every partition_stats key is column + partition
    id; bloom filter keys share the partition and file part."""
    files = {name: part for name, part in _file_partitions(any_real_table).items()}
    checked = 0
    for partition in ("column_stats", "partition_stats"):
        folder = _mdt(any_real_table) / partition
        if not folder.is_dir():
            continue
        for _, key, record in _records(folder):
            if record is None:
                continue
            stats = record["ColumnStatsMetadata"]
            if partition == "column_stats":
                file_name = stats["fileName"]
                assert key == column_stats_key(stats["columnName"], files[file_name], file_name)
                assert bloom_filter_key(files[file_name], file_name) == key[12:]
            else:
                assert key == partition_stats_key(stats["columnName"], stats["fileName"].replace(".", "", 1)
                                                  if stats["fileName"] == "." else stats["fileName"])
            checked += 1
    assert (checked > 0) == ("column_stats" in _partitions(any_real_table))


# --- secondary index keys and sharding ------------------------------------------------------------


@given(st.one_of(st.none(), st.text(alphabet=st.sampled_from("ab$\\\0é"), max_size=8)),
       st.text(alphabet=st.sampled_from("xy$\\\0"), min_size=0, max_size=8))
def test_secondary_index_keys_round_trip(value: str | None, record_key: str) -> None:
    key = secondary_index_key(value, record_key)
    assert parse_secondary_index_key(key) == (value, record_key)
    assert unescape(escape(value)) == value


def test_secondary_index_escapes() -> None:
    assert secondary_index_key("a$b", "k\\1") == "a\\$b$k\\\\1"
    assert secondary_index_key(None, "k") == NULL_CHAR + "$k"
    assert secondary_index_key("\0", "k") == "\\\0$k"
    assert secondary_index_key("Chennai", "id1") == "Chennai$id1"  # the case is kept (Hudi's page lower-cases it)
    with pytest.raises(MetadataFormatError, match="no unescaped"):
        parse_secondary_index_key("a\\$b")
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112 and java_string_hash("\U0001F600") == 1772899
    assert file_group_for_key("Spotify$", 10) == abs(java_string_hash("Spotify$")) % 10
    with pytest.raises(MetadataFormatError):
        file_group_for_key("k", 0)


def test_hash_map_order_hashes_utf16_units_as_java_does() -> None:
    """``java.util.HashMap`` iteration order, measured with a JDK 17 ``HashMap<String, Integer>`` of these keys put in
    this order (it printed the values 3 6 1 7 2 4 5 0): names outside the Basic Multilingual Plane hash by their
    UTF-16 surrogates, so code points would order them otherwise ([3, 4, 7, 6, 1, 0, 5, 2])."""
    put = ["p\U0001F600.parquet", "a.parquet", "\U0001F600b", "zz", "q\U0001F603", "b.log.1", "c", "\U0001F600"]
    assert java_hash_map_order(put) == [3, 6, 1, 7, 2, 4, 5, 0]
    many = [f"f{i}" for i in range(13)]  # past 12 (three quarters of 16) the table doubles to 32 buckets
    assert sorted(java_hash_map_order(many)) == list(range(13)) and java_hash_map_order([]) == []


def test_every_key_is_in_the_file_group_its_hash_names(any_real_table: RealTable) -> None:
    """Every key of every index partition is in file group hash(key) % n — for a V2 secondary index, hash of the
    escaped value with its ``$``. On the V2 secondary indexes, sharding by the record key (what Hudi's page first
    said) or by the whole key would misplace entries: the tables refute it."""
    definitions = _definitions(any_real_table)
    for partition in _partitions(any_real_table):
        folder = _mdt(any_real_table) / partition
        records = list(_records(folder))
        n = len({g for g, _, _ in records} | {_group(p.name) for p in folder.iterdir()
                                               if not p.name.startswith(".hoodie")})
        version = definitions[partition].index_version if partition in definitions else V1
        for group, key, _ in records:
            assert file_group_index(partition, group) == file_group_of(partition, key, n, version), (partition, key)
        if partition_type(partition) is SECONDARY_INDEX and version == V2:
            by_record_key = sum(file_group_index(partition, g) == file_group_for_key(k.split("$", 1)[1], n)
                                for g, k, _ in records)
            by_whole_key = sum(file_group_index(partition, g) == file_group_for_key(k, n) for g, k, _ in records)
            assert by_record_key < len(records) and by_whole_key < len(records)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


def test_secondary_indexes_hold_exactly_the_tables_values(any_real_table: RealTable) -> None:
    """Each secondary index, merged (a later entry replaces an earlier one, ``isDeleted`` removes it), holds one
    entry per row: its column's value as text (a date as its day number), case kept, and the record key."""
    definitions = _definitions(any_real_table)
    indexes = [p for p in _partitions(any_real_table) if partition_type(p) is SECONDARY_INDEX]
    if not indexes:
        return
    snapshot = read_table(str(any_real_table.path))
    for partition in indexes:
        (column,) = definitions[partition].source_fields
        values = snapshot.column(column)
        if pa.types.is_date(values.type):
            values = values.cast(pa.int32())
        expected = {(_text(v), k) for v, k in zip(values.to_pylist(), snapshot.column("_hoodie_record_key").to_pylist(),
                                                  strict=True)}
        live: dict[str, bool] = {}
        for _, key, record in _records(_mdt(any_real_table) / partition):
            live[key] = record is not None and not record["SecondaryIndexMetadata"]["isDeleted"]
        assert {parse_secondary_index_key(k) for k, on in live.items() if on} == expected, partition


# --- record index ---------------------------------------------------------------------------------


def test_record_index_locations_name_the_file_groups_that_hold_the_keys(any_real_table: RealTable) -> None:
    """Every live record index entry names the data partition and file group its key is read from, and an instant
    time of that file group's files, read in one time zone for the whole table (the writer's)."""
    if "record_index" not in _partitions(any_real_table):
        return
    snapshot = read_table(str(any_real_table.path))
    where = {k: (p, f.split("_")[0]) for k, p, f in zip(*(snapshot.column(c).to_pylist() for c in (
        "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")), strict=True)}
    instants: dict[str, set[str]] = {}
    for p in any_real_table.path.rglob("*"):
        if p.is_file() and ".hoodie" not in p.parts and p.name[0] != ".hoodie"[0] and "_" in p.name:
            instants.setdefault(p.name.split("_")[0], set()).add(p.stem.rsplit("_", 1)[1])
        elif p.is_file() and ".log." in p.name and ".hoodie" not in p.parts:
            instants.setdefault(p.name[1:].split("_")[0], set()).add(p.name.split("_")[1].split(".")[0])
    live = {}
    for _, key, record in _records(_mdt(any_real_table) / "record_index"):
        live[key] = record
    entries = {k: r["recordIndexMetadata"] for k, r in live.items() if r is not None}
    assert set(entries) == set(where)
    zones = [timezone(timedelta(minutes=m)) for m in range(-12 * 60, 14 * 60 + 1, 15)]

    def fits(zone: timezone) -> bool:
        return all(record_location(info, zone).instant_time in instants.get(where[k][1], set())
                   for k, info in entries.items())

    assert sum(map(fits, zones)) == 1  # one zone, the writer's, makes every instant time a file's
    for key, info in entries.items():
        loc = record_location(info)
        assert (loc.partition_path, loc.file_id) == where[key]


def test_record_index_file_ids() -> None:
    info = {"partitionName": "p", "fileIdHighBits": 541420586697966898, "fileIdLowBits": -6206175399855160771,
            "fileIndex": 0, "fileId": "", "instantTime": 1772922274124, "fileIdEncoding": 0}
    loc = record_location(info)
    assert loc.file_id == "07838327-b037-4532-a9df-3c5b05dd823d-0" and loc.instant_time == "20260307222434124"
    assert record_location({**info, "fileIndex": -1}).file_id == "07838327-b037-4532-a9df-3c5b05dd823d"
    assert record_location({**info, "fileIdEncoding": 1, "fileId": "raw-id"}).file_id == "raw-id"
    with pytest.raises(MetadataFormatError, match="fileIdEncoding 2"):
        record_location({**info, "fileIdEncoding": 2})


# --- index definitions ----------------------------------------------------------------------------


def test_index_definitions_are_read_and_written_as_hudi_writes_them(any_real_table: RealTable) -> None:
    """The index definitions file of every real table parses and is printed again byte for byte; each definition
    is valid for the table's version and carries the version a new index of its partition gets (none on
    version 8); each names a metadata partition the table lists."""
    cfg = TableConfig.load(str(any_real_table.path))
    rel = index_definitions_path(cfg.props)
    if rel is None:
        assert not (any_real_table.path / DEFAULT_INDEX_DEFS_PATH).exists() or cfg.table_version < 8
        return
    assert rel == DEFAULT_INDEX_DEFS_PATH
    text = (any_real_table.path / rel).read_text()
    definitions = parse_index_definitions(text)
    assert format_index_definitions(definitions) == text and definitions
    for name, d in definitions.items():
        assert name in cfg.metadata_partitions and is_valid_for(cfg.table_version, d)
        assert d.version == (current_index_version(cfg.table_version, name) if cfg.table_version >= 9 else None)


def test_index_definition_validity_and_errors() -> None:
    si = IndexDefinition("secondary_index_city", "secondary_index", "identity", ("city",))
    assert is_valid_for(8, si) and is_valid_for(8, IndexDefinition("secondary_index_c", "secondary_index",
                                                                     version=V1))
    assert not is_valid_for(8, IndexDefinition("secondary_index_c", "secondary_index", version=V2))
    assert not is_valid_for(9, si) and not is_valid_for(9, IndexDefinition("secondary_index_c", "secondary_index",
                                                                            version=V1))
    assert is_valid_for(9, IndexDefinition("secondary_index_c", "secondary_index", version=V2))
    assert si.index_version == V1 and current_index_version(8, "secondary_index_c") == V1
    assert current_index_version(9, "record_index") == V1 and current_index_version(9, "expr_index_d") == V2
    for bad in ('{"indexDefinitions": {"a": {"indexName": "b", "indexType": "column_stats"}}}',
                '{"indexDefinitions": {"a": {"indexName": "a", "indexType": "btree"}}}',
                '{"indexDefinitions": {"a": {"indexName": "a", "indexType": "column_stats", "version": "V9"}}}',
                '{"indexDefinitions": {"a": {"indexType": "column_stats"}}}', "[1]", "{"):
        with pytest.raises(MetadataFormatError):
            parse_index_definitions(bad)
    one = {"secondary_index_city": si}
    assert parse_index_definitions(format_index_definitions(one)) == one
    assert json.loads(format_index_definitions(one))["indexDefinitions"]["secondary_index_city"]["sourceFields"] == [
        "city"]
