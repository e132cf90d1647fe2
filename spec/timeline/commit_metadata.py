"""Commit metadata: what a commit, deltacommit, replacecommit or compaction wrote.

The completed (and inflight) file of a data-writing instant holds ``HoodieCommitMetadata``: per
partition, one write stat per file written; the operation type; whether it was a compaction;
and extra metadata, whose ``schema`` entry is the writer's Avro schema without meta fields.
A replacecommit's completed file is ``HoodieReplaceCommitMetadata``, which adds
``partitionToReplaceFileIds``: the file groups it logically deletes.

Serialization differs by table version, side by side below:

- v6: JSON as Jackson writes Hudi's Java objects (default pretty printer: 2-space indent,
  ``"key" : value``). A base-file stat is a ``HoodieWriteStat``; a log-file stat is a
  ``HoodieDeltaWriteStat``, which adds ``logVersion, logOffset, baseFile, logFiles,
  recordsStats``. Unknown fields are ignored on read; an empty file is empty metadata.
- v8: an Avro object container with one record (``spec.timeline.avro_container``); the Avro write stat
  merges both Java classes and adds ``totalLogFiles, prevBaseFile, totalLogReadTimeMs,
  numUpdates``. The two maps are never written null (newer Java readers fail on a null
  ``partitionToWriteStats``).

Java reads v8 Avro by converting it to JSON and binding it to the same Java objects, so a null
counter reads as 0 (the counters are Java primitives); that is the rule here too.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieCommitMetadata``,
``HoodieReplaceCommitMetadata``, ``HoodieWriteStat`` and ``HoodieDeltaWriteStat``
(``org.apache.hudi.common.model``); v8: ``CommitMetadataSerDeV2``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from spec.errors import MetadataFormatError
from spec.timeline.avro_container import AVRO_MAGIC, read_container, write_container
from spec.timeline.avro_schemas import commit_metadata_schema, replace_commit_metadata_schema

__all__ = [
    "AVRO_MAGIC", "NULL_COMMIT", "UNKNOWN_OPERATION", "CommitMetadata", "RuntimeStats", "WriteStat",
    "format_commit_metadata", "parse_commit_metadata", "write_stat",
]


UNKNOWN_OPERATION = "UNKNOWN"
"""``operationType`` of metadata that names none: ``WriteOperationType.UNKNOWN`` (``spec.config.write_operation``,
whose enum a reader of commit metadata does not load)."""


# --8<-- [start:null_commit]
NULL_COMMIT = "null"
"""``prevCommit`` of a stat that starts a new file group: the string ``"null"``."""
# --8<-- [end:null_commit]


# --8<-- [start:write_stat]
@dataclass(frozen=True)
class RuntimeStats:
    """``runtimeStats``: milliseconds spent scanning logs, merging and creating files."""

    total_scan_time: int = 0
    total_upsert_time: int = 0
    total_create_time: int = 0


@dataclass(frozen=True)
class WriteStat:
    """One file an instant wrote (``HoodieWriteStat``, ``HoodieDeltaWriteStat`` for log files).

    Attributes are Hudi's field names in snake_case (``STAT_FIELDS`` maps them). Counters are
    Java primitives: never null, 0 by default. A stat is a delta (log) stat when ``log_version``
    is set. ``num_updates_v8`` is the v8-only Avro field ``numUpdates`` (``num_updates`` is the
    long-standing alias of ``num_update_writes``).
    """

    file_id: str | None = None
    path: str | None = None
    prev_commit: str | None = None
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    partition_path: str | None = None
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    file_size_in_bytes: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: RuntimeStats | None = None
    temp_path: str | None = None
    cdc_stats: Mapping[str, int] | None = None
    # HoodieDeltaWriteStat (log files)
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: tuple[str, ...] | None = None
    records_stats: Mapping[str, Any] | None = None  # v6 JSON only: Option<column ranges>
    # v8 Avro only
    total_log_files: int | None = None
    prev_base_file: str | None = None
    total_log_read_time_ms: int = 0
    num_updates_v8: int = 0

    @property
    def is_delta(self) -> bool:
        """True for a log-file stat (``HoodieDeltaWriteStat``)."""
        return self.log_version is not None

    @property
    def is_log(self) -> bool:
        """Whether the stat is of a log file (a delta write), as opposed to a base file."""
        return self.is_delta

    @property
    def num_updates(self) -> int:
        """Records updated (``numUpdateWrites``)."""
        return self.num_update_writes

    @property
    def file_size(self) -> int:
        """The written file's size in bytes (``fileSizeInBytes``)."""
        return self.file_size_in_bytes

    def get(self, hudi_name: str, default: Any = None) -> Any:
        """A field by Hudi's camelCase name (``default`` when null)."""
        attr = _ATTR_BY_NAME.get(hudi_name)
        value = getattr(self, attr) if attr else None
        return default if value is None else value


