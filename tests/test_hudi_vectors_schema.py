"""Schema vectors ported from Apache Hudi's unit tests (``spec.timeline.avro_schemas``, ``spec.schema.table_schema``).

Sources: ``TestHoodieAvroUtils.testSanitizeName`` (Avro names made valid) and
``TestAvroSchemaUtils`` (projections, and the write-time compatibility check of a writer's
schema against the table's), both in hudi-common.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from spec.errors import SchemaMismatch
from spec.schema.compatibility import (
    can_read,
    check_schema_compatible,
    is_compatible_projection_of,
    is_strict_projection_of,
)
from spec.timeline.avro_schemas import sanitize_avro_name
from tests.hudi_vectors import Source, Vector, ids

AVRO_UTILS = Source("TestHoodieAvroUtils", "testSanitizeName",
                    "hudi-common/src/test/java/org/apache/hudi/avro/TestHoodieAvroUtils.java",
                    "03abd07e9b1fa4eefd8de8cd68ce5410b971a87c")
SCHEMA_UTILS = Source("TestAvroSchemaUtils", "",
                      "hudi-common/src/test/java/org/apache/hudi/avro/TestAvroSchemaUtils.java",
                      "09c86f2856c60fb9c04d21f29e781ac0ff7c2420")

SANITIZE_VECTORS = [
    Vector(AVRO_UTILS, f"{name!r} -> {expected!r}", {"name": name, "mask": mask, "expected": expected})
    for name, mask, expected in (
        ("123456", None, "__23456"),
        ("abcdef", None, "abcdef"),
        ("_1", None, "_1"),
        ("a.bc", "*", "a*bc"),
        ("abcdef_.", None, "abcdef___"),
        ("1ab*cd?", None, "__ab__cd__"),
    )
]


@pytest.mark.parametrize("vector", SANITIZE_VECTORS, ids=ids(SANITIZE_VECTORS))
def test_sanitize_name_vector(vector: Vector) -> None:
    case = vector.case
    got = sanitize_avro_name(case["name"]) if case["mask"] is None else sanitize_avro_name(case["name"], case["mask"])
    assert got == case["expected"]


def _nullable(t: str) -> list[str]:
    return ["null", t]


def _record(name: str, fields: list[tuple[str, Any]], namespace: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "record", "name": name,
                           "fields": [{"name": n, "type": t} for n, t in fields]}
    if namespace:
        out["namespace"] = namespace
    return out


def _nested(with_long: bool) -> dict[str, Any]:
    fields: list[tuple[str, Any]] = [("string", _nullable("string"))]
    if with_long:
        fields.append(("long", _nullable("long")))
    return _record("nested", fields)


# TestAvroSchemaUtils: SOURCE_SCHEMA, PROJECTED_NESTED_SCHEMA_STRICT and _WITH_PROMOTION
SOURCE = _record("source", [("number", _nullable("int")), ("nested_record", _nested(True))], "example.schema")
STRICT = _record("source", [("number", _nullable("int")), ("nested_record", _nested(False))], "example.schema")
PROMOTED = _record("source", [("number", _nullable("long")), ("nested_record", _nested(False))], "example.schema")


def _with_defaults(name: str, fields: list[tuple[str, str]]) -> dict[str, Any]:
    return {"type": "record", "name": name,
            "fields": [{"name": n, "type": ["null", t], "default": None} for n, t in fields]}


FULL = _with_defaults("record", [("a", "int"), ("b", "int"), ("c", "int")])
SHORT = _with_defaults("record", [("a", "int"), ("b", "int")])
BROKEN = _with_defaults("broken", [("a", "int"), ("b", "int"), ("c", "boolean")])


def _proj(method: str, label: str, kind: str, source: Any, target: Any, expected: bool) -> Vector:
    return Vector(SCHEMA_UTILS.at(method), label, {"kind": kind, "source": source, "target": target,
                                                   "expected": expected})


def _wrapped(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("array", {"type": "array", "items": schema}), ("map", {"type": "map", "values": schema}),
            ("union", ["null", schema])]


PROJECTION_VECTORS = [
    _proj("testIsStrictProjection", "a schema is a projection of itself", "strict", SOURCE, SOURCE, True),
    _proj("testIsStrictProjection", "a nested field left out", "strict", SOURCE, STRICT, True),
    _proj("testIsStrictProjection", "not the other way round", "strict", STRICT, SOURCE, False),
    *[_proj("testIsStrictProjection", f"nested in an {kind}", "strict", s, t, True)
      for (kind, s), (_, t) in zip(_wrapped(SOURCE), _wrapped(STRICT), strict=True)],
    _proj("testIsCompatibleProjection", "a schema is a compatible projection of itself", "compatible", SOURCE,
          SOURCE, True),
    _proj("testIsCompatibleProjection", "int promoted to long, a nested field left out", "compatible", SOURCE,
          PROMOTED, True),
    _proj("testIsCompatibleProjection", "a promotion is not a strict projection", "strict", SOURCE, PROMOTED,
          False),
    _proj("testIsCompatibleProjection", "no demotion back", "compatible", PROMOTED, SOURCE, False),
    *[_proj("testIsCompatibleProjection", f"promoted in an {kind}", "compatible", s, t, True)
      for (kind, s), (_, t) in zip(_wrapped(SOURCE), _wrapped(PROMOTED), strict=True)],
]


@pytest.mark.parametrize("vector", PROJECTION_VECTORS, ids=ids(PROJECTION_VECTORS))
def test_projection_vector(vector: Vector) -> None:
    case = vector.case
    check = is_strict_projection_of if case["kind"] == "strict" else is_compatible_projection_of
    assert check(case["source"], case["target"]) is case["expected"]


def _compat(method: str, label: str, writer: dict[str, Any], validate: bool, allow_projection: bool,
            dropped: frozenset[str], ok: bool) -> Vector:
    return Vector(SCHEMA_UTILS.at(method), label, {"table": FULL, "writer": writer, "validate": validate,
                                                   "allow_projection": allow_projection, "dropped": dropped,
                                                   "ok": ok})


COMPATIBILITY_VECTORS = [
    *[_compat("testIsCompatibleProjectionNotAllowed", f"a dropped column is refused (validate={v})", SHORT, v,
              False, frozenset(), False) for v in (False, True)],
    *[_compat("testIsCompatibleProjectionAllowed", f"a dropped column is allowed (validate={v})", SHORT, v,
              True, frozenset(), True) for v in (False, True)],
    *[_compat("testIsCompatiblePartitionDropCols", f"a dropped partition column (validate={v})", SHORT, v,
              False, frozenset({"c"}), True) for v in (False, True)],
    _compat("testBrokenSchema", "int to boolean (and another record name) is refused", BROKEN, True, False,
            frozenset(), False),
]


@pytest.mark.parametrize("vector", COMPATIBILITY_VECTORS, ids=ids(COMPATIBILITY_VECTORS))
def test_schema_compatibility_vector(vector: Vector) -> None:
    case = vector.case

    def check() -> None:
        check_schema_compatible(json.dumps(case["table"]), json.dumps(case["writer"]), case["validate"],
                                case["allow_projection"], case["dropped"])

    if case["ok"]:
        check()
    else:
        with pytest.raises(SchemaMismatch):
            check()


def test_broken_schema_fails_on_the_type_alone() -> None:
    """testBrokenSchema's writer differs in record name and in one type; either refuses it. The type
    alone does too (the name check is not what refuses it)."""
    renamed = {**BROKEN, "name": "record"}
    assert not can_read(renamed, FULL)
    assert can_read(FULL, FULL)


VECTORS = SANITIZE_VECTORS + PROJECTION_VECTORS + COMPATIBILITY_VECTORS
