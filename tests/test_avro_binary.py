"""``spec.timeline.avro_binary`` gives fastavro's values: on Hudi's own schemas (every timeline record of every
table version, the metadata table's record), on random datums of them, on containers and on damaged bytes,
where the Avro readers fall back to fastavro and say what fastavro says."""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import io
import json
import os
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec.errors import MetadataFormatError
from spec.metadata.metadata_table import FILES_FIELDS, decode_metadata_record
from spec.metadata.record_schema import metadata_record_schema_dict
from spec.timeline import avro_container
from spec.timeline.avro_binary import AvroUnsupported, decode, plain_reader, read_long, reader
from spec.timeline.avro_container import read_container, write_container
from spec.timeline.avro_schemas import RECORD_NAMES, schema_for, schema_json

PRIMITIVE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(), "boolean": st.booleans(),
    "int": st.integers(-(2**31), 2**31 - 1), "long": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32, allow_nan=False), "double": st.floats(allow_nan=False),
    "bytes": st.binary(max_size=20), "string": st.text(max_size=12),
}
LOGICAL_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "decimal": st.decimals(min_value=-10**6, max_value=10**6, places=15, allow_nan=False, allow_infinity=False),
    "time-micros": st.times(),
}


def datums(schema: Any, named: dict[str, Any] | None = None, namespace: str = "",
           depth: int = 0) -> st.SearchStrategy[Any]:
    """Random values of ``schema`` that fastavro writes (named types by full or short name)."""
    named = {} if named is None else named
    if isinstance(schema, str):
        if schema in PRIMITIVE_VALUES:
            return PRIMITIVE_VALUES[schema]
        full = schema if "." in schema else f"{namespace}.{schema}" if namespace else schema
        target = named.get(full, named.get(schema))
        return st.deferred(lambda: datums(target, named, namespace, depth + 1))
    if isinstance(schema, list):
        if "null" in schema and depth > 3:  # deep enough: the null branch, so that recursion ends
            return st.none()
        return st.one_of([datums(s, named, namespace, depth) for s in schema])
    kind = schema["type"]
    if "logicalType" in schema:
        return LOGICAL_VALUES[schema["logicalType"]]
    if kind in PRIMITIVE_VALUES:
        return PRIMITIVE_VALUES[kind]
    if isinstance(kind, (dict, list)):
        return datums(kind, named, namespace, depth)
    if kind == "array":
        return st.lists(datums(schema["items"], named, namespace, depth + 1), max_size=3)
    if kind == "map":
        return st.dictionaries(st.text(max_size=6), datums(schema["values"], named, namespace, depth + 1), max_size=3)
    name = schema["name"]
    full = name if "." in name else f"{schema.get('namespace', namespace)}.{name}".lstrip(".")
    named[full] = schema
    inner = full.rpartition(".")[0]
    if kind == "enum":
        return st.sampled_from(schema["symbols"])
    if kind == "fixed":
        return st.binary(min_size=schema["size"], max_size=schema["size"])
    return st.fixed_dictionaries({f["name"]: datums(f["type"], named, inner, depth + 1) for f in schema["fields"]})


def _written(schema: Any, value: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return out.getvalue()


def _fastavro(schema: Any, data: bytes) -> Any:
    return fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema), None)


TIMELINE_SCHEMAS = {(name, v): schema_for(name, v) for name in RECORD_NAMES for v in (6, 8, 9)}


@pytest.mark.parametrize("name, version", sorted(TIMELINE_SCHEMAS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_timeline_record_decodes_as_fastavro_does(name: str, version: int, data: st.DataObject) -> None:
    schema = json.loads(schema_json(TIMELINE_SCHEMAS[(name, version)]))  # as a container's header holds it
    value = data.draw(datums(schema))
    encoded = _written(schema, value)
    assert decode(encoded, reader(schema)) == _fastavro(schema, encoded)
    container = write_container(schema_json(schema), value)
    here, theirs = avro_container._read_small_container(container), avro_container._read_container_fastavro(container)
    assert (here.schema_text, here.sync_marker, here.record) == (theirs.schema_text, theirs.sync_marker,
                                                                 theirs.record)


@pytest.mark.parametrize("version", [6, 8, 9])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_metadata_record_decodes_as_fastavro_does(version: int, data: st.DataObject) -> None:
    """Every kind of ``HoodieMetadataRecord`` (column stats with decimals and times among them): the fields
    the files partition reads are fastavro's, a logical type in a skipped field is read past."""
    schema = metadata_record_schema_dict(version)
    value = data.draw(datums(schema))
    encoded = _written(schema, value)
    theirs = _fastavro(schema, encoded)
    assert decode(encoded, reader(schema, FILES_FIELDS)) == {k: theirs[k] for k in FILES_FIELDS}
    for small in (None, False):  # by its size, and as a large file's value (fastavro)
        assert decode_metadata_record(encoded, json.dumps(schema), FILES_FIELDS, small) == {
            k: theirs[k] for k in FILES_FIELDS}
    assert decode_metadata_record(encoded, json.dumps(schema)) == theirs  # whole: logical types, fastavro's


def test_a_logical_type_returned_is_left_to_fastavro() -> None:
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}},
        {"name": "x", "type": "long"}]}
    with pytest.raises(AvroUnsupported):
        reader(schema)
    encoded = _written(schema, {"d": decimal.Decimal("1.25"), "x": 7})
    assert decode(encoded, reader(schema, ["x"])) == {"x": 7}
    text = json.dumps(schema)
    before = plain_reader.cache_info().hits
    assert plain_reader(text) is None and plain_reader(text) is None  # left to fastavro, and remembered so
    assert plain_reader.cache_info().hits == before + 1
    read_x = plain_reader(text, ("x",))
    assert read_x is not None and decode(encoded, read_x) == {"x": 7}
    assert plain_reader('{"type": "nothing"}') is None
    day = {"type": "record", "name": "D", "fields": [{"name": "t", "type": {"type": "int", "logicalType": "date"}}]}
    with pytest.raises(AvroUnsupported):
        reader(day, ["t"])
    assert _fastavro(day, _written(day, {"t": dt.date(2024, 1, 2)})) == {"t": dt.date(2024, 1, 2)}


