"""The oracle's in-memory files: base files, log files with their blocks, and file groups.

The spec model (``spec.model``) keeps a table as a conforming writer would leave it on disk,
but in memory and with rows instead of bytes: every file group holds its base files (one per
writing instant) and log files (each a sequence of data, delete and command blocks). Which
files form a slice and which blocks a read applies are not decided here: the model hands its
file names to ``spec.file_group.file_system_view`` and its block headers to ``spec.file_group.log_file.scanner``, the
same
rules a reader of real files follows.

Source: no Hudi class — this project's in-memory stand-in for the files Hudi writes; file slices
come from ``spec.file_group.file_system_view`` (``AbstractTableFileSystemView``) and log blocks from
``spec.file_group.log_file.scanner`` (``BaseHoodieLogRecordReader``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypeAlias

from spec.file_group.file_naming import BaseFileName, LogFileName
from spec.file_group.file_system_view import DataFile
from spec.file_group.log_file.log_blocks import rollback_command_block
from spec.file_group.log_file.log_format import BlockRecord, BlockType, HeaderKey
from spec.file_group.log_file.log_format import LogBlock as EncodedBlock

Scalar: TypeAlias = int | float | str | bool | None
Row: TypeAlias = Mapping[str, Scalar]
"""A row of a file: meta columns and data columns. Rows are never mutated once in a file."""

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_COLUMNS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
IS_DELETED = "_hoodie_is_deleted"

MODEL_WRITE_TOKEN = "0-0-0"
"""The write token the model puts in the names it predicts; tokens are implementation-chosen
(Spark task ids) and normalized away when layouts are compared."""


# --8<-- [start:files]
@dataclass(frozen=True)
class BaseFile:
    """A base file: the instant that wrote it, its rows in record-key order, and its size in bytes
    (observed from the implementation under test, else estimated)."""

    file_id: str
    instant: str
    rows: tuple[Row, ...]
    size: int = 0
    write_token: str = MODEL_WRITE_TOKEN
    absent_deletes: tuple[str, ...] = ()
    """The keys of the deletes its merge handle took for keys the file did not hold (a bucket index sends them:
    ``spec.index.bucket_index``); Hudi counts them among the file's deletes."""

    @property
    def name(self) -> str:
        """The base file name the model predicts (``<file id>_<write token>_<instant>.parquet``)."""
        return BaseFileName(self.file_id, self.write_token, self.instant).format()

    def record_keys(self) -> tuple[str, ...]:
        """The record keys of the file's rows, in file order."""
        return tuple(str(r[RECORD_KEY]) for r in self.rows)


@dataclass(frozen=True)
class ModelLogBlock:
    """A log block: ``data`` (rows with meta columns), ``delete`` ((key, ordering value) pairs;
    ordering None = a natural-order delete) or ``command`` (a rollback of ``target``)."""

    kind: str
    instant: str
    rows: tuple[Row, ...] = ()
    deletes: tuple[tuple[str, Scalar], ...] = ()
    target: str | None = None


@dataclass(frozen=True)
class LogFile:
    """A log file: its name parts and its blocks in file order. ``writer`` is the instant that
    created the file (in v8 also the name's instant)."""

    file_id: str
    instant: str
    version: int
    blocks: tuple[ModelLogBlock, ...]
    writer: str
    write_token: str = MODEL_WRITE_TOKEN

    @property
    def log_name(self) -> LogFileName:
        """The parsed log file name."""
        return LogFileName(self.file_id, self.instant, self.version, self.write_token)

    @property
    def name(self) -> str:
        """The log file name the model predicts."""
        return self.log_name.format()

    def block_instants(self) -> frozenset[str]:
        """The instants that wrote the file's blocks."""
        return frozenset(b.instant for b in self.blocks)


@dataclass(frozen=True)
class ModelFileGroup:
    """A file group of a partition, its files, and the replacecommit that replaced it (if any)."""

    partition: str
    file_id: str
    base_files: tuple[BaseFile, ...] = ()
    log_files: tuple[LogFile, ...] = ()
    replaced_by: str | None = None
    created_by: str = ""

    def with_base(self, base: BaseFile) -> ModelFileGroup:
        """The group with ``base`` added as its newest base file."""
        return replace(self, base_files=(*self.base_files, base))

    def with_log(self, log: LogFile) -> ModelFileGroup:
        """The group with ``log`` appended to its log files."""
        return replace(self, log_files=(*self.log_files, log))

    def without_files(self, names: frozenset[str]) -> ModelFileGroup:
        """The group without the base and log files named in ``names``."""
        return replace(self, base_files=tuple(b for b in self.base_files if b.name not in names),
                       log_files=tuple(lf for lf in self.log_files if lf.name not in names))

    @property
    def is_empty(self) -> bool:
        """Whether the group has no file left."""
        return not self.base_files and not self.log_files


def listing(groups: tuple[ModelFileGroup, ...]) -> list[DataFile]:
    """The data files of the groups as a listing (what a reader would find on disk)."""
    out = []
    for g in groups:
        out += [DataFile(g.partition, b.name, b.size) for b in g.base_files]
        out += [DataFile(g.partition, lf.name) for lf in g.log_files]
    return out
# --8<-- [end:files]


def header_only(block: ModelLogBlock) -> EncodedBlock:
    """A block's header as the log scanner sees it (the content is not needed to choose blocks)."""
    if block.kind == "command":
        return rollback_command_block(block.instant, block.target or "")
    kind = BlockType.AVRO_DATA_BLOCK if block.kind == "data" else BlockType.DELETE_BLOCK
    return EncodedBlock(kind, ((int(HeaderKey.INSTANT_TIME), block.instant),), b"")


def scan_records(logs: tuple[LogFile, ...]) -> tuple[list[BlockRecord], dict[int, ModelLogBlock]]:
    """The blocks of log files (in read order) as scanner input, and a way back to the model's blocks."""
    records, back = [], {}
    for lf in logs:
        for b in lf.blocks:
            enc = header_only(b)
            back[id(enc)] = b
            records.append(BlockRecord(0, 0, enc))
    return records, back


@dataclass(frozen=True)
class Incoming:
    """One record of a batch, keyed: ``data`` is None for a delete (``ordering`` None = natural order)."""

    partition: str
    key: str
    data: Row | None
    ordering: Scalar = None
