"""The LSM timeline (table versions 8 and 9): where archived instants live, and how they are read back.

Archival moves completed instants off the active timeline into ``.hoodie/timeline/history``:

- **data files** ``<min instant>_<max instant>_<layer>.parquet``: one row per archived instant, a
  ``HoodieLSMTimelineInstant`` record written by parquet-avro — ``instantTime``, ``completionTime``,
  ``action`` (as completed: a compaction is a ``commit``), ``metadata`` (the completed file's bytes),
  ``plan`` (the requested plan of a clean, compaction or log compaction; of a replacecommit or
  clustering, its inflight file when not empty, else its requested file) and ``version`` 1. Archival
  writes layer-0 files; Hudi's timeline compaction merges ten files of a layer into one of the next;
- **manifest files** ``manifest_<N>``: snapshot ``N`` of the history, Jackson-pretty JSON
  ``{"files" : [ {"fileName" : …, "fileLen" : …}, … ]}`` naming every data file of the snapshot;
- **the version file** ``_version_``: the latest snapshot's ``N`` as text. A reader takes it (else the
  highest manifest number), reads that manifest and the data files it names — and no other file, so
  a data file or manifest a crashed archiver left half done is never read.

Each format has its parse/format pair here (``parse_lsm_file``/``format_lsm_file``,
``parse_manifest``/``format_manifest``, ``parse_version``/``format_version``,
``parse_lsm_file_name``/``LsmFileName.format``); ``read_completion_times`` gives
``spec.timeline.archived_completions`` the archived half of the completion-time lookup
(``Timeline.completion_time``).

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; 0.15.x, for table version 6, has no LSM timeline):
``LSMTimeline`` (file names, manifest and
version files, the reader workflow), ``HoodieLSMTimelineManifest``, ``LSMTimelineWriter``,
``ArchivedTimelineV2`` and ``ArchivedTimelineLoaderV2`` (reading), ``HoodieLSMTimelineInstant.avsc``,
``CompletionTimeQueryViewV2`` (completion times of archived instants, loaded on first use).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from spec.config.table_config import LAYOUT_V2
from spec.errors import InvalidName, MetadataFormatError
from spec.timeline.avro_schemas import NAMESPACE, schema_json
from spec.timeline.commit_metadata import jackson_pretty
from spec.timeline.instant import Action
from spec.timeline.layout import HISTORY_DIRS

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage

HISTORY_DIR = HISTORY_DIRS[LAYOUT_V2]
"""``HoodieTableMetaClient.getArchivePath`` of a table of version 8 or 9, relative to the base path."""
VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
INSTANT_VERSION = 1
"""``LSMTimeline.LSM_TIMELINE_INSTANT_VERSION_1``: the ``version`` every row carries."""

_FILE_NAME = re.compile(r"(\d+)_(\d+)_(\d)\.parquet", re.ASCII)
_MANIFEST_NAME = re.compile(r"manifest_(\d+)", re.ASCII)


# --8<-- [start:lsm_schema]
LSM_INSTANT_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieLSMTimelineInstant", "namespace": NAMESPACE, "fields": [
        {"name": "instantTime", "type": ["null", "string"], "default": None},
        {"name": "completionTime", "type": ["null", "string"], "default": None},
        {"name": "action", "type": ["null", "string"], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1}]}
"""One row of an LSM data file (``HoodieLSMTimelineInstant.avsc``)."""

ARROW_SCHEMA = pa.schema([pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()),
                          pa.field("action", pa.string()), pa.field("metadata", pa.binary()),
                          pa.field("plan", pa.binary()), pa.field("version", pa.int32(), nullable=False)])
"""The parquet columns parquet-avro writes for that record."""
# --8<-- [end:lsm_schema]


@dataclass(frozen=True)
class LsmInstant:
    """One archived instant: a ``HoodieLSMTimelineInstant`` row."""

    instant_time: str
    completion_time: str | None
    action: str
    metadata: bytes | None = None
    plan: bytes | None = None
    version: int = INSTANT_VERSION


@dataclass(frozen=True)
class LsmFileName:
    """``<min instant>_<max instant>_<layer>.parquet``: the instants a data file holds span min..max."""

    min_instant: str
    max_instant: str
    layer: int = 0

    def format(self) -> str:
        """The file name."""
        return f"{self.min_instant}_{self.max_instant}_{self.layer}.parquet"


def parse_lsm_file_name(name: str) -> LsmFileName:
    """The inverse of ``LsmFileName.format`` (``LSMTimeline.ARCHIVE_FILE_PATTERN``); InvalidName otherwise."""
    m = _FILE_NAME.fullmatch(name)
    if m is None:
        raise InvalidName(f"{name!r} is not an LSM timeline file name (<min>_<max>_<layer>.parquet)",
                          hint="only files a manifest names belong to the history")
    return LsmFileName(m.group(1), m.group(2), int(m.group(3)))


@dataclass(frozen=True)
class ManifestEntry:
    """A data file of a snapshot: its name and length (``HoodieLSMTimelineManifest.LSMFileEntry``)."""

    file_name: str
    file_len: int


# --8<-- [start:lsm_files]
def format_manifest(entries: Iterable[ManifestEntry]) -> bytes:
    """A manifest file: ``{"files" : [ {"fileName" : …, "fileLen" : …} ]}`` in Jackson's pretty print."""
    doc = {"files": [{"fileName": e.file_name, "fileLen": e.file_len} for e in entries]}
    return jackson_pretty(doc).encode("utf-8")


