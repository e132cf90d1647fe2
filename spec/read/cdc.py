"""The change data capture query (``hoodie.datasource.query.incremental.format=cdc``): every change the completed
writes of a window made, one record a change — ``op`` (``i`` insert, ``u`` update, ``d`` delete), ``ts_ms`` (the
requested time of the instant that made it), ``before`` and ``after`` (the row before and after it, or none).

The changes are worked out per file group and per instant, from what each write's stats say it wrote
(``HoodieCDCExtractor.parseWriteStat``); the instants are the completed commits, deltacommits and replacecommits
whose **requested** time is in the window ``(begin, end]`` (on every table version: the CDC query does not take
completion times, where Hudi 1.x's plain incremental query does) and whose operation yields changes
(``WriteOperationType.yieldChanges``: insert, upsert, delete and their prepped forms, bulk_insert,
delete_partition, insert_overwrite, insert_overwrite_table, bootstrap — not compaction or clustering). A begin
older than the archived timeline's last instant is refused, as Hudi refuses it. A write stat is one of these
cases (``HoodieCDCInferCase``):

- **AS_IS** — the stat names CDC log files (``cdcStats``; the writer logged the changes of a file group it
  merged). Under ``DATA_BEFORE_AFTER`` (the default supplemental logging mode) each CDC record holds op, before
  and after. Under ``DATA_BEFORE`` it holds op, record key and before; the after image is the key's row in the
  base file the write made. Under ``OP_KEY_ONLY`` it holds op and record key; the before image is the key's row in
  the base file of the previous commit (``prevCommit``), the after image as under ``DATA_BEFORE``.
- **BASE_FILE_INSERT** — a base file and no CDC log, all of its records inserts (no update): every row of the
  file is an insert.
- **BASE_FILE_DELETE** — a delete (or prepped delete) that wrote no record and deleted some: every row of the
  group's base file of the previous commit is a delete.
- **LOG_FILE** — a log file (merge-on-read): the log's records against the file slice the write appended to (its
  base file and its other log files, as the delta write stat names them, with the log files of a compaction of
  the group still pending before the instant, and that compaction's base file where the stat names none): a
  delete of a key the slice held is a delete (its ordering value is not looked at), a record of a key it did
  not hold an insert, and a record of a key it held an update when merging the two (the table's merge rule,
  ``spec.read.merge``) changes the row; a record the merge leaves out (an older ordering value) is no change.
- **REPLACE_COMMIT** — every row of the latest slice of a file group a replacecommit replaced is a delete.

Any other base-file stat (updates without a CDC log) is refused: Hudi's "There should be a cdc log
file". The before and after images of the inferred cases are whole rows, meta columns included; those of the
CDC log records are the data columns only. Apache Hudi's CDC query returns ``before`` and ``after`` as JSON
text; here they are mappings (``None`` when absent).

The images of a split (``CDCFileGroupIterator``): BASE_FILE_INSERT's are the new file's rows as after images;
BASE_FILE_DELETE's and REPLACE_COMMIT's the before slice's rows (merged, base file and log files) as before images;
AS_IS's the CDC log's records in order, an image the mode does not log looked up by key in the before or after
slice; LOG_FILE's the log's records folded per key by the table's merge rule, deletes kept, against the before
slice's rows, each held key updated as it changes.

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x; 1.2.0 measured): ``org.apache.hudi.common.table.cdc.HoodieCDCExtractor``
(``extractCDCFileSplits``, ``parseWriteStat``, ``getDependentFileSliceForLogFile``), ``HoodieCDCInferenceCase``,
``HoodieCDCSupplementalLoggingMode``, ``HoodieCDCUtils``, ``HoodieCDCDataBlock``,
``org.apache.hudi.cdc.CDCFileGroupIterator`` (``loadNext``, ``loadNextLogRecord``, ``loadCdcFile``,
``loadBeforeFileSliceIfNeeded``) and ``WriteOperationType.yieldChanges``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from spec.actions.compaction import read_compaction_plan
from spec.config.table_config import TableConfig
from spec.config.write_operation import WriteOperationType
from spec.errors import InvalidOperation, InvalidTable
from spec.file_group.file_naming import is_base_file_name, parse_base_file_name
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView, list_data_files
from spec.file_group.log_file.log_blocks import decode_cdc_records, decode_records
from spec.file_group.log_file.log_format import BlockType, read_blocks
from spec.read.merge import Version, as_version, combine_logs, delete_version, merge_with_base
from spec.read.partial_update import is_partial
from spec.read.query_plan import IncrementalWindow, check_instant
from spec.storage.hoodie_storage import Storage
from spec.timeline.commit_metadata import CommitMetadata, WriteStat, parse_commit_metadata
from spec.timeline.instant import Action, Instant
from spec.timeline.layout import read_instant_content

if TYPE_CHECKING:
    from spec.read.reader import TableReader

CDC_ENABLED: Final = "hoodie.table.cdc.enabled"
LOGGING_MODE: Final = "hoodie.table.cdc.supplemental.logging.mode"
OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER = "OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"
LOGGING_MODES: Final = (OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER)
"""``HoodieCDCSupplementalLoggingMode``: what a CDC log record holds beside its op."""
INSERT, UPDATE, DELETE = "i", "u", "d"
RECORD_KEY: Final = "_hoodie_record_key"

YIELD_CHANGES: Final = frozenset({
    WriteOperationType.INSERT, WriteOperationType.UPSERT, WriteOperationType.UPSERT_PREPPED,
    WriteOperationType.DELETE, WriteOperationType.DELETE_PREPPED, WriteOperationType.BULK_INSERT,
    WriteOperationType.DELETE_PARTITION, WriteOperationType.INSERT_OVERWRITE,
    WriteOperationType.INSERT_OVERWRITE_TABLE, WriteOperationType.BOOTSTRAP})
"""``WriteOperationType.yieldChanges``: the operations whose instants a CDC query reads."""
DELETES: Final = frozenset({WriteOperationType.DELETE, WriteOperationType.DELETE_PREPPED})
"""``WriteOperationType.isDelete``."""
CDC_ACTIONS: Final = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})


class CdcInferCase(StrEnum):
    """``HoodieCDCInferenceCase``: how a file group's changes of one instant are worked out."""

    AS_IS = "AS_IS"
    BASE_FILE_INSERT = "BASE_FILE_INSERT"
    BASE_FILE_DELETE = "BASE_FILE_DELETE"
    LOG_FILE = "LOG_FILE"
    REPLACE_COMMIT = "REPLACE_COMMIT"


