"""The metadata table's writer: the ``files`` partition's records for each data table action, and the files,
instants and properties that carry them (table versions 8 and 9).

- **Records** (``FilesIndexer.convertMetadataToFilesPartitionRecords``, ``HoodieMetadataPayload``): a commit,
  deltacommit, replacecommit or compaction adds one ``__all_partitions__`` record naming every partition it
  wrote (size 0) and, per partition, a file list of the file names its write stats name, each with the largest
  size a stat gives; a clean adds, per partition, tombstones (``isDeleted``) of the files it deleted, and a
  partition-list tombstone of the partitions it deleted. The non-partitioned table's partition is ``.``. Each
  record is a ``HoodieMetadataRecord`` whose ``key`` field is empty (the key is the HFile row), written under the
  schema of the table version's Hudi release.
- **Initialization** (``HoodieBackedTableMetadataWriter.initializeFromFilesystem``): the metadata table is
  created with its own ``hoodie.properties`` (``HoodieMetadataWriteUtils``: merge-on-read, record key ``key``,
  payload ``HoodieMetadataPayload``, key generator ``HOODIE_TABLE_METADATA``, base format HFILE, no meta fields,
  merge mode CUSTOM), and a deltacommit at the first free instant of ``00000000000000000`` plus milliseconds
  (``generateUniqueInstantTime``) writes the file group ``files-0000-0``: an empty delete block in the log file
  ``.files-0000-0_<init>.log.1_0-0-0`` and a base HFile listing every partition and file of completed instants.
- **Updates** (``HoodieBackedTableMetadataWriter.update``): each data instant's records are one
  HFILE_DATA_BLOCK (header SCHEMA, then INSTANT_TIME) in a new log file ``.files-0000-0_<instant>.log.1_<token>``
  committed as a deltacommit of the same instant time on the metadata table's timeline, before the data
  instant completes — so a data instant that did not complete has a deltacommit readers skip.
- **Rollback** (``update(HoodieRollbackMetadata)``): the metadata table's deltacommit of the rolled-back
  instant is rolled back by a rollback instant of the data rollback's time; no records are written.
- **Table services** (``compactIfNecessary``, ``cleanIfNecessary``, ``validateCompactionScheduling``): before a
  deltacommit, ten completed deltacommits since the last compaction make a compaction at a new instant (a
  ``commit`` on the metadata timeline, base HFile ``files-0000-0_<token>_<instant>.hfile``), then a clean
  keeping three commits.
- **Archival** (``HoodieMetadataWriteUtils.createMetadataWriteConfig``, ``TimelineArchiverV2``,
  ``TimelineUtils.getEarliestInstantForMetadataArchival``): after its table services the metadata table's
  timeline is archived like a merge-on-read table's, keeping one commit more than its data table at each end
  (``metadata_archive_config``), nothing from its data table's earliest commit or pending instant on
  (``earliest_for_metadata_archival``) and nothing from its own latest compaction on
  (``metadata_archival_retains``, which says why).
- **Default** (``HoodieMetadataConfig.ENABLE``, true): a new table of version 8 or 9 gets the metadata table
  unless ``hoodie.metadata.enable=false`` (``enabled_by_default``); a new version 6 table gets none, as this
  writer does not write that version's metadata table (Hudi 0.15.x would create one).
- **Other partitions** (``HoodieTable.deleteMetadataIndexIfNecessary``, ``HoodieTableConfig``
  ``setMetadataPartitionState``): those this writer does not keep are deleted, with their index definitions.

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; the version 6 metadata table of 0.15.x is not
written here): ``HoodieBackedTableMetadataWriter``, ``HoodieTableMetadataUtil``, ``FilesIndexer``,
``HoodieMetadataPayload``, ``HoodieMetadataWriteUtils``, ``HoodieMetadataConfig``, ``HoodieTable``,
``HoodieTableConfig``, ``HoodieTableMetadata`` (``SOLO_COMMIT_TIMESTAMP``) and ``HoodieAvroHFileWriter``.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

import fastavro

from spec.actions.archive import ArchiveConfig
from spec.config.registry import default
from spec.config.table_config import TableConfig, table_checksum
from spec.config.write_operation import WriteOperationType
from spec.file_group.bloom_filter import DynamicBloomFilter
from spec.file_group.file_system_view import DataFile
from spec.file_group.log_file.delete_block import encode_delete_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock
from spec.metadata.hfile import KeyValue
from spec.metadata.hfile_writer import build_hfile
from spec.metadata.index_keys import java_hash_map_order
from spec.metadata.metadata_table import (
    ALL_PARTITIONS_KEY,
    FILES_PARTITION,
    NON_PARTITIONED_NAME,
    TYPE_FILE_LIST,
    TYPE_PARTITION_LIST,
    FileInfo,
    Listing,
)
from spec.metadata.record_schema import metadata_commit_schema_json, metadata_record_schema_json
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieCleanMetadata, HoodieCompactionOperation, HoodieCompactionPlan
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata, jackson_pretty, write_stat
from spec.timeline.instant import Action

FILE_GROUP_ID = "files-0000-0"
"""The files partition's one file group (``HoodieTableMetadataUtil.getFileIDForFileGroup``)."""
SOLO_COMMIT_TIMESTAMP = "0" * 17
"""The first initialization instant of a table version 8+ metadata table (``HoodieTableMetadata``)."""
WRITE_TOKEN = "0-0-0"
"""Write token of the metadata files written here (one task); Hudi's initial empty log file has it too."""
BLOOM_FILTER_ENTRIES = 10_000
BLOOM_FILTER_FPP = 1e-9
"""A base HFile's bloom filter: DYNAMIC_V0 rows of 10,000 keys at a false-positive rate of 1e-9, as every base
HFile of the real tables holds (``HoodieAvroHFileWriter``'s filter, base64 text in the ``bloomFilter`` meta
block)."""
BLOOM_FILTER_TYPE = "DYNAMIC_V0"
BLOOM_FILTER_META = b"bloomFilter"


