"""Avro's binary encoding, decoded in Python: the values of one datum under its writer's schema.

The timeline's metadata (table versions 8 and 9) and the metadata table's records are Avro. fastavro
decodes them everywhere; importing it costs a short command (``hudi-spec read TABLE --limit 1``) more
than decoding the few small records such a command reads, so a small datum is decoded here, with the
values fastavro gives:

- ``null`` → None, ``boolean`` → bool (any byte but 0 is true), ``int`` / ``long`` → int (zig-zag
  varint), ``float`` / ``double`` → float (IEEE 754, little-endian), ``bytes`` / ``fixed`` → bytes,
  ``string`` → str (UTF-8), ``enum`` → its symbol;
- ``record`` → dict in field order, ``map`` → dict, ``array`` → list (each a sequence of blocks: a
  count, a negative count followed by the block's byte size, a zero count ending it), ``union`` → the
  value of the branch its index names;
- named types (record, enum, fixed) referred to by full or short name in their namespace.

A logical type (``decimal``, ``date``, timestamps, ``uuid`` ...) is what fastavro turns into a Python
object; a schema whose returned values hold one is left to fastavro (``AvroUnsupported``), while a
field that is only skipped (``reader(..., fields=...)``) is read as its underlying type and dropped.
Damaged input raises EOFError, ValueError, IndexError or UnicodeDecodeError, as fastavro does.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): Hudi decodes these with Apache Avro's
``GenericDatumReader`` over a ``BinaryDecoder`` (``TimelineMetadataUtils.deserializeAvroMetadata``,
``HoodieAvroUtils.bytesToAvro``); the Apache Avro specification (1.11), "Binary Encoding";
``tests/test_avro_binary.py`` holds the values equal to fastavro's on Hudi's own schemas.
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

Read = Callable[[bytes, int], tuple[Any, int]]
"""Reads one value at an offset: the value and the offset after it."""

SMALL_DATUM_BYTES = 64 * 1024
"""Avro data up to this size (a container, an HFile of records) are decoded here; larger ones by fastavro, which
decodes a few times faster, so that its import then costs less than decoding them in Python would."""
PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED_OR_PRIMITIVE = PRIMITIVES | {"enum", "fixed"}
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")


class AvroUnsupported(Exception):
    """A schema this decoder leaves to fastavro: a logical type among the values it would return."""


def read_long(buf: bytes, pos: int) -> tuple[int, int]:
    """An ``int`` or ``long``: a zig-zag varint (IndexError when the data ends inside it)."""
    b = buf[pos]
    pos += 1
    n = b & 0x7F
    shift = 7
    while b & 0x80:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
    return (n >> 1) ^ -(n & 1), pos


def _null(buf: bytes, pos: int) -> tuple[Any, int]:
    return None, pos


def _boolean(buf: bytes, pos: int) -> tuple[Any, int]:
    return buf[pos] != 0, pos + 1


def _float(buf: bytes, pos: int) -> tuple[Any, int]:
    if pos + 4 > len(buf):
        raise EOFError("the data ends inside a float")
    return _FLOAT.unpack_from(buf, pos)[0], pos + 4


def _double(buf: bytes, pos: int) -> tuple[Any, int]:
    if pos + 8 > len(buf):
        raise EOFError("the data ends inside a double")
    return _DOUBLE.unpack_from(buf, pos)[0], pos + 8


def _span(buf: bytes, pos: int) -> tuple[int, int]:
    n, pos = read_long(buf, pos)
    if n < 0:
        raise ValueError(f"a negative length {n}")
    if pos + n > len(buf):
        raise EOFError(f"a length of {n} runs past the data")
    return pos, pos + n


def _bytes(buf: bytes, pos: int) -> tuple[Any, int]:
    start, end = _span(buf, pos)
    return bytes(buf[start:end]), end


def _string(buf: bytes, pos: int) -> tuple[Any, int]:
    start, end = _span(buf, pos)
    return bytes(buf[start:end]).decode("utf-8"), end


_PRIMITIVE_READS: dict[str, Read] = {"null": _null, "boolean": _boolean, "int": read_long, "long": read_long,
                                     "float": _float, "double": _double, "bytes": _bytes, "string": _string}


def _blocks(buf: bytes, pos: int, item: Read) -> tuple[list[Any], int]:
    """The items of an array's or a map's blocks, each read by ``item``, up to the zero count that ends them."""
    out: list[Any] = []
    while True:
        n, pos = _count(buf, pos)
        if n == 0:
            return out, pos
        for _ in range(n):
            v, pos = item(buf, pos)
            out.append(v)


def _count(buf: bytes, pos: int) -> tuple[int, int]:
    """A block's item count (a negative count is followed by the block's size in bytes, not needed here)."""
    n, pos = read_long(buf, pos)
    if n < 0:
        _, pos = read_long(buf, pos)
        n = -n
    if n > len(buf):
        raise ValueError(f"a block of {n} items in {len(buf)} bytes")
    return n, pos


def _full_name(name: str, namespace: str) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


class _Compiler:
    """Turns a parsed schema (JSON values) into a ``Read``; named types are kept by full name."""

    def __init__(self) -> None:
        self.named: dict[str, Read] = {}
        self.definitions: dict[str, Any] = {}

    def resolve(self, name: str, namespace: str) -> str:
        for full in (_full_name(name, namespace), name):
            if full in self.named:
                return full
        raise ValueError(f"unknown Avro type {name!r}")

    def compile(self, schema: Any, namespace: str = "") -> Read:
        if isinstance(schema, str):
            if schema in PRIMITIVES:
                return _PRIMITIVE_READS[schema]
            full = self.resolve(schema, namespace)
            named = self.named
            return lambda buf, pos: named[full](buf, pos)  # looked up when read: a type may refer to itself
        if isinstance(schema, list):
            return self._union([self.compile(s, namespace) for s in schema])
        if not isinstance(schema, dict):
            raise ValueError(f"not an Avro schema: {schema!r}")
        kind = schema.get("type")
        if kind in PRIMITIVES:
            return _PRIMITIVE_READS[kind]
        if kind == "array":
            return self._array(self.compile(schema["items"], namespace))
        if kind == "map":
            return self._map(self.compile(schema["values"], namespace))
        if kind in ("record", "error", "enum", "fixed"):
            full = _full_name(schema["name"], schema.get("namespace", namespace))
            inner = full.rpartition(".")[0]
            self.definitions[full] = schema
            if kind == "enum":
                self.named[full] = self._enum(tuple(schema["symbols"]))
            elif kind == "fixed":
                self.named[full] = self._fixed(int(schema["size"]))
            else:
                self.named[full] = _null  # defined before its fields, which may refer to it
                fields = [(f["name"], self.compile(f["type"], inner)) for f in schema["fields"]]
                self.named[full] = self._record(fields)
            return self.named[full]
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in PRIMITIVES):
            return self.compile(kind, namespace)
        raise ValueError(f"not an Avro schema: {schema!r}")

    @staticmethod
    def _union(branches: list[Read]) -> Read:
        def read(buf: bytes, pos: int) -> tuple[Any, int]:
            i, pos = read_long(buf, pos)
            if not 0 <= i < len(branches):
                raise IndexError(f"union index {i} of {len(branches)} branches")
            return branches[i](buf, pos)
        return read

    @staticmethod
    def _array(item: Read) -> Read:
        def read(buf: bytes, pos: int) -> tuple[Any, int]:
            return _blocks(buf, pos, item)
        return read

    @staticmethod
    def _map(value: Read) -> Read:
        def entry(buf: bytes, pos: int) -> tuple[Any, int]:
            k, pos = _string(buf, pos)
            v, pos = value(buf, pos)
            return (k, v), pos

        def read(buf: bytes, pos: int) -> tuple[Any, int]:
            entries, pos = _blocks(buf, pos, entry)
            return dict(entries), pos
        return read

    @staticmethod
    def _enum(symbols: tuple[str, ...]) -> Read:
        def read(buf: bytes, pos: int) -> tuple[Any, int]:
            i, pos = read_long(buf, pos)
            if not 0 <= i < len(symbols):
                raise IndexError(f"enum index {i} of {len(symbols)} symbols")
            return symbols[i], pos
        return read

    @staticmethod
    def _fixed(size: int) -> Read:
        def read(buf: bytes, pos: int) -> tuple[Any, int]:
            if pos + size > len(buf):
                raise EOFError(f"the data ends inside a fixed of {size} bytes")
            return bytes(buf[pos:pos + size]), pos + size
        return read

    @staticmethod
    def _record(fields: list[tuple[str, Read]]) -> Read:
        def read(buf: bytes, pos: int) -> tuple[Any, int]:
            out = {}
            for name, field in fields:
                out[name], pos = field(buf, pos)
            return out, pos
        return read

    def check_plain(self, schema: Any, namespace: str = "", seen: set[str] | None = None) -> None:
        """AvroUnsupported when a value ``schema`` describes may hold a logical type."""
        seen = set() if seen is None else seen
        if isinstance(schema, list):
            for s in schema:
                self.check_plain(s, namespace, seen)
        elif isinstance(schema, str):
            if schema not in PRIMITIVES:
                full = self.resolve(schema, namespace)
                if full not in seen:
                    seen.add(full)
                    self.check_plain(self.definitions[full], full.rpartition(".")[0], seen)
        elif isinstance(schema, dict):
            if "logicalType" in schema:
                raise AvroUnsupported(f"logical type {schema['logicalType']!r}: left to fastavro")
            kind = schema.get("type")
            if kind in ("record", "error"):
                full = _full_name(schema["name"], schema.get("namespace", namespace))
                seen.add(full)
                for f in schema["fields"]:
                    self.check_plain(f["type"], full.rpartition(".")[0], seen)
            elif kind == "array":
                self.check_plain(schema["items"], namespace, seen)
            elif kind == "map":
                self.check_plain(schema["values"], namespace, seen)
            elif isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _NAMED_OR_PRIMITIVE):
                self.check_plain(kind, namespace, seen)


def reader(schema: Any, fields: Sequence[str] | None = None) -> Read:
    """The reader of datums of the writer schema ``schema`` (parsed JSON). With ``fields`` (``schema`` a
    record), each datum is read whole but only those fields are returned. AvroUnsupported when a
    returned value may hold a logical type; ValueError when ``schema`` is not a schema."""
    compiler = _Compiler()
    read = compiler.compile(schema)
    if fields is None:
        compiler.check_plain(schema)
        return read
    if not isinstance(schema, dict) or schema.get("type") not in ("record", "error"):
        raise ValueError("fields are chosen from a record schema")
    namespace = _full_name(schema["name"], schema.get("namespace", "")).rpartition(".")[0]
    by_name = {f["name"]: f["type"] for f in schema["fields"]}
    for name in fields:
        if name in by_name:
            compiler.check_plain(by_name[name], namespace)
    wanted = frozenset(fields)

    def read_fields(buf: bytes, pos: int) -> tuple[Any, int]:
        record, pos = read(buf, pos)
        return {k: v for k, v in record.items() if k in wanted}, pos
    return read_fields


@functools.lru_cache(maxsize=64)
def plain_reader(schema_text: str, fields: tuple[str, ...] | None = None) -> Read | None:
    """``reader`` of the schema JSON ``schema_text``, made once per schema and fields; None (also remembered)
    when the schema is left to fastavro: a logical type among the values returned, or a schema this decoder
    does not take."""
    try:
        return reader(json.loads(schema_text), fields)
    except (AvroUnsupported, ValueError, KeyError, TypeError):
        return None


def decode(data: bytes, read: Read) -> Any:
    """The datum at the start of ``data`` (bytes after it are not read, as fastavro's ``schemaless_reader``
    does not read them)."""
    return read(data, 0)[0]
