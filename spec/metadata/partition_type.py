"""The metadata table's partitions: their names, the record types they hold, their file groups, their index versions.

Every index of a table is one partition of its metadata table (``.hoodie/metadata/<partition>``):

- ``files`` (record type 1, the partition list under ``__all_partitions__``, and 2, a partition's files),
  ``column_stats`` (3), ``bloom_filters`` (4), ``record_index`` (5), ``partition_stats`` (6) — one partition each;
- ``secondary_index_<name>`` (7) and ``expr_index_<name>`` — one partition per index the user creates, named
  ``<index type>_<index name>``; an expression index holds column-statistics-shaped (3) or
  bloom-filter-shaped (4) records, as its function makes them.

A partition's file groups are numbered from 0; file group ``i`` has the file id ``<prefix><i:04d>-0``: the prefix
is fixed per partition type (``files-``, ``col-stats-``, ``bloom-filters-``, ``record-index-``,
``partition-stats-``), and for secondary and expression indexes it is the partition name with every ``_`` turned
into ``-`` followed by ``-`` (``secondary_index_merchant_idx`` → ``secondary-index-merchant-idx-0003-0``).
A partitioned record index (``isPartitioned`` ``true`` on its definition, ``hoodie.metadata.record.level.index.enable``)
has file groups per data partition, numbered from 0 in each: ``record-index-<data partition>-<i:04d>-0``, the data
partition's path escaped by ``escape_file_name`` (``city=la`` → ``record-index-city%3Dla-0000-0``), as Apache Hudi
1.2.0 writes them (``tests/test_hudi_tech_spec_measured.py``).

Each index partition has an index version (``HoodieIndexVersion``, written on its definition in
``.hoodie/.index_defs/index.json`` from table version 9 on, see ``spec.metadata.index_definition``): ``V2`` for a
secondary index created on a version 9 table (its entries are sharded by secondary value,
``spec.metadata.index_keys``) and for the column and partition statistics and expression indexes of a version 9
table;
``V1`` for every index of a version 8 table (``current_index_version``).

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; the version 6 metadata table of 0.15.x has the same
names for the partitions it has): ``MetadataPartitionType`` (``getPartitionPath``, ``getFileIdPrefix``,
``getRecordType``, ``fromPartitionPath``), ``HoodieTableMetadataUtil`` (``getFileIDForFileGroup``,
``getFileGroupIndexFromFileId``, ``getDataTablePartitionNameFromFileGroupName``,
``PARTITION_NAME_SECONDARY_INDEX_PREFIX``, ``PARTITION_NAME_EXPRESSION_INDEX_PREFIX``), ``HoodieIndexVersion``
(``getCurrentVersion``) and ``PartitionPathEncodeUtils`` (``escapeFileName``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spec.errors import MetadataFormatError
from spec.keygen.partition_path import escape_file_name, unescape_path_name


# --8<-- [start:types]
@dataclass(frozen=True)
class PartitionType:
    """One ``MetadataPartitionType``: its partition path (a prefix for the user-named ones), the file id prefix of
    its file groups, the ``HoodieMetadataRecord.type`` values its records carry, and whether the user names it."""

    name: str
    path: str
    file_id_prefix: str
    record_types: tuple[int, ...]
    user_named: bool = False

    def partition_for(self, index_name: str) -> str:
        """The partition of the index ``index_name`` (``secondary_index_`` + ``merchant_idx``); the fixed
        partitions ignore the name."""
        if not self.user_named:
            return self.path
        return index_name if index_name.startswith(self.path) else self.path + index_name


FILES = PartitionType("FILES", "files", "files-", (1, 2))
COLUMN_STATS = PartitionType("COLUMN_STATS", "column_stats", "col-stats-", (3,))
BLOOM_FILTERS = PartitionType("BLOOM_FILTERS", "bloom_filters", "bloom-filters-", (4,))
RECORD_INDEX = PartitionType("RECORD_INDEX", "record_index", "record-index-", (5,))
PARTITION_STATS = PartitionType("PARTITION_STATS", "partition_stats", "partition-stats-", (6,))
SECONDARY_INDEX = PartitionType("SECONDARY_INDEX", "secondary_index_", "secondary-index-", (7,), user_named=True)
EXPRESSION_INDEX = PartitionType("EXPRESSION_INDEX", "expr_index_", "expr-index-", (3, 4), user_named=True)
PARTITION_TYPES = (FILES, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX, PARTITION_STATS, SECONDARY_INDEX,
                   EXPRESSION_INDEX)
"""Every partition type, in ``MetadataPartitionType``'s order of the fixed ones, then the user-named ones."""

RECORD_TYPE_ALL_PARTITIONS = 1
"""The ``files`` partition's record of the partition list (key ``__all_partitions__``), ``ALL_PARTITIONS``."""
# --8<-- [end:types]


