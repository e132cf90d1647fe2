"""Key generators: a record's key and partition path, from its fields.

| key generator | record key | partition path |
|---|---|---|
| SIMPLE | the one key field's value | the one partition field's value; ``field=value`` when hive-style |
| COMPLEX | ``f1:v1,f2:v2``, every key field (``__null__``, ``__empty__``) | the values joined by ``/`` |
| NON_PARTITION | as SIMPLE for one key field, else as COMPLEX | ``""`` |
| TIMESTAMP | as SIMPLE | the one partition field read as a time, printed with the output date format |
| CUSTOM | as SIMPLE for one key field, else as COMPLEX | per ``f:SIMPLE`` / ``f:TIMESTAMP``, by ``/`` |
| GLOBAL_DELETE | as COMPLEX | ``""`` |

A null or empty record key is an error. Values become strings as Java's ``String.valueOf`` of the
Avro value does (``spec.keygen.key_values``); a partition value becomes a folder, checked and URL-escaped
when configured, by ``spec.keygen.partition_path``; a TIMESTAMP field is read and printed as a time by
``spec.keygen.timestamp``.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``KeyGenUtils``
(``getRecordKey``, ``getRecordPartitionPath``, ``inferKeyGeneratorType``),
``SimpleAvroKeyGenerator``, ``ComplexAvroKeyGenerator``, ``NonpartitionedAvroKeyGenerator``,
``TimestampBasedAvroKeyGenerator``, ``CustomAvroKeyGenerator`` and ``GlobalAvroDeleteKeyGenerator``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.errors import InvalidConfig, InvalidRecord
from spec.keygen.key_values import java_string
from spec.keygen.partition_path import DEFAULT_PARTITION, check_partition_path, check_partition_value, escape_path_name
from spec.keygen.timestamp import TimestampConfig, timestamp_config_from_props

NULL_KEY = "__null__"
EMPTY_KEY = "__empty__"

_KEYGEN_CLASS_NAMES = {"Simple": "SIMPLE", "Complex": "COMPLEX", "Nonpartitioned": "NON_PARTITION",
                       "TimestampBased": "TIMESTAMP", "Custom": "CUSTOM", "GlobalDelete": "GLOBAL_DELETE"}
KEYGEN_TYPES_BY_CLASS = {f"org.apache.hudi.keygen.{name}{suffix}": kind
                         for name, kind in _KEYGEN_CLASS_NAMES.items()
                         for suffix in ("KeyGenerator", "AvroKeyGenerator")}
"""The v6 ``hoodie.table.keygenerator.class`` names (the Spark classes and their Avro twins)."""
KEYGEN_TYPES = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")
"""The v8 ``hoodie.table.keygenerator.type`` values (a ``_AVRO`` suffix names the same rules)."""


def _field_value(record: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """(found, value) of a possibly nested field ``a.b.c``; a null parent yields (True, None)."""
    node: Any = record
    for part in path.split("."):
        if node is None:
            return True, None
        if not isinstance(node, Mapping):
            raise InvalidRecord(f"field {path!r}: {part!r} is not inside a record")
        if part not in node:
            return False, None
        node = node[part]
    return True, node


@dataclass(frozen=True)
class KeyGenerator:
    """A key generator: the rules that turn a record's fields into its key and partition path.

    ``partition_kinds`` (CUSTOM only): SIMPLE or TIMESTAMP per partition field.
    ``encode_single_key_field_name``: COMPLEX with one key field writes ``id:1`` (Hudi up to
    0.14.0, and 1.1 by default); Hudi 0.14.1–1.0.2 wrote plain ``1`` (HUDI-7001;
    ``hoodie.write.complex.keygen.new.encoding=true``).
    """

    kind: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style: bool = False
    url_encode: bool = False
    timestamp: TimestampConfig | None = None
    partition_kinds: tuple[str, ...] = ()
    consistent_logical_timestamp: bool = False
    encode_single_key_field_name: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KEYGEN_TYPES:
            raise InvalidConfig(f"key generator {self.kind!r} is unknown",
                                hint=f"use one of {', '.join(KEYGEN_TYPES)}")
        if self.kind in ("SIMPLE", "TIMESTAMP") and (len(self.record_key_fields) > 1
                                                    or len(self.partition_fields) > 1):
            raise InvalidConfig(f"a {self.kind} key generator takes one record key field and one "
                                "partition field",
                                hint="use COMPLEX (or CUSTOM) for several fields")
        if self.kind == "CUSTOM" and len(self.partition_kinds) != len(self.partition_fields):
            raise InvalidConfig("a CUSTOM key generator needs a type for every partition field",
                                hint="write the partition fields as field:SIMPLE or field:TIMESTAMP")
        if any(k not in ("SIMPLE", "TIMESTAMP") for k in self.partition_kinds):
            raise InvalidConfig(f"partition field types {self.partition_kinds} must be SIMPLE or TIMESTAMP")
        if self.timestamp is None and (self.kind == "TIMESTAMP" or "TIMESTAMP" in self.partition_kinds):
            raise InvalidConfig("a timestamp partition field needs its hoodie.keygen.timebased.* settings")

    def _text(self, value: Any) -> str | None:
        return None if value is None else java_string(value, self.consistent_logical_timestamp)

    # --8<-- [start:record_key]
    def record_key(self, record: Mapping[str, Any]) -> str:
        """The record key. One field (SIMPLE, TIMESTAMP; NON_PARTITION and CUSTOM with one field):
        its value, which may not be null or empty. Several fields (or COMPLEX, GLOBAL_DELETE):
        ``f:v`` joined by ``,`` with ``__null__``/``__empty__``, not all of them null or empty."""
        fields = self.record_key_fields
        if not fields:
            raise InvalidConfig("no record key field is configured",
                                hint="set hoodie.datasource.write.recordkey.field")
        single = len(fields) == 1 and (self.kind not in ("COMPLEX", "GLOBAL_DELETE")
                                       or (self.kind == "COMPLEX" and not self.encode_single_key_field_name))
        if single:
            found, value = _field_value(record, fields[0])
            text = self._text(value)
            if not text:
                raise InvalidRecord(f"record key field {fields[0]!r} is "
                                    f"{'missing' if not found else 'null' if value is None else 'empty'}",
                                    hint="every record needs a key")
            return text
        parts = []
        for f in fields:
            found, value = _field_value(record, f)
            if not found:
                raise InvalidRecord(f"record key field {f!r} does not exist in the record")
            text = self._text(value)
            parts.append(f"{f}:{NULL_KEY if text is None else text or EMPTY_KEY}")
        if all(p.endswith((":" + NULL_KEY, ":" + EMPTY_KEY)) for p in parts):
            raise InvalidRecord(f"every record key field ({', '.join(fields)}) is null or empty",
                                hint="every record needs a key")
        return ",".join(parts)
    # --8<-- [end:record_key]

    # --8<-- [start:partition_path]
    def partition_path(self, record: Mapping[str, Any]) -> str:
        """The partition path: per partition field its text (``__HIVE_DEFAULT_PARTITION__`` when
        null or empty), URL-escaped when configured, ``field=`` before it when hive-style, each
        folder checked by ``check_partition_value`` (and the first not ``.hoodie``); joined by ``/``."""
        if self.kind in ("NON_PARTITION", "GLOBAL_DELETE") or not self.partition_fields:
            return ""
        segments = []
        for i, f in enumerate(self.partition_fields):
            kind = self.partition_kinds[i] if self.kind == "CUSTOM" else self.kind
            _, value = _field_value(record, f)
            if kind == "TIMESTAMP":
                assert self.timestamp is not None
                text = self.timestamp.format(value, self.consistent_logical_timestamp)
            else:
                text = self._text(value) or DEFAULT_PARTITION
            if self.url_encode:
                text = escape_path_name(text)
            folder = f"{f}={text}" if self.hive_style else text
            check_partition_value(folder, f, may_contain_slash=kind == "TIMESTAMP")
            segments.append(folder)
        if segments[0] == ".hoodie":
            check_partition_path(segments[0], (self.partition_fields[0],))
        return "/".join(segments)
    # --8<-- [end:partition_path]


def _bool(props: Mapping[str, str], key: str) -> bool:
    return props.get(key, "false").strip().lower() == "true"


# --8<-- [start:from_config]
def key_generator_from_config(props: Mapping[str, str]) -> KeyGenerator:
    """The key generator a table's config (``hoodie.table.*``) or write options
    (``hoodie.datasource.write.*``) name: a v6 class, else a v8 type, else inferred as Hudi
    does (no partition field: NON_PARTITION; ``field:type``: CUSTOM; one partition field and one
    key field: SIMPLE; otherwise COMPLEX)."""
    klass = (props.get("hoodie.table.keygenerator.class")
             or props.get("hoodie.datasource.write.keygenerator.class"))
    kind = (props.get("hoodie.table.keygenerator.type")
            or props.get("hoodie.datasource.write.keygenerator.type"))
    if klass:
        if klass not in KEYGEN_TYPES_BY_CLASS:
            raise InvalidConfig(f"key generator class {klass} is not specified here",
                                hint="use one of Simple, Complex, Nonpartitioned, TimestampBased, Custom or "
                                     "GlobalDelete KeyGenerator (org.apache.hudi.keygen)")
        kind = KEYGEN_TYPES_BY_CLASS[klass]
    keys = tuple(f.strip() for f in (props.get("hoodie.table.recordkey.fields")
                                     or props.get("hoodie.datasource.write.recordkey.field") or "").split(",")
                 if f.strip())
    raw_parts = [f.strip() for f in (props.get("hoodie.table.partition.fields")
                                     or props.get("hoodie.datasource.write.partitionpath.field")
                                     or "").split(",") if f.strip()]
    if not kind:
        kind = ("NON_PARTITION" if not raw_parts else "CUSTOM" if ":" in raw_parts[0]
                else "SIMPLE" if len(raw_parts) == 1 and len(keys) <= 1 else "COMPLEX")
    kind = kind.upper().removesuffix("_AVRO")
    parts = tuple(p.split(":")[0] for p in raw_parts)
    kinds = tuple(p.split(":")[1].upper() for p in raw_parts if ":" in p)
    needs_time = kind == "TIMESTAMP" or (kind == "CUSTOM" and "TIMESTAMP" in kinds)
    return KeyGenerator(
        kind, keys, parts,
        hive_style=_bool(props, "hoodie.datasource.write.hive_style_partitioning"),
        url_encode=_bool(props, "hoodie.datasource.write.partitionpath.urlencode"),
        timestamp=timestamp_config_from_props(props) if needs_time else None,
        partition_kinds=kinds if kind == "CUSTOM" else (),
        consistent_logical_timestamp=_bool(
            props, "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"),
        encode_single_key_field_name=not _bool(props, "hoodie.write.complex.keygen.new.encoding"))
# --8<-- [end:from_config]


def check_record_keys(keys: Iterable[str | None], key_fields: tuple[str, ...]) -> None:
    """Raise InvalidRecord when a record key is null or empty (``KeyGenUtils.getRecordKey``: every
    record needs a key). Both write engines apply it to every key of a batch before anything is written."""
    if any(k is None or k == "" for k in keys):
        raise InvalidRecord(f"a record has a null or empty record key ({', '.join(key_fields)})",
                            hint="every record needs a key; filter or fill those records first")


def writes_complex_keys(key_fields: tuple[str, ...], keygen_type: str | None, keygen_class: str | None) -> bool:
    """Whether the write engines build ``f1:v1,f2:v2`` record keys (nulls ``__null__``, empties
    ``__empty__``) rather than a field's bare value: several key fields, or a complex key generator
    named by type or class."""
    return len(key_fields) > 1 or (keygen_type or "").upper() == "COMPLEX" or "Complex" in (keygen_class or "")
