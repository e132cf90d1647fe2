"""The partitioned record index (``hoodie.metadata.record.level.index.enable``,
``hoodie.index.type=RECORD_LEVEL_INDEX``): the ``record_index`` metadata partition with file groups per data
partition, each data partition's keys in its own file groups, a key unique within its partition and not across
the table.

- **Settings** (``HoodieMetadataConfig``, Apache Hudi 1.2.0): kept when
  ``hoodie.metadata.record.level.index.enable`` is true; ``hoodie.metadata.record.level.index.min.filegroup.count``
  (1) and ``...max.filegroup.count`` (10) bound each data partition's file group count, which
  ``estimateFileGroupCount`` sizes from the partition's keys with the record index's growth factor and file group
  size (``spec.metadata.record_index.estimate_file_group_count``). ``HoodieIndex.IndexType.RECORD_LEVEL_INDEX``
  tags by it; ``RECORD_INDEX`` is the global one.
- **Definition**: the same ``record_index`` definition as the global form, ``indexOptions`` ``isPartitioned``
  ``true``, version ``V1`` (measured on table versions 9 and 8: Apache Hudi 1.2.0 writes both, and writes the
  ``version`` field on version 8 too).
- **File groups** (``HoodieTableMetadataUtil.getFileIDForFileGroup`` with a data partition): file group ``i`` of
  data partition ``p`` is ``record-index-<escape_file_name(p)>-<i:04d>-0``
  (``spec.metadata.partition_type.partitioned_file_group_id``); key ``k`` of ``p`` goes to file group
  ``mapRecordKeyToFileGroupIndex(k, n)``, ``n`` the file group count of ``p``. The HFile key is the record key
  alone, the record's ``partitionName`` the data partition.
- **New partitions** (``HoodieBackedTableMetadataWriter``, measured on 1.2.0): on a new table the index is
  initialized empty (a deltacommit without record index files: no data partition yet); a data commit that first
  writes to a data partition creates its file groups in its own deltacommit, at the commit's instant — each a log
  file of an empty delete block (write token ``0-0-0``, outside the write stats) — with the minimum count
  (``RECORD_LEVEL_INDEX_MIN_FILE_GROUP_COUNT_PROP``), then the commit's keys in log files of their own.
- **Updates**: as the global form's, keyed by (partition, key): a key written to a partition it was not held in is
  an insert there even when another partition holds it; a delete removes the key from the partition named
  (a delete naming a partition that does not hold the key changes nothing, measured).

Source (Apache Hudi 1.2.0, measured; not in 0.15.x or 1.0.x, whose record index is global only; the option is
new in 1.1.x, which is not measured here): ``HoodieMetadataConfig`` (``RECORD_LEVEL_INDEX_ENABLE_PROP``,
``RECORD_LEVEL_INDEX_MIN_FILE_GROUP_COUNT_PROP``, ``RECORD_LEVEL_INDEX_MAX_FILE_GROUP_COUNT_PROP``),
``HoodieIndex.IndexType`` (``RECORD_LEVEL_INDEX``), ``HoodieTableMetadataUtil`` (``getFileIDForFileGroup``,
``getDataTablePartitionNameFromFileGroupName``, ``mapRecordKeyToFileGroupIndex``),
``SparkMetadataTableRecordLevelIndex`` (the partition-scoped lookup).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Final

from spec.errors import InvalidConfig
from spec.metadata.index_definition import IndexDefinition
from spec.metadata.index_keys import RecordLocation, file_group_for_key
from spec.metadata.partition_type import RECORD_INDEX, data_partition_of, file_group_index, partitioned_file_group_id
from spec.metadata.record_index import RECORD_INDEX_PARTITION, Sizing, estimate_file_group_count, record_index_entries
from spec.storage.hoodie_storage import Storage

ENABLE_KEY: Final = "hoodie.metadata.record.level.index.enable"
INDEX_TYPE: Final = "RECORD_LEVEL_INDEX"
"""``HoodieIndex.IndexType.RECORD_LEVEL_INDEX``: tags by the partitioned record index."""
IS_PARTITIONED: Final = "isPartitioned"

PartitionKey = tuple[str, str]
"""(data partition, record key): what the partitioned index is keyed by."""
Location = tuple[str, str]
"""(data partition, file id) of a data file group."""


# --8<-- [start:sizing]
@dataclass(frozen=True)
class PartitionedSizing:
    """Each data partition's file group bounds (``RECORD_LEVEL_INDEX_MIN/MAX_FILE_GROUP_COUNT_PROP``), Apache Hudi
    1.2.0's defaults; growth factor and file group size are the global form's."""

    min_file_groups: int = 1
    max_file_groups: int = 10


def partition_file_group_count(record_count: int, sizing: PartitionedSizing = PartitionedSizing(),
                               shared: Sizing | None = None) -> int:
    """The file group count of a data partition holding ``record_count`` keys when the index is built
    (``estimateFileGroupCount`` with the partitioned bounds, and the growth factor and file group size of
    ``shared``, the record index's settings; Hudi's defaults when None)."""
    return estimate_file_group_count(record_count, replace(shared or Sizing(), min_file_groups=sizing.min_file_groups,
                                                           max_file_groups=sizing.max_file_groups))


def new_partition_file_group_count(sizing: PartitionedSizing = PartitionedSizing()) -> int:
    """The file group count of a data partition a commit writes first, after the index was built: the minimum."""
    return max(1, sizing.min_file_groups)
# --8<-- [end:sizing]


# --8<-- [start:definition]
def definition(partitioned: bool) -> IndexDefinition:
    """The ``record_index`` definition Apache Hudi 1.2.0 writes for the global (``isPartitioned`` false) or the
    partitioned form (true), version ``V1`` on table versions 8 and 9."""
    return IndexDefinition(RECORD_INDEX_PARTITION, RECORD_INDEX_PARTITION, "", (),
                           {IS_PARTITIONED: str(partitioned).lower()}, "V1")


def is_partitioned(found: IndexDefinition | None) -> bool:
    """Whether a ``record_index`` definition is the partitioned form's."""
    return found is not None and str(found.index_options.get(IS_PARTITIONED, "false")).lower() == "true"


