"""Validate any table directory against the specification (``hudi-conformance check PATH``).

A table passes when every rule below holds. Each finding names the rule it breaks (code, level):

- ``unsupported`` (unsupported): a valid table this specification does not cover — a table version
  other than 6, 8 and 9, or base files other than parquet. Its status is UNSUPPORTED, not FAIL:
  nothing is known to be wrong with it;
- ``table-config`` (error): hoodie.properties exists and parses, with the required keys, the layout
  of its version and a correct checksum;
- ``instant-name`` (error): every file in the timeline folder is an instant file or a known entry;
- ``timeline-state`` (error): a completed instant kept its inflight file, and every instant but a
  savepoint its requested file;
- ``foreign-file`` (warning): a file in a partition that is no base, log or partition metadata file
  (readers ignore it);
- ``partition-metadata`` (error): every partition holding data files has a readable
  ``.hoodie_partition_metadata`` of the right depth;
- ``log-block`` (error): every log file frames as whole blocks: no corrupt or truncated block;
- ``log-block-content`` (error): each block holds what can be checked without a checksum
  (``spec.file_group.log_file.block_checks``: header keys and values, an empty footer, record counts
  and lengths, the schema, the meta fields against the block's instant and the file's partition and
  file id), and what needs the table: the block's instant is on the timeline (or older than it, or
  rolled back by a command block of its file group), its schema has the fields of the commit that
  wrote it, and each record's key and partition path are the ones the table's key generator gives
  its fields;
- ``orphan-file`` (error): every data file belongs to an instant on the timeline (or older than it);
- ``pending-files`` (warning): data files of instants that have not completed (a running or failed
  write; the next write rolls them back);
- ``duplicate-key`` (error): in the snapshot, a record key lives in exactly one file group of its
  partition. A warning instead where Apache Hudi itself puts a key in a second file group: the key's
  later rows were written by ``insert`` or ``bulk_insert``, which do not look up existing keys;
- ``metadata-files`` (error): where the table lists its files through the metadata table's ``files``
  partition, that partition reads and lists exactly the live files (those of the file system view
  built from a listing of storage: files of completed instants).
- ``single-base-per-instant`` (error): a file group has at most one base file per instant.
- ``missing-file`` (error): every file a completed instant wrote for a file group's latest slice (or
  a newer one) is on storage (``spec.file_group.file_system_view.missing_latest_files``, every instant's
  commit metadata, and ``missing_slice_files``, every file of the latest slices): a missing one makes a
  reader return older rows, or rows a delete block removed, unless it refuses as the spec reader does.
"""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from dataclasses import asdict, dataclass

from spec.config.table_config import LAYOUT_V1, TableConfig
from spec.errors import HudiSpecError, UnsupportedTable
from spec.file_group.file_naming import is_base_file_name, is_log_file_name, parse_base_file_name, parse_log_file_name
from spec.file_group.file_system_view import (
    DataFile,
    FileSystemView,
    list_data_files,
    missing_latest_files,
    missing_slice_files,
)
from spec.file_group.log_file.block_checks import check_block
from spec.file_group.log_file.log_blocks import decode_records
from spec.file_group.log_file.log_format import BlockType, LogBlock, read_blocks
from spec.file_group.partition_metadata import PARTITION_METADATA_FILE, parse_partition_metadata, partition_depth
from spec.keygen.key_generators import KeyGenerator, key_generator_from_config
from spec.metadata.metadata_table import METADATA_TABLE_PATH, list_table_files, uses_metadata_table
from spec.read.reader import TableReader
from spec.schema.table_schema import COMMIT_TIME, META_FIELDS, PARTITION_PATH, RECORD_KEY
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action
from spec.timeline.layout import parse_instant_file_name, read_instant_content, timeline_dir

KNOWN_TIMELINE_ENTRIES = {
    "hoodie.properties", "hoodie.properties.backup", ".aux", ".temp", ".schema", ".heartbeat", "archived",
    "metadata", "timeline", ".index_defs", ".bootstrap", "history", ".lock",
}


@dataclass(frozen=True)
class Finding:
    """One broken rule: its level (error or warning), code, the file it concerns, and what is wrong."""

    level: str
    code: str
    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class CheckReport:
    base_path: str
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "error")

    @property
    def ok(self) -> bool:
        return not self.errors and not self.unsupported

    @property
    def unsupported(self) -> bool:
        """Whether the table is one this specification does not cover (neither valid nor invalid to it)."""
        return any(f.level == "unsupported" for f in self.findings)

    @property
    def status(self) -> str:
        """PASS, FAIL (an error) or UNSUPPORTED (a version or format the specification does not cover)."""
        return "UNSUPPORTED" if self.unsupported else "PASS" if self.ok else "FAIL"

    def codes(self) -> set[str]:
        return {f.code for f in self.errors}


