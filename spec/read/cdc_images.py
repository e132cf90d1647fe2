"""The before and after images of one CDC file split (``spec.read.cdc``): the changes of one file group made by one
instant, as ``CDCFileGroupIterator`` reads them.

- BASE_FILE_INSERT: every row of the new base file, an insert whose after image is the row.
- BASE_FILE_DELETE and REPLACE_COMMIT: every row of the before slice (merged, base file and log files), a delete
  whose before image is the row.
- AS_IS: the CDC log's records in order. ``DATA_BEFORE_AFTER``: op, before and after as logged. ``DATA_BEFORE``:
  op and before as logged, the after image of an insert or update the key's row in the after slice (the base file
  the write made). ``OP_KEY_ONLY``: the before image of an update or delete the key's row in the before slice.
- LOG_FILE: the log file's records (folded per key by the table's merge rule, deletes kept) against the before
  slice's rows by key: a delete of a held key is a delete, whatever its ordering value; a record of a key not held
  an insert (then held); a record of a held key an update when the merge of the held row with it
  (``spec.read.merge.merge_with_base``) is not the held row (then held as merged), else no change.

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x; 1.2.0 measured): ``org.apache.hudi.cdc.CDCFileGroupIterator``
(``loadNext``, ``loadNextLogRecord``, ``loadCdcFile``, ``loadBeforeFileSliceIfNeeded``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from spec.file_group.file_system_view import DataFile, FileSlice
from spec.file_group.log_file.log_blocks import decode_cdc_records, decode_records
from spec.file_group.log_file.log_format import BlockType, read_blocks
from spec.read.cdc import (
    DATA_BEFORE_AFTER,
    DELETE,
    INSERT,
    OP_KEY_ONLY,
    RECORD_KEY,
    UPDATE,
    CdcFileSplit,
    CdcInferCase,
    CdcRecord,
)
from spec.read.merge import Version, as_version, combine_logs, delete_version, merge_with_base

if TYPE_CHECKING:
    from spec.read.reader import TableReader

Row = Mapping[str, Any]


def slice_rows(reader: TableReader, sl: FileSlice | None) -> dict[str, Row]:
    """A slice's merged rows by record key (none for no slice)."""
    if sl is None:
        return {}
    table = reader.read_slice(sl, as_of=None)
    return {} if table is None else {r[RECORD_KEY]: r for r in table.to_pylist()}


def log_versions(reader: TableReader, path: str, instant: str) -> dict[str, Version]:
    """The records ``instant`` wrote to the log file ``path``, one version a key (folded by the table's merge
    rule in log order; a delete kept as a delete)."""
    rule = reader.rule
    out: dict[str, Version] = {}
    for rec in read_blocks(reader.storage.read(path)):
        block = rec.block
        if rec.corrupt is not None or block is None or block.instant_time != instant:
            continue
        if block.block_type == BlockType.DELETE_BLOCK:
            incoming = [(d["recordKey"], delete_version(d["orderingVal"], None, rule)) for d in decode_records(block)]
        elif block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK):
            incoming = [(r[RECORD_KEY], as_version(r, rule)) for r in decode_records(block)]
        else:
            continue
        for key, version in incoming:
            out[key] = combine_logs(out[key], version, rule) if key in out else version
    return out


def _log_changes(reader: TableReader, split: CdcFileSplit) -> Iterator[CdcRecord]:
    held = dict(slice_rows(reader, split.before))
    rule = reader.rule
    for key, version in log_versions(reader, split.files[0], split.instant).items():
        if version.is_delete:
            if key in held:
                yield CdcRecord(DELETE, split.instant, held.pop(key), None)
            continue
        existing = held.get(key)
        if existing is None:
            held[key] = version.row or {}
            yield CdcRecord(INSERT, split.instant, None, version.row)
            continue
        merged = merge_with_base(as_version(existing, rule), version, rule).row
        if merged is not None and dict(merged) != dict(existing):
            held[key] = merged
            yield CdcRecord(UPDATE, split.instant, existing, merged)


def _logged_changes(reader: TableReader, split: CdcFileSplit, mode: str) -> Iterator[CdcRecord]:
    before = slice_rows(reader, split.before) if mode == OP_KEY_ONLY else {}
    after = slice_rows(reader, split.after) if mode != DATA_BEFORE_AFTER else {}
    for path in split.files:
        for rec in read_blocks(reader.storage.read(path)):
            if rec.corrupt is not None or rec.block is None or rec.block.block_type != BlockType.CDC_DATA_BLOCK:
                continue
            for r in decode_cdc_records(rec.block):
                op = str(r.get("op"))
                if mode == DATA_BEFORE_AFTER:
                    yield CdcRecord(op, split.instant, r.get("before"), r.get("after"))
                    continue
                key = str(r.get("record_key"))
                old = r.get("before") if mode != OP_KEY_ONLY else (before.get(key) if op != INSERT else None)
                yield CdcRecord(op, split.instant, old, after.get(key) if op in (INSERT, UPDATE) else None)


def changes_of_split(reader: TableReader, split: CdcFileSplit, mode: str) -> list[CdcRecord]:
    """The changes of one split (see the module's rules)."""
    if split.case == CdcInferCase.BASE_FILE_INSERT:
        base = FileSlice(split.partition_path, split.file_id, split.instant,
                         DataFile(split.partition_path, posixpath.basename(split.files[0])))
        return [CdcRecord(INSERT, split.instant, None, r) for r in slice_rows(reader, base).values()]
    if split.case in (CdcInferCase.BASE_FILE_DELETE, CdcInferCase.REPLACE_COMMIT):
        return [CdcRecord(DELETE, split.instant, r, None) for r in slice_rows(reader, split.before).values()]
    if split.case == CdcInferCase.LOG_FILE:
        return list(_log_changes(reader, split))
    return list(_logged_changes(reader, split, mode))


__all__ = ["changes_of_split", "log_versions", "slice_rows"]
