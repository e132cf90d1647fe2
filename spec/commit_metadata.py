"""Commit metadata: what a completed commit, deltacommit or replacecommit wrote.

The completed instant file of a data-writing action holds ``HoodieCommitMetadata``: per
partition, a list of write stats (one per file written), the operation type, whether it was a
compaction, and extra metadata (``schema`` = the writer's Avro schema without meta fields).
A replacecommit adds ``partitionToReplaceFileIds``: the file groups it logically deletes.

Serialization differs by table version, side by side below:

- v6: JSON as Jackson writes it (2-space indent, ``"key" : value``); unknown fields are
  ignored on read, an empty file is empty metadata;
- v8: an Avro object container file with exactly one record, null codec, written with the
  record full names Hudi's readers resolve (``org.apache.hudi.avro.model.*``); the maps are
  never null (newer Java readers fail on a null ``partitionToWriteStats``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from spec.errors import MetadataFormatError

AVRO_MAGIC = b"Obj\x01"


class WriteOperationType(StrEnum):
    """``WriteOperationType`` names as they appear in ``operationType``."""

    INSERT = "INSERT"
    INSERT_PREPPED = "INSERT_PREPPED"
    UPSERT = "UPSERT"
    UPSERT_PREPPED = "UPSERT_PREPPED"
    BULK_INSERT = "BULK_INSERT"
    BULK_INSERT_PREPPED = "BULK_INSERT_PREPPED"
    DELETE = "DELETE"
    DELETE_PREPPED = "DELETE_PREPPED"
    BOOTSTRAP = "BOOTSTRAP"
    INSERT_OVERWRITE = "INSERT_OVERWRITE"
    CLUSTER = "CLUSTER"
    DELETE_PARTITION = "DELETE_PARTITION"
    INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
    COMPACT = "COMPACT"
    INDEX = "INDEX"
    ALTER_SCHEMA = "ALTER_SCHEMA"
    LOG_COMPACT = "LOG_COMPACT"
    UNKNOWN = "UNKNOWN"


# --8<-- [start:write_stat]
S, L, INT = "string", "long", "int"
WRITE_STAT_FIELDS: tuple[tuple[str, Any], ...] = (
    ("fileId", S), ("path", S), ("prevCommit", S), ("numWrites", L), ("numDeletes", L),
    ("numUpdateWrites", L), ("totalWriteBytes", L), ("totalWriteErrors", L), ("partitionPath", S),
    ("totalLogRecords", L), ("totalLogFiles", L), ("totalUpdatedRecordsCompacted", L), ("numInserts", L),
    ("totalLogBlocks", L), ("totalCorruptLogBlock", L), ("totalRollbackBlocks", L), ("fileSizeInBytes", L),
    ("logVersion", INT), ("logOffset", L), ("baseFile", S), ("logFiles", {"type": "array", "items": S}),
    ("cdcStats", {"type": "map", "values": L}), ("prevBaseFile", S), ("minEventTime", L), ("maxEventTime", L),
    ("runtimeStats", "HoodieRuntimeStats"), ("totalLogFilesCompacted", L), ("totalLogReadTimeMs", L),
    ("totalLogSizeCompacted", L), ("tempPath", S), ("numUpdates", L),
)
"""HoodieWriteStat fields in Hudi's order (all nullable, default null) — Appendix A of the format reference."""

V6_BASE_STAT_FIELDS = (
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
    "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords", "totalLogFilesCompacted",
    "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks", "totalCorruptLogBlock",
    "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime", "runtimeStats",
)
"""The fields Jackson writes for a v6 ``HoodieWriteStat`` (base file), in its order."""
V6_DELTA_STAT_EXTRA = ("logVersion", "logOffset", "baseFile", "logFiles", "recordsStats")
"""``HoodieDeltaWriteStat`` adds these (log files of a deltacommit)."""

NULL_COMMIT = "null"
"""``prevCommit`` of a new file group: the string ``"null"``."""