@dataclass(frozen=True)
class CdcFileSplit:
    """``HoodieCDCFileSplit``: one instant's changes of one file group, the files they are read from (paths
    relative to the table), and the slices the before and after images come from."""

    instant: str
    case: CdcInferCase
    partition_path: str
    file_id: str
    files: tuple[str, ...] = ()
    before: FileSlice | None = None
    after: FileSlice | None = None


@dataclass(frozen=True)
class CdcRecord:
    """One change: ``op`` (``i``, ``u``, ``d``), ``ts_ms`` (the instant's requested time), the row before and after."""

    op: str
    ts_ms: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


def logging_mode(config: TableConfig) -> str:
    """The table's supplemental logging mode (``DATA_BEFORE_AFTER`` by default); a typed error for a table without
    CDC (Apache Hudi refuses the CDC query there) or an unknown mode."""
    if (config.get(CDC_ENABLED) or "false").lower() != "true":
        raise InvalidOperation("the CDC query reads a table with change data capture on: this one has "
                                 f"{CDC_ENABLED} unset or false", hint="read it with an incremental query instead")
    mode = (config.get(LOGGING_MODE) or DATA_BEFORE_AFTER).upper()
    if mode not in LOGGING_MODES:
        raise InvalidTable(f"{LOGGING_MODE}={mode!r} is no supplemental logging mode",
                           hint=f"the modes are {', '.join(LOGGING_MODES)}")
    return mode


# --8<-- [start:splits]
def base_file_on(listing: Iterable[DataFile], partition: str, file_id: str, instant: str | None) -> DataFile | None:
    """The base file ``file_id`` of ``partition`` that ``instant`` wrote (``getBaseFileOn``), or None."""
    for f in listing:
        if f.partition_path == partition and is_base_file_name(f.name):
            b = parse_base_file_name(f.name)
            if b.file_id == file_id and b.instant == instant:
                return f
    return None