def check_index_form(table_partitioned: bool | None, asked_partitioned: bool) -> None:
    """A write keeps the record index in the form the table has: asking for the other form (the global
    ``hoodie.metadata.record.index.enable`` on a partitioned one, or the reverse) is refused, as the two index
    keys differently (a key unique per partition or across the table). ``table_partitioned`` None: no index yet."""
    if table_partitioned is None or table_partitioned == asked_partitioned:
        return
    have, want = ("partitioned", "global") if table_partitioned else ("global", "partitioned")
    raise InvalidConfig(f"the table's record index is the {have} one, and this write asks for the {want} one",
                        hint=("set hoodie.metadata.record.level.index.enable=true and hoodie.index.type="
                              "RECORD_LEVEL_INDEX" if table_partitioned else
                              "set hoodie.metadata.record.index.enable=true and hoodie.index.type=RECORD_INDEX")
                        + ", or write once with neither (which drops the index) and turn the other on")
# --8<-- [end:definition]


# --8<-- [start:file_groups]
def file_group_of(data_partition: str, key: str, count: int) -> str:
    """The file id of the index file group holding ``key`` of ``data_partition`` (``count`` file groups)."""
    return partitioned_file_group_id(RECORD_INDEX_PARTITION, data_partition, file_group_for_key(key, count))


def file_group_counts(file_ids: Iterable[str]) -> dict[str, int]:
    """Each data partition's file group count, from the file ids of the index's files (the highest number + 1)."""
    out: dict[str, int] = {}
    for fid in file_ids:
        if not fid.startswith(RECORD_INDEX.file_id_prefix):
            continue
        p = data_partition_of(fid)
        out[p] = max(out.get(p, 0), file_group_index(RECORD_INDEX_PARTITION, fid) + 1)
    return out


def by_index_file_group(keys: Iterable[PartitionKey], counts: Mapping[str, int]) -> dict[str, list[str]]:
    """The keys grouped by the index file group they go to, each group's keys sorted; a partition missing from
    ``counts`` gets ``new_partition_file_group_count``."""
    out: dict[str, list[str]] = {}
    for p, k in sorted(keys):
        out.setdefault(file_group_of(p, k, counts.get(p) or new_partition_file_group_count()), []).append(k)
    return out
# --8<-- [end:file_groups]


# --8<-- [start:changes]
def partitioned_changes(held: Mapping[PartitionKey, str], placed: Mapping[PartitionKey, str],
                        removed: Mapping[PartitionKey, str]) -> tuple[dict[PartitionKey, str], set[PartitionKey]]:
    """A commit's changes to the partitioned index, keyed by (partition, key), each mapped to the data file id:
    upserts, the placed keys the index does not hold at that file group of the partition; deletes, the removed
    keys it holds there that the commit did not place again in the partition."""
    upserts = {pk: fid for pk, fid in placed.items() if held.get(pk) != fid}
    deletes = {pk for pk, fid in removed.items() if held.get(pk) == fid and pk not in placed}
    return upserts, deletes


def keys_in_two_partitions(pairs: Iterable[PartitionKey]) -> list[str]:
    """The record keys a batch names in more than one partition, sorted."""
    seen: dict[str, str] = {}
    out: set[str] = set()
    for p, k in pairs:
        if seen.setdefault(k, p) != p:
            out.add(k)
    return sorted(out)
# --8<-- [end:changes]


# --8<-- [start:read]
def read_partitioned_record_index(storage: Storage) -> dict[PartitionKey, RecordLocation]:
    """The partitioned record index of the table at ``storage``, merged (``spec.metadata.record_index.
    record_index_entries``), keyed by (data partition, record key); an empty map when the table has no record
    index."""
    return {(loc.partition_path, k): loc for k, loc in record_index_entries(storage)}
# --8<-- [end:read]


__all__ = ["ENABLE_KEY", "INDEX_TYPE", "PartitionedSizing", "by_index_file_group", "check_index_form", "definition",
           "file_group_counts", "file_group_of", "is_partitioned", "keys_in_two_partitions",
           "new_partition_file_group_count", "partition_file_group_count", "partitioned_changes",
           "read_partitioned_record_index"]