# --8<-- [start:records]
def metadata_record_schema(table_version: int) -> str:
    """The ``HoodieMetadataRecord`` Avro schema as Hudi embeds it in every metadata HFile and block: Hudi 1.0's
    for table version 8, 1.1's (column stats with ``valueType``) for 9 (``spec.metadata.record_schema``). A
    table's metadata files all carry one schema — readers such as hudi-rs do not reconcile blocks written under
    both."""
    return metadata_record_schema_json(8 if table_version == 8 else 9)


@lru_cache(maxsize=4)
def _parsed_schema(table_version: int) -> Any:
    return fastavro.parse_schema(json.loads(metadata_record_schema(table_version)))


def partition_identifier(partition_path: str) -> str:
    """``HoodieTableMetadataUtil.getPartitionIdentifier``: the partition's key, ``.`` for the table's one
    partition when it is not partitioned."""
    return partition_path or NON_PARTITIONED_NAME


def encode_record(key: str, listing: Listing, table_version: int = 9, file_name: str | None = None) -> bytes:
    """The Avro binary of one files-partition ``HoodieMetadataRecord``: type 1 for ``__all_partitions__``,
    2 for a partition's file list; the ``key`` field empty, the other payloads null; the names in ``HashMap``
    order (``spec.metadata.index_keys.java_hash_map_order``). A compaction's records also name their base file in
    ``_hoodie_file_name`` (``HoodieAvroHFileWriter`` writing through a compaction's handle)."""
    put = list(listing)  # insertion order: the listing's
    names = [put[i] for i in java_hash_map_order(put)]
    record = {"key": "", "type": TYPE_PARTITION_LIST if key == ALL_PARTITIONS_KEY else TYPE_FILE_LIST,
              "filesystemMetadata": {n: {"size": listing[n].size, "isDeleted": listing[n].is_deleted} for n in names},
              "_hoodie_file_name": file_name}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed_schema(table_version), record)
    return out.getvalue()


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def commit_records(md: CommitMetadata) -> dict[str, dict[str, FileInfo]]:
    """``FilesIndexer.convertMetadataToFilesPartitionRecords(HoodieCommitMetadata)``: every partition written, and
    per partition the files its write stats name with the largest size reported for each (and the CDC files
    of its CDC stats). A delete_partition replacecommit adds nothing to the partition list: its partitions
    leave the listing when the clean that deletes their files says so (``isPartitionDeleted``)."""
    out: dict[str, dict[str, FileInfo]] = {
        ALL_PARTITIONS_KEY: {partition_identifier(p): FileInfo(0) for p in md.partition_to_write_stats}}
    for p, stats in md.partition_to_write_stats.items():
        files: dict[str, FileInfo] = {}
        for s in stats:
            if s.path:
                name = _file_name(s.path)
                files[name] = FileInfo(max(s.file_size_in_bytes, files[name].size if name in files else 0))
            for cdc_path, size in (s.cdc_stats or {}).items():
                files[_file_name(cdc_path)] = FileInfo(size)
        out[partition_identifier(p)] = files
    return out


