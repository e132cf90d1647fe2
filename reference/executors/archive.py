"""Archival: moving old instants off the active timeline, and reading them back.

``spec.actions.archive.plan_archive`` chooses the instants (past ``hoodie.keep.max.commits`` completed
commits, down to ``hoodie.keep.min.commits``, never past a savepoint or a pending write). Here
they are moved:

- **table version 6** (layout 1): every timeline file of each chosen instant (requested, inflight,
  completed) becomes one ``HoodieArchivedMetaEntry`` record — ``commitTime``, ``actionType``,
  ``actionState`` and the file's content in the field its action and state call for — and the
  records go, ten to a block, into Avro data blocks (header: SCHEMA only) of the archived log
  ``.hoodie/archived/.commits_.archive.<N>_1-0-1``, appended to the newest one. Then the
  instant files are deleted from the active timeline: pending-state files first, completed last.
- **table version 8** (layout 2): the LSM timeline under ``.hoodie/timeline/history``. Each
  archived instant becomes one ``HoodieLSMTimelineInstant`` row — ``instantTime``,
  ``completionTime``, ``action`` (as completed), ``metadata`` (the completed file's bytes),
  ``plan`` (the requested plan of a clean, compaction or replacecommit/clustering; a non-empty
  inflight replacecommit overrides it) and ``version`` 1 — in a new level-0 parquet file
  ``<first instant>_<last instant>_0.parquet``; then ``manifest_<N+1>`` (Jackson-pretty JSON
  ``{"files": [{"fileName", "fileLen"}]}``: the previous manifest's files plus the new one) and
  ``_version_`` (``N+1``) make it visible; then the instant files are deleted, pending-state
  first. Hudi merges ten level-0 files into one level-1 file; that compaction of the history is
  not done here (readers take any number of files).

Data files are never touched by archival: a base file whose commit is archived stays visible,
being older than the active timeline's start. A replacecommit is archived only once the file
groups it replaced have been cleaned (``spec.actions.archive.hold_back_uncleaned_replaces``): its
record of them leaves the active timeline with it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from reference.lock import maybe_locked
from spec.actions.archive import ArchiveConfig, hold_back_uncleaned_replaces, plan_archive
from spec.actions.compaction import CompactionConfig
from spec.actions.file_refs import GroupId
from spec.config.table_config import LAYOUT_V1, TableConfig
from spec.errors import HudiSpecError
from spec.file_group.file_naming import (
    ROLLBACK_WRITE_TOKEN,
    LogFileName,
    is_log_file_name,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.file_group.file_system_view import list_data_files
from spec.file_group.log_file.log_blocks import decode_avro_records, encode_avro_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock, encode_blocks, read_blocks
from spec.storage.hoodie_storage import Storage
from spec.timeline import lsm_timeline as lsm
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import parse_avro_metadata
from spec.timeline.avro_model_codec import to_avro
from spec.timeline.avro_schemas import NAMESPACE, read_container, schema_for, schema_json
from spec.timeline.commit_metadata import format_commit_metadata, parse_commit_metadata
from spec.timeline.instant import Action, Instant, State, format_instant_time
from spec.timeline.layout import (
    HISTORY_DIRS,
    format_instant_file_name,
    parse_instant_file_name,
    read_instant_content,
    timeline_dir,
)

ARCHIVE_FILE_ID = "commits"
"""The archived log is ``.commits_.archive.<N>_1-0-1``: file id ``commits``, an empty instant."""

ARCHIVE_EXTENSION = "archive"
ARCHIVE_BATCH = 10
"""``hoodie.commits.archival.batch``: records per data block."""

Schema = dict[str, Any]


# --8<-- [start:entry_schema]
def _compaction_metadata_schema() -> Schema:
    """HoodieCompactionMetadata (deprecated, never filled, still part of the entry's schema)."""
    def opt(name: str, t: Any) -> Schema:
        return {"name": name, "type": ["null", t]}

    stat = {"name": "HoodieCompactionWriteStat", "type": "record", "fields": [
        opt("partitionPath", "string"), opt("totalLogRecords", "long"), opt("totalLogFiles", "long"),
        opt("totalUpdatedRecordsCompacted", "long"), opt("hoodieWriteStat", "HoodieWriteStat")]}
    return {"namespace": NAMESPACE, "type": "record", "name": "HoodieCompactionMetadata", "fields": [
        {"name": "partitionToCompactionWriteStats",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": stat}}]}]}


ENTRY_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("hoodieCommitMetadata", "HoodieCommitMetadata"),
    ("hoodieCleanMetadata", "HoodieCleanMetadata"),
    ("hoodieCompactionMetadata", "HoodieCompactionMetadata"),
    ("hoodieRollbackMetadata", "HoodieRollbackMetadata"),
    ("hoodieSavePointMetadata", "HoodieSavepointMetadata"),
    ("commitTime", None),
    ("actionType", None),
    ("version", None),
    ("hoodieCompactionPlan", "HoodieCompactionPlan"),
    ("hoodieCleanerPlan", "HoodieCleanerPlan"),
    ("actionState", None),
    ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
    ("hoodieRequestedReplaceMetadata", "HoodieRequestedReplaceMetadata"),
    ("HoodieInflightReplaceMetadata", "HoodieCommitMetadata"),
    ("hoodieIndexCommitMetadata", "HoodieIndexCommitMetadata"),
    ("stateTransitionTime", None),
)
"""HoodieArchivedMetaEntry's fields in order (Hudi 0.14/0.15), with the record each optional
metadata field holds (an inflight replacecommit's commit metadata goes to HoodieInflightReplaceMetadata)."""


def archived_entry_schema(table_version: int) -> Schema:
    """The HoodieArchivedMetaEntry schema: every field a union with null (default null) except
    ``version`` (``["int","null"]``, default 1); each named type is defined once, at first use."""
    fields: list[Schema] = []
    for name, record in ENTRY_FIELDS:
        if record is None:
            t: Any = ["int", "null"] if name == "version" else ["null", "string"]
            fields.append({"name": name, "type": t, "default": 1 if name == "version" else None})
            continue
        body = _compaction_metadata_schema() if record == "HoodieCompactionMetadata" else \
            schema_for(record, table_version)
        fields.append({"name": name, "type": ["null", body], "default": None})
    schema: Schema = {"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": NAMESPACE, "fields": fields}
    defined: Schema = _define_once(schema, NAMESPACE, set())
    return defined
# --8<-- [end:entry_schema]


def _define_once(node: Any, namespace: str, seen: set[str]) -> Any:
    """The schema with every repeated definition of a named type replaced by its full name."""
    if isinstance(node, list):
        return [_define_once(x, namespace, seen) for x in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("record", "enum", "fixed") and "name" in node:
        ns = node.get("namespace", namespace)
        full = node["name"] if "." in node["name"] else f"{ns}.{node['name']}"
        if full in seen:
            return full
        seen.add(full)
        out = dict(node)
        if kind == "record":
            out["fields"] = [{**f, "type": _define_once(f["type"], ns, seen)} for f in node["fields"]]
        return out
    return {k: (_define_once(v, namespace, seen) if k in ("type", "items", "values") else v)
            for k, v in node.items()}


# --- what each timeline file becomes ------------------------------------------------------------

def _content_field(inst: Instant) -> str | None:
    """The entry field holding a timeline file's content (None: the entry carries no content)."""
    a, s = inst.action, inst.state
    if a in (Action.COMMIT, Action.DELTA_COMMIT):
        return "hoodieCommitMetadata"
    if a == Action.REPLACE_COMMIT:
        return {State.REQUESTED: "hoodieRequestedReplaceMetadata", State.INFLIGHT: "HoodieInflightReplaceMetadata",
                State.COMPLETED: "hoodieReplaceCommitMetadata"}[s]
    if a == Action.CLEAN:
        return "hoodieCleanMetadata" if s == State.COMPLETED else "hoodieCleanerPlan"
    if a == Action.ROLLBACK and s == State.COMPLETED:
        return "hoodieRollbackMetadata"
    if a == Action.SAVEPOINT and s == State.COMPLETED:
        return "hoodieSavePointMetadata"
    if a == Action.COMPACTION:
        return "hoodieCompactionPlan"
    if a == Action.INDEXING and s == State.COMPLETED:
        return "hoodieIndexCommitMetadata"
    return None


def _avro_value(storage: Storage, table: TableConfig, name: str, inst: Instant, fld: str) -> Any:
    """The content of one timeline file as the entry field's Avro record (None when empty)."""
    folder = timeline_dir(table.timeline_layout)
    if inst.action == Action.COMPACTION:  # the plan lives in the requested file (inflight is empty)
        name = f"{inst.requested}.compaction.requested"
    data = storage.read(posixpath.join(folder, name))
    if not data.strip():
        return None
    if fld in ("hoodieCommitMetadata", "hoodieReplaceCommitMetadata", "HoodieInflightReplaceMetadata"):
        md = parse_commit_metadata(data)
        return read_container(format_commit_metadata(md, 8, replace=fld == "hoodieReplaceCommitMetadata")).record
    return to_avro(parse_avro_metadata(data))


def archived_entry(storage: Storage, table: TableConfig, name: str) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry record of one active-timeline file (``stateTransitionTime``: the
    file's modification time, as an instant time)."""
    inst = parse_instant_file_name(name, table.timeline_layout)
    entry: dict[str, Any] = {f: None for f, _ in ENTRY_FIELDS}
    rel = posixpath.join(timeline_dir(table.timeline_layout), name)
    mtime = storage.fs.get_file_info(storage.full(rel)).mtime
    entry.update(commitTime=inst.requested, actionType=inst.action, actionState=inst.state.value, version=1,
                 stateTransitionTime=format_instant_time(mtime) if mtime is not None else None)
    fld = _content_field(inst)
    if fld is not None:
        entry[fld] = _avro_value(storage, table, name, inst, fld)
    return entry


# --- archiving ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ArchiveResult:
    """The instants moved off the active timeline, and the archive file they went to."""

    archived: tuple[Instant, ...]
    archive_file: str | None = None
    records: int = 0


def archive_files(storage: Storage) -> list[str]:
    """The v6 archived logs, oldest version first (paths relative to the base path)."""
    folder = HISTORY_DIRS[LAYOUT_V1]
    names = [f.name for f in storage.list(folder) if not f.is_dir and is_log_file_name(f.name)
             and parse_log_file_name(f.name).extension == ARCHIVE_EXTENSION]
    return [posixpath.join(folder, n) for n in sorted(names, key=lambda n: parse_log_file_name(n).version)]


def archive(storage: Storage, table: TableConfig, config: ArchiveConfig | None = None,
            compaction: CompactionConfig | None = None, *, locked: bool = False,
            retain: Collection[str] = ()) -> ArchiveResult:
    """Archive what ``plan_archive`` chooses (v6: the archived log; v8: the LSM history), holding back
    ``retain`` and what follows it. Nothing chosen: nothing written."""
    with maybe_locked(storage, locked, "archive"):
        timeline = Timeline.load(storage, table.timeline_layout)
        chosen = plan_archive(timeline, config or ArchiveConfig(), table.table_type, compaction or CompactionConfig(),
                              retain)
        chosen = hold_back_uncleaned_replaces(chosen, replaced_groups(storage, timeline, chosen), live_groups(storage))
        if not chosen:
            return ArchiveResult(())
        names = [n for inst in chosen for n in _files_in_state_order(timeline, inst)]
        if table.timeline_layout != LAYOUT_V1:
            target = _write_lsm(storage, timeline, chosen)
            _delete_instant_files(storage, table, names)
            return ArchiveResult(tuple(chosen), target, len(chosen))
        records = [archived_entry(storage, table, n) for n in names]
        schema_text = schema_json(archived_entry_schema(table.table_version))
        blocks = [LogBlock(BlockType.AVRO_DATA_BLOCK, ((int(HeaderKey.SCHEMA), schema_text),),
                           encode_avro_records(records[i:i + ARCHIVE_BATCH], schema_text))
                  for i in range(0, len(records), ARCHIVE_BATCH)]
        existing = archive_files(storage)
        data = encode_blocks(blocks)
        if existing and isinstance(storage.fs, pafs.LocalFileSystem):
            target = existing[-1]
            storage.append(target, data)
        else:
            version = parse_log_file_name(posixpath.basename(existing[-1])).version + 1 if existing else 1
            target = posixpath.join(HISTORY_DIRS[LAYOUT_V1], LogFileName(
                ARCHIVE_FILE_ID, "", version, ROLLBACK_WRITE_TOKEN, ARCHIVE_EXTENSION).format())
            storage.write_atomic(target, data)
        _delete_instant_files(storage, table, names)
        return ArchiveResult(tuple(chosen), target, len(records))


def replaced_groups(storage: Storage, timeline: Timeline, chosen: tuple[Instant, ...]) -> dict[str, frozenset[GroupId]]:
    """Per completed replacecommit among ``chosen``, the file groups its commit metadata says it replaced."""
    return {i.requested: frozenset(parse_commit_metadata(read_instant_content(storage, i, timeline.layout))
                                    .replaced_file_ids())
            for i in chosen if i.action == Action.REPLACE_COMMIT}


def live_groups(storage: Storage) -> frozenset[GroupId]:
    """The file groups that still have a data file on storage."""
    return frozenset((f.partition_path, _file_id(f.name)) for f in list_data_files(storage))


def _file_id(name: str) -> str:
    return parse_log_file_name(name).file_id if is_log_file_name(name) else parse_base_file_name(name).file_id


def _delete_instant_files(storage: Storage, table: TableConfig, names: list[str]) -> None:
    """Remove archived instants from the active timeline: pending-state files first, completed last,
    so a crash never leaves a completed instant without its earlier files being the only trace."""
    layout = table.timeline_layout
    folder = timeline_dir(layout)
    for n in sorted(names, key=lambda n: parse_instant_file_name(n, layout).is_completed):
        storage.delete(posixpath.join(folder, n))


# --8<-- [start:lsm]
LSM_VERSION_FILE = lsm.VERSION_FILE
LSM_MANIFEST_PREFIX = lsm.MANIFEST_PREFIX
LSM_INSTANT_SCHEMA: Schema = lsm.LSM_INSTANT_SCHEMA
"""One row of an LSM history file (HoodieLSMTimelineInstant): ``spec.timeline.lsm_timeline``."""


def lsm_row(storage: Storage, timeline: Timeline, inst: Instant) -> dict[str, Any]:
    """The HoodieLSMTimelineInstant of an archived (completed) instant."""
    folder = timeline_dir(timeline.layout)
    by_state = {parse_instant_file_name(n, timeline.layout): n for n in timeline.files_of(inst)}

    def data(state: State) -> tuple[str | None, bytes | None]:
        for i, n in by_state.items():
            if i.state == state:
                body = storage.read(posixpath.join(folder, n))
                return i.action, body or None
        return None, None

    _, metadata = data(State.COMPLETED)
    pending_action, requested = data(State.REQUESTED)
    plan = lsm.plan_bytes(pending_action, requested, data(State.INFLIGHT)[1])
    return {"instantTime": inst.requested, "completionTime": inst.completed, "action": inst.action,
            "metadata": metadata, "plan": plan, "version": lsm.INSTANT_VERSION}


def lsm_latest_version(storage: Storage) -> int:
    """The latest snapshot version: ``_version_``, else the highest ``manifest_<N>``; -1 when none."""
    folder = HISTORY_DIRS[2]
    path = posixpath.join(folder, LSM_VERSION_FILE)
    version_file = storage.read(path) if storage.exists(path) else None
    return lsm.latest_version(version_file, (f.name for f in storage.list(folder)))


def lsm_manifest(storage: Storage, version: int) -> list[dict[str, Any]]:
    """The file entries ``{"fileName", "fileLen"}`` of snapshot ``version`` (none for -1)."""
    if version < 0:
        return []
    path = posixpath.join(HISTORY_DIRS[2], lsm.manifest_name(version))
    return [{"fileName": e.file_name, "fileLen": e.file_len} for e in lsm.parse_manifest(storage.read(path))]


def _write_lsm(storage: Storage, timeline: Timeline, chosen: tuple[Instant, ...]) -> str:
    """Write the level-0 history file of ``chosen``, then the next manifest and ``_version_``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = HISTORY_DIRS[2]
    ordered = sorted(chosen, key=lambda i: i.requested)
    name = lsm.new_file([i.requested for i in ordered]).name
    rel = posixpath.join(folder, name)
    version = lsm_latest_version(storage)
    entries = lsm_manifest(storage, version)
    if any(e.get("fileName") == name for e in entries):
        return rel  # a crashed archival already committed this file: only the deletes are left
    rows = [lsm_row(storage, timeline, i) for i in ordered]
    schema = pa.schema([pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()),
                        pa.field("action", pa.string()), pa.field("metadata", pa.binary()),
                        pa.field("plan", pa.binary()), pa.field("version", pa.int32(), nullable=False)])
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema, store_schema=False) as writer:  # the footer parquet-avro writes
        writer.write_table(pa.Table.from_pylist(rows, schema=schema))
        writer.add_key_value_metadata({"parquet.avro.schema": schema_json(LSM_INSTANT_SCHEMA),
                                       "writer.model.name": "avro"})
    storage.write_atomic(rel, sink.getvalue().to_pybytes())
    entries.append({"fileName": name, "fileLen": storage.size(rel)})
    new_version = lsm.next_version(version)
    manifest = posixpath.join(folder, lsm.manifest_name(new_version))
    storage.delete(manifest)  # a manifest a crashed archival left without its version file
    storage.create_if_absent(manifest, lsm.format_manifest(
        lsm.ManifestEntry(str(e["fileName"]), int(e["fileLen"])) for e in entries))
    storage.delete(posixpath.join(folder, LSM_VERSION_FILE))
    storage.create_if_absent(posixpath.join(folder, LSM_VERSION_FILE), lsm.format_version_file(new_version))
    return rel
# --8<-- [end:lsm]


def _files_in_state_order(timeline: Timeline, inst: Instant) -> list[str]:
    return sorted(timeline.files_of(inst), key=lambda n: parse_instant_file_name(n, timeline.layout).sort_key)


# --- reading the archived timeline --------------------------------------------------------------

@dataclass(frozen=True)
class ArchivedInstant:
    """One archived instant at its highest archived state (``completed``: v8 completion time)."""

    requested: str
    action: str
    state: str
    completed: str | None = None


def archived_entries(storage: Storage) -> list[dict[str, Any]]:
    """Every HoodieArchivedMetaEntry record of the v6 archived logs, in file and block order."""
    out: list[dict[str, Any]] = []
    for path in archive_files(storage):
        for rec in read_blocks(storage.read(path)):
            if rec.block is not None and rec.block.block_type == BlockType.AVRO_DATA_BLOCK:
                out.extend(decode_avro_records(rec.block))
    return out


def _lsm_instants(storage: Storage) -> list[ArchivedInstant]:
    """Instants of the v8 LSM history: the rows of the files the latest manifest lists."""
    out = []
    for entry in lsm_manifest(storage, lsm_latest_version(storage)):
        rel = posixpath.join(HISTORY_DIRS[2], str(entry.get("fileName")))
        table = storage.read_parquet(rel, ["instantTime", "completionTime", "action"])
        out += [ArchivedInstant(r["instantTime"], r["action"], State.COMPLETED.value, r["completionTime"])
                for r in table.to_pylist()]
    return sorted(out, key=lambda i: i.requested)


def archived_instants(storage: Storage, table: TableConfig) -> list[ArchivedInstant]:
    """The archived timeline: per archived instant its action and highest state, oldest first."""
    if table.timeline_layout != LAYOUT_V1:
        return _lsm_instants(storage)
    names = []
    for e in archived_entries(storage):
        try:
            inst = Instant(e["commitTime"], e["actionType"], State(e["actionState"] or "COMPLETED"))
            names.append(format_instant_file_name(inst, LAYOUT_V1))
        except (HudiSpecError, ValueError, KeyError):
            continue
    return [ArchivedInstant(i.requested, i.action, i.state.value)
            for i in Timeline.from_file_names(names, LAYOUT_V1).instants]


__all__ = [
    "ARCHIVE_BATCH",
    "ENTRY_FIELDS",
    "ArchiveResult",
    "ArchivedInstant",
    "archive",
    "archive_files",
    "archived_entries",
    "archived_entry",
    "archived_entry_schema",
    "archived_instants",
    "live_groups",
    "lsm_latest_version",
    "lsm_manifest",
    "lsm_row",
    "replaced_groups",
]
