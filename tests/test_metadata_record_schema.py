"""The metadata table's record schema (``spec.metadata.record_schema``): the text generated from our definitions is
the text Apache Hudi embeds — for table version 9, the schema of every metadata HFile and HFILE log block of the
real version 9 tables; for version 8, Hudi 1.0's text (its digest) and the schema of every metadata file of the
real version 8 table that has a metadata table."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import fastavro

from spec.file_group.log_file.log_format import BlockType, HeaderKey, read_blocks
from spec.metadata.hfile import parse_hfile
from spec.metadata.record_schema import metadata_record_schema_dict, metadata_record_schema_json
from spec.metadata.writer import metadata_record_schema
from tests.conftest import RealTable

V8_TEXT_SHA256 = "5e1aed4057cba6c12f407aecf5aaedc132e9302840944a4a10d01dc77efc4125"
"""The sha256 of the schema text Hudi 1.0 embeds in a version 8 metadata table's files (``Schema.toString()`` of
``HoodieMetadataRecord`` with the meta fields), taken from that text."""


def _embedded_schemas(table: RealTable) -> list[tuple[str, str]]:
    """(where, schema text) of every base HFile (file info ``schema``) and HFILE log block (SCHEMA header) of the
    table's metadata table."""
    mdt = table.path / ".hoodie" / "metadata"
    files = sorted(p for p in mdt.rglob("*") if p.is_file() and ".hoodie/metadata/.hoodie" not in p.as_posix())
    out: list[tuple[str, str]] = []
    for f in files:
        if f.suffix == ".hfile":
            out.append((f.name, parse_hfile(f.read_bytes()).file_info["schema"].decode("utf-8")))
        elif ".log." in f.name and not f.name.endswith(".crc"):
            for rec in read_blocks(f.read_bytes()):
                assert rec.block is not None, f"corrupt block in {f.name}"
                if rec.block.block_type == BlockType.HFILE_DATA_BLOCK:
                    schema = rec.block.header_value(HeaderKey.SCHEMA)
                    assert schema is not None, f"{f.name}@{rec.offset} has no SCHEMA header"
                    out.append((f"{f.name}@{rec.offset}", schema))
    return out


def test_every_metadata_file_of_the_real_tables_embeds_the_generated_schema(any_real_table: RealTable) -> None:
    schemas = _embedded_schemas(any_real_table)
    assert bool(schemas) == (any_real_table.manifest["mdt_partitions"] != "-")
    expected = metadata_record_schema_json(any_real_table.table_version)
    for where, text in schemas:
        assert text == expected, where


def test_version_8_text_is_hudi_1_0s() -> None:
    text = metadata_record_schema_json(8)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == V8_TEXT_SHA256


def test_the_writer_embeds_the_generated_text() -> None:
    for version in (8, 9):
        assert metadata_record_schema(version) == metadata_record_schema_json(version)


def test_versions_differ_only_in_the_column_statistics() -> None:
    v8, v9 = metadata_record_schema_dict(8), metadata_record_schema_dict(9)
    assert [f["name"] for f in v8["fields"]] == [f["name"] for f in v9["fields"]]
    differing = [a["name"] for a, b in zip(v8["fields"], v9["fields"], strict=True) if a != b]
    assert differing == ["ColumnStatsMetadata"]
    stats8, stats9 = (next(f for f in s["fields"] if f["name"] == "ColumnStatsMetadata")["type"][1]
                      for s in (v8, v9))
    names8 = [f["name"] for f in stats8["fields"]]
    assert [f["name"] for f in stats9["fields"]] == [*names8, "valueType"]
    max8, max9 = (next(f for f in s["fields"] if f["name"] == "maxValue")["type"] for s in (stats8, stats9))
    assert max9 == [*max8, "ArrayWrapper"]


def test_the_schemas_parse_and_round_trip_a_files_record() -> None:
    record = {"_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
              "_hoodie_partition_path": None, "_hoodie_file_name": None, "key": "p1", "type": 2,
              "filesystemMetadata": {"f1.parquet": {"size": 10, "isDeleted": False}},
              "BloomFilterMetadata": None, "ColumnStatsMetadata": None, "recordIndexMetadata": None,
              "SecondaryIndexMetadata": None}
    for version in (8, 9):
        parsed = fastavro.parse_schema(json.loads(metadata_record_schema_json(version)))
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        buf.seek(0)
        assert fastavro.schemaless_reader(buf, parsed) == record


def test_the_schema_files_are_gone() -> None:
    """The schema is defined in code, not shipped as a copied schema file."""
    spec_dir = Path(__file__).resolve().parents[1] / "spec"
    assert not list(spec_dir.glob("*.avsc"))