def clean_records(md: HoodieCleanMetadata) -> dict[str, dict[str, FileInfo]]:
    """``convertMetadataToFilesPartitionRecords(HoodieCleanMetadata)``: per partition, a tombstone for every file
    the clean deleted (its delete path patterns); the partitions it deleted, tombstoned in the partition list."""
    out: dict[str, dict[str, FileInfo]] = {}
    deleted = {}
    for p, pm in md.partition_metadata.items():
        out[partition_identifier(p)] = {_file_name(f): FileInfo(0, True) for f in pm.delete_path_patterns}
        if pm.is_partition_deleted:
            deleted[partition_identifier(p)] = FileInfo(0, True)
    if deleted:
        out[ALL_PARTITIONS_KEY] = deleted
    return out


def listing_records(files: Iterable[DataFile]) -> dict[str, dict[str, FileInfo]]:
    """``initializeFilesPartition``: the partition list and every partition's files, from a listing."""
    out: dict[str, dict[str, FileInfo]] = {ALL_PARTITIONS_KEY: {}}
    for f in files:
        key = partition_identifier(f.partition_path)
        out[ALL_PARTITIONS_KEY][key] = FileInfo(0)
        out.setdefault(key, {})[f.name] = FileInfo(f.size)
    return out


def listed_at_initialization(file_instant: str, timeline: Timeline) -> bool:
    """``listAllPartitionsFromFilesystem``: a data file is listed when the metadata table is initialized unless
    its instant is pending on the active timeline, or is neither on it nor archived and later than its first
    instant (a write whose instant is gone); files of archived instants are listed — those earlier than the
    active timeline, and those the archived timeline holds (``Timeline.completion_time``: an archived commit
    may be newer than a clean left pending on the active timeline)."""
    instant = next((i for i in timeline.instants if i.requested == file_instant), None)
    if instant is not None:
        return instant.is_completed
    if timeline.completion_time(file_instant) is not None:
        return True
    first = min((i.requested for i in timeline.instants), default=None)
    return first is not None and file_instant < first
# --8<-- [end:records]


# --8<-- [start:files]
def records_hfile(records: Mapping[str, Listing], create_time_ms: int, base_file: bool,
                  table_version: int = 9, file_name: str | None = None) -> bytes:
    """The HFile of ``records`` (rows sorted by key). A base file also carries the keys' DYNAMIC_V0 bloom filter
    (10,000 entries a row, fpp 1e-9, base64 text in the ``bloomFilter`` meta block) and the file info
    ``bloomFilterTypeCode``, ``minRecordKey`` and ``maxRecordKey`` (``HoodieAvroHFileWriter``)."""
    entries = [KeyValue(k.encode(), encode_record(k, v, table_version, file_name)) for k, v in sorted(records.items())]
    info: list[tuple[str, bytes]] = [("schema", metadata_record_schema(table_version).encode())]
    metas: list[tuple[bytes, bytes]] = []
    if base_file:
        bloom = DynamicBloomFilter(row_entries=BLOOM_FILTER_ENTRIES, fpp=BLOOM_FILTER_FPP)
        for k in sorted(records):
            bloom.add(k)
        keys = sorted(records) or [""]
        info += [("bloomFilterTypeCode", BLOOM_FILTER_TYPE.encode()),
                 ("minRecordKey", keys[0].encode()), ("maxRecordKey", keys[-1].encode())]
        metas.append((BLOOM_FILTER_META, base64.b64encode(bloom.serialize())))
    return build_hfile(entries, info, metas, create_time_ms)