def _check_timeline(storage: Storage, layout: int) -> tuple[list[Finding], Timeline | None]:
    findings: list[Finding] = []
    folder = timeline_dir(layout)
    names = []
    for f in storage.list(folder):
        if f.name in KNOWN_TIMELINE_ENTRIES or f.name.startswith("."):
            continue
        if f.is_dir:
            continue
        try:
            parse_instant_file_name(f.name, layout)
            names.append(f.name)
        except HudiSpecError as err:
            findings.append(Finding("error", "instant-name", f.path, err.message))
    timeline = Timeline.from_file_names(names, layout)
    for inst in timeline.instants:
        files = timeline.files_of(inst.requested)
        states = {parse_instant_file_name(n, layout).state.value for n in files}
        origin = timeline.origin_action(inst.requested) or inst.action
        if inst.is_completed and "INFLIGHT" not in states:
            findings.append(Finding("error", "timeline-state", posixpath.join(folder, files[0]),
                                    f"instant {inst.requested} ({origin}) completed without an inflight file"))
        if origin != Action.SAVEPOINT and "REQUESTED" not in states:
            findings.append(Finding("error", "timeline-state", posixpath.join(folder, files[0]),
                                    f"instant {inst.requested} ({origin}) has no requested file"))
    return findings, timeline


def _check_data_files(storage: Storage, timeline: Timeline, cfg: TableConfig) -> list[Finding]:
    findings: list[Finding] = []
    blocks: list[_LogBlockAt] = []
    partitions_with_data: set[str] = set()
    seen_base: dict[tuple[str, str, str], str] = {}
    first = timeline.first_instant()
    for f in storage.list("", recursive=True):
        if f.is_dir or any(part.startswith(".") for part in f.path.split("/")[:-1]):
            continue
        partition, _, name = f.path.rpartition("/")
        if name.startswith(PARTITION_METADATA_FILE):
            continue
        if not (is_base_file_name(name) or is_log_file_name(name)):
            if name.startswith(".") and name.endswith(".crc"):
                continue
            findings.append(Finding("warning", "foreign-file", f.path,
                                    f"{name!r} is neither a base nor a log file; readers ignore it"))
            continue
        partitions_with_data.add(partition)
        if is_base_file_name(name):
            base = parse_base_file_name(name)
            instant = base.instant
            key = (partition, base.file_id, base.instant)
            if key in seen_base:
                findings.append(Finding("error", "single-base-per-instant", f.path,
                                        f"file group {base.file_id} already has {seen_base[key]} for {base.instant}"))
            seen_base[key] = name
        else:
            log = parse_log_file_name(name)
            instant = log.instant
            if not log.suffix:
                for rec in read_blocks(storage.read(f.path)):
                    if rec.is_corrupt:
                        reason = rec.corrupt.reason if rec.corrupt else ""
                        findings.append(Finding("error", "log-block", f.path,
                                                f"corrupt block at offset {rec.offset} ({rec.length} bytes): {reason}"))
                    elif rec.block is not None:
                        blocks.append(_LogBlockAt(f.path, partition, log.file_id, rec.offset, rec.block))
                        findings += [Finding("error", "log-block-content", f.path,
                                             f"block at offset {rec.offset}: {problem}")
                                     for problem in check_block(rec.block, cfg.table_version, partition, log.file_id)]
        inst = timeline.get(instant)
        older = first is not None and instant < first.requested
        if inst is None and not older and not (is_log_file_name(name) and _v6_log_of_slice(timeline, instant)):
            findings.append(Finding("error", "orphan-file", f.path,
                                    f"no instant {instant} on the timeline wrote this file"))
        elif inst is not None and not inst.is_completed and inst.action != Action.COMPACTION:
            findings.append(Finding("warning", "pending-files", f.path,
                                    f"written by {inst.action} {instant}, which has not completed"))
    findings += _check_blocks_against_table(storage, timeline, cfg, blocks)
    for partition in sorted(partitions_with_data):
        meta = posixpath.join(partition, PARTITION_METADATA_FILE) if partition else PARTITION_METADATA_FILE
        if not storage.exists(meta):
            findings.append(Finding("error", "partition-metadata", meta, "partition has data but no metadata file"))
            continue
        try:
            md = parse_partition_metadata(storage.read(meta))
        except HudiSpecError as err:
            findings.append(Finding("error", "partition-metadata", meta, err.message))
            continue
        if md.depth != partition_depth(partition):
            findings.append(Finding("error", "partition-metadata", meta,
                                    f"partitionDepth is {md.depth}, the folder is {partition_depth(partition)} deep"))
    return findings