def parse_manifest(data: bytes, path: str = MANIFEST_PREFIX) -> tuple[ManifestEntry, ...]:
    """The entries of a manifest file (the inverse of ``format_manifest``); MetadataFormatError when damaged."""
    try:
        doc = json.loads(data or b"{}")
    except ValueError as err:
        raise MetadataFormatError(f"{path} is not JSON: {err}", hint="the timeline history is damaged") from err
    files = doc.get("files", []) if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, dict) and isinstance(f.get("fileName"), str)
                                              for f in files):
        raise MetadataFormatError(f"{path} has no list of files", hint="the timeline history is damaged")
    return tuple(ManifestEntry(f["fileName"], int(f.get("fileLen") or 0)) for f in files)


def format_version(version: int) -> bytes:
    """The version file: the snapshot number as text."""
    return str(version).encode("utf-8")


def parse_version(data: bytes) -> int | None:
    """The snapshot number a version file holds; None when it holds none (a reader then lists manifests)."""
    text = data.decode("utf-8", "replace").strip()
    return int(text) if text.isdigit() else None


def format_lsm_file(rows: Sequence[LsmInstant]) -> bytes:
    """A data file as parquet-avro writes it: the rows in ``ARROW_SCHEMA`` and the footer keys
    ``parquet.avro.schema`` (``LSM_INSTANT_SCHEMA``) and ``writer.model.name`` ``avro``."""
    table = pa.Table.from_pylist([{"instantTime": r.instant_time, "completionTime": r.completion_time,
                                   "action": r.action, "metadata": r.metadata, "plan": r.plan,
                                   "version": r.version} for r in rows], schema=ARROW_SCHEMA)
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, ARROW_SCHEMA, store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({"parquet.avro.schema": schema_json(LSM_INSTANT_SCHEMA),
                                       "writer.model.name": "avro"})
    data: bytes = sink.getvalue().to_pybytes()
    return data


