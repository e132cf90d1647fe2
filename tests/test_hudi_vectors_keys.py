"""Key generator vectors ported from Apache Hudi's unit tests (``spec.keygen.key_generators``).

Sources: ``TestSimpleKeyGenerator``, ``TestComplexKeyGenerator``, ``TestCustomKeyGenerator``,
``TestTimestampBasedKeyGenerator`` (hudi-spark-client) and ``TestKeyGenUtils`` (hudi-client-common).
Each vector gives the write options the Hudi test sets, the record, and the record key and/or
partition path the test asserts (or that the key generator fails). The Java tests check each value
on three paths (Avro record, Spark Row, InternalRow) that agree; one vector stands for the three.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from spec.errors import InvalidConfig, InvalidRecord
from spec.keygen.key_generators import key_generator_from_config
from tests.hudi_vectors import Source, Vector, ids

_SPARK = "hudi-client/hudi-spark-client/src/test/java/org/apache/hudi/keygen/"
SIMPLE = Source("TestSimpleKeyGenerator", "", _SPARK + "TestSimpleKeyGenerator.java",
                "03b6ce07ac74101c6d0a146dff639a2438ee0612")
COMPLEX = Source("TestComplexKeyGenerator", "", _SPARK + "TestComplexKeyGenerator.java",
                 "1e4e0ccce4d5fe641bb760bf6b16aca41dfe7bcc")
CUSTOM = Source("TestCustomKeyGenerator", "", _SPARK + "TestCustomKeyGenerator.java",
                "0d4fec793e6f99dbe88266b32350056dc38b9d1f")
TIMESTAMP = Source("TestTimestampBasedKeyGenerator", "", _SPARK + "TestTimestampBasedKeyGenerator.java",
                   "0bda0736f3e3e80a5d86dc8e8fef466ef365cc26")
KEYGEN_UTILS = Source("TestKeyGenUtils", "testExtractRecordKeys",
                      "hudi-client/hudi-client-common/src/test/java/org/apache/hudi/keygen/TestKeyGenUtils.java",
                      "1a975252ba7ccd6fd85cbd6d39e0e5d7d93081cc")

KEY = "hoodie.datasource.write.recordkey.field"
PART = "hoodie.datasource.write.partitionpath.field"
HIVE = "hoodie.datasource.write.hive_style_partitioning"
CLASS = "hoodie.datasource.write.keygenerator.class"
TYPE = "hoodie.datasource.write.keygenerator.type"
TB = "hoodie.keygen.timebased."
OLD_TB = "hoodie.deltastreamer.keygen.timebased."  # the older names Hudi still accepts

# KeyGeneratorTestUtilities.getRecord(): the record the simple, complex and custom tests use
NESTED = {"prop1": "val1", "prop2": 10}
RECORD: dict[str, Any] = {"timestamp": 4357686, "_row_key": "key1", "ts_ms": "2020-03-21", "pii_col": "pi",
                          "nested_col": NESTED}


def _with(**changes: Any) -> dict[str, Any]:
    return {**RECORD, **changes}


def _v(source: Source, method: str, label: str, props: dict[str, str], record: dict[str, Any],
       key: str | None = None, path: str | None = None, error: str | None = None) -> Vector:
    return Vector(source.at(method), label, {"props": props, "record": record, "key": key, "path": path,
                                             "error": error})


_SIMPLE_PROPS = {KEY: "_row_key", HIVE: "true", PART: "timestamp"}
_NESTED_PROPS = {KEY: "_row_key", HIVE: "true", PART: "nested_col.prop1",
                 CLASS: "org.apache.hudi.keygen.SimpleKeyGenerator"}
_SIMPLE_CLASS = {**_SIMPLE_PROPS, CLASS: "org.apache.hudi.keygen.SimpleKeyGenerator"}

SIMPLE_VECTORS = [
    _v(SIMPLE, "testHappyFlow", "record key", _SIMPLE_CLASS, RECORD, key="key1"),
    _v(SIMPLE, "testHappyFlow", "hive-style partition path", _SIMPLE_CLASS, RECORD, path="timestamp=4357686"),
    _v(SIMPLE, "testNestedPartitionPathField", "null nested record", _NESTED_PROPS, _with(nested_col=None),
       key="key1", path="nested_col.prop1=__HIVE_DEFAULT_PARTITION__"),
    _v(SIMPLE, "testNestedPartitionPathField", "null nested value", _NESTED_PROPS,
       _with(nested_col={"prop1": None, "prop2": 10}), key="key1", path="nested_col.prop1=__HIVE_DEFAULT_PARTITION__"),
    _v(SIMPLE, "testNestedPartitionPathField", "empty nested value", _NESTED_PROPS,
       _with(nested_col={"prop1": "", "prop2": 10}), key="key1", path="nested_col.prop1=__HIVE_DEFAULT_PARTITION__"),
    _v(SIMPLE, "testNestedPartitionPathField", "nested value", _NESTED_PROPS, RECORD, key="key1",
       path="nested_col.prop1=val1"),
    _v(SIMPLE, "testNullRecordKeyFields", "no record key field", {PART: "timestamp",
       CLASS: "org.apache.hudi.keygen.SimpleKeyGenerator"}, RECORD, error="InvalidConfig@key"),
    _v(SIMPLE, "testWrongRecordKeyField", "record key field not in the record",
       {PART: "timestamp", KEY: "_wrong_key", CLASS: "org.apache.hudi.keygen.SimpleKeyGenerator"}, RECORD,
       error="InvalidRecord@key"),
    _v(SIMPLE, "testComplexRecordKeyField", "two record key fields",
       {PART: "timestamp", KEY: "_row_key,pii_col", CLASS: "org.apache.hudi.keygen.SimpleKeyGenerator"}, RECORD,
       error="InvalidConfig@config"),
]

_COMPLEX_PROPS = {KEY: "_row_key, pii_col", HIVE: "true", PART: "timestamp,ts_ms",
                  CLASS: "org.apache.hudi.keygen.ComplexKeyGenerator"}
# HoodieTestDataGenerator.generateGenericRecords(1): a trip record; the test builds the expected
# values from the record's fields, so any trip record states the rule
TRIP = {"_row_key": "8d2a7e8f-7c64-4c39-9b5f-2c2c8fd1a0b1", "timestamp": 0, "rider": "rider-001",
        "driver": "driver-001", "partition_path": "2016/03/15"}
COMPLEX_VECTORS = [
    _v(COMPLEX, "testHappyFlow", "two key fields (a space after the comma)", _COMPLEX_PROPS, RECORD,
       key="_row_key:key1,pii_col:pi"),
    _v(COMPLEX, "testHappyFlow", "two hive-style partition fields", _COMPLEX_PROPS, RECORD,
       path="timestamp=4357686/ts_ms=2020-03-21"),
    _v(COMPLEX, "testNullRecordKeyFields", "no record key field",
       {PART: "timestamp", CLASS: "org.apache.hudi.keygen.ComplexKeyGenerator"}, RECORD, error="InvalidConfig@key"),
    _v(COMPLEX, "testWrongRecordKeyField", "record key field not in the record",
       {PART: "timestamp", KEY: "_wrong_key", CLASS: "org.apache.hudi.keygen.ComplexKeyGenerator"}, RECORD,
       error="InvalidRecord@key"),
    _v(COMPLEX, "testSingleValueKeyGenerator", "one key field keeps its name",
       {KEY: "_row_key", PART: "timestamp", CLASS: "org.apache.hudi.keygen.ComplexKeyGenerator"}, TRIP,
       key="_row_key:" + TRIP["_row_key"], path=str(TRIP["timestamp"])),
    _v(COMPLEX, "testMultipleValueKeyGenerator", "two key fields, two partition fields",
       {KEY: "_row_key,timestamp", PART: "rider,driver", CLASS: "org.apache.hudi.keygen.ComplexKeyGenerator"},
       TRIP, key=f"_row_key:{TRIP['_row_key']},timestamp:{TRIP['timestamp']}", path="rider-001/driver-001"),
    _v(COMPLEX, "testMultipleValueKeyGeneratorNonPartitioned", "empty partition field list",
       {KEY: "_row_key,timestamp", PART: "", CLASS: "org.apache.hudi.keygen.ComplexKeyGenerator"},
       TRIP, key=f"_row_key:{TRIP['_row_key']},timestamp:{TRIP['timestamp']}", path=""),
]


def _custom(by_class: bool, complex_key: bool, part: str, **extra: str) -> dict[str, str]:
    props = {KEY: "_row_key, pii_col" if complex_key else "_row_key", HIVE: "true", PART: part, **extra}
    if by_class:
        props[CLASS] = "org.apache.hudi.keygen.CustomKeyGenerator"
    else:
        props[TYPE] = "CUSTOM"
    return props


_DATE = {OLD_TB + "timestamp.type": "DATE_STRING", OLD_TB + "input.dateformat": "yyyy-MM-dd",
         OLD_TB + "output.dateformat": "yyyyMMdd"}
CUSTOM_VECTORS = [
    v
    for by_class, suffix in ((True, "WithKeyGeneratorClass"), (False, "WithKeyGeneratorType"))
    for v in (
        _v(CUSTOM, "testSimpleKeyGenerator" + suffix, "field:simple",
           _custom(by_class, False, "timestamp:simple"), RECORD, key="key1", path="timestamp=4357686"),
        _v(CUSTOM, "testTimestampBasedKeyGenerator" + suffix, "field:timestamp, DATE_STRING yyyy-MM-dd to yyyyMMdd",
           _custom(by_class, False, "ts_ms:timestamp", **_DATE), RECORD, key="key1", path="ts_ms=20200321"),
        _v(CUSTOM, "testNonPartitionedKeyGenerator" + suffix, "empty partition field list",
           _custom(by_class, False, ""), RECORD, key="key1", path=""),
        _v(CUSTOM, "testInvalidPartitionKeyType" + suffix, "field:dummy is not a partition type",
           _custom(by_class, False, "timestamp:dummy"), RECORD, error="InvalidConfig@config"),
        _v(CUSTOM, "testPartitionFieldsInImproperFormat" + suffix, "a partition field without its type",
           _custom(by_class, False, "timestamp"), RECORD, error="InvalidConfig@config"),
        _v(CUSTOM, "testNoRecordKeyFieldProp" + suffix, "no record key field",
           {k: v for k, v in _custom(by_class, False, "timestamp:simple").items() if k not in (KEY, HIVE)}, RECORD,
           error="InvalidConfig@key"),
        _v(CUSTOM, "testComplexRecordKeyWithSimplePartitionPath" + suffix, "two key fields, field:simple",
           _custom(by_class, True, "timestamp:simple"), RECORD, key="_row_key:key1,pii_col:pi",
           path="timestamp=4357686"),
        _v(CUSTOM, "testComplexRecordKeysWithComplexPartitionPath" + suffix, "field:simple,field:timestamp",
           _custom(by_class, True, "timestamp:simple,ts_ms:timestamp", **_DATE), RECORD,
           key="_row_key:key1,pii_col:pi", path="timestamp=4357686/ts_ms=20200321"),
    )
]


# TestTimestampBasedKeyGenerator: record key field1, hive-style off, the partition field varies.
# getBaseKeyConfig(field, type, output format, timezone, scalar unit) sets timestamp.type,
# output.dateformat and timezone (and the scalar unit under its older name); within one test method
# the properties accumulate (each call starts from the previous call's properties).
def _ts(field: str, kind: str, out: str, zone: str, scalar: str | None = None, **extra: str) -> dict[str, str]:
    props = {KEY: "field1", HIVE: "false", PART: field, CLASS: "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
             TB + "timestamp.type": kind, TB + "output.dateformat": out, TB + "timezone": zone, **extra}
    if scalar is not None:
        props[OLD_TB + "timestamp.scalar.time.unit"] = scalar
    return props


def _ts_formats(value: str, formats: str, in_zone: str, out: str, out_zone: str) -> tuple[dict[str, str],
                                                                                          dict[str, Any]]:
    """getBaseKeyConfig with input formats, an empty delimiter regex and input/output zones."""
    props = {KEY: "field1", HIVE: "false", PART: "createTimeString",
             CLASS: "org.apache.hudi.keygen.TimestampBasedKeyGenerator", TB + "timestamp.type": "DATE_STRING",
             TB + "input.dateformat": formats, TB + "input.dateformat.list.delimiter.regex": "",
             TB + "input.timezone": in_zone, TB + "output.dateformat": out, TB + "output.timezone": out_zone}
    return props, {"field1": "001", "createTimeString": value}


_IN = {OLD_TB + "input.dateformat": "yyyy-MM-dd hh:mm:ss"}
_ISO2 = "yyyy-MM-dd'T'HH:mm:ssZ,yyyy-MM-dd'T'HH:mm:ss.SSSZ"
TIMESTAMP_VECTORS = [
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "EPOCHMILLISECONDS in GMT+8:00",
       _ts("createTime", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT+8:00"), {"createTime": 1578283932000},
       path="2020-01-06 12"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "EPOCHMILLISECONDS from a decimal(20,4)",
       _ts("createTimeDecimal", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT+8:00"),
       {"createTimeDecimal": Decimal("1578283932000.0001")}, path="2020-01-06 12"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "EPOCHMILLISECONDS in GMT",
       _ts("createTime", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT"), {"createTime": 1578283932000},
       path="2020-01-06 04"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "DATE_STRING read and printed in GMT+8:00",
       _ts("createTimeString", "DATE_STRING", "yyyy-MM-dd hh", "GMT+8:00", **_IN),
       {"createTimeString": "2020-01-06 12:12:12"}, path="2020-01-06 12"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "DATE_STRING read and printed in GMT",
       _ts("createTimeString", "DATE_STRING", "yyyy-MM-dd hh", "GMT", **_IN),
       {"createTimeString": "2020-01-06 12:12:12"}, path="2020-01-06 12"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "null EPOCHMILLISECONDS is 1 ms, in GMT+8:00",
       _ts("createTime", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT+8:00", **_IN), {"createTime": None},
       path="1970-01-01 08"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "null DATE_STRING is 1 ms printed with the input format",
       _ts("createTime", "DATE_STRING", "yyyy-MM-dd hh:mm:ss", "GMT", **_IN), {"createTime": None},
       path="1970-01-01 12:00:00"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "EPOCHMICROSECONDS from a long",
       _ts("createTime", "EPOCHMICROSECONDS", "yyyy-MM-dd hh", "GMT+8:00", **_IN),
       {"createTime": 1578283932123456}, path="2020-01-06 12"),
    _v(TIMESTAMP, "testTimestampBasedKeyGenerator", "EPOCHMICROSECONDS from a decimal(20,4)",
       _ts("createTimeDecimal", "EPOCHMICROSECONDS", "yyyy-MM-dd hh", "GMT+8:00", **_IN),
       {"createTimeDecimal": Decimal("1578283932123456.0001")}, path="2020-01-06 12"),
    _v(TIMESTAMP, "testScalar", "SCALAR days",
       _ts("createTime", "SCALAR", "yyyy-MM-dd hh", "GMT", "days"), {"createTime": 20000}, path="2024-10-04 12"),
    _v(TIMESTAMP, "testScalar", "null SCALAR is 1 of its unit",
       _ts("createTime", "SCALAR", "yyyy-MM-dd hh", "GMT", "days"), {"createTime": None}, path="1970-01-02 12"),
    _v(TIMESTAMP, "testScalar", "SCALAR DAYS as a date",
       _ts("createTime", "SCALAR", "yyyy-MM-dd", "GMT", "DAYS"), {"createTime": 18736}, path="2021-04-19"),
    _v(TIMESTAMP, "testScalarWithLogicalType", "timestamp-micros with consistent logical timestamps",
       _ts("createTime", "SCALAR", "yyyy/MM/dd", "GMT", "MICROSECONDS",
           **{"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"}),
       {"createTime": datetime.fromtimestamp(1638513806, UTC)}, path="2021/12/03"),
    _v(TIMESTAMP, "testScalarWithLogicalType", "null timestamp-micros",
       _ts("createTime", "SCALAR", "yyyy/MM/dd", "GMT", "MICROSECONDS",
           **{"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"}),
       {"createTime": None}, path="1970/01/01"),
]
for _method, _value, _formats, _in_zone, _out, _out_zone, _expected in (
    ("test_ExpectsMatch_SingleInputFormat_ISO8601WithMsZ_OutputTimezoneAsUTC", "2020-04-01T13:01:33.428Z",
     "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "", "yyyyMMddHH", "GMT", "2020040113"),
    ("test_ExpectsMatch_SingleInputFormats_ISO8601WithMsZ_OutputTimezoneAsInputDateTimeZone",
     "2020-04-01T13:01:33.428Z", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "", "yyyyMMddHH", "", "2020040113"),
    ("test_ExpectsMatch_MultipleInputFormats_ISO8601WithMsZ_OutputTimezoneAsUTC", "2020-04-01T13:01:33.428Z",
     _ISO2, "", "yyyyMMddHH", "UTC", "2020040113"),
    ("test_ExpectsMatch_MultipleInputFormats_ISO8601NoMsZ_OutputTimezoneAsUTC", "2020-04-01T13:01:33Z",
     _ISO2, "", "yyyyMMddHH", "UTC", "2020040113"),
    ("test_ExpectsMatch_MultipleInputFormats_ISO8601NoMsWithOffset_OutputTimezoneAsUTC",
     "2020-04-01T13:01:33-05:00", _ISO2, "", "yyyyMMddHH", "UTC", "2020040118"),
    ("test_ExpectsMatch_MultipleInputFormats_ISO8601WithMsWithOffset_OutputTimezoneAsUTC",
     "2020-04-01T13:01:33.123-05:00", _ISO2, "", "yyyyMMddHH", "UTC", "2020040118"),
    ("test_ExpectsMatch_MultipleInputFormats_ISO8601WithMsZ_OutputTimezoneAsEST", "2020-04-01T13:01:33.123Z",
     _ISO2, "", "yyyyMMddHH", "EST", "2020040109"),
    ("test_Throws_MultipleInputFormats_InputDateNotMatchingFormats", "2020-04-01 13:01:33.123-05:00",
     _ISO2, "", "yyyyMMddHH", "UTC", None),
    ("test_ExpectsMatch_MultipleInputFormats_ShortDate_OutputCustomDate", "20200401",
     _ISO2 + ",yyyyMMdd", "UTC", "MM/dd/yyyy", "UTC", "04/01/2020"),
):
    _props, _record = _ts_formats(_value, _formats, _in_zone, _out, _out_zone)
    TIMESTAMP_VECTORS.append(_v(TIMESTAMP, _method, _value, _props, _record, path=_expected,
                                error=None if _expected else "InvalidRecord@path"))

KEYGEN_VECTORS = SIMPLE_VECTORS + COMPLEX_VECTORS + CUSTOM_VECTORS + TIMESTAMP_VECTORS

_ERRORS = {"InvalidConfig": InvalidConfig, "InvalidRecord": InvalidRecord}


@pytest.mark.parametrize("vector", KEYGEN_VECTORS, ids=ids(KEYGEN_VECTORS))
def test_key_generator_vector(vector: Vector) -> None:
    case = vector.case
    if case["error"] is not None:
        error, call = case["error"].split("@")
        with pytest.raises(_ERRORS[error]):
            keygen = key_generator_from_config(case["props"])
            if call == "key":
                keygen.record_key(case["record"])
            elif call == "path":
                keygen.partition_path(case["record"])
        return
    keygen = key_generator_from_config(case["props"])
    if case["key"] is not None:
        assert keygen.record_key(case["record"]) == case["key"]
    if case["path"] is not None:
        assert keygen.partition_path(case["record"]) == case["path"]
