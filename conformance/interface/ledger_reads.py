"""The ledger (``spec.write.ledger``) of a table directory, read with the spec's own readers: every data
file's meta columns and log blocks, the instants of the active timeline (any state) plus the archived
ones the caller names, each completed write's commit metadata, each compaction plan and each clean
plan on the active timeline. What any implementation that writes a table on disk is observed with in L4."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from spec.actions.compaction import CompactionOperation, compaction_plan_of
from spec.config.table_config import TableConfig
from spec.file_group.file_naming import is_log_file_name, parse_base_file_name, parse_log_file_name
from spec.file_group.file_system_view import DataFile, list_data_files
from spec.file_group.log_file.delete_block import decode_delete_records
from spec.file_group.log_file.log_blocks import decode_records
from spec.file_group.log_file.log_format import BlockType, read_log_file
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieCleanerPlan, HoodieCompactionPlan, parse_avro_metadata
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import read_instant_content
from spec.write.ledger import BlockRows, CommitSummary, FileRows, Ledger, StatCounts

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key")
WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


def _rows(records: Iterable[dict[str, object]]) -> tuple[tuple[str, str, str], ...]:
    return tuple((str(r.get(META[0])), str(r.get(META[1])), str(r.get(META[2]))) for r in records)


def file_rows(storage: Storage, f: DataFile) -> FileRows:
    """One data file as the ledger sees it."""
    if not is_log_file_name(f.name):
        b = parse_base_file_name(f.name)
        table = storage.read_parquet(f.path, columns=list(META))
        return FileRows(f.partition_path, b.file_id, f.name, b.instant,
                        (BlockRows("base", b.instant, _rows(table.to_pylist())),))
    lf = parse_log_file_name(f.name)
    blocks = []
    for rec in read_log_file(storage, f.path):
        block = rec.block
        if block is None:
            continue
        t = block.instant_time or ""
        if block.block_type == BlockType.DELETE_BLOCK:
            blocks.append(BlockRows("delete", t, (), tuple(d.record_key or "" for d in decode_delete_records(block))))
        elif block.block_type == BlockType.COMMAND_BLOCK:
            blocks.append(BlockRows("command", t, target=block.target_instant_time))
        elif block.is_data:
            blocks.append(BlockRows("data", t, _rows(decode_records(block))))
    return FileRows(f.partition_path, lf.file_id, f.name, lf.instant, tuple(blocks))


def commit_summary(storage: Storage, inst: Instant, layout: int) -> CommitSummary:
    """A completed commit's metadata as the ledger compares it."""
    md = parse_commit_metadata(read_instant_content(storage, inst, layout))
    stats = tuple(StatCounts(p, s.file_id or "", posixpath.basename(s.path or ""), s.num_writes, s.num_inserts,
                             s.num_update_writes, s.num_deletes)
                  for p, group in md.partition_to_write_stats.items() for s in group)
    return CommitSummary(md.operation_type or "", md.compacted, stats, tuple(sorted(md.replaced_file_ids())))


def compaction_ops(storage: Storage, inst: Instant, layout: int) -> tuple[CompactionOperation, ...]:
    """A compaction instant's plan (its requested file) as the ledger compares it."""
    requested = Instant(inst.requested, Action.COMPACTION, State.REQUESTED)
    plan = parse_avro_metadata(read_instant_content(storage, requested, layout), HoodieCompactionPlan)
    return compaction_plan_of(inst.requested, plan).operations


def clean_files(storage: Storage, inst: Instant, layout: int) -> tuple[tuple[str, str], ...]:
    """A clean instant's plan (its requested file) as the ledger compares it: (partition, file name)."""
    requested = Instant(inst.requested, Action.CLEAN, State.REQUESTED)
    plan = parse_avro_metadata(read_instant_content(storage, requested, layout), HoodieCleanerPlan)
    paths = plan.file_paths_to_be_deleted_per_partition or {}
    out = {(p, posixpath.basename(i.file_path)) for p, infos in paths.items() for i in infos if i.file_path}
    out |= {(p, posixpath.basename(n)) for p, names in (plan.files_to_be_deleted_per_partition or {}).items()
            for n in names}
    return tuple(sorted(out))


def directory_ledger(path: str, archived: Iterable[str] = ()) -> Ledger:
    """The ledger of the table at ``path``; ``archived`` are the archived instants' times."""
    storage = Storage(path)
    if not storage.exists(".hoodie/hoodie.properties"):
        return Ledger((), frozenset(), {}, {})
    table_config = TableConfig.load(storage)
    layout = table_config.timeline_layout
    tl = Timeline.load(storage, layout)
    files = tuple(file_rows(storage, f) for f in list_data_files(storage))
    commits = {i.requested: commit_summary(storage, i, layout) for i in tl.instants
               if i.is_completed and i.action in WRITES}
    plans = {i.requested: compaction_ops(storage, i, layout) for i in tl.instants
             if i.action == Action.COMPACTION or (i.action == Action.COMMIT and _has_plan(storage, i, layout))}
    cleans = {i.requested: clean_files(storage, i, layout) for i in tl.instants if i.action == Action.CLEAN}
    return Ledger(files, frozenset([*(i.requested for i in tl.instants), *archived]), commits, plans, cleans,
                  table_config.table_version)


def _has_plan(storage: Storage, inst: Instant, layout: int) -> bool:
    """Whether a completed commit was a compaction (its requested compaction file is still there)."""
    try:
        read_instant_content(storage, Instant(inst.requested, Action.COMPACTION, State.REQUESTED), layout)
    except Exception:
        return False
    return True