def hfile_data_block(instant: str, records: Mapping[str, Listing], create_time_ms: int,
                     table_version: int = 9) -> LogBlock:
    """The log block of one metadata deltacommit: an HFILE_DATA_BLOCK, header SCHEMA then INSTANT_TIME."""
    header = ((int(HeaderKey.SCHEMA), metadata_record_schema(table_version)), (int(HeaderKey.INSTANT_TIME), instant))
    return LogBlock(BlockType.HFILE_DATA_BLOCK, header,
                    records_hfile(records, create_time_ms, base_file=False, table_version=table_version))


def init_log_block(instant: str) -> LogBlock:
    """The block a new file group's log file starts with: an empty delete block, header INSTANT_TIME."""
    return LogBlock(BlockType.DELETE_BLOCK, ((int(HeaderKey.INSTANT_TIME), instant),), encode_delete_records([]))


def log_file_name(instant: str, write_token: str) -> str:
    """``.files-0000-0_<instant>.log.1_<write token>`` (table version 8+: one log file per deltacommit)."""
    return f".{FILE_GROUP_ID}_{instant}.log.1_{write_token}"


def base_file_name(instant: str, write_token: str) -> str:
    """``files-0000-0_<write token>_<instant>.hfile``."""
    return f"{FILE_GROUP_ID}_{write_token}_{instant}.hfile"


def init_instant(existing: Iterable[str]) -> str:
    """``generateUniqueInstantTime``: ``SOLO_COMMIT_TIMESTAMP`` plus the fewest milliseconds not on the metadata
    table's timeline."""
    taken = set(existing)
    offset = 0
    while f"{int(SOLO_COMMIT_TIMESTAMP) + offset:017d}" in taken:
        offset += 1
    return f"{int(SOLO_COMMIT_TIMESTAMP) + offset:017d}"


def deltacommit_metadata(instant_files: Sequence[tuple[str, int]], num_writes: int,
                         operation: str = WriteOperationType.UPSERT_PREPPED.value) -> CommitMetadata:
    """The metadata table deltacommit's commit metadata: one write stat per file it wrote in ``files``."""
    stats = tuple(write_stat(fileId=FILE_GROUP_ID, path=f"{FILES_PARTITION}/{name}", partitionPath=FILES_PARTITION,
                             numWrites=num_writes, numInserts=num_writes if name.endswith(".hfile") else 0,
                             totalWriteBytes=size, fileSizeInBytes=size, prevCommit=SOLO_COMMIT_TIMESTAMP)
                  for name, size in instant_files)
    return CommitMetadata({FILES_PARTITION: stats}, operation_type=operation)
# --8<-- [end:files]


# --8<-- [start:services]
COMPACT_MAX_DELTA_COMMITS: int = default("metadata_compact_max_delta_commits")
"""``hoodie.metadata.compact.max.delta.commits`` (``HoodieMetadataConfig.COMPACT_NUM_DELTA_COMMITS``): 10."""
CLEANER_COMMITS_RETAINED: int = default("metadata_cleaner_commits_retained")
"""``hoodie.metadata.cleaner.commits.retained`` (``HoodieMetadataConfig.CLEANER_COMMITS_RETAINED``): 3."""


