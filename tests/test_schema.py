"""Table schemas: every schema stated in the real tables converts to Arrow; Spark-written ones
convert back to the identical Avro; base-file parquet schemas agree with the commit schema up
to the documented difference; arrow ⇄ avro round trips for schemas and values; the table schema
readers resolve has the columns hudi-rs reads."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import os
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.config.properties_file import parse_properties
from spec.errors import SchemaMismatch
from spec.file_group.log_file.log_format import read_blocks
from spec.schema.table_schema import (
    META_FIELDS,
    OPERATION_FIELD,
    arrow_schema_from_avro,
    arrow_to_avro_records,
    avro_records_to_arrow,
    avro_schema_from_arrow,
    decimal_fixed_size,
    record_name_for_table,
    resolve_table_schema,
    with_meta_fields,
    without_meta_fields,
)
from spec.timeline.avro_schemas import sanitize_avro_name
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import State
from tests.conftest import RealTable
from tests.test_plans import timeline_files


def test_meta_fields_are_hudis_five_in_order() -> None:
    """The meta fields of ``HoodieRecord.HOODIE_META_COLUMNS`` (docs/spec/schema.md)."""
    assert META_FIELDS == ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                           "_hoodie_partition_path", "_hoodie_file_name")
    full = with_meta_fields({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]})
    assert [f["name"] for f in full["fields"]] == [*META_FIELDS, "a"]
    assert full["fields"][0] == {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "",
                                 "default": None}
    assert without_meta_fields(full)["fields"] == [{"name": "a", "type": "int"}]
    assert [f["name"] for f in with_meta_fields(full, operation_field=True)["fields"]][5] == OPERATION_FIELD


# --- every schema stated in the real tables ------------------------------------------------------------


def _stated_schemas(table: RealTable) -> list[tuple[str, str, Path]]:
    """(kind, schema JSON, where) for every schema the table states: commits, log blocks, base files,
    hoodie.properties — the metadata table's too."""
    out: list[tuple[str, str, Path]] = []
    for inst, path, _ in timeline_files(table):
        if inst.action in ("commit", "deltacommit", "replacecommit") and inst.state != State.REQUESTED:
            schema = parse_commit_metadata(path.read_bytes()).schema
            if schema:
                out.append(("commit", schema, path))
    for dirpath, _, names in os.walk(table.path):
        for name in names:
            p = Path(dirpath) / name
            if ".log." in name:
                out += [("log", b.block.schema, p) for b in read_blocks(p.read_bytes())
                        if b.block is not None and b.block.schema]
            elif name.endswith(".parquet") and "/.hoodie" not in dirpath:
                avro = (pq.read_metadata(p).metadata or {}).get(b"parquet.avro.schema")
                if avro:
                    out.append(("parquet", avro.decode(), p))
            elif name == "hoodie.properties":
                create = parse_properties(p.read_bytes()).get("hoodie.table.create.schema")
                if create:
                    out.append(("create", create, p))
    return out


def test_every_stated_schema_converts_and_spark_schemas_convert_back(real_table: RealTable) -> None:
    stated = _stated_schemas(real_table)
    props = parse_properties((real_table.path / ".hoodie/hoodie.properties").read_bytes())
    table_name = props["hoodie.table.name"]
    for kind, text, where in stated:
        avro = json.loads(text)
        arrow = arrow_schema_from_avro(text)
        assert arrow.names == [f["name"] for f in avro["fields"]], where
        if avro["name"] == "HoodieMetadataRecord":  # the metadata table's own schema: Hudi's, not Spark's
            continue
        assert (avro["name"], avro["namespace"]) == record_name_for_table(table_name)
        if kind == "create":  # written as ["T","null"] without defaults: converts, but is not Spark's layout
            assert all(f.nullable for f in arrow)
            continue
        has_meta = avro["fields"][0]["name"] == META_FIELDS[0]
        user = pa.schema([f for f in arrow if f.name not in META_FIELDS])
        back = avro_schema_from_arrow(user, *record_name_for_table(table_name))
        assert (with_meta_fields(back) if has_meta else back) == avro, f"{kind} schema of {where.name}"
    if real_table.manifest["completed_instants"]:
        assert {k for k, _, _ in stated} >= {"commit", "create"}


