"""The buckets of one write, between the partitioner and the handles: which handle each bucket runs
(create, merge or append), the context the handles share, what the partitioner needs to know of the
table (its small files, the sizes of earlier commits), and the commit metadata the handles' stats make.
Shared by batch writes (``reference.write.client``) and streaming writes (``reference.write.streaming``).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from reference.config.options import WriteConfig
from reference.io.handles import BucketSpec, HandleContext
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.file_group.file_naming import parse_base_file_name
from spec.file_group.file_system_view import FileGroup, FileSystemView
from spec.file_group.partition_metadata import PARTITION_METADATA_FILE, PartitionMetadata, partition_depth
from spec.read.merge import MergeRule
from spec.schema.table_schema import avro_schema_from_arrow, record_name_for_table, with_meta_fields
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat, parse_commit_metadata, write_stat
from spec.timeline.instant import Action
from spec.timeline.layout import read_instant_content
from spec.write.append_handle import AppendHandleConfig
from spec.write.partitioner import BucketAssignment, SmallFile, SmallFileCandidate, select_small_files


def bucket_specs(assignment: BucketAssignment, view: FileSystemView, small_ids: set[str],
                 busy: Mapping[tuple[str, str], str]) -> dict[int, BucketSpec]:
    """A batch write's handle per bucket: an insert bucket creates a file group; an update bucket merges
    into the group's base file, or on merge-on-read — unless the group is a small file taking inserts —
    appends a log file to the group's slice (``append_bucket``)."""
    mor = view.config.table_type == MERGE_ON_READ
    specs: dict[int, BucketSpec] = {}
    for b in assignment.buckets:
        if b.kind != "UPDATE":
            specs[b.number] = BucketSpec(b.number, "insert", b.partition, b.file_id)
            continue
        group = view.group(b.partition, b.file_id)
        if mor and b.file_id not in small_ids:
            specs[b.number] = append_bucket(b.number, b.partition, b.file_id, group, busy)
            continue
        base = group.latest_slice.base_file if group and group.latest_slice else None
        prev = parse_base_file_name(base.name).instant if base else NULL_COMMIT
        specs[b.number] = BucketSpec(b.number, "update", b.partition, b.file_id, base.path if base else None, prev)
    return specs


def append_bucket(number: int, partition: str, file_id: str, group: FileGroup | None,
                  busy: Mapping[tuple[str, str], str]) -> BucketSpec:
    """An append handle's bucket: the slice its log joins is the group's pending compaction, else its
    latest slice (named by its base instant, or for a log-only group by its first log's instant)."""
    sl = group.latest_slice if group is not None else None
    base = sl.base_file if sl is not None else None
    logs = tuple(f.name for s in (group.slices if group is not None else ()) for f in s.log_files)
    base_instant = busy.get((partition, file_id)) or (sl.base_instant if sl is not None else None)
    joined = tuple(f.name for s in (group.slices if group is not None else ()) if s.base_instant == base_instant
                   for f in s.log_files)
    return BucketSpec(number, "append", partition, file_id, None,
                      sl.base_instant if sl is not None else NULL_COMMIT, base_instant=base_instant,
                      base_file_name=base.name if base is not None else None, existing_logs=logs,
                      slice_logs=joined)


_BRANCH_BY_TYPE = ((pa.types.is_boolean, 1), (pa.types.is_int8, 2), (pa.types.is_int16, 2), (pa.types.is_int32, 2),
                   (pa.types.is_int64, 3), (pa.types.is_float32, 4), (pa.types.is_float64, 5), (pa.types.is_binary, 6),
                   (pa.types.is_string, 7), (pa.types.is_large_string, 7))


def ordering_branch(schema: pa.Schema, ordering: str | None) -> int:
    """The ``HoodieDeleteRecord.orderingVal`` union branch for the ordering field's type (0: none;
    ``spec.file_group.log_file.delete_block.ORDERING_BRANCHES``)."""
    if ordering is None or ordering not in schema.names:
        return 0
    t = schema.field(ordering).type
    return next((b for test, b in _BRANCH_BY_TYPE if test(t)), 0)