STAT_FIELDS: tuple[tuple[str, str], ...] = (
    ("file_id", "fileId"), ("path", "path"), ("prev_commit", "prevCommit"), ("num_writes", "numWrites"),
    ("num_deletes", "numDeletes"), ("num_update_writes", "numUpdateWrites"), ("num_inserts", "numInserts"),
    ("total_write_bytes", "totalWriteBytes"), ("total_write_errors", "totalWriteErrors"),
    ("partition_path", "partitionPath"), ("total_log_records", "totalLogRecords"),
    ("total_log_files_compacted", "totalLogFilesCompacted"),
    ("total_log_size_compacted", "totalLogSizeCompacted"),
    ("total_updated_records_compacted", "totalUpdatedRecordsCompacted"),
    ("total_log_blocks", "totalLogBlocks"),
    ("total_corrupt_log_block", "totalCorruptLogBlock"), ("total_rollback_blocks", "totalRollbackBlocks"),
    ("file_size_in_bytes", "fileSizeInBytes"), ("min_event_time", "minEventTime"),
    ("max_event_time", "maxEventTime"), ("runtime_stats", "runtimeStats"), ("temp_path", "tempPath"),
    ("cdc_stats", "cdcStats"), ("log_version", "logVersion"), ("log_offset", "logOffset"),
    ("base_file", "baseFile"), ("log_files", "logFiles"), ("records_stats", "recordsStats"),
    ("total_log_files", "totalLogFiles"), ("prev_base_file", "prevBaseFile"),
    ("total_log_read_time_ms", "totalLogReadTimeMs"), ("num_updates_v8", "numUpdates"),
)
"""WriteStat attribute → Hudi field name."""

V6_BASE_STAT_FIELDS: tuple[str, ...] = (
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
    "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords",
    "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
    "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime",
    "runtimeStats",
)
"""What Jackson writes for a v6 ``HoodieWriteStat``, in its order (nulls included)."""
V6_DELTA_STAT_EXTRA: tuple[str, ...] = ("logVersion", "logOffset", "baseFile", "logFiles", "recordsStats")
"""``HoodieDeltaWriteStat`` adds these after the base fields."""
V6_RUNTIME_ORDER = ("totalScanTime", "totalUpsertTime", "totalCreateTime")
AVRO_RUNTIME_ORDER = ("totalScanTime", "totalCreateTime", "totalUpsertTime")
# --8<-- [end:write_stat]

_ATTR_BY_NAME = {name: attr for attr, name in STAT_FIELDS}
_COUNTERS = frozenset(f.name for f in fields(WriteStat) if f.default == 0 and f.type == "int")
_RUNTIME_ATTRS = {"totalScanTime": "total_scan_time", "totalUpsertTime": "total_upsert_time",
                  "totalCreateTime": "total_create_time"}


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataFormatError(f"write stat field {what} is {value!r}, not an integer")
    return value


def _stat_from_mapping(obj: Mapping[str, Any]) -> WriteStat:
    """A write stat from its Hudi field names (JSON object or Avro record); unknown names are ignored."""
    if not isinstance(obj, Mapping):
        raise MetadataFormatError(f"a write stat must be an object, got {type(obj).__name__}")
    values: dict[str, Any] = {}
    for attr, name in STAT_FIELDS:
        v = obj.get(name)
        if attr in _COUNTERS:
            values[attr] = 0 if v is None else _int(v, name)
        elif v is None:
            values[attr] = None
        elif attr == "runtime_stats":
            if not isinstance(v, Mapping):
                raise MetadataFormatError(f"runtimeStats is {v!r}, not an object")
            values[attr] = RuntimeStats(**{a: 0 if v.get(n) is None else _int(v.get(n), n)
                                           for n, a in _RUNTIME_ATTRS.items()})
        elif attr == "log_files":
            values[attr] = tuple(str(x) for x in v)
        elif attr == "cdc_stats":
            values[attr] = {str(k): _int(x, "cdcStats") for k, x in v.items()}
        elif attr == "records_stats":
            values[attr] = None if v == {"val": None} else dict(v)
        elif attr in ("min_event_time", "max_event_time", "log_version", "log_offset", "total_log_files"):
            values[attr] = _int(v, name)
        else:
            values[attr] = str(v)
    return WriteStat(**values)


