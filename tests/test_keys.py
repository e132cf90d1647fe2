"""Key generators reproduce the keys and partition paths Apache Hudi wrote, and reject bad keys.

Expected strings come from the real tables, from Hudi's key generators (``KeyGenUtils``), or from Java's documented
behaviour (``Double.toString``, ``Float.toString``, ``BigDecimal.toString``, ``Timestamp.toString``,
Hive's ``escapePathName`` character list) worked out by hand.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.config.table_config import TableConfig
from spec.errors import HudiSpecError, InvalidConfig, InvalidName, InvalidRecord
from spec.keygen.key_generators import KeyGenerator, key_generator_from_config
from spec.keygen.key_values import Float32, java_string
from spec.keygen.partition_path import (
    DEFAULT_PARTITION,
    check_partition_path,
    default_partition_columns,
    escape_path_name,
    parse_partition_path,
    unescape_path_name,
)
from spec.keygen.timestamp import TimestampConfig
from tests.conftest import RealTable

TS_PROPS = {
    "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
    "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
    "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
}


# --- every row Apache Hudi wrote --------------------------------------------------------------


def test_real_keys_and_partition_paths_recompute(real_table: RealTable) -> None:
    """Each base-file row: its key and partition path recomputed from its data columns and the
    table's key generator config equal ``_hoodie_record_key`` / ``_hoodie_partition_path``, and
    the partition path is the folder the file is in."""
    cfg = TableConfig.load(str(real_table.path))
    files = [
        p for p in real_table.path.rglob("*.parquet") if ".hoodie" not in p.relative_to(real_table.path).parts
    ]
    if not files:
        assert real_table.manifest["n_base_files"] == "0"
        return
    kg = key_generator_from_config(cfg.props)
    compared = 0
    for f in files:
        folder = f.parent.relative_to(real_table.path).as_posix()
        for r in pq.read_table(f).to_pylist():
            assert kg.partition_path(r) == ("" if folder == "." else folder)
            if cfg.populate_meta_fields:
                assert kg.record_key(r) == r["_hoodie_record_key"]
                assert kg.partition_path(r) == r["_hoodie_partition_path"]
                compared += 1
            else:
                assert r["_hoodie_record_key"] is None  # virtual keys: only the folder to compare with
                assert kg.record_key(r) == str(r["id"])
    assert compared > 0 or not cfg.populate_meta_fields


def test_timestamp_table_uses_its_stored_formats(real_tables: list[RealTable]) -> None:
    (table,) = [t for t in real_tables if t.name.endswith("v6_timebasedkeygen_nonhivestyle")]
    kg = key_generator_from_config(TableConfig.load(str(table.path)).props)
    assert kg.kind == "TIMESTAMP" and kg.timestamp is not None
    assert kg.timestamp.output_format == "yyyy/MM/dd/HH"
    # KeyGenUtils / ComplexAvroKeyGenerator
    assert kg.partition_path({"ts_str": "2023-04-03T12:01:00.123Z"}) == "2023/04/03/12"


# --- the generators -----------------------------------------------------------------------------


def test_complex_keys_null_and_empty() -> None:
    kg = KeyGenerator("COMPLEX", ("id", "name"), ("byteField", "shortField"), hive_style=True)
    assert kg.record_key({"id": 2, "name": "Bob"}) == "id:2,name:Bob"
    assert kg.record_key({"id": 2, "name": None}) == "id:2,name:__null__"
    assert kg.record_key({"id": 2, "name": ""}) == "id:2,name:__empty__"
    assert kg.partition_path({"byteField": 20, "shortField": 100}) == "byteField=20/shortField=100"
    assert (
        kg.partition_path({"byteField": 1, "shortField": None})
        == f"byteField=1/shortField={DEFAULT_PARTITION}"
    )
    with pytest.raises(InvalidRecord, match="null or empty"):
        kg.record_key({"id": None, "name": ""})
    with pytest.raises(InvalidRecord, match="name"):
        kg.record_key({"id": 1})


def test_complex_single_key_field_encodings() -> None:
    """One key field: ``id:1`` (Hudi ≤0.14.0, 1.1 default), or ``1`` as 0.14.1–1.0.2 wrote (HUDI-7001)."""
    props = {
        "hoodie.table.keygenerator.type": "COMPLEX",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "p",
    }
    assert key_generator_from_config(props).record_key({"id": 1}) == "id:1"
    new = key_generator_from_config({**props, "hoodie.write.complex.keygen.new.encoding": "true"})
    assert new.record_key({"id": 1}) == "1"
    with pytest.raises(InvalidRecord, match="'id'"):
        new.record_key({"id": None})


@pytest.mark.parametrize("bad", [None, ""])
def test_simple_null_or_empty_key_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidRecord, match="'id'"):
        KeyGenerator("SIMPLE", ("id",)).record_key({"id": bad})


def test_simple_and_non_partitioned() -> None:
    kg = KeyGenerator("SIMPLE", ("id",), ("city",), hive_style=True)
    assert kg.record_key({"id": 7}) == "7"
    assert kg.partition_path({"city": "san_francisco"}) == "city=san_francisco"
    assert kg.partition_path({"city": ""}) == f"city={DEFAULT_PARTITION}"
    assert KeyGenerator("SIMPLE", ("id",), ("city",)).partition_path({}) == DEFAULT_PARTITION  # missing: null
    non = KeyGenerator("NON_PARTITION", ("a", "b"), ("ignored",))
    assert non.record_key({"a": 1, "b": True}) == "a:1,b:true" and non.partition_path({"ignored": 1}) == ""
    assert KeyGenerator("NON_PARTITION", ("a",)).record_key({"a": 1.5}) == "1.5"
    assert KeyGenerator("GLOBAL_DELETE", ("a",)).record_key({"a": 1}) == "a:1"


def test_nested_fields() -> None:
    kg = KeyGenerator("COMPLEX", ("rider.id", "k"), ("rider.city",))
    rec = {"k": "x", "rider": {"id": 3, "city": "sfo"}}
    assert kg.record_key(rec) == "rider.id:3,k:x" and kg.partition_path(rec) == "sfo"
    assert kg.partition_path({"rider": None}) == DEFAULT_PARTITION
    with pytest.raises(InvalidRecord, match="not inside a record"):
        kg.partition_path({"rider": 5})


def test_custom_key_generator() -> None:
    props = {
        **TS_PROPS,
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "city:simple,ts:timestamp",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }
    kg = key_generator_from_config(props)
    assert kg.partition_kinds == ("SIMPLE", "TIMESTAMP")
    rec = {"id": 1, "city": "sfo", "ts": "2023-04-03T12:01:00.123Z"}
    assert kg.record_key(rec) == "1"  # one key field: as SIMPLE
    assert kg.partition_path(rec) == "city=sfo/ts=2023/04/03/12"
    two = key_generator_from_config({**props, "hoodie.table.recordkey.fields": "id,city"})
    assert two.record_key(rec) == "id:1,city:sfo"
    with pytest.raises(InvalidConfig, match="type for every partition field"):
        key_generator_from_config({**props, "hoodie.table.partition.fields": "city:simple,ts"})


# --- values as strings ---------------------------------------------------------------------------


def test_java_string_of_doubles_and_floats() -> None:
    doubles = [
        1.0,
        0.5,
        1e10,
        1.5e-4,
        1e7,
        9999999.0,
        0.001,
        0.000999,
        -0.0,
        1.2345678901234567e20,
        2.71828,
        100.0,
    ]
    assert [java_string(v) for v in doubles] == [
        "1.0",
        "0.5",
        "1.0E10",
        "1.5E-4",
        "1.0E7",
        "9999999.0",
        "0.001",
        "9.99E-4",
        "-0.0",
        "1.2345678901234567E20",
        "2.71828",
        "100.0",
    ]
    assert [java_string(float(x)) for x in ("nan", "inf", "-inf")] == ["NaN", "Infinity", "-Infinity"]
    # a float column: Float.toString prints the float32's own shortest digits
    assert [java_string(Float32(v)) for v in (0.1, 2.0, 1e10, 3.4028235e38)] == [
        "0.1",
        "2.0",
        "1.0E10",
        "3.4028235E38",
    ]
    assert java_string(0.10000000149011612) == "0.10000000149011612"  # the same float32 read as a double


def test_java_string_of_other_types() -> None:
    assert [java_string(v) for v in (True, False, 1, -(2**63), "x")] == [
        "true",
        "false",
        "1",
        "-9223372036854775808",
        "x",
    ]
    assert [java_string(Decimal(v)) for v in ("67890.12345", "1E-7", "0.00000", "0.000001")] == [
        "67890.12345",
        "1E-7",
        "0.00000",
        "0.000001",
    ]
    assert java_string(date(2023, 4, 2)) == "2023-04-02"
    ts = datetime(2023, 4, 2, 18, 2, 0, 123456, tzinfo=UTC)
    assert java_string(ts) == "1680458520123456"  # timestamp-micros, consistent logical timestamps off
    assert java_string(ts, consistent_logical_timestamp=True) == "2023-04-02 18:02:00.123"
    assert java_string(datetime(2023, 4, 2, 18, 2, tzinfo=UTC), True) == "2023-04-02 18:02:00.0"
    for bad in (b"raw", {"a": 1}, [1]):
        with pytest.raises(InvalidRecord, match="cannot be part of a record key"):
            java_string(bad)


# --- timestamp-based partitions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "extra", "value", "out_format", "expected"),
    [
        ("UNIX_TIMESTAMP", {}, 1680523260, "yyyy-MM-dd HH:mm:ss", "2023-04-03 12:01:00"),
        ("UNIX_TIMESTAMP", {"timezone": "Asia/Shanghai"}, 1680523260, "yyyyMMddHH", "2023040320"),
        ("EPOCHMILLISECONDS", {}, 1680523260123, "yyyy/MM/dd HH:mm:ss.SSS", "2023/04/03 12:01:00.123"),
        ("EPOCHMILLISECONDS", {}, 1680523260123.9, "SSS", "123"),  # a double: longValue() truncates
        (
            "EPOCHMICROSECONDS",
            {},
            -1500,
            "yyyy-MM-dd HH:mm:ss.SSS",
            "1969-12-31 23:59:59.999",
        ),  # -1500 µs → -1 ms
        ("SCALAR", {"scalar_unit": "DAYS"}, 19450, "yyyy-MM-dd", "2023-04-03"),
        ("SCALAR", {"scalar_unit": "hours"}, 25, "dd HH", "02 01"),
        ("UNIX_TIMESTAMP", {}, None, "yyyy-MM-dd HH:mm:ss", "1970-01-01 00:00:01"),  # null: the time 1
        ("EPOCHMILLISECONDS", {}, date(2023, 4, 3), "ss.SSS", "19.450"),  # a date: epoch day 19450 read as ms
        (
            "DATE_STRING",
            {"input_format": "yyyy-MM-dd'T'HH:mm:ss.SSSZ"},
            "2023-04-03T12:01:00.123Z",
            "yyyy/MM/dd/HH",
            "2023/04/03/12",
        ),
        (
            "DATE_STRING",
            {"input_format": "yyyy-MM-dd HH:mm:ssZ"},
            "2023-04-03 01:30:00+0800",
            "yyyy-MM-dd HH ZZ",
            "2023-04-03 01 +08:00",
        ),  # no output zone: the parsed offset's
        (
            "DATE_STRING",
            {"input_format": "yyyy-MM-dd HH:mm:ssZ", "output_timezone": "UTC"},
            "2023-04-03 01:30:00+0800",
            "yyyy-MM-dd HH",
            "2023-04-02 17",
        ),
        (
            "DATE_STRING",
            {"input_format": "yyyyMMdd, yyyy-MM-dd"},
            "2023-04-03",
            "dd MMM yyyy hh a",
            "03 Apr 2023 12 AM",
        ),
        ("DATE_STRING", {"input_format": "yyyy-MM-dd'T'HH:mm:ss.SSSZ"}, None, "yyyy/MM/dd", "1970/01/01"),
    ],
)
def test_timestamp_partition_values(
    kind: str, extra: dict[str, str], value: object, out_format: str, expected: str
) -> None:
    config = TimestampConfig(kind, output_format=out_format, **extra)
    assert config.format(value) == expected


def test_timestamp_errors_are_typed() -> None:
    with pytest.raises(InvalidRecord, match="does not match"):
        TimestampConfig("DATE_STRING", "yyyy-MM-dd", "yyyy").format("04/03/2023")
    with pytest.raises(InvalidRecord, match="cannot be read as a DATE_STRING"):
        TimestampConfig("DATE_STRING", "yyyy-MM-dd", "yyyy").format(5)
    with pytest.raises(InvalidConfig, match="letter 'Q'"):
        TimestampConfig("DATE_STRING", "yyyy", "yyyy Q")
    with pytest.raises(InvalidConfig, match="time zone"):
        TimestampConfig("UNIX_TIMESTAMP", output_format="yyyy", timezone="Mars/Olympus").format(1)
    with pytest.raises(InvalidConfig, match=r"output\.dateformat"):
        key_generator_from_config(
            {
                "hoodie.table.keygenerator.type": "TIMESTAMP",
                "hoodie.table.recordkey.fields": "k",
                "hoodie.table.partition.fields": "t",
                "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
            }
        )


def test_timestamp_hive_style_and_url_encoded() -> None:
    ts = TimestampConfig("EPOCHMILLISECONDS", output_format="yyyy/MM/dd")
    kg = KeyGenerator("TIMESTAMP", ("id",), ("ts",), hive_style=True, timestamp=ts)
    assert kg.partition_path({"ts": 0}) == "ts=1970/01/01"
    enc = KeyGenerator("TIMESTAMP", ("id",), ("ts",), url_encode=True, timestamp=ts)
    assert (
        enc.partition_path({"ts": 0}) == "1970%2F01%2F01"
    )  # escapePathName escapes the whole formatted path


# --- config --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("klass", "kind"),
    [
        ("SimpleKeyGenerator", "SIMPLE"),
        ("ComplexKeyGenerator", "COMPLEX"),
        ("NonpartitionedKeyGenerator", "NON_PARTITION"),
        ("TimestampBasedKeyGenerator", "TIMESTAMP"),
        ("CustomKeyGenerator", "CUSTOM"),
        ("SimpleAvroKeyGenerator", "SIMPLE"),
        ("GlobalDeleteKeyGenerator", "GLOBAL_DELETE"),
    ],
)
def test_v6_class_and_v8_type_name_the_same_generator(klass: str, kind: str) -> None:
    base = {
        **TS_PROPS,
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "ts:timestamp" if kind == "CUSTOM" else "ts",
    }
    v6 = key_generator_from_config(
        {**base, "hoodie.table.keygenerator.class": f"org.apache.hudi.keygen.{klass}"}
    )
    v8 = key_generator_from_config({**base, "hoodie.table.keygenerator.type": kind})
    v8_avro = key_generator_from_config({**base, "hoodie.table.keygenerator.type": kind + "_AVRO"})
    assert v6 == v8 == v8_avro and v6.kind == kind


def test_inference_and_bad_configs() -> None:
    def infer(keys: str, parts: str) -> str:
        return key_generator_from_config(
            {
                "hoodie.datasource.write.recordkey.field": keys,
                "hoodie.datasource.write.partitionpath.field": parts,
                **TS_PROPS,
            }
        ).kind

    assert [
        infer("a", ""),
        infer("a", "p"),
        infer("a,b", "p"),
        infer("a", "p,q"),
        infer("a", "p:simple"),
    ] == ["NON_PARTITION", "SIMPLE", "COMPLEX", "COMPLEX", "CUSTOM"]
    with pytest.raises(InvalidConfig, match="not specified here"):
        key_generator_from_config({"hoodie.table.keygenerator.class": "com.example.MyKeyGen"})
    with pytest.raises(InvalidConfig, match="unknown"):
        key_generator_from_config({"hoodie.table.keygenerator.type": "BUCKET"})
    with pytest.raises(InvalidConfig, match="one partition field"):
        key_generator_from_config(
            {
                "hoodie.table.keygenerator.type": "SIMPLE",
                "hoodie.table.recordkey.fields": "a",
                "hoodie.table.partition.fields": "p,q",
            }
        )
    with pytest.raises(InvalidConfig, match="no record key field"):
        KeyGenerator("NON_PARTITION", ()).record_key({"a": 1})


# --- URL encoding and escaping partition values ----------------------------------------------------


def test_url_encoding_is_hives_escape_path_name() -> None:
    kg = KeyGenerator("SIMPLE", ("id",), ("p",), url_encode=True)
    assert kg.partition_path({"p": "a/b c"}) == "a%2Fb c"  # a space is not escaped (not URLEncoder)
    assert (
        escape_path_name("x\"#%'*/:=?\\{[]^\x01\x7f ü<>|")
        == "x%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5E%01%7F ü<>|"
    )
    assert (
        KeyGenerator("SIMPLE", ("id",), ("p",), True, True).partition_path({"p": "2023-04-03 12:00"})
        == "p=2023-04-03 12%3A00"
    )


@pytest.mark.parametrize("value", ["..", ".", "a/b", "../x", "/abs", "a\x00b", "a//b", "a\nb", "\x7f", "x" * 256,
                                   "\u00e9" * 128, ".hoodie"])
def test_escaping_partition_values_are_rejected(value: str) -> None:
    with pytest.raises(InvalidRecord):
        KeyGenerator("SIMPLE", ("id",), ("p",)).partition_path({"p": value})


def test_url_encoding_and_hive_style_make_some_refused_values_folders() -> None:
    """A newline or NUL is refused as a folder name, but URL-encoded it is ``%0A`` or ``%00``; a value ``.`` is
    refused as a folder, but hive-style it is the folder ``p=.``; 255 bytes is the longest folder."""
    assert KeyGenerator("SIMPLE", ("id",), ("p",), url_encode=True).partition_path({"p": "a\nb"}) == "a%0Ab"
    assert KeyGenerator("SIMPLE", ("id",), ("p",), hive_style=True).partition_path({"p": "."}) == "p=."
    assert KeyGenerator("SIMPLE", ("id",), ("p",)).partition_path({"p": "x" * 255}) == "x" * 255
    with pytest.raises(InvalidRecord, match="256 bytes"):
        KeyGenerator("SIMPLE", ("id",), ("p",), hive_style=True).partition_path({"p": "x" * 254})
    # URL encoding escapes NUL as Hudi's escapePathName does (tests/test_hudi_tech_spec_measured.py); unencoded, refused
    assert KeyGenerator("SIMPLE", ("id",), ("p",), url_encode=True).partition_path({"p": "a\x00"}) == "a%00"
    with pytest.raises(InvalidRecord, match="NUL"):
        KeyGenerator("SIMPLE", ("id",), ("p",)).partition_path({"p": "a\x00"})


@pytest.mark.parametrize(("path", "fields", "problem"), [
    ("a/b", ("p",), "2 folders for 1"), ("a", ("p", "q"), "1 folders for 2"), (".hoodie", ("p",), "metadata folder"),
    ("..", ("p",), "leave the table"), ("x\ny", ("p",), "U\\+000A"), ("", ("p",), "empty folder"),
    ("p", (), "non-partitioned"), ("a/" + "b" * 256, ("p", "q"), "256 bytes")])
def test_check_partition_path_refuses_what_the_engines_must_not_write(path: str, fields: tuple[str, ...],
                                                                     problem: str) -> None:
    with pytest.raises(InvalidRecord, match=problem):
        check_partition_path(path, fields)
    assert check_partition_path("p=./q=..", ("p", "q")) == "p=./q=.."


_path_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)


@given(_path_text)
def test_escaping_inputs_always_raise_the_typed_error(value: str) -> None:
    """Whatever a value holds, a partition path either stays inside the table (one folder per
    field, none of them ``.``/``..``/empty, no NUL) or the generator raises InvalidRecord."""
    for url in (False, True):
        kg = KeyGenerator("COMPLEX", ("k",), ("a", "b"), url_encode=url)
        try:
            path = kg.partition_path({"a": value, "b": "x"})
        except HudiSpecError as err:
            assert isinstance(err, InvalidRecord)
            control = any(c < " " or c == "\x7f" for c in value)
            assert "\x00" in value or value in (".", "..") or ((control or "/" in value) and not url)
            continue
        folders = path.split("/")
        assert len(folders) == 2 and not {".", "..", ""} & set(folders)
        assert not any(c < " " or c == "\x7f" for c in path)


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), _path_text, min_size=3, max_size=3), st.booleans())
def test_url_encoded_hive_paths_round_trip(values: dict[str, str], hive: bool) -> None:
    kg = KeyGenerator("COMPLEX", ("k",), ("a", "b", "c"), hive_style=hive, url_encode=True)
    try:
        path = kg.partition_path(values)
    except InvalidRecord:
        assert any((v in (".", "..") and not hive) or "\x00" in v for v in values.values())
        return
    expected = {f: (v or None) for f, v in values.items()}
    assert parse_partition_path(path, ("a", "b", "c"), hive, url_encoded=True) == expected
    assert unescape_path_name(escape_path_name(values["a"])) == values["a"]


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.text(alphabet="xyz019_-=.", min_size=1, max_size=6),
        min_size=3,
        max_size=3,
    ),
    st.booleans(),
)
def test_partition_paths_round_trip(values: dict[str, str], hive: bool) -> None:
    kg = KeyGenerator("COMPLEX", ("k",), ("a", "b", "c"), hive_style=hive)
    try:
        path = kg.partition_path(values)
    except InvalidRecord:
        assert any(v in (".", "..") for v in values.values())
        return
    assert parse_partition_path(path, ("a", "b", "c"), hive) == values


def test_a_partition_column_of_the_default_partition_reads_as_null() -> None:
    """Apache Hudi's datasource reads partition columns from the path (``SparkHoodieTableFileIndex``): a
    ``__HIVE_DEFAULT_PARTITION__`` folder is null whatever the file holds (an empty value: ``""``)."""
    kg = KeyGenerator("COMPLEX", ("k",), ("a", "b"), hive_style=False)
    path = kg.partition_path({"a": "", "b": "x"})
    assert path == f"{DEFAULT_PARTITION}/x"
    assert default_partition_columns(path, ("a", "b"), False) == ("a",)
    assert default_partition_columns(f"a={DEFAULT_PARTITION}/b={DEFAULT_PARTITION}", ("a", "b"), True) == ("a", "b")
    assert default_partition_columns(DEFAULT_PARTITION, ("p",), False) == ("p",)
    assert default_partition_columns("x/y", ("a", "b"), False) == ()
    assert default_partition_columns(f"{DEFAULT_PARTITION}/y", ("p",), False) == ()  # one field, two folders
    assert default_partition_columns(f"{DEFAULT_PARTITION}", ("p",), True) == ()  # not p=<value>


@given(
    st.fixed_dictionaries(
        {
            "id": st.one_of(st.integers(), st.text(min_size=1), st.floats(allow_nan=False)),
            "name": st.one_of(st.none(), st.text()),
            "other": st.integers(),
        }
    ),
    st.integers(),
)
def test_keys_are_stable_and_depend_only_on_key_fields(rec: dict[str, object], other: int) -> None:
    kg = KeyGenerator("COMPLEX", ("id", "name"), ("name",))
    key = kg.record_key(rec)
    assert key == kg.record_key(dict(rec)) == kg.record_key({**rec, "other": other})
    assert key.startswith(f"id:{java_string(rec['id'])},name:")


def test_parse_partition_path_errors() -> None:
    assert parse_partition_path("", (), False) == {}
    assert parse_partition_path(f"p={DEFAULT_PARTITION}", ("p",), True) == {"p": None}
    with pytest.raises(InvalidName, match="2 folders"):
        parse_partition_path("2023/04", ("p",), False)
    with pytest.raises(InvalidName, match="p=<value>"):
        parse_partition_path("q=1", ("p",), True)
    with pytest.raises(InvalidName, match="non-partitioned"):
        parse_partition_path("x", (), False)