def handle_context(base_path: str, table: TableConfig, cfg: WriteConfig, instant: str,
                   specs: Mapping[int, BucketSpec], user_schema: pa.Schema, sort_by_key: bool = False,
                   concat: bool = False) -> HandleContext:
    """What every handle of one write needs, shipped to the engine's tasks."""
    avro = with_meta_fields(avro_schema_from_arrow(user_schema, *record_name_for_table(table.name)))
    ordering = table.ordering_field
    return HandleContext(base_path, instant, json.dumps(avro), MergeRule.from_config(table), cfg.compression,
                         specs, sort_by_key=sort_by_key, concat=concat, table_version=table.table_version,
                         append=AppendHandleConfig(cfg.log_block_size, cfg.log_file_size, table.table_version),
                         record_size=cfg.record_size_estimate, ordering_field=ordering,
                         ordering_branch=ordering_branch(user_schema, ordering), cdc_mode=table.cdc_mode)


def write_partition_metadata(storage: Storage, partitions: set[str], instant: str) -> None:
    """``.hoodie_partition_metadata`` in each partition the write's handles write to, unless it is there."""
    for p in partitions:
        rel = posixpath.join(p, PARTITION_METADATA_FILE) if p else PARTITION_METADATA_FILE
        if not storage.exists(rel):
            storage.write_atomic(rel, PartitionMetadata(instant, partition_depth(p)).format())


def small_files(view: FileSystemView, cfg: WriteConfig, busy: Mapping[tuple[str, str], str],
                clustering: Mapping[tuple[str, str], str] | None = None) -> dict[str, list[SmallFile]]:
    """Per partition, the small files inserts may go to (``spec.write.partitioner`` COW and MOR rules;
    ``busy`` groups are under a pending compaction, ``clustering`` groups under a pending clustering and take
    no inserts: ``UpsertPartitioner.filterSmallFilesInClustering``)."""
    mor = view.config.table_type == MERGE_ON_READ
    by_partition: dict[str, list[SmallFileCandidate]] = {}
    for sl in view.latest_slices():
        by_partition.setdefault(sl.partition_path, []).append(SmallFileCandidate(
            sl.file_id, sl.base_file.size if sl.base_file else None, bool(sl.log_files),
            (sl.partition_path, sl.file_id) in busy,
            under_pending_clustering=(sl.partition_path, sl.file_id) in (clustering or {})))
    return {p: select_small_files(c, cfg.small_file_limit, merge_on_read=mor) for p, c in by_partition.items()}


def commit_totals(storage: Storage, timeline: Timeline) -> list[tuple[int, int]]:
    """(bytes, records) of the base files each completed commit / replacecommit wrote, oldest first."""
    totals = []
    for inst in timeline.commits_timeline().completed().instants:
        if inst.action not in (Action.COMMIT, Action.REPLACE_COMMIT):
            continue
        md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))
        stats = [s for s in md.all_write_stats() if not s.is_delta]
        totals.append((sum(s.total_write_bytes for s in stats), sum(s.num_writes for s in stats)))
    return totals


def schema_json(table: TableConfig, schema: pa.Schema | None) -> str:
    """The Avro schema a commit records: the batch's, or (no batch) the table's create schema."""
    if schema is None:
        return table.create_schema or ""
    return json.dumps(avro_schema_from_arrow(schema, *record_name_for_table(table.name)))


def stats_by_partition(stats: Sequence[Mapping[str, Any]]) -> dict[str, tuple[WriteStat, ...]]:
    """The handles' (or a table service's tasks') write stats grouped by partition, partitions sorted,
    as commit metadata holds them."""
    by_partition: dict[str, list[WriteStat]] = {}
    for s in stats:
        by_partition.setdefault(s["partitionPath"], []).append(write_stat(**s))
    return {p: tuple(v) for p, v in sorted(by_partition.items())}


def commit_metadata(stats: Sequence[Mapping[str, Any]], extra: Mapping[str, str], operation: str,
                    replaced: Mapping[str, Sequence[str]] | None = None) -> CommitMetadata:
    """A write's commit metadata: its stats by partition, not compacted, ``extra`` (the schema, ...)."""
    replace = {p: tuple(v) for p, v in replaced.items()} if replaced is not None else None
    return CommitMetadata(stats_by_partition(stats), False, dict(extra), operation, replace)


__all__ = ["append_bucket", "bucket_specs", "commit_metadata", "commit_totals", "handle_context", "ordering_branch",
           "schema_json", "small_files", "stats_by_partition", "write_partition_metadata"]
