"""Corrupt blocks: bytes of a log file that do not frame as a block, and the record of a scan that skipped them.

Hudi's log reader turns such bytes into a ``HoodieCorruptBlock`` and reading resumes at the next magic
(``spec.file_group.log_file.log_format.read_blocks`` states where a region starts and ends); its record
scanners never apply one (``spec.file_group.log_file.scanner``, rule 3). A sound log file has none, so a
read of one loads this module only when it meets a corrupt region.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieCorruptBlock``,
``HoodieLogFileReader.createCorruptBlock`` and ``AbstractHoodieLogRecordReader`` (0.15.x) /
``BaseHoodieLogRecordReader`` (1.x).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CorruptRegion:
    """Bytes a reader could not frame as a block; reading resumes at the next magic."""

    reason: str


@dataclass(frozen=True)
class SkippedBlock:
    """A corrupt region a scan skipped (rule 3): the log file, where its bytes start, how many, and why
    they could not be framed as a block. Its records, if it held any, are not in the slice's rows."""

    path: str
    offset: int
    length: int
    reason: str

    def describe(self) -> str:
        """``offset N (L bytes): reason``, as warnings print it."""
        return f"offset {self.offset} ({self.length} bytes): {self.reason}"


__all__ = ["CorruptRegion", "SkippedBlock"]
