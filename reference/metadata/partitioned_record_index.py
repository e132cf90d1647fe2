"""The partitioned record index kept by the writer (``spec.metadata.partitioned_record_index``): built in the
metadata table with file groups per data partition, changed by every data commit in the commit's own metadata
deltacommit (a data partition the commit writes first gets its file groups there), compacted, rolled back and
rebuilt by the same code as the global form (``reference.metadata.record_index``, ``reference.metadata.writer``,
``reference.metadata.table_services``: their file-group work does not depend on the file ids).

A commit's changes are found from the files it wrote as for the global form (``commit_placements``), keyed by
(partition, key): a key is unique within its partition, so the same key in two partitions is two entries.
"""

from __future__ import annotations

from collections.abc import Mapping

from reference.metadata.record_index import (
    Location,
    WrittenFile,
    _records_hfile,
    base_instants,
    commit_placements,
    current_keys_by_partition,
)
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import list_data_files
from spec.file_group.log_file.delete_block import delete_block, delete_record
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock, encode_blocks
from spec.file_group.partition_metadata import PartitionMetadata
from spec.metadata.metadata_table import metadata_storage
from spec.metadata.partition_type import data_partition_of, partitioned_file_group_id
from spec.metadata.partitioned_record_index import (
    PartitionKey,
    by_index_file_group,
    file_group_counts,
    new_partition_file_group_count,
    partition_file_group_count,
    partitioned_changes,
    read_partitioned_record_index,
)
from spec.metadata.record_index import DELETE_ORDERING_VALUE, RECORD_INDEX_PARTITION, Sizing
from spec.metadata.writer import WRITE_TOKEN, init_log_block, metadata_record_schema
from spec.storage.hoodie_storage import Storage
from spec.timeline.commit_metadata import CommitMetadata

DATA_WRITE_TOKEN = "1-0-0"
"""The write token of a commit's log file in a file group the same commit created (whose empty delete block has the
token ``0-0-0`` at the same instant: Apache Hudi's task tokens differ there too)."""


def held_locations(storage: Storage) -> dict[PartitionKey, str]:
    """The partitioned index of the table at ``storage``: (partition, key) → data file id."""
    return {pk: loc.file_id for pk, loc in read_partitioned_record_index(storage).items()}


def commit_changes(storage: Storage, md: CommitMetadata, instant: str,
                   held: Mapping[PartitionKey, str]) -> tuple[dict[PartitionKey, str], set[PartitionKey]]:
    """The partitioned index's changes of a commit (``partitioned_changes``), from the files its write stats name."""
    placed, removed = commit_placements(storage, md, instant, [(k, (p, fid)) for (p, k), fid in held.items()])
    return (partitioned_changes(held, {(loc[0], k): loc[1] for k, loc in placed},
                                {(loc[0], k): loc[1] for k, loc in removed}))


def _counts(mdt: Storage) -> dict[str, int]:
    names = [f.name.lstrip(".").split("_")[0] for f in mdt.list(RECORD_INDEX_PARTITION)
             if f.name.lstrip(".").startswith("record-index-")]
    return file_group_counts(names)


def change_files(mdt: Storage, table: TableConfig, instant: str, upserts: Mapping[PartitionKey, str],
                 deletes: set[PartitionKey], table_version: int, create_time_ms: int) -> list[WrittenFile]:
    """The deltacommit's record index files: a data partition the index has no file group for gets
    ``new_partition_file_group_count`` of them, each a log file of an empty delete block at ``instant`` (not in
    the write stats, as Apache Hudi writes them); then one log file per file group the changes reach, an HFILE
    data block of the upserted keys' records then a delete block of the deleted keys."""
    counts = _counts(mdt)
    created: set[str] = set()
    for p in sorted({p for p, _ in upserts} - set(counts)):
        counts[p] = new_partition_file_group_count()
        for index in range(counts[p]):
            fid = partitioned_file_group_id(RECORD_INDEX_PARTITION, p, index)
            mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/.{fid}_{instant}.log.1_{WRITE_TOKEN}",
                             encode_blocks([init_log_block(instant)]))
            created.add(fid)
    schema_json = metadata_record_schema(table_version)
    ups = by_index_file_group(upserts, counts)
    dels = by_index_file_group((pk for pk in deletes if pk[0] in counts), counts)
    out = []
    for fid in sorted(set(ups) | set(dels)):
        p = data_partition_of(fid)
        blocks = []
        if fid in ups:
            header = ((int(HeaderKey.INSTANT_TIME), instant), (int(HeaderKey.SCHEMA), schema_json))
            locations = {k: (p, upserts[(p, k)]) for k in ups[fid]}
            blocks.append(LogBlock(BlockType.HFILE_DATA_BLOCK, header, _records_hfile(
                instant, locations, ups[fid], table, create_time_ms, table_version)))
        if fid in dels:
            blocks.append(delete_block(instant, schema_json, [
                delete_record(k, RECORD_INDEX_PARTITION, DELETE_ORDERING_VALUE) for k in dels[fid]]))
        name = f".{fid}_{instant}.log.1_{DATA_WRITE_TOKEN if fid in created else WRITE_TOKEN}"
        data = encode_blocks(blocks)
        mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{name}", data)
        out.append(WrittenFile(RECORD_INDEX_PARTITION, fid, name, len(data), len(ups.get(fid, ()))))
    return out


def initialization_files(storage: Storage, instant: str, create_time_ms: int,
                         sizing: Sizing | None = None) -> tuple[list[WrittenFile], int]:
    """The partitioned index's first files: for each data partition holding keys, its file group count
    (``partition_file_group_count`` of its keys, with the growth factor and file group size of ``sizing``), each
    file group a log file of an empty delete block and a base HFile of its keys (a key's instant, its file slice's
    base instant); none on a table without keys (Apache Hudi 1.2.0 then writes only the partition's metadata file).
    The files written and the number of keys."""
    table = TableConfig.load(storage)
    mdt = metadata_storage(storage)
    keys = current_keys_by_partition(storage) if list_data_files(storage) else {}
    instants = base_instants(storage) if keys else {}
    mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/.hoodie_partition_metadata", PartitionMetadata(instant, 1).format())
    version = TableConfig.load(mdt).table_version
    sizes: dict[str, int] = {}
    for p, _ in keys:
        sizes[p] = sizes.get(p, 0) + 1
    counts = {p: partition_file_group_count(n, shared=sizing) for p, n in sizes.items()}
    groups = by_index_file_group(keys, counts)
    out = []
    for p in sorted(counts):
        for index in range(counts[p]):
            fid = partitioned_file_group_id(RECORD_INDEX_PARTITION, p, index)
            log_name = f".{fid}_{instant}.log.1_{WRITE_TOKEN}"
            log = encode_blocks([init_log_block(instant)])
            mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{log_name}", log)
            out.append(WrittenFile(RECORD_INDEX_PARTITION, fid, log_name, len(log), 0))
            if fid not in groups:
                continue
            locations = {k: (p, keys[(p, k)]) for k in groups[fid]}
            data = _records_hfile(instant, locations, groups[fid], table, create_time_ms, version, {
                k: instants[(p, keys[(p, k)])] for k in groups[fid]})
            base_name = f"{fid}_{WRITE_TOKEN}_{instant}.hfile"
            mdt.write_atomic(f"{RECORD_INDEX_PARTITION}/{base_name}", data)
            out.append(WrittenFile(RECORD_INDEX_PARTITION, fid, base_name, len(data), len(groups[fid])))
    return out, len(keys)


__all__ = ["Location", "change_files", "commit_changes", "held_locations", "initialization_files"]