@dataclass(frozen=True)
class _LogBlockAt:
    """A well-framed log block and where it is."""

    path: str
    partition: str
    file_id: str
    offset: int
    block: LogBlock


def _check_blocks_against_table(storage: Storage, timeline: Timeline, cfg: TableConfig,
                                blocks: list[_LogBlockAt]) -> list[Finding]:
    """What a block must hold that only the table knows: its instant on the timeline, its schema's fields
    those of the commit that wrote it, each record's key and partition path the key generator's."""
    findings: list[Finding] = []
    first = timeline.first_instant()
    rolled_back = {(b.partition, b.file_id, b.block.target_instant_time) for b in blocks if b.block.is_rollback}
    schemas: dict[str, set[str] | None] = {}
    try:
        keygen: KeyGenerator | None = key_generator_from_config(cfg.props)
    except HudiSpecError:
        keygen = None
    for b in blocks:
        instant = b.block.instant_time
        if instant is None or not instant.isdigit() or b.block.block_type == BlockType.COMMAND_BLOCK:
            continue
        where = f"block at offset {b.offset}"
        inst = timeline.get(instant)
        if inst is None:
            if (first is None or instant >= first.requested) and (b.partition, b.file_id, instant) not in rolled_back:
                findings.append(Finding("error", "log-block-content", b.path,
                                        f"{where}: its instant {instant} is on no timeline and no rollback block "
                                        "names it; readers ignore its records"))
            continue
        if not inst.is_completed or not b.block.is_data:
            continue
        if instant not in schemas:
            schemas[instant] = _commit_fields(storage, timeline, instant)
        expected = schemas[instant]
        block_fields = _schema_fields(b.block.schema)
        if expected is not None and block_fields is not None and block_fields - set(META_FIELDS) != expected:
            findings.append(Finding("error", "log-block-content", b.path,
                                    f"{where}: its schema's fields differ from those of the commit {instant} that "
                                    f"wrote it: {', '.join(sorted((block_fields - set(META_FIELDS)) ^ expected))}"))
        if keygen is not None and cfg.populate_meta_fields:
            findings += _check_keys_of_block(b, keygen, where)
    return findings


def _schema_fields(schema: str | None) -> set[str] | None:
    try:
        return {str(f["name"]) for f in json.loads(schema or "")["fields"]}
    except (ValueError, KeyError, TypeError):
        return None


def _commit_fields(storage: Storage, timeline: Timeline, instant: str) -> set[str] | None:
    """The data fields of the schema a completed commit records (None when it records none)."""
    inst = timeline.get(instant)
    try:
        md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout)) if inst else None
    except HudiSpecError:
        return None
    fields = _schema_fields(md.schema) if md and md.schema else None
    return None if fields is None else fields - set(META_FIELDS)


def _check_keys_of_block(b: _LogBlockAt, keygen: KeyGenerator, where: str) -> list[Finding]:
    """Each data record's ``_hoodie_record_key`` and ``_hoodie_partition_path`` are what the key generator
    makes of its fields."""
    try:
        records = decode_records(b.block)
    except HudiSpecError:
        return []  # reported by check_block
    for i, rec in enumerate(records):
        key, partition = rec.get(RECORD_KEY), rec.get(PARTITION_PATH)
        if key is None or partition is None:
            continue
        try:
            expected = (keygen.record_key(rec), keygen.partition_path(rec))
        except HudiSpecError:
            continue
        if (key, partition) != expected:
            return [Finding("error", "log-block-content", b.path,
                            f"{where}: record {i} has key {key!r} in partition {partition!r}, but its fields give "
                            f"key {expected[0]!r} in partition {expected[1]!r}")]
    return []


def _v6_log_of_slice(timeline: Timeline, instant: str) -> bool:
    """v6 log files carry their slice's base instant, which may be a compaction still pending."""
    return timeline.layout == LAYOUT_V1 and any(i.requested == instant for i in timeline.pending_compactions())


INSERT_OPERATIONS = frozenset({"INSERT", "BULK_INSERT"})
"""Operations that write without looking up existing keys (Hudi's insert and bulk_insert tag no location)."""


def _operation(reader: TableReader, instant: str) -> str | None:
    inst = reader.timeline.get(instant)
    if inst is None or not inst.is_completed:
        return None
    try:
        return parse_commit_metadata(read_instant_content(reader.storage, inst, reader.timeline.layout)).operation_type
    except HudiSpecError:
        return None