def _legacy_list_view(t: pa.DataType) -> pa.DataType:
    """The type as parquet-avro's legacy 2-level lists read back: element named "array", not null."""
    if pa.types.is_list(t):
        return pa.list_(pa.field("array", _legacy_list_view(t.value_type), nullable=False))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_legacy_list_view(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_type, t.item_field.with_type(_legacy_list_view(t.item_type)))
    return t


def test_base_file_schemas_agree_with_the_commit_schema(real_table: RealTable) -> None:
    """The parquet schema of every base file = arrow_schema_from_avro(commit schema + meta fields), except
    that files written through parquet-avro (they carry ``parquet.avro.schema``) hold lists in the legacy
    2-level layout, read back as a non-null element named ``array``."""
    schemas = {}
    for inst, path, where in timeline_files(real_table):
        if inst.state == State.COMPLETED and where in (".hoodie", ".hoodie/timeline"):
            schemas[inst.requested] = parse_commit_metadata(path.read_bytes()).schema
    checked = 0
    for dirpath, dirnames, names in os.walk(real_table.path):
        dirnames[:] = [d for d in dirnames if d != ".hoodie"]
        for name in names:
            if not name.endswith(".parquet"):
                continue
            schema = schemas.get(name.rsplit("_", 1)[1].split(".")[0])
            assert schema, f"{name} was written by a completed commit"
            real = pq.read_schema(Path(dirpath) / name)
            ours = arrow_schema_from_avro(with_meta_fields(schema))
            if b"parquet.avro.schema" in (real.metadata or {}):
                ours = pa.schema([f.with_type(_legacy_list_view(f.type)) for f in ours])
            assert ours == real.remove_metadata(), name
            checked += 1
    assert checked == int(real_table.manifest["n_base_files"])


def test_metadata_table_schema_unions_and_named_references(real_tables: list[RealTable]) -> None:
    (table,) = [t for t in real_tables if t.manifest["mdt_partitions"] != "-"]
    stated = [s for k, s, _ in _stated_schemas(table) if json.loads(s)["name"] == "HoodieMetadataRecord"]
    assert stated
    arrow = arrow_schema_from_avro(stated[0])
    stats = arrow.field("ColumnStatsMetadata").type
    low, high = stats.field("minValue").type, stats.field("maxValue").type
    assert low == high  # maxValue names the wrapper records minValue defines
    assert [f.name for f in low] == [f"member{i}" for i in range(low.num_fields)] and low.num_fields >= 12
    assert low.field("member0").type == pa.struct([pa.field("value", pa.bool_(), nullable=False)])
    assert arrow.field("key").nullable is False and arrow.field("filesystemMetadata").nullable


# --- spark's naming rules, by hand -------------------------------------------------------------------------


def test_nested_names_follow_sparks_rule() -> None:
    schema = pa.schema([pa.field("s", pa.struct([pa.field("d", pa.decimal128(10, 5)),
                                                 pa.field("in", pa.struct([pa.field("x", pa.int32())]))])),
                        pa.field("l", pa.list_(pa.struct([pa.field("y", pa.string())]))),
                        pa.field("k", pa.int64(), nullable=False)])
    avro = avro_schema_from_arrow(schema, "t_record", "hoodie.t")
    s = avro["fields"][0]["type"][1]
    assert (s["name"], s["namespace"]) == ("s", "hoodie.t.t_record")
    d = s["fields"][0]["type"][1]
    assert (d["name"], d["namespace"], d["size"]) == ("fixed", "hoodie.t.t_record.s.d", 5)
    inner = s["fields"][1]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("in", "hoodie.t.t_record.s")
    items = avro["fields"][1]["type"][1]["items"][1]
    assert (items["name"], items["namespace"]) == ("l", "hoodie.t.t_record")
    assert avro["fields"][2] == {"name": "k", "type": "long"}


