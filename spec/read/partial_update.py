"""Partial-update log blocks (``IS_PARTIAL``) in a slice's merge: which blocks are partial, what a slice's log
records are read as, and which partial blocks or records are refused.

Apache Hudi 1.2.0's ``MERGE INTO … UPDATE SET`` of some columns on merge-on-read writes a data block whose header
has ``IS_PARTIAL`` = ``true``, its records holding the five meta columns and the assigned columns alone; how such a
record merges is ``spec.read.merge.merge_partial``.

Source (Apache Hudi 1.2.0, measured; the header key is not in 0.15.x, and 1.0.x and 1.1.x define it alike):
``HoodieLogBlock.HeaderMetadataType.IS_PARTIAL``, the file group record buffer (which enables partial
merging on reading such a block) and ``PartialMergerWithKeepValues`` (the merged schema: the fields of both records,
in the reader schema's order), hudi-common/…/hudi/common/table/.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from spec.errors import UnsupportedBlockContent
from spec.file_group.log_file.log_format import HeaderKey, LogBlock
from spec.read.merge import MergeMode, MergeRule
from spec.schema.table_schema import RECORD_KEY


def is_partial(block: LogBlock) -> bool:
    """Whether a data block is a partial-update block: its header's ``IS_PARTIAL`` is ``true``."""
    return block.header_value(HeaderKey.IS_PARTIAL) == "true"


def check_partial_block(schema: pa.Schema, block: LogBlock, rule: MergeRule) -> None:
    """A partial-update block is read when its records carry their record key and, under event-time ordering, the
    ordering field (Apache Hudi 1.2.0's ``MERGE INTO`` refuses an update that does not assign it, measured: "No
    matching assignment found for target table ordering field"): otherwise ``UnsupportedBlockContent``."""
    ordering = rule.ordering_field if rule.mode == MergeMode.EVENT_TIME_ORDERING else None
    missing = [c for c in (RECORD_KEY, ordering) if c and c not in schema.names]
    if missing:
        raise UnsupportedBlockContent(
            f"a partial-update data block (IS_PARTIAL, instant {block.instant_time}) without the column(s) "
            f"{', '.join(missing)}: how Apache Hudi merges its records is not specified here",
            hint="read the table with Apache Hudi, or compact it there")


def log_read_schema(blocks: Sequence[tuple[pa.Schema | None, bool]]) -> pa.Schema | None:
    """The schema a slice's log records are read as, given each applied block's ``(schema, partial)`` (schema None
    for a delete block): the last whole (not partial) data block's, each column a later partial block carries
    taking that block's type, then the columns only partial blocks carry (the last data block's schema where no
    block is partial)."""
    data = [(s, p) for s, p in blocks if s is not None]
    if not data:
        return None
    last_whole = max((i for i, (_, p) in enumerate(data) if not p), default=None)
    fields: dict[str, pa.Field] = {} if last_whole is None else {f.name: f for f in data[last_whole][0] or []}
    for schema, _ in data[0 if last_whole is None else last_whole + 1:]:
        for f in schema or []:
            fields[f.name] = f
    return pa.schema(list(fields.values()))


def unfilled_partial_record(key: str) -> UnsupportedBlockContent:
    """The refusal of a partial record left with no row of its key to take its other columns from: an incremental
    window whose file slices (those the window's files make) lack the key's stored row. Apache Hudi 1.2.0 fails
    that query (measured: ``ClassCastException`` or ``ArrayIndexOutOfBoundsException`` in the projection of
    ``HoodieFileGroupReaderBasedFileFormat``)."""
    return UnsupportedBlockContent(
        f"a partial-update record of key {key} without a stored row or whole record of its key in the slice read: "
        "its other columns are unknown (Apache Hudi 1.2.0 fails such a query: ClassCastException or "
        "ArrayIndexOutOfBoundsException in its incremental query)",
        hint="read a snapshot or time travel, or an incremental window that starts before the key's stored row "
             "was written; or compact the table first")


def record_after_delete(key: str) -> UnsupportedBlockContent:
    """The refusal of a slice that Apache Hudi 1.2.0 fails to read: under commit-time ordering, once a
    partial-update block has been read, a data record of a key whose latest log record is a delete (measured: a
    partial update of key 1, ``DELETE`` of key 2, an upsert of key 2 in one file group, and a snapshot query fails
    with "Exception when reading log file" caused by a ``NullPointerException``; event-time ordering reads it)."""
    return UnsupportedBlockContent(
        f"a log record of key {key} after its delete, in a file slice with a partial-update block under commit-time "
        "ordering: Apache Hudi 1.2.0 fails to read such a slice (NullPointerException reading the log file)",
        hint="compact the file group before writing the key again, or write updates with every column "
             "(hoodie.spark.sql.merge.into.partial.updates=false)")