def latest_compaction(timeline: Timeline) -> str | None:
    """``HoodieBackedTableMetadata.getLatestCompactionTime``: the requested time of the metadata table's latest
    completed compaction (a ``commit`` on its timeline); None before its first."""
    return max((i.requested for i in timeline.instants if i.action == Action.COMMIT and i.is_completed), default=None)


def compaction_due(timeline: Timeline, max_delta_commits: int = COMPACT_MAX_DELTA_COMMITS) -> bool:
    """``HoodieBackedTableMetadataWriter.compactIfNecessary``: the metadata table is compacted, before its next
    deltacommit, once it has ``max_delta_commits`` completed deltacommits since its last completed compaction
    (a ``commit`` on its timeline) or since it began."""
    last = latest_compaction(timeline) or ""
    return sum(1 for i in timeline.instants if i.is_completed and i.action == Action.DELTA_COMMIT
               and i.requested > last) >= max_delta_commits


def compaction_allowed(block_instants: Iterable[str], data_timeline: Timeline) -> bool:
    """``compactIfNecessary``: no block to compact belongs to a data instant still pending on the data timeline
    (requested or inflight there, completed on the metadata table: it may yet be rolled back, and with it its
    deltacommit). Hudi 1.x compacts only up to just before the earliest such instant; this writer waits until
    there is none. A data instant archived from the data timeline is not pending: its blocks are compacted
    (a block counted as pending because its instant was archived would hold compaction back for ever)."""
    pending = {i.requested for i in data_timeline.instants if not i.is_completed}
    return not any(t in pending for t in block_instants)


def metadata_archive_config(data: ArchiveConfig) -> ArchiveConfig:
    """``HoodieMetadataWriteUtils.createMetadataWriteConfig``: the metadata table keeps one commit more than its
    data table at each end (``hoodie.keep.min.commits`` + 1, ``hoodie.keep.max.commits`` + 1; by default 21
    and 31)."""
    return ArchiveConfig(data.keep_min_commits + 1, data.keep_max_commits + 1)


def earliest_for_metadata_archival(data_timeline: Timeline) -> str | None:
    """``TimelineUtils.getEarliestInstantForMetadataArchival`` (archival beyond savepoints off): the earlier of the
    data table's first commit, deltacommit, replacecommit or clustering, in any state, and its first instant of
    any action not completed. The metadata table archives nothing from there on: a rollback of a data instant
    still on the data timeline must find its deltacommit. Clean and rollback instants do not count, so an old
    completed clean cannot hold the metadata timeline back. None for an empty data timeline."""
    commits = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.CLUSTERING)
    first_commit = next((i.requested for i in data_timeline.instants if i.action in commits), None)
    first_pending = next((i.requested for i in data_timeline.instants if not i.is_completed), None)
    return min((t for t in (first_commit, first_pending) if t is not None), default=None)


def metadata_archival_retains(timeline: Timeline, data_timeline: Timeline) -> tuple[str, ...] | None:
    """The instants the metadata table's archival keeps with all that follows (``plan_archive``'s ``retain``),
    or None when it archives nothing: its latest compaction (``latest_compaction``; None before the first),
    the earliest deltacommit that completed after that compaction was requested, and its data table's earliest
    commit or pending instant (``earliest_for_metadata_archival``).

    A deltacommit requested before the compaction but completed after it belongs to the compaction's new
    slice (slices follow completion times from table version 8 on), and Hudi 1.x counts it among the
    deltacommits since the compaction (``CompactionUtils.getDeltaCommitsSinceLatestCompaction``:
    ``findInstantsModifiedAfterByCompletionTime``). This writer compacts the metadata table while a data
    instant commits, before that instant's deltacommit, so each compaction is followed by one such deltacommit.

    The *data* table's archival is held back behind the metadata table's latest compaction too, as Hudi holds
    it (``spec.actions.archive.metadata_table_retains``, ``TimelineArchiverV2``), so that every block not yet
    compacted belongs to an instant still on one of the two active timelines, which is what Hudi's readers
    accept (``HoodieTableMetadataUtil.getValidInstantTimestamps``)."""
    last = latest_compaction(timeline)
    if last is None:
        return None
    since = [i.requested for i in timeline.instants if i.action == Action.DELTA_COMMIT and i.is_completed
             and (i.completed or i.requested) > last and i.requested != last]
    start = min([last, *since])
    earliest = earliest_for_metadata_archival(data_timeline)
    return (start,) if earliest is None else (start, earliest)