@pytest.mark.parametrize(("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (18, 8), (38, 16)])
def test_decimal_fixed_sizes(precision: int, size: int) -> None:
    """Fewest bytes n with 2^(8n-1) > 10^p (hand-computed: 10^10 < 2^39, so p=10 takes 5 bytes)."""
    assert decimal_fixed_size(precision) == size


def test_unsupported_types_raise_typed_errors() -> None:
    with pytest.raises(SchemaMismatch):
        avro_schema_from_arrow(pa.schema([pa.field("m", pa.map_(pa.int32(), pa.int32()))]), "r", "n")
    with pytest.raises(SchemaMismatch):
        avro_schema_from_arrow(pa.schema([pa.field("d", pa.duration("s"))]), "r", "n")
    with pytest.raises(SchemaMismatch):
        arrow_schema_from_avro({"type": "record", "name": "r", "fields": [{"name": "a", "type": "Unknown"}]})
    with pytest.raises(SchemaMismatch):
        arrow_schema_from_avro('{"type": "string"}')
    with pytest.raises(SchemaMismatch):
        arrow_schema_from_avro("not json")


# --- round trips ------------------------------------------------------------------------------------------

names = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,6}", fullmatch=True)
SCALARS = [pa.string(), pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.bool_(), pa.binary(),
           pa.binary(4), pa.decimal128(10, 2), pa.decimal128(38, 9), pa.date32(),
           pa.timestamp("us", tz="UTC"), pa.timestamp("ms", tz="UTC"), pa.timestamp("us"), pa.time64("us")]


def _fields(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[list[pa.Field]]:
    return st.lists(st.tuples(names, children, st.booleans()), min_size=1, max_size=4,
                    unique_by=lambda t: t[0]).map(lambda fs: [pa.field(n, t, nullable=b) for n, t, b in fs])


arrow_types = st.recursive(
    st.sampled_from(SCALARS),
    lambda children: st.one_of(
        _fields(children).map(pa.struct),
        st.tuples(children, st.booleans()).map(lambda t: pa.list_(pa.field("element", t[0], nullable=t[1]))),
        st.tuples(children, st.booleans()).map(lambda t: pa.map_(pa.string(), pa.field("value", t[0],
                                                                                      nullable=t[1])))),
    max_leaves=6)
arrow_schemas = _fields(arrow_types).map(pa.schema)


@given(schema=arrow_schemas)
def test_arrow_avro_arrow_round_trip(schema: pa.Schema) -> None:
    avro = avro_schema_from_arrow(schema, "t_record", "hoodie.t")
    fastavro.parse_schema(json.loads(json.dumps(avro)))  # a valid Avro schema: names unique, defaults fit
    assert arrow_schema_from_avro(json.dumps(avro)) == schema
    assert avro_schema_from_arrow(arrow_schema_from_avro(avro), "t_record", "hoodie.t") == avro


def _values(t: pa.DataType) -> st.SearchStrategy[Any]:
    """Python values of an Arrow type (as ``to_pylist`` returns them)."""
    if pa.types.is_struct(t):
        return st.fixed_dictionaries({f.name: _nullable(f) for f in t})
    if pa.types.is_list(t):
        return st.lists(_nullable(t.value_field), max_size=3)
    if pa.types.is_map(t):
        pairs = st.dictionaries(st.text(max_size=4), _nullable(t.item_field), max_size=3)
        return pairs.map(lambda d: list(d.items()))
    if pa.types.is_decimal(t):
        bound = 10 ** (t.precision - t.scale)
        return st.decimals(allow_nan=False, allow_infinity=False, places=t.scale,
                           min_value=-bound + 1, max_value=bound - 1)
    if pa.types.is_timestamp(t):
        tz = dt.UTC if t.tz else None
        zones = st.just(tz) if tz else st.none()
        moments = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1),
                               timezones=zones)
        if t.unit == "ms":
            return moments.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
        return moments
    simple: dict[str, st.SearchStrategy[Any]] = {
        "string": st.text(max_size=6), "int32": st.integers(-(2**31), 2**31 - 1),
        "int64": st.integers(-(2**63), 2**63 - 1), "float": st.floats(width=32, allow_nan=False),
        "double": st.floats(allow_nan=False), "bool": st.booleans(), "binary": st.binary(max_size=5),
        "fixed_size_binary[4]": st.binary(min_size=4, max_size=4), "date32[day]": st.dates(),
        "time64[us]": st.times(),
    }
    return simple[str(t)]


def _nullable(f: pa.Field) -> st.SearchStrategy[Any]:
    return st.none() | _values(f.type) if f.nullable else _values(f.type)


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    schema = draw(arrow_schemas)
    rows = draw(st.lists(st.fixed_dictionaries({f.name: _nullable(f) for f in schema}), max_size=4))
    return pa.Table.from_pylist(rows, schema=schema)