def _base_slice(listing: Sequence[DataFile], partition: str, file_id: str, instant: str | None) -> FileSlice:
    base = base_file_on(listing, partition, file_id, instant)
    if base is None:
        raise InvalidTable(f"the base file of {partition}/{file_id} that {instant} wrote is not in the table",
                           hint="it was cleaned: read changes within the cleaner's retained commits")
    return FileSlice(partition, file_id, instant or "", base)


def split_of_stat(instant: str, stat: WriteStat, partition: str, operation: str, mode: str,
                  listing: Sequence[DataFile], compacting: Mapping[tuple[str, str], tuple[str | None, tuple[str, ...]]]
                  = MappingProxyType({})) -> CdcFileSplit:
    """``parseWriteStat``: the case of one write stat, and the files and slices its changes come from;
    ``compacting``: per (partition, file id), the base file and log files of a compaction of the group pending
    before the instant (``getDependentFileSliceForLogFile``)."""
    file_id, path = stat.file_id or "", stat.path or ""
    if stat.cdc_stats:
        files = tuple(sorted(stat.cdc_stats))
        if mode == DATA_BEFORE_AFTER:
            return CdcFileSplit(instant, CdcInferCase.AS_IS, partition, file_id, files)
        before = _base_slice(listing, partition, file_id, stat.prev_commit) if mode == OP_KEY_ONLY else None
        after = FileSlice(partition, file_id, instant, DataFile(partition, posixpath.basename(path)))
        return CdcFileSplit(instant, CdcInferCase.AS_IS, partition, file_id, files, before, after)
    if is_base_file_name(posixpath.basename(path)):
        if operation in DELETES and stat.num_writes == 0 and stat.num_deletes != 0:
            before = _base_slice(listing, partition, file_id, stat.prev_commit)
            return CdcFileSplit(instant, CdcInferCase.BASE_FILE_DELETE, partition, file_id, (), before)
        if stat.num_update_writes == 0 and stat.num_writes == stat.num_inserts:
            return CdcFileSplit(instant, CdcInferCase.BASE_FILE_INSERT, partition, file_id, (path,))
        raise InvalidTable(f"{path} of {instant} updated or deleted records but its write logged no CDC file",
                           hint="Apache Hudi refuses it too (\"There should be a cdc log file\"): the table's CDC "
                                "logs are incomplete for this instant")
    name = posixpath.basename(path)
    pending_base, pending_logs = compacting.get((partition, file_id), (None, ()))
    others = tuple(DataFile(partition, f) for f in (*(f for f in (stat.log_files or ()) if f != name),
                                                    *pending_logs))
    base_name = stat.base_file or pending_base
    before = FileSlice(partition, file_id, instant, DataFile(partition, base_name) if base_name else None, others)
    return CdcFileSplit(instant, CdcInferCase.LOG_FILE, partition, file_id, (path,), before)


PendingCompactions = Sequence[tuple[str, Mapping[tuple[str, str], tuple[str | None, tuple[str, ...]]]]]
"""The pending compactions: each one's requested time, and per (partition, file id) its base file and log files."""


def cdc_splits(commits: Sequence[tuple[Instant, CommitMetadata]], mode: str, listing: Sequence[DataFile],
               latest: FileSystemView, pending: PendingCompactions = ()) -> list[CdcFileSplit]:
    """``extractCDCFileSplits``: every split of the window's change-yielding ``commits`` (oldest first), grouped by
    file group, each group's in instant order; ``latest``: a view whose groups include replaced ones, for the
    latest slice of a group a replacecommit replaced; ``pending``: the compactions not completed."""
    out: list[CdcFileSplit] = []
    for inst, md in commits:
        operation = md.operation_type or ""
        compacting: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {}
        for requested, plan in pending:
            if requested < inst.requested:
                for key, (base, logs) in plan.items():
                    before = compacting.get(key, (None, ()))
                    compacting[key] = (base or before[0], (*before[1], *logs))
        for partition, stats in md.partition_to_write_stats.items():
            out.extend(split_of_stat(inst.requested, s, partition, operation, mode, listing, compacting)
                       for s in stats)
        for partition, ids in (md.partition_to_replace_file_ids or {}).items():
            for file_id in ids:
                group = latest.group(partition, file_id)
                if group is not None and group.latest_slice is not None:
                    out.append(CdcFileSplit(inst.requested, CdcInferCase.REPLACE_COMMIT, partition, file_id, (),
                                            group.latest_slice))
    return sorted(out, key=lambda s: (s.partition_path, s.file_id, s.instant))
