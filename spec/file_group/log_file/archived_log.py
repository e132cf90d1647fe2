"""The archived log (table version 6): the files of the archived timeline, Hudi log files of archived entries.

A version-6 table's archived timeline lives in ``.hoodie/archived/`` as log files named
``.commits_.archive.<N>_1-0-1`` — file id ``commits``, an empty base instant, extension ``archive``,
log version ``N`` from 1, the write token ``1-0-1`` — holding Avro data blocks (header: SCHEMA only,
the ``HoodieArchivedMetaEntry`` schema of ``spec.timeline.archived_timeline``) of at most ten
entries each (``hoodie.commits.archival.batch``). Archival appends its blocks to the newest file
(on a store that cannot append, it writes the next version); a reader reads every file, oldest
version first, and every data block in it. A block a crash left half written is corrupt: the log
format's reader skips it (``spec.file_group.log_file.log_format``), as Hudi's does.

``format_archive_blocks`` and ``parse_archive_log`` are the pair: entries to the bytes of blocks, and
the entries of a file's bytes.

Source (Apache Hudi 0.15.x for table version 6; 1.0.x and 1.1.x read such archives of tables upgraded to 8
and 9): ``HoodieTimelineArchiver`` (``writeToFile``: blocks of ``hoodie.commits.archival.batch`` records,
header SCHEMA), ``HoodieArchivedTimeline`` (``getArchiveLogPath``, ``readCommit``: the files in version
order), ``ArchivedTimelineV1`` (1.x).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spec.config.table_config import LAYOUT_V1
from spec.file_group.file_naming import ROLLBACK_WRITE_TOKEN, LogFileName, is_log_file_name, parse_log_file_name
from spec.file_group.log_file.log_blocks import decode_avro_records, encode_avro_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, LogBlock, encode_blocks, read_blocks
from spec.timeline.archived_timeline import archived_entry_schema
from spec.timeline.avro_schemas import schema_json
from spec.timeline.layout import HISTORY_DIRS

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage

ARCHIVE_DIR = HISTORY_DIRS[LAYOUT_V1]
"""``.hoodie/archived``: the archive folder of a version-6 table (``hoodie.archivelog.folder``'s default)."""
ARCHIVE_FILE_ID = "commits"
ARCHIVE_EXTENSION = "archive"
ARCHIVE_BATCH = 10
"""``hoodie.commits.archival.batch``: entries per data block."""


# --8<-- [start:archived_log]
def archive_log_name(version: int) -> str:
    """``.commits_.archive.<version>_1-0-1``."""
    return LogFileName(ARCHIVE_FILE_ID, "", version, ROLLBACK_WRITE_TOKEN, ARCHIVE_EXTENSION).format()


def is_archive_log_name(name: str) -> bool:
    """Whether ``name`` is an archived log's file name."""
    return is_log_file_name(name) and parse_log_file_name(name).extension == ARCHIVE_EXTENSION


def format_archive_blocks(entries: Sequence[Mapping[str, Any]], table_version: int) -> bytes:
    """The data blocks of ``entries``, ten to a block, each with the entry schema as its only header."""
    schema = schema_json(archived_entry_schema(table_version))
    blocks = [LogBlock(BlockType.AVRO_DATA_BLOCK, ((int(HeaderKey.SCHEMA), schema),),
                       encode_avro_records(entries[i:i + ARCHIVE_BATCH], schema))
              for i in range(0, len(entries), ARCHIVE_BATCH)]
    return encode_blocks(blocks)


def parse_archive_log(data: bytes) -> list[dict[str, Any]]:
    """The entries of an archived log file, in block order (corrupt blocks skipped)."""
    out: list[dict[str, Any]] = []
    for rec in read_blocks(data):
        if rec.block is not None and rec.block.block_type == BlockType.AVRO_DATA_BLOCK:
            out.extend(decode_avro_records(rec.block))
    return out
# --8<-- [end:archived_log]


def archive_log_files(storage: Storage, folder: str = ARCHIVE_DIR) -> list[str]:
    """The archived logs of a version-6 table in ``folder`` (``.hoodie/`` + ``hoodie.archivelog.folder``: Apache
    Hudi 1.2.0 names it ``history`` on the version 6 tables it creates), oldest version first (paths relative to
    the base path)."""
    names = [f.name for f in storage.list(folder) if not f.is_dir and is_archive_log_name(f.name)]
    return [posixpath.join(folder, n) for n in sorted(names, key=lambda n: parse_log_file_name(n).version)]


def read_archived_entries(storage: Storage, folder: str = ARCHIVE_DIR) -> list[dict[str, Any]]:
    """Every entry of a version-6 table's archived timeline, in file and block order."""
    return [e for path in archive_log_files(storage, folder) for e in parse_archive_log(storage.read(path))]


__all__ = [
    "ARCHIVE_BATCH", "ARCHIVE_DIR", "ARCHIVE_EXTENSION", "ARCHIVE_FILE_ID", "archive_log_files", "archive_log_name",
    "format_archive_blocks", "is_archive_log_name", "parse_archive_log", "read_archived_entries",
]