def parse_lsm_file(data: bytes) -> tuple[LsmInstant, ...]:
    """The rows of a data file (the inverse of ``format_lsm_file``); columns other than the record's are
    ignored, missing optional ones read as null."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as err:
        raise MetadataFormatError(f"an LSM timeline file is not parquet: {err}",
                                  hint="the timeline history is damaged") from err
    return tuple(_row(r) for r in table.to_pylist())
# --8<-- [end:lsm_files]


def _row(r: Mapping[str, Any]) -> LsmInstant:
    version = r.get("version")
    return LsmInstant(str(r.get("instantTime") or ""), r.get("completionTime"), str(r.get("action") or ""),
                      r.get("metadata"), r.get("plan"), INSTANT_VERSION if version is None else int(version))


# --8<-- [start:rows]
PLAN_FROM_REQUESTED = frozenset({Action.CLEAN, Action.COMPACTION, Action.LOG_COMPACTION})
"""Actions whose archived row carries their requested file as its ``plan``."""
PLAN_FROM_INFLIGHT_ELSE_REQUESTED = frozenset({Action.REPLACE_COMMIT, Action.CLUSTERING})
"""Actions whose archived row carries their inflight file as its ``plan`` (the requested one when empty)."""


def plan_bytes(pending_action: str | None, requested: bytes | None, inflight: bytes | None) -> bytes | None:
    """A row's ``plan`` from the pending files of an instant whose pending action is ``pending_action``
    (``LSMTimelineWriter``/``MetadataConversionUtils.createLSMTimelineInstant``): the requested plan of a clean,
    compaction or log compaction; of a replacecommit or clustering its inflight file when not empty, else its
    requested file; none for other actions."""
    if pending_action in PLAN_FROM_REQUESTED:
        return requested or None
    if pending_action in PLAN_FROM_INFLIGHT_ELSE_REQUESTED:
        return inflight or requested or None
    return None
# --8<-- [end:rows]


def new_file_name(requested_times: Sequence[str], layer: int = 0) -> LsmFileName:
    """The name of a new history file holding instants of ``requested_times``: after their first and last
    requested time (``LSMTimeline.getFileName``; Hudi's page says completion times, its code uses the instants'
    requested times); MetadataFormatError for none."""
    if not requested_times:
        raise MetadataFormatError("an LSM timeline file holds at least one instant", hint="archive some instants")
    return LsmFileName(min(requested_times), max(requested_times), layer)


# --- reading a table's history ------------------------------------------------------------------

def manifest_path(version: int) -> str:
    """The manifest of snapshot ``version``, relative to the base path."""
    return posixpath.join(HISTORY_DIR, f"{MANIFEST_PREFIX}{version}")


# --8<-- [start:lsm_read]
def latest_snapshot_version(storage: Storage) -> int:
    """``LSMTimeline.latestSnapshotVersion``: the version file's number, else the highest manifest number;
    -1 when the table has no history."""
    path = posixpath.join(HISTORY_DIR, VERSION_FILE)
    if storage.exists(path):
        version = parse_version(storage.read(path))
        if version is not None:
            return version
    versions = [int(m.group(1)) for f in storage.list(HISTORY_DIR) if (m := _MANIFEST_NAME.fullmatch(f.name))]
    return max(versions, default=-1)


def snapshot_manifest(storage: Storage, version: int) -> tuple[ManifestEntry, ...]:
    """The data files of snapshot ``version`` (none for -1)."""
    if version < 0:
        return ()
    path = manifest_path(version)
    return parse_manifest(storage.read(path), path)


def read_lsm_instants(storage: Storage) -> tuple[LsmInstant, ...]:
    """Every archived instant of the latest snapshot, by instant time."""
    rows: list[LsmInstant] = []
    for entry in snapshot_manifest(storage, latest_snapshot_version(storage)):
        rows.extend(parse_lsm_file(storage.read(posixpath.join(HISTORY_DIR, entry.file_name))))
    return tuple(sorted(rows, key=lambda r: r.instant_time))


def read_completion_times(storage: Storage) -> dict[str, str]:
    """Requested time → completion time of every archived instant (``CompletionTimeQueryViewV2.load``: an
    instant archived without a completion time completed at its requested time)."""
    out: dict[str, str] = {}
    for entry in snapshot_manifest(storage, latest_snapshot_version(storage)):
        table = storage.read_parquet(posixpath.join(HISTORY_DIR, entry.file_name), ["instantTime", "completionTime"])
        for t, done in zip(table.column("instantTime").to_pylist(), table.column("completionTime").to_pylist(),
                           strict=True):
            if t:
                out.setdefault(t, done or t)
    return out
# --8<-- [end:lsm_read]


__all__ = [
    "ARROW_SCHEMA", "HISTORY_DIR", "INSTANT_VERSION", "LSM_INSTANT_SCHEMA", "MANIFEST_PREFIX",
    "VERSION_FILE", "LsmFileName", "LsmInstant", "ManifestEntry", "format_lsm_file",
    "format_manifest", "format_version", "latest_snapshot_version", "manifest_path", "parse_lsm_file",
    "parse_lsm_file_name", "parse_manifest", "parse_version", "read_completion_times", "read_lsm_instants",
    "snapshot_manifest",
]