# --8<-- [end:splits]


# --8<-- [start:images]
Row = Mapping[str, Any]


def slice_rows(reader: TableReader, sl: FileSlice | None) -> dict[str, Row]:
    """A slice's merged rows by record key (none for no slice)."""
    if sl is None:
        return {}
    table = reader.read_slice(sl, as_of=None)
    return {} if table is None else {r[RECORD_KEY]: r for r in table.to_pylist()}


def log_versions(reader: TableReader, path: str, instant: str) -> dict[str, Version]:
    """The records ``instant`` wrote to the log file ``path``, one version a key (folded by the table's merge
    rule in log order; a delete kept as a delete)."""
    rule = reader.rule
    out: dict[str, Version] = {}
    for rec in read_blocks(reader.storage.read(path)):
        block = rec.block
        if rec.corrupt is not None or block is None or block.instant_time != instant:
            continue
        if block.block_type == BlockType.DELETE_BLOCK:
            incoming = [(d["recordKey"], delete_version(d["orderingVal"], None, rule)) for d in decode_records(block)]
        elif block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK):
            partial = is_partial(block)  # a partial-update record takes its other columns from the held row
            incoming = [(r[RECORD_KEY], as_version(r, rule, partial=partial)) for r in decode_records(block)]
        else:
            continue
        for key, version in incoming:
            out[key] = combine_logs(out[key], version, rule) if key in out else version
    return out


def _log_changes(reader: TableReader, split: CdcFileSplit) -> Iterator[CdcRecord]:
    held = dict(slice_rows(reader, split.before))
    rule = reader.rule
    for key, version in log_versions(reader, split.files[0], split.instant).items():
        if version.is_delete:
            if key in held:
                yield CdcRecord(DELETE, split.instant, held.pop(key), None)
            continue
        existing = held.get(key)
        if existing is None:
            held[key] = version.row or {}
            yield CdcRecord(INSERT, split.instant, None, version.row)
            continue
        merged = merge_with_base(as_version(existing, rule), version, rule).row
        if merged is not None and dict(merged) != dict(existing):
            held[key] = merged
            yield CdcRecord(UPDATE, split.instant, existing, merged)


def _logged_changes(reader: TableReader, split: CdcFileSplit, mode: str) -> Iterator[CdcRecord]:
    before = slice_rows(reader, split.before) if mode == OP_KEY_ONLY else {}
    after = slice_rows(reader, split.after) if mode != DATA_BEFORE_AFTER else {}
    for path in split.files:
        for rec in read_blocks(reader.storage.read(path)):
            if rec.corrupt is not None or rec.block is None or rec.block.block_type != BlockType.CDC_DATA_BLOCK:
                continue
            for r in decode_cdc_records(rec.block):
                op = str(r.get("op"))
                if mode == DATA_BEFORE_AFTER:
                    yield CdcRecord(op, split.instant, r.get("before"), r.get("after"))
                    continue
                key = str(r.get("record_key"))
                old = r.get("before") if mode != OP_KEY_ONLY else (before.get(key) if op != INSERT else None)
                yield CdcRecord(op, split.instant, old, after.get(key) if op in (INSERT, UPDATE) else None)


def changes_of_split(reader: TableReader, split: CdcFileSplit, mode: str) -> list[CdcRecord]:
    """The changes of one split (``CDCFileGroupIterator``: see the module's rules)."""
    if split.case == CdcInferCase.BASE_FILE_INSERT:
        base = FileSlice(split.partition_path, split.file_id, split.instant,
                         DataFile(split.partition_path, posixpath.basename(split.files[0])))
        return [CdcRecord(INSERT, split.instant, None, r) for r in slice_rows(reader, base).values()]
    if split.case in (CdcInferCase.BASE_FILE_DELETE, CdcInferCase.REPLACE_COMMIT):
        return [CdcRecord(DELETE, split.instant, r, None) for r in slice_rows(reader, split.before).values()]
    if split.case == CdcInferCase.LOG_FILE:
        return list(_log_changes(reader, split))
    return list(_logged_changes(reader, split, mode))