def partition_type(partition: str) -> PartitionType:
    """The type of the metadata partition ``partition`` (``MetadataPartitionType.fromPartitionPath``); an unknown
    name raises ``MetadataFormatError``."""
    for t in PARTITION_TYPES:
        if (partition.startswith(t.path) and len(partition) > len(t.path)) if t.user_named else partition == t.path:
            return t
    raise MetadataFormatError(f"{partition!r} is not a metadata table partition",
                              hint="partitions are " + ", ".join(t.path + ("<name>" if t.user_named else "")
                                                                 for t in PARTITION_TYPES))


# --8<-- [start:file_groups]
_FILE_GROUP = re.compile(r"^(.+-)(\d{4,})(?:-0)?$")


def file_id_prefix(partition: str) -> str:
    """The file id prefix of the partition's file groups: the type's (``col-stats-``), or for a secondary or
    expression index the partition name with ``_`` as ``-``, then ``-`` (``getFileIDForFileGroup``)."""
    t = partition_type(partition)
    return partition.replace("_", "-") + "-" if t.user_named else t.file_id_prefix


def file_group_id(partition: str, index: int) -> str:
    """The file id of file group ``index`` of ``partition``: ``<prefix><index, 4 digits>-0``."""
    if index < 0:
        raise MetadataFormatError(f"file group index {index} is negative", hint="file groups are numbered from 0")
    return f"{file_id_prefix(partition)}{index:04d}-0"


def partitioned_file_group_id(partition: str, data_partition: str, index: int) -> str:
    """The file id of file group ``index`` of data partition ``data_partition`` in a partitioned record index:
    ``record-index-<escape_file_name(data_partition)>-<index, 4 digits>-0`` (``getFileIDForFileGroup`` with a
    partition)."""
    if partition_type(partition) is not RECORD_INDEX:
        raise MetadataFormatError(f"metadata partition {partition!r} is not partitioned by data partition",
                                  hint="only the record index has file groups per data partition")
    number = file_group_id(partition, index)[len(RECORD_INDEX.file_id_prefix):]
    return f"{RECORD_INDEX.file_id_prefix}{escape_file_name(data_partition)}-{number}"


def data_partition_of(file_id: str) -> str:
    """The data partition a partitioned record index file group is for (``getDataTablePartitionNameFromFileGroupName``):
    the escaped name between ``record-index-`` and the file group number, unescaped."""
    parts = file_id.split("-")
    if not file_id.startswith(RECORD_INDEX.file_id_prefix) or len(parts) < 5:
        raise MetadataFormatError(f"{file_id!r} is not a file group of a partitioned record index",
                                  hint=f"its file ids are {RECORD_INDEX.file_id_prefix}<data partition>-NNNN-0")
    return unescape_path_name(parts[-3])


def file_group_index(partition: str, file_id: str) -> int:
    """The index of the file group ``file_id`` of ``partition`` (``getFileGroupIndexFromFileId``): the number
    after the partition's prefix (for a partitioned record index, after the escaped data partition); a file id
    of another partition raises ``MetadataFormatError``."""
    m = _FILE_GROUP.match(file_id)
    if m is not None and partition_type(partition) is RECORD_INDEX and m.group(1) != RECORD_INDEX.file_id_prefix \
            and file_id.startswith(RECORD_INDEX.file_id_prefix):
        data_partition = data_partition_of(file_id)
        if partitioned_file_group_id(partition, data_partition, int(m.group(2))) == file_id:
            return int(m.group(2))
    if m is None or m.group(1) != file_id_prefix(partition):
        raise MetadataFormatError(f"{file_id!r} is not a file group of metadata partition {partition!r}",
                                  hint=f"its file ids are {file_id_prefix(partition)}NNNN-0")
    return int(m.group(2))
# --8<-- [end:file_groups]


# --8<-- [start:versions]
V1 = "V1"
V2 = "V2"
INDEX_VERSIONS = (V1, V2)
"""``HoodieIndexVersion`` values, as index definitions spell them."""


def current_index_version(table_version: int, partition: str) -> str:
    """The index version a new index of ``partition`` gets on a table of ``table_version``: from table version 9 on,
    ``V2`` for secondary indexes, column statistics, partition statistics and expression indexes, ``V1`` for the
    record index, bloom filters and files; ``V1`` for every index of an older table. The real version 9 tables
    (Apache Hudi 1.1) show secondary indexes and column statistics at ``V2`` and the record index at ``V1``; the
    other three are as Hudi's specification page states them (no real table has one)."""
    t = partition_type(partition)
    if table_version >= 9 and t in (SECONDARY_INDEX, COLUMN_STATS, PARTITION_STATS, EXPRESSION_INDEX):
        return V2
    return V1
# --8<-- [end:versions]