@dataclass(frozen=True)
class WriteStat:
    """One file written by an instant. ``values`` holds every field by Hudi's camelCase name."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a null field and an absent one mean the same: keep only the fields that have values
        object.__setattr__(self, "values", {k: v for k, v in self.values.items() if v is not None})

    def get(self, name: str, default: Any = None) -> Any:
        value = self.values.get(name)
        return default if value is None else value

    @property
    def file_id(self) -> str:
        return str(self.get("fileId", ""))

    @property
    def path(self) -> str:
        return str(self.get("path", ""))

    @property
    def partition_path(self) -> str:
        return str(self.get("partitionPath", ""))

    @property
    def prev_commit(self) -> str:
        return str(self.get("prevCommit", NULL_COMMIT))

    @property
    def num_writes(self) -> int:
        return int(self.get("numWrites", 0))

    @property
    def num_inserts(self) -> int:
        return int(self.get("numInserts", 0))

    @property
    def num_updates(self) -> int:
        return int(self.get("numUpdateWrites", 0))

    @property
    def num_deletes(self) -> int:
        return int(self.get("numDeletes", 0))

    @property
    def total_write_bytes(self) -> int:
        return int(self.get("totalWriteBytes", 0))

    @property
    def file_size(self) -> int:
        return int(self.get("fileSizeInBytes", 0))

    @property
    def is_log(self) -> bool:
        """True for the stat of a log file (a deltacommit's append)."""
        return self.path.rsplit("/", 1)[-1].startswith(".")

    @property
    def log_files(self) -> tuple[str, ...]:
        return tuple(self.get("logFiles", ()))


def write_stat(**values: Any) -> WriteStat:
    """A write stat from camelCase keyword values; counters default to 0 as Hudi writes them."""
    base = {"prevCommit": NULL_COMMIT, "numWrites": 0, "numDeletes": 0, "numUpdateWrites": 0, "numInserts": 0,
            "totalWriteBytes": 0, "totalWriteErrors": 0, "totalLogRecords": 0, "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": 0,
            "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0}}
    return WriteStat({**base, **values})
# --8<-- [end:write_stat]


@dataclass(frozen=True)
class CommitMetadata:
    """HoodieCommitMetadata, or HoodieReplaceCommitMetadata when ``partition_to_replace_file_ids`` is set."""

    partition_to_write_stats: Mapping[str, tuple[WriteStat, ...]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    operation_type: str | None = None
    partition_to_replace_file_ids: Mapping[str, tuple[str, ...]] | None = None

    @property
    def schema(self) -> str | None:
        """The writer's Avro schema (without meta fields), if the commit recorded one."""
        value = self.extra_metadata.get("schema")
        return value or None

    def all_write_stats(self) -> Iterator[WriteStat]:
        for stats in self.partition_to_write_stats.values():
            yield from stats

    def file_ids_written(self) -> set[tuple[str, str]]:
        """(partition path, file id) of every file group this instant wrote to."""
        return {(s.partition_path, s.file_id) for s in self.all_write_stats()}

    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition path, file id) of every file group this replacecommit replaced."""
        return {(p, f) for p, ids in (self.partition_to_replace_file_ids or {}).items() for f in ids}

    @property
    def is_replace(self) -> bool:
        return self.partition_to_replace_file_ids is not None


# --- parsing ---------------------------------------------------------------------------------


def _from_mapping(obj: Mapping[str, Any]) -> CommitMetadata:
    stats_obj = obj.get("partitionToWriteStats") or {}
    stats = {str(p): tuple(WriteStat({k: v for k, v in s.items()}) for s in (lst or [])) for p, lst in
             stats_obj.items() if p is not None}
    replace = obj.get("partitionToReplaceFileIds")
    return CommitMetadata(
        partition_to_write_stats=stats,
        compacted=bool(obj.get("compacted") or False),
        extra_metadata={str(k): str(v) for k, v in (obj.get("extraMetadata") or {}).items()},
        operation_type=obj.get("operationType"),
        partition_to_replace_file_ids=None if replace is None else {str(p): tuple(v or ()) for p, v in
                                                                    replace.items()},
    )


# --8<-- [start:parse]
def parse_commit_metadata(data: bytes) -> CommitMetadata:
    """Commit metadata from a timeline file: an Avro container (v8), JSON (v6), or empty (= empty metadata)."""
    if not data.strip():
        return CommitMetadata()
    if data.startswith(AVRO_MAGIC):
        import fastavro

        try:
            records = list(fastavro.reader(io.BytesIO(data)))
        except Exception as err:
            raise MetadataFormatError(f"commit metadata is not a readable Avro container: {err}") from err
        if len(records) != 1 or not isinstance(records[0], dict):
            raise MetadataFormatError(f"commit metadata container holds {len(records)} records, not 1")
        return _from_mapping(records[0])
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise MetadataFormatError(f"commit metadata is neither Avro nor JSON: {err}",
                                  hint="the instant file is damaged; roll the instant back") from err
    if not isinstance(obj, dict):
        raise MetadataFormatError("commit metadata JSON is not an object")
    return _from_mapping(obj)
# --8<-- [end:parse]


# --- v6: JSON ---------------------------------------------------------------------------------


def _jackson(value: Any, indent: int) -> str:
    """Jackson's default pretty printer: 2-space indent, ``"key" : value``, ``[ a, b ]`` arrays."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{ }"
        items = [f'{pad}  {json.dumps(k)} : {_jackson(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_jackson(v, indent) for v in value) + " ]"
    return json.dumps(value)


def _v6_stat(stat: WriteStat) -> dict[str, Any]:
    out = {k: stat.values.get(k) for k in V6_BASE_STAT_FIELDS}
    if stat.is_log:
        out.update({k: stat.values.get(k) for k in V6_DELTA_STAT_EXTRA})
        out["logFiles"] = list(stat.values.get("logFiles") or [])
        out["recordsStats"] = stat.values.get("recordsStats") or {"val": None}
    return out


def _v6_document(md: CommitMetadata) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "partitionToWriteStats": {p: [_v6_stat(s) for s in stats]
                                  for p, stats in md.partition_to_write_stats.items()},
        "compacted": md.compacted,
        "extraMetadata": dict(md.extra_metadata),
        "operationType": md.operation_type,
    }
    if md.partition_to_replace_file_ids is not None:
        doc["partitionToReplaceFileIds"] = {p: list(v) for p, v in md.partition_to_replace_file_ids.items()}
    return doc


# --- v8: Avro ---------------------------------------------------------------------------------

NAMESPACE = "org.apache.hudi.avro.model"


def _jstring() -> dict[str, str]:
    return {"type": "string", "avro.java.string": "String"}


def _avro_type(t: Any) -> Any:
    if t == "string":
        return _jstring()
    if isinstance(t, dict) and t.get("type") == "array":
        return {"type": "array", "items": _avro_type(t["items"])}
    if isinstance(t, dict) and t.get("type") == "map":
        return {"type": "map", "values": _avro_type(t["values"]), "avro.java.string": "String"}
    if t == "HoodieRuntimeStats":
        return {"type": "record", "name": "HoodieRuntimeStats", "fields": [
            {"name": n, "type": ["null", "long"], "default": None}
            for n in ("totalScanTime", "totalUpsertTime", "totalCreateTime")]}
    return t


# --8<-- [start:avro_schema]
def commit_metadata_avro_schema(replace: bool = False) -> dict[str, Any]:
    """The Avro schema of HoodieCommitMetadata (or HoodieReplaceCommitMetadata) as Hudi embeds it."""
    stat = {"type": "record", "name": "HoodieWriteStat", "fields": [
        {"name": n, "type": ["null", _avro_type(t)], "default": None} for n, t in WRITE_STAT_FIELDS]}
    fields: list[dict[str, Any]] = [
        {"name": "partitionToWriteStats", "type": ["null", {"type": "map", "values": {"type": "array", "items": stat},
                                                            "avro.java.string": "String"}], "default": None},
        {"name": "compacted", "type": ["null", "boolean"], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _jstring(),
                                                    "avro.java.string": "String"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", _jstring()], "default": None},
    ]
    if replace:
        fields.append({"name": "partitionToReplaceFileIds", "type": ["null", {
            "type": "map", "values": {"type": "array", "items": _jstring()}, "avro.java.string": "String"}],
            "default": None})
    name = "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata"
    return {"type": "record", "name": name, "namespace": NAMESPACE, "fields": fields}
# --8<-- [end:avro_schema]


def _avro_stat(stat: WriteStat) -> dict[str, Any]:
    out = {n: stat.values.get(n) for n, _ in WRITE_STAT_FIELDS}
    rs = out.get("runtimeStats")
    if isinstance(rs, dict):
        out["runtimeStats"] = {k: rs.get(k) for k in ("totalScanTime", "totalUpsertTime", "totalCreateTime")}
    log_files = out.get("logFiles")
    if log_files is not None:
        out["logFiles"] = list(log_files)
    return out


def write_avro_container(schema: dict[str, Any], record: Mapping[str, Any], sync_marker: bytes | None = None) -> bytes:
    """One record in an Avro object container, null codec, no ``avro.codec`` key (as Java writes it)."""
    import fastavro

    parsed = fastavro.parse_schema(schema)
    buf = io.BytesIO()
    writer = (fastavro.write.Writer(buf, parsed, codec="null", sync_marker=sync_marker) if sync_marker
              else fastavro.write.Writer(buf, parsed, codec="null"))
    writer.metadata.pop("avro.codec", None)
    writer.write(dict(record))
    writer.flush()
    return buf.getvalue()


# --8<-- [start:format]
def format_commit_metadata(md: CommitMetadata, table_version: int) -> bytes:
    """The bytes of a completed (or inflight) commit file: JSON for v6, an Avro container for v8."""
    if table_version < 8:
        return _jackson(_v6_document(md), 0).encode("utf-8")
    record: dict[str, Any] = {
        "partitionToWriteStats": {p: [_avro_stat(s) for s in stats]
                                  for p, stats in md.partition_to_write_stats.items()},
        "compacted": md.compacted,
        "extraMetadata": dict(md.extra_metadata),
        "version": None,
        "operationType": md.operation_type,
    }
    if md.partition_to_replace_file_ids is not None:
        record["partitionToReplaceFileIds"] = {p: list(v) for p, v in md.partition_to_replace_file_ids.items()}
    return write_avro_container(commit_metadata_avro_schema(md.is_replace), record)
# --8<-- [end:format]