@given(table=tables())
def test_values_survive_avro_encoding(table: pa.Table) -> None:
    """arrow → fastavro records → Avro bytes → records → arrow gives the same table."""
    avro = avro_schema_from_arrow(table.schema, "t_record", "hoodie.t")
    records = arrow_to_avro_records(table, avro)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(json.loads(json.dumps(avro))), records)
    decoded = [r for r in fastavro.reader(io.BytesIO(buf.getvalue())) if isinstance(r, dict)]
    assert avro_records_to_arrow(decoded, avro).equals(table)


# --- the schema readers resolve ---------------------------------------------------------------------------


def test_resolution_order() -> None:
    def avro(*cols: str) -> str:
        return json.dumps({"type": "record", "name": "r", "namespace": "n",
                           "fields": [{"name": c, "type": ["null", "long"], "default": None} for c in cols]})
    data_file = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + [pa.field("f", pa.int64())])
    got = resolve_table_schema([avro("a"), None, avro("a", "b"), ""], data_file, avro("c"))
    assert got is not None and got.names == [*META_FIELDS, "a", "b"]  # the latest commit with a schema
    got = resolve_table_schema([None], data_file, avro("c"))
    assert got is not None and got.names == [*META_FIELDS, "f"]
    got = resolve_table_schema([], None, avro("c"), include_meta_fields=False)
    assert got is not None and got.names == ["c"]
    assert resolve_table_schema([], None, None) is None


def test_resolved_schema_has_the_columns_hudi_rs_reads(real_table: RealTable) -> None:
    props = parse_properties((real_table.path / ".hoodie/hoodie.properties").read_bytes())
    commits = [parse_commit_metadata(p.read_bytes()).schema for inst, p, where in timeline_files(real_table)
               if inst.state == State.COMPLETED and where in (".hoodie", ".hoodie/timeline")
               and inst.action in ("commit", "deltacommit", "replacecommit")]
    populate = props.get("hoodie.populate.meta.fields", "true") == "true"
    schema = resolve_table_schema(commits, None, props.get("hoodie.table.create.schema"), populate)
    assert schema is not None
    columns = real_table.baseline.get("columns")
    if not columns:  # an empty table: hudi-rs reads nothing; the create schema stands
        create = arrow_schema_from_avro(props["hoodie.table.create.schema"])
        assert schema.names == [*META_FIELDS, *create.names]
        return
    if populate:
        assert schema.names == columns
    else:  # hudi-rs lists this table's partition column last
        assert sorted(schema.names) == sorted(columns) and META_FIELDS[0] not in schema.names


def test_value_conversions_by_hand() -> None:
    avro = {"type": "record", "name": "r", "namespace": "n", "fields": [
        {"name": "m", "type": ["null", {"type": "map", "values": "long"}], "default": None},
        {"name": "d", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "n.r.d", "size": 5,
                                        "logicalType": "decimal", "precision": 10, "scale": 5}],
         "default": None},
        {"name": "u", "type": ["null", "int", "string"], "default": None}]}
    table = avro_records_to_arrow([{"m": {"a": 1}, "d": decimal.Decimal("1.50000"), "u": "x"},
                                   {"m": None, "d": None, "u": 3}], avro)
    assert table.column("m").to_pylist() == [[("a", 1)], None]
    assert table.column("u").to_pylist() == [{"member0": None, "member1": "x"},
                                             {"member0": 3, "member1": None}]
    assert arrow_to_avro_records(table, avro) == [{"m": {"a": 1}, "d": decimal.Decimal("1.50000"), "u": "x"},
                                                  {"m": None, "d": None, "u": 3}]
    with pytest.raises(SchemaMismatch):
        avro_records_to_arrow([{"m": "not a map"}], avro)


@pytest.mark.parametrize(("name", "sanitized"), [
    ("trips", "trips"), ("my-table", "my__table"), ("1table", "__table"), ("_t", "_t"), ("a.b", "a__b"),
    ("t 1", "t__1"), ("-x-", "__x__"), ("é", "__"), ("a$b%c", "a__b__c"),
])
def test_table_names_are_sanitized_as_hudi_does(name: str, sanitized: str) -> None:
    """``HoodieAvroUtils.sanitizeName``: an invalid first character, then every invalid one, becomes ``__``."""
    assert sanitize_avro_name(name) == sanitized
    assert record_name_for_table(name) == (f"{sanitized}_record", f"hoodie.{sanitized}")