def test_named_types_and_blocks_with_sizes() -> None:
    """A recursive record referred to by its short name, an enum and a fixed; arrays and maps written in
    blocks with byte sizes (a negative count), as Java's block writers may."""
    schema = {"type": "record", "name": "Node", "namespace": "a.b", "fields": [
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["X", "Y"]}},
        {"name": "id", "type": {"type": "fixed", "name": "Id", "size": 2}},
        {"name": "same", "type": "a.b.Kind"},
        {"name": "next", "type": ["null", "Node"]}]}
    value = {"kind": "Y", "id": b"\x01\x02", "same": "X", "next": {"kind": "X", "id": b"zz", "same": "Y", "next": None}}
    encoded = _written(schema, value)
    assert decode(encoded, reader(schema)) == _fastavro(schema, encoded) == value
    # an array of longs [1, 2, 3] in one block of count -3 and byte size 3, then the end
    blocked = bytes([5, 6]) + bytes([2, 4, 6]) + b"\x00"
    longs = {"type": "array", "items": "long"}
    assert decode(blocked, reader(longs)) == _fastavro(longs, blocked) == [1, 2, 3]
    assert read_long(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 0) == (-(2**63), 10)


@pytest.mark.parametrize("cut", [1, 5, 20, -17, -1])
def test_a_damaged_container_is_what_fastavro_says(cut: int) -> None:
    """Bytes the small decoder cannot read are left to fastavro: the same MetadataFormatError."""
    schema = schema_for("HoodieCommitMetadata", 9)
    good = write_container(schema, {"partitionToWriteStats": {"p": []}, "extraMetadata": {"schema": "{}"},
                                    "operationType": "UPSERT"})
    damaged = good[:len(avro_container.AVRO_MAGIC) + cut] if cut > 0 else good[:cut]
    with pytest.raises(MetadataFormatError) as here:
        read_container(damaged)
    with pytest.raises(MetadataFormatError) as theirs:
        avro_container._read_container_fastavro(damaged)
    assert str(here.value) == str(theirs.value)


def _tables() -> list[str]:
    roots = [os.environ.get("HUDI_RS_TABLES", ""), os.environ.get("HUDI_RS_TABLES_V9", "")]
    return [p for r in roots if r for p in sorted(glob.glob(f"{r}/**/.hoodie/**/*", recursive=True))
            if Path(p).is_file() and Path(p).read_bytes()[:4] == avro_container.AVRO_MAGIC][:400]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The sample merge-on-read table, versions 8 and 9 (their timelines are Avro)."""
    from reference import sample_tables

    return {v: sample_tables.build_table(tmp_path_factory.mktemp(f"sample-v{v}") / "trips", v) for v in (8, 9)}


def test_every_container_of_a_table_decodes_as_fastavro_does(sample: dict[int, Path]) -> None:
    """Every Avro timeline file of our sample tables and their metadata tables (and of Apache Hudi's tables,
    when at hand): the same schema text, sync marker and record from both decoders."""
    paths = [str(p) for table in sample.values() for p in Path(table).rglob("*")
             if p.is_file() and p.read_bytes()[:4] == avro_container.AVRO_MAGIC] + _tables()
    assert len(paths) >= 4
    for path in paths:
        data = Path(path).read_bytes()
        theirs = avro_container._read_container_fastavro(data)
        here = avro_container._read_small_container(data)
        assert (here.schema_text, here.sync_marker, here.record) == (theirs.schema_text, theirs.sync_marker,
                                                                     theirs.record), path
