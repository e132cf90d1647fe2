"""Log scanning: which blocks of a file slice's log files a reader applies, and in what order.

The blocks of all log files of a slice are read in the log files' order (instant, version,
write token). Then (Hudi's ``AbstractHoodieLogRecordReader`` / ``HoodieMergedLogRecordScanner``):

1. a block whose INSTANT_TIME is after the query instant is not applied (skipped; some older
   Hudi readers stop reading at it, which is why writers keep blocks in instant order);
2. a data or delete block whose instant did not complete (and does not predate the active
   timeline) is skipped — it was written by a failed or still running write;
3. a corrupt region is queued and ignored;
4. a rollback command block removes every queued block of its target instant, and every
   queued corrupt block;
5. the queued blocks are applied oldest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spec.log_format import BlockRecord, BlockType, LogBlock, read_blocks
from spec.timeline import Timeline

if TYPE_CHECKING:
    from spec.storage import Storage


@dataclass(frozen=True)
class ScanStats:
    """What a scan saw: blocks read, applied, skipped as uncommitted or later, rolled back, corrupt."""

    total_blocks: int = 0
    applied: int = 0
    skipped_uncommitted: int = 0
    skipped_later: int = 0
    rolled_back: int = 0
    corrupt: int = 0


# --8<-- [start:scan]
def blocks_to_apply(records: Sequence[BlockRecord], timeline: Timeline,
                    as_of: str | None) -> tuple[list[LogBlock], ScanStats]:
    """The blocks of a slice's logs (already in read order) that a reader applies, oldest first."""
    queue: list[BlockRecord] = []
    skipped_uncommitted = skipped_later = rolled_back = corrupt = 0
    for rec in records:
        if rec.block is None:
            corrupt += 1
            queue.append(rec)
            continue
        block = rec.block
        instant = block.instant_time or ""
        if as_of is not None and instant > as_of:
            skipped_later += 1
            continue
        if block.block_type == BlockType.COMMAND_BLOCK:
            if block.is_rollback:
                target = block.target_instant_time
                before = len(queue)
                queue = [q for q in queue if q.block is not None and q.block.instant_time != target]
                rolled_back += before - len(queue)
            continue
        if not timeline.contains_or_before_start(instant):
            skipped_uncommitted += 1
            continue
        queue.append(rec)
    applied = [q.block for q in queue if q.block is not None]
    stats = ScanStats(len(records), len(applied), skipped_uncommitted, skipped_later, rolled_back, corrupt)
    return applied, stats
# --8<-- [end:scan]


def scan_slice_logs(storage: Storage, log_paths: Sequence[str], timeline: Timeline,
                    as_of: str | None) -> tuple[list[LogBlock], ScanStats]:
    """Read the slice's log files (given in read order) and choose the blocks to apply."""
    records: list[BlockRecord] = []
    for path in log_paths:
        records.extend(read_blocks(storage.read(path)))
    return blocks_to_apply(records, timeline, as_of)
