"""The append handle's rules: how a merge-on-read write turns records into log blocks and files.

Hudi's ``HoodieAppendHandle`` writes the updates and deletes of one file group in one
deltacommit. This module states its rules as pure functions (Hudi's
``HoodieAppendHandle`` and ``HoodieLogFormatWriter``):

1. Records are buffered. Before each record is buffered, the handle checks whether the
   buffer is full: when the number of buffered records (updates *and* deletes) reaches
   ``max_block_size // average_record_size``, the buffered updates are flushed as one data
   block (deletes stay buffered).
2. The average record size starts at the first record's size and is refreshed as
   ``int(0.8 × average + 0.2 × size of the current record)`` (Java's ``(long)`` truncation)
   whenever the count is a multiple of 100 (so also for the first record, and for the first
   record after each flush: the count restarts at 0) or the buffer is full. Source:
   ``HoodieAppendHandle.flushToDiskIfRequired`` and ``init`` (``averageRecordSize =
   sizeEstimator.sizeEstimate(record)`` on the first record).
3. On close the remaining updates are flushed as one data block, followed by **one**
   delete block holding every delete of the handle, in one append.
4. After each append the log file rolls over to the next version when its size exceeds
   the max log file size (``hoodie.logfile.max.size``).
5. The log file's name: v6 — the slice's base instant, version = the highest existing
   version of that slice + 1; v8 — the deltacommit's own instant, version 1.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieAppendHandle``
(``init``, ``flushToDiskIfRequired``, ``appendDataAndDeleteBlocks``) and ``HoodieLogFormatWriter``
(``appendBlocks``, ``rollOver``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spec.errors import InvalidConfig, InvalidRecord
from spec.file_group.file_naming import LogFileName

# --8<-- [start:config]
DEFAULT_MAX_BLOCK_SIZE = 256 * 1024 * 1024
"""``hoodie.logfile.data.block.max.size``: 256 MB."""
DEFAULT_MAX_LOG_FILE_SIZE = 1024 * 1024 * 1024
"""``hoodie.logfile.max.size``: 1 GB."""
RECORDS_TO_ESTIMATE_RECORD_SIZE = 100
"""``HoodieAppendHandle.NUMBER_OF_RECORDS_TO_ESTIMATE_RECORD_SIZE``: the sampling interval of the size estimate."""
ESTIMATE_KEEP, ESTIMATE_SAMPLE = 0.8, 0.2
"""Weights of the old estimate and the sampled record in ``flushToDiskIfRequired``."""
LOG_FILE_BASE_VERSION = 1


@dataclass(frozen=True)
class AppendHandleConfig:
    """The settings the append handle's rules depend on."""

    max_block_size: int = DEFAULT_MAX_BLOCK_SIZE
    max_log_file_size: int = DEFAULT_MAX_LOG_FILE_SIZE
    table_version: int = 6

    def __post_init__(self) -> None:
        if self.max_block_size <= 0 or self.max_log_file_size <= 0:
            raise InvalidConfig("log block and log file size limits must be positive",
                                hint="set hoodie.logfile.data.block.max.size and hoodie.logfile.max.size > 0")
# --8<-- [end:config]


@dataclass(frozen=True)
class LogRecordOp:
    """One record handed to the append handle: an update (or insert into a log) or a delete,
    with the size the writer estimates for it in bytes."""

    key: str
    is_delete: bool
    size: int

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise InvalidRecord(f"record {self.key!r} has size {self.size}; a record's size must be positive",
                                hint="pass the writer's size estimate of the record in bytes")


@dataclass(frozen=True)
class PlannedBlock:
    """A block the handle will write: ``data`` or ``delete``, with the indexes of its records."""

    kind: str
    records: tuple[int, ...]


# --8<-- [start:blocks]
def plan_appends(records: Sequence[LogRecordOp], config: AppendHandleConfig) -> list[tuple[PlannedBlock, ...]]:
    """The appends the handle makes, in order; each append is one or two blocks written together.

    Mid-stream flushes append one data block; the close appends the remaining data block (if
    any) followed by one delete block with all deletes (if any).
    """
    appends: list[tuple[PlannedBlock, ...]] = []
    data: list[int] = []
    deletes: list[int] = []
    count = 0
    average = 0
    for i, rec in enumerate(records):
        if i == 0:
            average = rec.size
        if count >= config.max_block_size // average or count % RECORDS_TO_ESTIMATE_RECORD_SIZE == 0:
            average = int(average * ESTIMATE_KEEP + rec.size * ESTIMATE_SAMPLE)
        if count >= config.max_block_size // average:
            if data:
                appends.append((PlannedBlock("data", tuple(data)),))
                data = []
            count = 0
        (deletes if rec.is_delete else data).append(i)
        count += 1
    closing: list[PlannedBlock] = []
    if data:
        closing.append(PlannedBlock("data", tuple(data)))
    if deletes:
        closing.append(PlannedBlock("delete", tuple(deletes)))
    if closing:
        appends.append(tuple(closing))
    return appends
# --8<-- [end:blocks]


# --8<-- [start:naming]
def first_log_file(file_id: str, base_instant: str, instant: str, existing: Sequence[LogFileName],
                   write_token: str, table_version: int) -> LogFileName:
    """The log file a deltacommit starts writing for a file group.

    v6: named by the slice's base instant, one version above the highest existing version of
    that (file id, base instant); v8: named by the deltacommit's instant, version 1 (above any
    existing file of that instant, e.g. a retried write).
    """
    name_instant = base_instant if table_version < 8 else instant
    versions = [log.version for log in existing if log.file_id == file_id and log.instant == name_instant
                and log.extension == "log" and not log.suffix]
    version = max(versions) + 1 if versions else LOG_FILE_BASE_VERSION
    return LogFileName(file_id, name_instant, version, write_token)


def roll_over(log: LogFileName) -> LogFileName:
    """The next log file after ``log`` passes the max log file size: the next version, same token."""
    return LogFileName(log.file_id, log.instant, log.version + 1, log.write_token, log.extension, log.suffix)
# --8<-- [end:naming]


@dataclass(frozen=True)
class PlannedLogFile:
    """A log file the handle writes, with the blocks appended to it in order."""

    name: LogFileName
    blocks: tuple[PlannedBlock, ...]


# --8<-- [start:rollover]
def plan_log_files(appends: Sequence[tuple[PlannedBlock, ...]], first: LogFileName,
                   append_size: Callable[[tuple[PlannedBlock, ...]], int],
                   config: AppendHandleConfig) -> list[PlannedLogFile]:
    """Which log file each append lands in: all appends go to the current file; after an append
    makes the file larger than ``max_log_file_size``, the next append goes to a new version."""
    files: list[PlannedLogFile] = []
    current = first
    size = 0
    blocks: list[PlannedBlock] = []
    for append in appends:
        blocks.extend(append)
        size += append_size(append)
        if size > config.max_log_file_size:
            files.append(PlannedLogFile(current, tuple(blocks)))
            current, size, blocks = roll_over(current), 0, []
    if blocks:
        files.append(PlannedLogFile(current, tuple(blocks)))
    return files
# --8<-- [end:rollover]


def plan_append_handle(records: Sequence[LogRecordOp], first: LogFileName, config: AppendHandleConfig,
                       block_size: Callable[[PlannedBlock], int]) -> list[PlannedLogFile]:
    """The whole rule: records in, log files with their blocks out.

    ``block_size`` gives the encoded size of a planned block (the writer knows it after
    encoding; a model can estimate it from the record sizes).
    """
    appends = plan_appends(records, config)
    return plan_log_files(appends, first, lambda a: sum(block_size(b) for b in a), config)