def merged_by_compaction(timeline: Timeline, instant: str) -> bool:
    """``validateRollback``: whether the metadata instant at ``instant`` completed before the latest completed
    metadata compaction was requested — its records are in that compaction's base file."""
    done = timeline.get(instant)
    last = latest_compaction(timeline)
    return bool(done and done.is_completed and last and (done.completed or done.requested) <= last)


def compacted_records(merged: Mapping[str, Listing]) -> dict[str, dict[str, FileInfo]]:
    """The records a compaction writes to the new base HFile: each key's merged listing without tombstones
    (nothing older remains for a tombstone to hide)."""
    return {k: {n: i for n, i in v.items() if not i.is_deleted} for k, v in merged.items()}


def compaction_plan(base_instant: str, base_file: str | None, log_files: Sequence[str],
                    log_bytes: int) -> HoodieCompactionPlan:
    """The metadata compaction's plan: one operation on ``files-0000-0`` (its base file and log files)."""
    op = HoodieCompactionOperation(
        base_instant_time=base_instant, delta_file_paths=tuple(log_files), data_file_path=base_file,
        file_id=FILE_GROUP_ID, partition_path=FILES_PARTITION,
        metrics={"TOTAL_LOG_FILES": float(len(log_files)), "TOTAL_IO_MB": 0.0, "TOTAL_IO_READ_MB": 0.0,
                 "TOTAL_LOG_FILES_SIZE": float(log_bytes), "TOTAL_IO_WRITE_MB": 0.0})
    return HoodieCompactionPlan(operations=(op,), extra_metadata={}, version=2)


def format_metadata_commit(md: CommitMetadata, table_version: int) -> bytes:
    """A metadata table commit's file: ``md`` with the record schema (``metadata_commit_schema_json``) in its
    extra metadata, as Hudi's metadata writer records it on every deltacommit and compaction."""
    extra = {**md.extra_metadata, "schema": metadata_commit_schema_json(table_version)}
    return format_commit_metadata(replace(md, extra_metadata=extra), table_version)


def compaction_commit_metadata(base_name: str, base_size: int, prev_base_instant: str, records: int,
                               log_files: int) -> CommitMetadata:
    """The metadata compaction's ``commit``: one write stat for the new base HFile."""
    stat = write_stat(fileId=FILE_GROUP_ID, path=f"{FILES_PARTITION}/{base_name}", partitionPath=FILES_PARTITION,
                      prevCommit=prev_base_instant, numWrites=records, totalWriteBytes=base_size,
                      fileSizeInBytes=base_size, totalLogFilesCompacted=log_files)
    return CommitMetadata({FILES_PARTITION: (stat,)}, compacted=True,
                          operation_type=WriteOperationType.COMPACT.value)
# --8<-- [end:services]


# --8<-- [start:table]
def metadata_table_config(data: TableConfig) -> TableConfig:
    """The metadata table's ``hoodie.properties`` (``HoodieBackedTableMetadataWriter.initializeMetaClient``)."""
    props = {
        "hoodie.table.name": f"{data.name}_metadata",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": str(data.table_version),
        "hoodie.table.initial.version": str(data.table_version),
        "hoodie.timeline.layout.version": "2",
        "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history",
        "hoodie.archivelog.folder": "history",
        "hoodie.table.recordkey.fields": "key",
        "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.populate.meta.fields": "false",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        "hoodie.datasource.write.drop.partition.columns": "false",
    }
    props["hoodie.table.checksum"] = str(table_checksum(None, props["hoodie.table.name"]))
    return TableConfig(props)


