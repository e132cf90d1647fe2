"""The CDC logger: the change-data-capture log a merge handle writes beside the base file it rewrites, on a table
with ``hoodie.table.cdc.enabled=true`` (the read side is ``spec.read.cdc``).

- **Which handles** — a merge handle (an existing file group's base file rewritten: copy-on-write upserts, deletes,
  updates and inserts routed to a small file; on merge-on-read, inserts and updates merged into a small file, and a
  compaction against the slice's old base file) logs every change it makes: an incoming record that wins over the
  stored row is an update (``u``), one that removes it a delete (``d``), a record no stored row held an insert
  (``i``). A stale update (the stored row wins) is no change. A create handle (a new file group) logs nothing; the
  CDC query infers its inserts from the base file. An insert into a small file with
  ``hoodie.merge.allow.duplicate.on.inserts`` on goes through Hudi's concat handle, which logs nothing either
  (``HoodieMergeHandleFactory``: the concat handle is chosen before the change-logging one).
- **One file, one block** — the log is ``.<file id>_<instant>.log.1_<write token>.cdc`` beside the new base file
  ``<file id>_<write token>_<instant>.parquet`` (the same instant and write token, on table versions 6, 8 and 9:
  Apache Hudi 1.2.0 measured), with one CDC data block (type 6, log format version 1) even when it holds no record
  (every update stale); header ``INSTANT_TIME`` then ``SCHEMA``, no footer. Its content is laid out as an Avro data
  block's. The write stat names it in ``cdcStats`` ({path relative to the table: file size}).
- **Schema** (``HoodieCDCUtils.schemaBySupplementalLoggingMode``) — ``OP_KEY_ONLY``: record ``Record``, fields
  ``op`` and ``record_key`` of type ``["string","null"]``; ``DATA_BEFORE``: record ``CDC`` in the table schema's
  namespace, fields ``op``, ``record_key``, ``before``; ``DATA_BEFORE_AFTER``: ``op``, ``ts_ms``, ``before``,
  ``after``. In the last two every field is nullable (``["null", ...]``) with doc ``""`` and default null; the
  images are the table's record without the five meta fields, ``after`` naming it by reference.
- **Records** (``HoodieCDCLogger``) — ``DATA_BEFORE_AFTER``: op, ts_ms (the write's instant), the stored row's data
  columns as ``before`` (none for an insert) and the written row's as ``after`` (none for a delete);
  ``DATA_BEFORE``: op, record key, before; ``OP_KEY_ONLY``: op, record key.
- **Order** — the logger keeps the records in a ``java.util.HashMap`` keyed by record key (its
  ``ExternalSpillableMap``'s memory part) and writes them in that map's iteration order: by bucket
  (``(h ^ (h >>> 16)) & (capacity - 1)`` of the key's ``String.hashCode``; the capacity 16, doubled while the
  records exceed three quarters of it), in put order within a bucket. The merge handle puts the updates and
  deletes in the stored file's order, then the inserts. (A bucket of eight keys or more in a table of 64 buckets
  or more becomes a tree, whose order this rule does not follow: the same records, in another order.)

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x; 1.2.0 measured): ``HoodieCDCLogger``, ``HoodieCDCUtils``,
``HoodieCDCDataBlock``, ``HoodieCDCSupplementalLoggingMode``, ``HoodieMergeHandleWithChangeLog``,
``HoodieMergeHandleFactory``, ``java.util.HashMap``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from spec.errors import InvalidOperation
from spec.file_group.file_naming import LogFileName
from spec.file_group.log_file.log_blocks import encode_avro_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock
from spec.metadata.index_keys import java_hash_map_order
from spec.read.cdc import DATA_BEFORE, DATA_BEFORE_AFTER, LOGGING_MODES, OP_KEY_ONLY
from spec.schema.table_schema import META_FIELDS

CDC_SUFFIX: Final = ".cdc"
OP_KEY_ONLY_SCHEMA: Final = ('{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
                             '{"name":"record_key","type":["string","null"]}]}')
"""``HoodieCDCUtils.CDC_SCHEMA_OP_AND_RECORDKEY_STRING``, as Avro prints it."""


@dataclass(frozen=True)
class Change:
    """One change a merge handle made: op (``i``, ``u``, ``d``), the record key, the stored row and the written row
    (data columns; None where there is none)."""

    op: str
    key: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


def _nullable(field: str, schema: Any) -> dict[str, Any]:
    return {"name": field, "type": ["null", schema], "doc": "", "default": None}


def cdc_schema_json(mode: str, table_schema_json: str) -> str:
    """The CDC log's schema (``HoodieCDCUtils.schemaBySupplementalLoggingMode``) for a table whose Avro schema (meta
    fields included or not) is ``table_schema_json``, printed as Avro's ``Schema.toString`` prints it."""
    if mode == OP_KEY_ONLY:
        return OP_KEY_ONLY_SCHEMA
    if mode not in LOGGING_MODES:
        raise InvalidOperation(f"{mode!r} is no supplemental logging mode", hint=f"one of {', '.join(LOGGING_MODES)}")
    table = json.loads(table_schema_json)
    namespace = table.get("namespace")
    image = {k: v for k, v in table.items() if k != "namespace"}  # printed inside CDC, of the same namespace
    image["fields"] = [f for f in table["fields"] if f["name"] not in META_FIELDS]
    fields = [_nullable("op", "string")]
    if mode == DATA_BEFORE_AFTER:
        fields += [_nullable("ts_ms", "string"), _nullable("before", image), _nullable("after", table["name"])]
    else:
        fields += [_nullable("record_key", "string"), _nullable("before", image)]
    record: dict[str, Any] = {"type": "record", "name": "CDC"}
    if namespace:
        record["namespace"] = namespace
    record.update({"doc": "", "fields": fields})
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def cdc_record(mode: str, instant: str, change: Change) -> dict[str, Any]:
    """The CDC log record of one change under ``mode`` (``HoodieCDCLogger``'s transformer)."""
    if mode == DATA_BEFORE_AFTER:
        return {"op": change.op, "ts_ms": instant, "before": change.before, "after": change.after}
    if mode == DATA_BEFORE:
        return {"op": change.op, "record_key": change.key, "before": change.before}
    return {"op": change.op, "record_key": change.key}


def cdc_log_name(file_id: str, instant: str, write_token: str) -> str:
    """The CDC log a merge handle writes beside its base file: ``.<file id>_<instant>.log.1_<write token>.cdc``."""
    return LogFileName(file_id, instant, 1, write_token, suffix=CDC_SUFFIX).format()


# --8<-- [start:block]
def cdc_data_block(mode: str, instant: str, table_schema_json: str, changes: Sequence[Change]) -> LogBlock:
    """The one CDC data block of a merge handle's log: header INSTANT_TIME, SCHEMA; the changes (one a key, in put
    order) as records, in ``java_hash_map_order``."""
    schema = cdc_schema_json(mode, table_schema_json)
    order = java_hash_map_order([c.key for c in changes])
    records = [cdc_record(mode, instant, changes[i]) for i in order]
    header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.SCHEMA), schema))
    return LogBlock(BlockType.CDC_DATA_BLOCK, header, encode_avro_records(records, schema))
# --8<-- [end:block]


__all__ = [
    "CDC_SUFFIX", "DATA_BEFORE", "DATA_BEFORE_AFTER", "LOGGING_MODES", "OP_KEY_ONLY", "Change", "cdc_data_block",
    "cdc_log_name", "cdc_record", "cdc_schema_json",
]
