"""Log scanning: which blocks of a file slice's log files a reader applies, and in what order.

The blocks of all log files of a slice are read in the log files' order (instant, version,
write token). Then (Hudi's ``AbstractHoodieLogRecordReader`` / ``BaseHoodieLogRecordReader``):

1. a data or delete block whose INSTANT_TIME is after the query instant is not applied (0.x also
   skips command blocks after it; some older 0.x readers stop reading there, which is why writers
   keep blocks in instant order);
2. v6 only: a data or delete block whose instant did not complete (and does not predate the
   active timeline) is skipped — it was written by a failed or still running write. v8 does not
   check: its log files are named by their deltacommit and files of incomplete instants are not
   in the file slice (``spec.file_group.file_system_view``);
3. a corrupt region is ignored (0.x queues it so that a rollback block can remove it; either way
   it is never applied);
4. a rollback command block removes every block of its target instant read before it;
5. log compaction: a block whose header lists COMPACTED_BLOCK_TIMES holds the merged records of
   those instants and replaces their blocks — it is applied once, where the latest of them was,
   and the originals are not (compactions of compactions resolve to the last one);
6. the remaining blocks are applied oldest first (v8 groups the blocks of one instant at the
   place of its first block).

BLOCK_IDENTIFIER headers (attempt and sequence numbers, written by 0.14.0 to drop blocks of
retried tasks) are not part of the rule: 0.15.0 stopped writing them and Hudi removed the reader
side, as the attempt order could not be trusted.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``AbstractHoodieLogRecordReader.scanInternal`` (0.15.x) and ``BaseHoodieLogRecordReader`` (1.x).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from spec.file_group.log_file.log_format import BlockRecord, BlockType, HeaderKey, LogBlock, read_blocks
from spec.timeline.active_timeline import Timeline

if TYPE_CHECKING:
    from spec.file_group.log_file.corrupt_block import SkippedBlock
    from spec.storage.hoodie_storage import Storage


@dataclass(frozen=True)
class ScanStats:
    """What a scan saw: blocks read, applied, skipped as uncommitted or later, rolled back, corrupt,
    and replaced by log-compacted blocks; ``skipped``, the corrupt regions (when the scan knew the
    files, ``scan_slice_logs``)."""

    total_blocks: int = 0
    applied: int = 0
    skipped_uncommitted: int = 0
    skipped_later: int = 0
    rolled_back: int = 0
    corrupt: int = 0
    compacted: int = 0
    skipped: tuple[SkippedBlock, ...] = ()


# --8<-- [start:scan]
def blocks_to_apply(records: Sequence[BlockRecord], timeline: Timeline, as_of: str | None,
                    table_version: int = 6) -> tuple[list[LogBlock], ScanStats]:
    """The blocks of a slice's logs (already in read order) that a reader applies, oldest first."""
    queue: list[LogBlock] = []
    skipped_uncommitted = skipped_later = rolled_back = corrupt = 0
    for rec in records:
        block = rec.block
        if block is None:
            corrupt += 1
            continue
        instant = block.instant_time or ""
        is_command = block.block_type == BlockType.COMMAND_BLOCK
        if as_of is not None and instant > as_of and (table_version < 8 or not is_command):
            skipped_later += 1
            continue
        if is_command:
            if block.is_rollback:
                kept = [q for q in queue if q.instant_time != block.target_instant_time]
                rolled_back += len(queue) - len(kept)
                queue = kept
            continue
        if table_version < 8 and not timeline.contains_or_before_start(instant):
            skipped_uncommitted += 1
            continue
        queue.append(block)
    applied = _resolve_log_compaction(queue, group_instants=table_version >= 8)
    stats = ScanStats(len(records), len(applied), skipped_uncommitted, skipped_later, rolled_back, corrupt,
                      len(queue) - len(applied))
    return applied, stats


def compacted_instants(block: LogBlock) -> tuple[str, ...]:
    """The instants a log-compacted block replaces (its COMPACTED_BLOCK_TIMES header, comma separated)."""
    value = block.header_value(HeaderKey.COMPACTED_BLOCK_TIMES)
    return tuple(t for t in value.split(",") if t) if value else ()


def _resolve_log_compaction(queue: list[LogBlock], group_instants: bool) -> list[LogBlock]:
    """Blocks in application order, each compacted block in place of the instants it replaces."""
    if not group_instants and not any(compacted_instants(b) for b in queue):
        return queue
    order: list[str] = []
    by_instant: dict[str, list[LogBlock]] = {}
    for b in queue:
        t = b.instant_time or ""
        if t not in by_instant:
            order.append(t)
        by_instant.setdefault(t, []).append(b)
    final_of: dict[str, str] = {}  # instant -> the last compacted instant holding its records
    included: set[str] = set()
    newest_first: list[str] = []
    for t in reversed(order):
        replaced = compacted_instants(by_instant[t][0])
        if replaced:
            for original in replaced:
                final_of[original] = final_of.get(t, t)
            continue
        chosen = final_of.get(t, t)
        if chosen not in included and chosen in by_instant:
            included.add(chosen)
            newest_first.append(chosen)
    return [b for t in reversed(newest_first) for b in by_instant[t]]
# --8<-- [end:scan]


def scan_slice_logs(storage: Storage, log_paths: Sequence[str], timeline: Timeline, as_of: str | None,
                    table_version: int = 6) -> tuple[list[LogBlock], ScanStats]:
    """Read the slice's log files (given in read order) and choose the blocks to apply; the stats
    name every corrupt region skipped."""
    records: list[BlockRecord] = []
    skipped: list[SkippedBlock] = []
    for path in log_paths:
        found = list(read_blocks(storage.read(path)))
        records.extend(found)
        if any(r.corrupt for r in found):  # a corrupt region's module is loaded with the first one
            from spec.file_group.log_file.corrupt_block import SkippedBlock

            skipped.extend(SkippedBlock(path, r.offset, r.length, r.corrupt.reason) for r in found if r.corrupt)
    blocks, stats = blocks_to_apply(records, timeline, as_of, table_version)
    return blocks, replace(stats, skipped=tuple(skipped))