def write_stat(**values: Any) -> WriteStat:
    """A write stat from Hudi's camelCase names, as a writer fills one: ``prevCommit`` "null" and
    zero runtime stats unless given."""
    unknown = sorted(set(values) - set(_ATTR_BY_NAME))
    if unknown:
        raise MetadataFormatError(f"unknown write stat field(s): {', '.join(unknown)}",
                                  hint="use Hudi's camelCase names, e.g. numWrites")
    base: dict[str, Any] = {"prevCommit": NULL_COMMIT,
                            "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0}}
    return _stat_from_mapping({**base, **values})


# --8<-- [start:commit_metadata]
@dataclass(frozen=True)
class CommitMetadata:
    """HoodieCommitMetadata; HoodieReplaceCommitMetadata when ``partition_to_replace_file_ids`` is set.

    An empty file reads as ``CommitMetadata()``: no stats, not compacted, operation UNKNOWN
    (the defaults of Hudi's Java object).
    """

    partition_to_write_stats: Mapping[str, tuple[WriteStat, ...]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    operation_type: str | None = UNKNOWN_OPERATION
    partition_to_replace_file_ids: Mapping[str, tuple[str, ...]] | None = None
    version: int | None = None  # Avro only; Java writes null

    @property
    def schema(self) -> str | None:
        """The writer's Avro schema (``extraMetadata["schema"]``, without meta fields), if recorded."""
        return self.extra_metadata.get("schema") or None

    @property
    def is_replace(self) -> bool:
        """Whether this is replacecommit metadata (it names the file groups it replaced)."""
        return self.partition_to_replace_file_ids is not None

    def all_write_stats(self) -> Iterator[WriteStat]:
        """Every write stat, partition by partition in the metadata's order."""
        for stats in self.partition_to_write_stats.values():
            yield from stats

    def file_ids_written(self) -> set[tuple[str, str]]:
        """(partition path, file id) of every file group this instant wrote to."""
        return {(p, s.file_id) for p, stats in self.partition_to_write_stats.items() for s in stats
                if s.file_id}

    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition path, file id) of every file group this replacecommit replaced."""
        return {(p, f) for p, ids in (self.partition_to_replace_file_ids or {}).items() for f in ids}
# --8<-- [end:commit_metadata]


# --- parsing ---------------------------------------------------------------------------------------


def _string_map(obj: Any, what: str) -> dict[str, str]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise MetadataFormatError(f"{what} must be a map of strings, got {type(obj).__name__}")
    return {str(k): "" if v is None else str(v) for k, v in obj.items()}


def commit_metadata_from_mapping(obj: Mapping[str, Any]) -> CommitMetadata:
    """Commit metadata from its Hudi field names (a JSON object or a decoded Avro record)."""
    stats_obj = obj.get("partitionToWriteStats") or {}
    if not isinstance(stats_obj, Mapping):
        raise MetadataFormatError("partitionToWriteStats must be a map of partition → write stats")
    stats = {str(p): tuple(_stat_from_mapping(s) for s in (lst or []))
             for p, lst in stats_obj.items() if p is not None}
    replace = obj.get("partitionToReplaceFileIds")
    op = obj.get("operationType")
    version = obj.get("version")
    return CommitMetadata(
        partition_to_write_stats=stats,
        compacted=bool(obj.get("compacted") or False),
        extra_metadata=_string_map(obj.get("extraMetadata"), "extraMetadata"),
        operation_type=None if op is None else str(op),
        partition_to_replace_file_ids=None if replace is None else {
            str(p): tuple(str(f) for f in (ids or ())) for p, ids in replace.items()},
        version=None if version is None else _int(version, "version"),
    )


# --8<-- [start:parse]
def parse_commit_metadata(data: bytes) -> CommitMetadata:
    """Commit metadata from a timeline file: an Avro container (v8), JSON (v6), or empty (= empty
    metadata)."""
    if not data.strip():
        return CommitMetadata()
    if data.startswith(AVRO_MAGIC):
        return commit_metadata_from_mapping(read_container(data).record)
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise MetadataFormatError(f"commit metadata is neither Avro nor JSON: {err}",
                                  hint="the instant file is damaged; roll the instant back") from err
    if not isinstance(obj, dict):
        raise MetadataFormatError("commit metadata JSON is not an object")
    return commit_metadata_from_mapping(obj)
# --8<-- [end:parse]


# --- v6: JSON ----------------------------------------------------------------------------------------

# --8<-- [start:v6_json]
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def jackson_string(s: str) -> str:
    """A JSON string as Jackson writes it: UTF-8 as is; only ``"``, ``\\`` and control characters
    escaped (``\\n``-style where JSON has a short form, else ``\\u00XX`` in upper-case hex)."""
    out = ['"']
    for ch in s:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jackson_pretty(value: Any, indent: int = 0) -> str:
    """Jackson's default pretty printer: 2-space indent, ``"key" : value``, ``[ a, b ]`` arrays,
    ``{ }`` and ``[ ]`` when empty."""
    pad = "  " * indent
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        items = [f"{pad}  {jackson_string(str(k))} : {jackson_pretty(v, indent + 1)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, indent) for v in value) + " ]"
    if isinstance(value, str):
        return jackson_string(value)
    return json.dumps(value)


def _runtime(rs: RuntimeStats | None, order: tuple[str, ...]) -> dict[str, int] | None:
    return None if rs is None else {n: getattr(rs, _RUNTIME_ATTRS[n]) for n in order}


def _hudi_value(stat: WriteStat, name: str, runtime_order: tuple[str, ...]) -> Any:
    value = getattr(stat, _ATTR_BY_NAME[name])
    if name == "runtimeStats":
        return _runtime(value, runtime_order)
    if name == "logFiles" and value is not None:
        return list(value)
    if name == "cdcStats" and value is not None:
        return dict(value)
    return value


def _v6_stat(stat: WriteStat) -> dict[str, Any]:
    names = V6_BASE_STAT_FIELDS + (V6_DELTA_STAT_EXTRA if stat.is_delta else ())
    out = {n: _hudi_value(stat, n, V6_RUNTIME_ORDER) for n in names}
    if stat.is_delta:
        out["logFiles"] = out["logFiles"] or []
        out["recordsStats"] = dict(stat.records_stats) if stat.records_stats is not None else {"val": None}
    return out


def _replaced(md: CommitMetadata) -> dict[str, list[str]]:
    return {p: list(v) for p, v in (md.partition_to_replace_file_ids or {}).items()}


def _v6_document(md: CommitMetadata, replace: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "partitionToWriteStats": {p: [_v6_stat(s) for s in stats]
                                  for p, stats in md.partition_to_write_stats.items()},
        "compacted": md.compacted,
        "extraMetadata": dict(md.extra_metadata),
        "operationType": md.operation_type,
    }
    if replace:
        doc["partitionToReplaceFileIds"] = _replaced(md)
    return doc
# --8<-- [end:v6_json]


# --- v8: Avro ------------------------------------------------------------------------------------------

# --8<-- [start:v8_avro]
AVRO_STAT_FIELDS: tuple[str, ...] = tuple(
    f["name"] for f in commit_metadata_schema()["fields"][0]["type"][1]["values"]["items"]["fields"])
"""The Avro HoodieWriteStat's fields, in schema order."""


def _avro_record(md: CommitMetadata, replace: bool) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "partitionToWriteStats": {p: [{n: _hudi_value(s, n, AVRO_RUNTIME_ORDER) for n in AVRO_STAT_FIELDS}
                                      for s in stats] for p, stats in md.partition_to_write_stats.items()},
        "compacted": md.compacted,
        "extraMetadata": dict(md.extra_metadata),
        "version": md.version,
        "operationType": md.operation_type,
    }
    if replace:
        rec["partitionToReplaceFileIds"] = _replaced(md)
    return rec
# --8<-- [end:v8_avro]


# --8<-- [start:format]
def format_commit_metadata(md: CommitMetadata, table_version: int, replace: bool | None = None,
                           sync_marker: bytes | None = None) -> bytes:
    """The bytes of a commit-family timeline file: Jackson JSON for v6, an Avro container for v8.

    ``replace`` selects HoodieReplaceCommitMetadata (default: when the metadata names replaced
    file groups). ``sync_marker`` fixes the Avro container's marker (default: derived from content).
    """
    is_replace = md.is_replace if replace is None else replace
    if table_version < 8:
        return jackson_pretty(_v6_document(md, is_replace)).encode("utf-8")
    schema = replace_commit_metadata_schema() if is_replace else commit_metadata_schema()
    return write_container(schema, _avro_record(md, is_replace), sync_marker)
# --8<-- [end:format]