# --8<-- [end:images]


def window_commits(storage: Storage, config: TableConfig, instants: Sequence[Instant],
                   begin: str | None, end: str | None) -> list[tuple[Instant, CommitMetadata]]:
    """The completed commits, deltacommits and replacecommits whose requested time is in ``(begin, end]`` and whose
    operation yields changes, with their metadata, oldest first."""
    window = IncrementalWindow(begin, end)
    out = []
    for inst in instants:
        if inst.is_completed and inst.action in CDC_ACTIONS and window.contains(inst.requested):
            md = parse_commit_metadata(read_instant_content(storage, inst, config.timeline_layout))
            if md.operation_type in YIELD_CHANGES:
                out.append((inst, md))
    return out


def check_begin_active(begin: str | None, last_archived: str | None) -> None:
    """A begin before the archived timeline's last instant is refused (``initInstantAndCommitMetadata``: "Start
    instant time ... for CDC query has to be in the active timeline")."""
    if begin is not None and last_archived is not None and last_archived > begin:
        raise InvalidOperation(f"the CDC query's begin {begin} is before the archived instant {last_archived}: its "
                               "changes are no longer on the active timeline",
                               hint=f"begin at {last_archived} or later")


def read_cdc(path: str | Storage, begin: str | None = None, end: str | None = None) -> list[CdcRecord]:
    """The CDC query's records over ``(begin, end]`` (completion times; None: open), file group by file group, each
    group's instants in order."""
    from spec.read.reader import TableReader

    check_instant(begin, "begin")
    check_instant(end, "end")
    reader = TableReader(path, workers=1, use_metadata_table=False)
    mode = logging_mode(reader.config)
    if begin is not None:
        from spec.actions.archive import archived_instants  # the archive's readers, only when a begin is given

        check_begin_active(begin, max((a.requested for a in archived_instants(reader.storage, reader.config)),
                                      default=None))
    commits = window_commits(reader.storage, reader.config, reader.timeline.instants, begin, end)
    listing = list_data_files(reader.storage)
    latest = FileSystemView.build(listing, reader.timeline, reader.config)
    pending = [(c.requested, {(o.partition_path, o.file_id): (o.base_file, o.log_files)
                              for o in read_compaction_plan(reader.storage, c.requested,
                                                            reader.config.timeline_layout).operations})
               for c in reader.timeline.pending_compactions().instants]
    out: list[CdcRecord] = []
    for split in cdc_splits(commits, mode, listing, latest, pending):
        out.extend(changes_of_split(reader, split, mode))
    return out


def image_json(image: Mapping[str, Any] | None) -> str | None:
    """An image as JSON text, as the CDC query's ``before`` and ``after`` columns hold it: the row's fields in
    order, compact; None for no image. (Apache Hudi renders a CDC log's images with Avro's ``toString``, spaces
    after ``:`` and ``,``, and an inferred image with its row converter, compact: the same JSON values.)"""
    import json

    return None if image is None else json.dumps(dict(image), separators=(",", ":"), default=str)


def cdc_table(records: Sequence[CdcRecord]) -> Any:
    """The CDC query's records as Apache Hudi's CDC query answers them: a table of four string columns ``op``,
    ``ts_ms``, ``before`` and ``after`` (``image_json``)."""
    import pyarrow as pa

    return pa.table({"op": pa.array([r.op for r in records], pa.string()),
                     "ts_ms": pa.array([r.ts_ms for r in records], pa.string()),
                     "before": pa.array([image_json(r.before) for r in records], pa.string()),
                     "after": pa.array([image_json(r.after) for r in records], pa.string())})


__all__ = ["CDC_ENABLED", "DATA_BEFORE", "DATA_BEFORE_AFTER", "DELETES", "LOGGING_MODE", "OP_KEY_ONLY",
           "YIELD_CHANGES", "CdcFileSplit", "CdcInferCase", "CdcRecord", "PendingCompactions", "base_file_on",
           "cdc_splits", "cdc_table", "changes_of_split", "check_begin_active", "image_json", "log_versions",
           "logging_mode", "read_cdc", "slice_rows", "split_of_stat", "window_commits"]