def _check_keys(storage: Storage) -> list[Finding]:
    findings: list[Finding] = []
    reader = TableReader(storage)
    where: dict[tuple[str, str], set[str]] = defaultdict(set)
    written: dict[tuple[str, str], set[str]] = defaultdict(set)
    for part in reader.iter_snapshot():
        if RECORD_KEY not in part.table.column_names:
            continue
        times = (part.table.column(COMMIT_TIME).to_pylist() if COMMIT_TIME in part.table.column_names
                 else [None] * part.table.num_rows)
        for key, t in zip(part.table.column(RECORD_KEY).to_pylist(), times, strict=True):
            if key is not None:
                where[(part.slice.partition_path, key)].add(part.slice.file_id)
                if t is not None:
                    written[(part.slice.partition_path, key)].add(t)
    for (partition, key), groups in sorted(where.items()):
        if len(groups) > 1:
            message = f"record key {key!r} is in {len(groups)} file groups: {', '.join(sorted(groups))}"
            times = sorted(written[(partition, key)])
            later = [_operation(reader, t) for t in times[1:]]
            if len(times) == len(groups) and later and all(op in INSERT_OPERATIONS for op in later):
                findings.append(Finding("warning", "duplicate-key", partition or "/", message + (
                    f"; written again by {', '.join(sorted(set(map(str, later))))} at {', '.join(times[1:])}, which "
                    "Apache Hudi allows: insert and bulk_insert do not look up existing keys")))
            else:
                findings.append(Finding("error", "duplicate-key", partition or "/", message))
    return findings


def _check_metadata_files(storage: Storage, cfg: TableConfig, timeline: Timeline) -> list[Finding]:
    """The metadata table's files partition against storage: the files of the views the two listings build."""
    if not uses_metadata_table(cfg):
        return []
    try:
        from_mdt = list_table_files(storage, cfg, timeline)
    except HudiSpecError as err:
        return [Finding("error", "metadata-files", METADATA_TABLE_PATH, f"the files partition cannot be read: "
                                                                        f"{err.message}")]

    def live(files: list[DataFile]) -> set[tuple[str, str, int]]:
        view = FileSystemView.load(storage, cfg, timeline, None, files)
        return {(f.partition_path, f.name, f.size) for g in view.groups for sl in g.slices
                for f in (*([sl.base_file] if sl.base_file else []), *sl.log_files)}

    listed, on_storage = live(from_mdt), live(list_data_files(storage))
    findings = [Finding("error", "metadata-files", posixpath.join(p, n),
                        f"live on storage ({size} bytes) but not listed by the metadata table's files partition")
                for p, n, size in sorted(on_storage - listed)]
    findings += [Finding("error", "metadata-files", posixpath.join(p, n),
                         f"listed by the metadata table ({size} bytes) but not a live file on storage")
                 for p, n, size in sorted(listed - on_storage)]
    return findings


def _check_missing_files(storage: Storage, cfg: TableConfig, timeline: Timeline) -> list[Finding]:
    """Files the timeline says hold the latest rows of a file group, missing from storage."""
    listing = list_data_files(storage)
    try:
        missing = set(missing_latest_files(storage, timeline, listing))
        missing |= set(missing_slice_files(storage, FileSystemView.load(storage, cfg, timeline, None, listing)))
    except HudiSpecError as err:
        return [Finding("error", "missing-file", storage.uri, f"the files the timeline names cannot be checked: "
                                                              f"{err.message}")]
    return [Finding("error", "missing-file", path, f"written by the completed instant {instant} for its file "
                                                   "group's latest slice, and missing: readers would return "
                                                   "older rows in its place")
            for instant, path in sorted(missing, key=lambda m: m[1])]


def check_table(path: str | Storage) -> CheckReport:
    """Every finding for the table at ``path``."""
    storage = path if isinstance(path, Storage) else Storage(path)
    try:
        cfg = TableConfig.load(storage, validate=False)
        cfg.validate()
    except UnsupportedTable as err:
        return CheckReport(storage.uri, (Finding("unsupported", "unsupported", ".hoodie/hoodie.properties",
                                                 str(err)),))
    except HudiSpecError as err:
        return CheckReport(storage.uri, (Finding("error", "table-config", ".hoodie/hoodie.properties", err.message),))
    findings, timeline = _check_timeline(storage, cfg.timeline_layout)
    assert timeline is not None
    findings += _check_data_files(storage, timeline, cfg)
    findings += _check_metadata_files(storage, cfg, timeline)
    findings += _check_missing_files(storage, cfg, timeline)
    if not any(f.code == "log-block" for f in findings):
        try:
            findings += _check_keys(storage)
        except HudiSpecError as err:
            findings.append(Finding("error", "unreadable", storage.uri, err.message))
        except OSError as err:  # a file the listing names is missing (or unreadable) on storage
            findings.append(Finding("error", "unreadable", storage.uri, f"{type(err).__name__}: {err}"))
    return CheckReport(storage.uri, tuple(findings))


__all__ = ["CheckReport", "Finding", "check_table", "list_data_files"]
