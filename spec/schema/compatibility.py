"""Schema compatibility: whether a reader schema reads data written with another, and which writes a table accepts.

A writer's schema must be readable by the table's schema evolution rules: Avro's resolution
(``can_read``: matching named types, a reader field missing from the writer has a default, Avro's
promotions int → long → float → double and string ⇄ bytes), and Hudi's projections
(``is_strict_projection_of``, ``is_compatible_projection_of``). ``check_schema_compatible`` is the
write-time check Hudi runs when ``hoodie.avro.schema.validate`` is on.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``AvroSchemaCompatibility``,
``AvroSchemaUtils`` (``checkSchemaCompatible``, ``isSchemaCompatible``, ``isStrictProjectionOf``,
``isCompatibleProjectionOf``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from spec.errors import SchemaMismatch
from spec.schema.table_schema import record_schema

# --- schema compatibility on write ---------------------------------------------------------------

_AVRO_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_COMPLEX_TYPES = frozenset({"record", "error", "enum", "fixed", "array", "map"})
_PROMOTIONS = {"long": {"int"}, "float": {"int", "long"}, "double": {"int", "long", "float"},
               "string": {"bytes"}, "bytes": {"string"}}
"""Reader type → the writer types it also reads (Avro's promotions)."""


class _Named:
    """The named types (record, enum, fixed) of a schema, by full and short name, so that a type
    referred to by name resolves to its definition."""

    def __init__(self, schema: Any) -> None:
        self.types: dict[str, Mapping[str, Any]] = {}
        self._collect(schema, "")

    def _collect(self, t: Any, namespace: str) -> None:
        if isinstance(t, list):
            for branch in t:
                self._collect(branch, namespace)
        elif isinstance(t, Mapping):
            kind = t.get("type")
            if kind in ("record", "error", "enum", "fixed"):
                name = str(t["name"])
                ns = str(t.get("namespace", namespace)) if "." not in name else name.rsplit(".", 1)[0]
                full = name if "." in name else (f"{ns}.{name}" if ns else name)
                self.types[full] = t
                self.types.setdefault(full.rsplit(".", 1)[-1], t)
                for f in t.get("fields", ()):
                    self._collect(f["type"], ns)
            elif kind in ("array", "map"):
                self._collect(t.get("items", t.get("values")), namespace)
            elif isinstance(kind, list | Mapping):
                self._collect(kind, namespace)

    def resolve(self, t: Any) -> Any:
        """``t`` with a name reference replaced by its definition and ``{"type": "int"}`` by ``int``."""
        while True:
            if isinstance(t, str) and t not in _AVRO_PRIMITIVES:
                if t not in self.types:
                    raise SchemaMismatch(f"Avro type {t!r} is not defined in the schema")
                t = self.types[t]
            elif isinstance(t, Mapping) and t.get("type") not in _COMPLEX_TYPES:
                t = t["type"]  # {"type": "int", ...}, {"type": <a union or a name>}
            else:
                return t


def _as_schema(avro: str | Mapping[str, Any] | list[Any]) -> Any:
    """Any Avro schema: a primitive type name, JSON text, or the parsed JSON."""
    if isinstance(avro, str):
        if avro in _AVRO_PRIMITIVES:
            return avro
        try:
            return json.loads(avro)
        except json.JSONDecodeError as err:
            raise SchemaMismatch(f"the schema is not JSON: {err}", hint="pass an Avro schema") from err
    return avro


def _kind(t: Any) -> str:
    return "union" if isinstance(t, list) else t if isinstance(t, str) else str(t["type"])


def _short_name(t: Mapping[str, Any]) -> str:
    return str(t["name"]).rsplit(".", 1)[-1]


def _full_name(t: Mapping[str, Any]) -> str:
    name = str(t["name"])
    return name if "." in name or not t.get("namespace") else f"{t['namespace']}.{name}"


def _names_match(reader: Mapping[str, Any], writer: Mapping[str, Any]) -> bool:
    """``AvroSchemaCompatibility.schemaNameEquals`` as Hudi states it: the short names are equal,
    or the reader's aliases hold the writer's full name (namespaces are not compared)."""
    return _short_name(reader) == _short_name(writer) or _full_name(writer) in reader.get("aliases", ())


# --8<-- [start:compatibility]
def can_read(reader: str | Mapping[str, Any] | list[Any], writer: str | Mapping[str, Any] | list[Any],
             check_naming: bool = True) -> bool:
    """Whether data written with ``writer`` can be read with ``reader`` (Hudi's
    ``AvroSchemaCompatibility.checkReaderWriterCompatibility``, Avro's rules):

    - a writer union: every branch readable; a reader union: some branch reads the writer type;
    - the same type: arrays by items, maps by values, enums when the reader has every writer
      symbol, fixed by size, records field by field — a reader field the writer lacks (by name,
      or by one of the reader field's aliases) needs a default; writer fields the reader lacks
      are skipped; named types also by name when ``check_naming`` (``_names_match``);
    - promotions: ``int`` → ``long`` → ``float`` → ``double``, ``string`` ⇄ ``bytes``.

    Logical types are not compared (Avro compares the underlying types).
    """
    r_schema, w_schema = _as_schema(reader), _as_schema(writer)
    r_named, w_named = _Named(r_schema), _Named(w_schema)
    seen: set[tuple[int, int]] = set()

    def ok(r: Any, w: Any) -> bool:
        r, w = r_named.resolve(r), w_named.resolve(w)
        if isinstance(r, Mapping) and isinstance(w, Mapping):
            if (id(r), id(w)) in seen:
                return True  # a recursive type: assumed compatible while it is being checked
            seen.add((id(r), id(w)))
        rk, wk = _kind(r), _kind(w)
        if wk == "union":
            return all(ok(r, branch) for branch in w)
        if rk == "union":
            return any(ok(branch, w) for branch in r)
        if rk != wk:
            return wk in _PROMOTIONS.get(rk, ())
        if rk in _AVRO_PRIMITIVES:
            return True
        if rk == "array":
            return ok(r["items"], w["items"])
        if rk == "map":
            return ok(r["values"], w["values"])
        if check_naming and not _names_match(r, w):
            return False
        if rk == "fixed":
            return int(r["size"]) == int(w["size"])
        if rk == "enum":
            return set(w["symbols"]) <= set(r["symbols"]) or "default" in r
        writer_fields = {f["name"]: f for f in w.get("fields", ())}
        for f in r.get("fields", ()):
            match = next((writer_fields[n] for n in (f["name"], *f.get("aliases", ())) if n in writer_fields), None)
            if match is None:
                if "default" not in f:
                    return False
            elif not ok(f["type"], match["type"]):
                return False
        return True

    return ok(r_schema, w_schema)


def _projection(source: Any, target: Any, atomic: Any, s_named: _Named, t_named: _Named) -> bool:
    s, t = s_named.resolve(source), t_named.resolve(target)
    sk, tk = _kind(s), _kind(t)
    if sk == tk == "record":
        fields = {f["name"]: f for f in s.get("fields", ())}
        return all(f["name"] in fields and _projection(fields[f["name"]]["type"], f["type"], atomic, s_named, t_named)
                   for f in t.get("fields", ()))
    if sk == tk == "array":
        return _projection(s["items"], t["items"], atomic, s_named, t_named)
    if sk == tk == "map":
        return _projection(s["values"], t["values"], atomic, s_named, t_named)
    if sk == tk == "union":
        return len(s) == len(t) and all(_projection(a, b, atomic, s_named, t_named) for a, b in zip(s, t, strict=True))
    return bool(atomic(s, t))




def is_strict_projection_of(source: str | Mapping[str, Any] | list[Any],
                            target: str | Mapping[str, Any] | list[Any]) -> bool:
    """Whether ``target`` is ``source`` with fields left out, nested too (``AvroSchemaUtils.isStrictProjectionOf``):
    records keep a subset of their fields, arrays, maps and unions (branch by branch) recurse, and
    every other type is the very same type."""
    s, t = _as_schema(source), _as_schema(target)
    return _projection(s, t, lambda a, b: a == b, _Named(s), _Named(t))


def is_compatible_projection_of(source: str | Mapping[str, Any] | list[Any],
                                target: str | Mapping[str, Any] | list[Any]) -> bool:
    """As ``is_strict_projection_of``, but a leaf type may also be promoted: ``target`` reads what
    ``source`` wrote, names not compared (``AvroSchemaUtils.isCompatibleProjectionOf``)."""
    s, t = _as_schema(source), _as_schema(target)
    return _projection(s, t, lambda a, b: a == b or can_read(b, a, check_naming=False), _Named(s), _Named(t))


def check_schema_compatible(table_schema: str | Mapping[str, Any], writer_schema: str | Mapping[str, Any],
                            should_validate: bool, allow_projection: bool,
                            drop_partition_columns: frozenset[str] = frozenset()) -> None:
    """Refuse a write whose schema does not fit the table's (``AvroSchemaUtils.checkSchemaCompatible``):

    - unless ``allow_projection`` (``hoodie.datasource.write.schema.allow.auto.evolution.column.drop``),
      every top-level table field must be in the writer's schema, save the partition columns dropped
      from data files (``hoodie.datasource.write.drop.partition.columns``);
    - when ``should_validate`` (``hoodie.avro.schema.validate``) and no partition column is dropped,
      the writer's schema must read data written with the table's (``can_read``, names checked).

    Raises SchemaMismatch otherwise.
    """
    table, writer = record_schema(table_schema), record_schema(writer_schema)
    if not allow_projection:
        writer_names = {f["name"] for f in writer.get("fields", ())}
        missing = [f["name"] for f in table.get("fields", ())
                   if f["name"] not in writer_names and f["name"] not in drop_partition_columns]
        if missing:
            raise SchemaMismatch(f"the write drops the table's column(s) {', '.join(missing)}",
                                 hint="write every column of the table, or allow dropping columns with "
                                      "hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true")
    if not drop_partition_columns and should_validate and not can_read(writer, table, check_naming=True):
        raise SchemaMismatch("the write's schema cannot read the table's data (a type changed in a way Avro "
                             "does not promote, or a new column has no default)",
                             hint="keep column types, widen only int→long→float→double or string⇄bytes, and "
                                  "give new columns a default (nullable with default null)")
# --8<-- [end:compatibility]