# --8<-- [start:partition_state]
def with_partition_state(config: TableConfig, partition: str, enabled: bool) -> TableConfig:
    """``HoodieTableConfig.setMetadataPartitionState``: ``hoodie.table.metadata.partitions`` with the partition
    added (and dropped from ``hoodie.table.metadata.partitions.inflight``) or removed (sorted, comma-separated);
    removing ``files`` clears both properties."""
    names = set(config.metadata_partitions)
    inflight = set(config.metadata_partitions_inflight)
    if enabled:
        names.add(partition)
        inflight.discard(partition)
    else:
        names.discard(partition)
        inflight.discard(partition)
        if partition == FILES_PARTITION:
            names, inflight = set(), set()
    props = {"hoodie.table.metadata.partitions": ",".join(sorted(names))}
    if inflight or config.get("hoodie.table.metadata.partitions.inflight") is not None:
        props["hoodie.table.metadata.partitions.inflight"] = ",".join(sorted(inflight))
    return config.with_props(**props)


def with_partition_inflight(config: TableConfig, partition: str) -> TableConfig:
    """``HoodieTableConfig.setMetadataPartitionsInflight``: the partition is being built — named in
    ``hoodie.table.metadata.partitions.inflight`` and no longer in ``hoodie.table.metadata.partitions``, so
    no reader lists the table through it until ``with_partition_state(..., True)`` completes it. For
    ``files``, every other partition goes with it (they need the file listing)."""
    names = set(config.metadata_partitions)
    names = set() if partition == FILES_PARTITION else names - {partition}
    inflight = set(config.metadata_partitions_inflight) | {partition}
    return config.with_props(**{"hoodie.table.metadata.partitions": ",".join(sorted(names)),
                                "hoodie.table.metadata.partitions.inflight": ",".join(sorted(inflight))})
# --8<-- [end:partition_state]


WRITTEN_TABLE_VERSIONS = frozenset({8, 9})
"""The table versions whose metadata table this writer keeps (the version 6 one of Hudi 0.15.x is not written)."""


def enabled_by_default(table_version: int) -> bool:
    """Whether a new table gets a metadata table when ``hoodie.metadata.enable`` is not given.

    Hudi's ``HoodieMetadataConfig.ENABLE`` defaults to true (since 0.11.0, so on Hudi 0.15.x for table version 6
    as on 1.x for versions 8 and 9): a table's first commit initializes its ``files`` partition. Here a new
    version 8 or 9 table gets one as Hudi 1.x does; a new version 6 table gets none — the one departure from
    Hudi's default, since this writer does not write the version 6 metadata table
    (``WRITTEN_TABLE_VERSIONS``)."""
    return table_version in WRITTEN_TABLE_VERSIONS


MAINTAINED_PARTITIONS = frozenset({FILES_PARTITION})
"""The metadata partitions this writer keeps. Every other one (column_stats, partition_stats, record_index,
bloom_filters, secondary and expression indexes) is deleted by its first write, as Hudi deletes the index of a
writer that has it off (``HoodieTable.deleteMetadataIndexIfNecessary``; for secondary and expression indexes,
which Hudi only drops on ``DROP INDEX``, as that drop does) — never left stale."""


def partitions_to_delete(config: TableConfig) -> list[str]:
    """The table's metadata partitions this writer does not keep, in the order the table names them."""
    return [p for p in config.metadata_partitions if p not in MAINTAINED_PARTITIONS]


def index_definitions_without(text: str, names: Iterable[str]) -> str:
    """The index definitions file (``.hoodie/.index_defs/index.json``, Jackson's pretty print) without the
    definitions of ``names`` (``HoodieTableMetaClient.deleteIndexDefinition``)."""
    doc = json.loads(text)
    defs = doc.get("indexDefinitions") or {}
    doc["indexDefinitions"] = {k: v for k, v in defs.items() if k not in set(names)}
    return jackson_pretty(doc)
# --8<-- [end:table]
