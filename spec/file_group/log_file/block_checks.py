"""What can be checked in a log block whose framing is sound: everything a reader can verify without a checksum.

The log format has no checksum. Its framing (``spec.file_group.log_file.log_format``) catches a damaged
block size, magic or reverse pointer, and a header, content or footer that does not fit the block; a
flipped byte anywhere else — inside a header value or a record — may still decode, to another value.
What can be checked is checked here, block by block (``check_block``):

- **header**: every key ordinal is one ``HeaderMetadataType`` defines, and exists in the table version
  (when it is known); ``INSTANT_TIME`` is an instant time (14 or 17 digits); a data or delete block has
  a ``SCHEMA`` that parses as an Avro record schema, with the five ``_hoodie_*`` meta fields or none;
  a command block is a rollback
  (``COMMAND_BLOCK_TYPE`` 0) of a ``TARGET_INSTANT_TIME`` that is an instant time;
- **footer**: empty — Hudi writes no footer entry on any block (``HoodieLogBlock``'s footer map);
- **log format version**: 1;
- **content**: an Avro data block's version is 3, its records are as many as it declares, each decodes
  with the block's schema in exactly the bytes its length gives, and no byte follows the last; a
  delete block's length covers exactly its content and the record list ends where it does; a parquet
  block decodes; a command block has no content;
- **records**, where the block says what they must hold: a data record's ``_hoodie_commit_time`` is the
  block's instant and its ``_hoodie_commit_seqno`` is that instant, a partition number and a record
  number (``HoodieRecord.generateSequenceId``); its ``_hoodie_partition_path`` is
  the log file's partition and its ``_hoodie_file_name`` the file id (meta fields a table does not
  populate are null and not checked); every record key is non-empty; a delete record's partition is the
  log file's.

A flip inside a user column's value (a digit of a number, a letter of a string) decodes to another
valid value: nothing in the file can tell. ``hudi-conformance check`` adds what needs the table (the
record key and partition path each record's fields give, the block's instant on the timeline, and its
schema's fields against the commit's).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieLogBlock``
(``HeaderMetadataType``, ``FooterMetadataType``, ``getLogMetadataBytes``), ``HoodieAvroDataBlock``
(``serializeRecords``), ``HoodieDeleteBlock``, ``HoodieCommandBlock``, ``HoodieAppendHandle``
(the meta fields of a log record: ``populateMetadataFields``) and ``HoodieLogFileReader``.
"""

from __future__ import annotations

import io
import json
import re
import struct
from collections.abc import Mapping
from typing import Any

from spec.errors import HudiSpecError
from spec.file_group.log_file.delete_block import delete_records_span
from spec.file_group.log_file.log_format import (
    DATA_BLOCK_VERSION,
    HEADER_KEY_SINCE_TABLE_VERSION,
    LOG_FORMAT_VERSION,
    BlockType,
    CommandType,
    HeaderKey,
    LogBlock,
)

_INT = struct.Struct(">i")
_SEQNO_SUFFIX = re.compile(r"\d+_\d+")
"""``HoodieRecord.generateSequenceId``: ``{instant}_{partition id}_{record number}``."""
_META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
         "_hoodie_file_name")


def _instant_time(value: str | None) -> bool:
    return value is not None and value.isdigit() and len(value) in (14, 17)


# --8<-- [start:check_block]
def check_block(block: LogBlock, table_version: int | None = None, partition_path: str | None = None,
                file_id: str | None = None) -> list[str]:
    """What is wrong with a well-framed block (the module's rules), each as a sentence; empty when nothing
    that can be checked is wrong. ``table_version``, ``partition_path`` and ``file_id`` (the log file's)
    enable the checks that need them."""
    problems = _check_header(block, table_version)
    if block.footer:
        problems.append(f"the footer holds {len(block.footer)} entries; Hudi writes none")
    if block.format_version != LOG_FORMAT_VERSION:
        problems.append(f"log format version {block.format_version}, not {LOG_FORMAT_VERSION}")
    try:
        if block.block_type == BlockType.AVRO_DATA_BLOCK:
            problems += _check_avro_records(block, partition_path, file_id)
        elif block.block_type == BlockType.DELETE_BLOCK:
            problems += _check_deletes(block, partition_path)
        elif block.block_type == BlockType.PARQUET_DATA_BLOCK:
            from spec.file_group.log_file.log_blocks import decode_parquet_records

            problems += _check_records(block, decode_parquet_records(block).to_pylist(), partition_path, file_id)
        elif block.block_type == BlockType.COMMAND_BLOCK and block.content:
            problems.append(f"a command block holds {len(block.content)} content bytes; it holds none")
    except HudiSpecError as err:
        problems.append(err.message)
    return problems
# --8<-- [end:check_block]


def _check_header(block: LogBlock, table_version: int | None) -> list[str]:
    problems = []
    for key, _value in block.header:
        if key not in HeaderKey._value2member_map_:
            problems.append(f"header key ordinal {key} is not a HeaderMetadataType")
        elif table_version is not None and HEADER_KEY_SINCE_TABLE_VERSION[HeaderKey(key)] > table_version:
            problems.append(f"header key {HeaderKey(key).name} does not exist in table version {table_version}")
    if block.block_type == BlockType.CORRUPT_BLOCK:
        return problems
    if not _instant_time(block.instant_time):
        problems.append(f"INSTANT_TIME {block.instant_time!r} is not an instant time")
    if block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.DELETE_BLOCK, BlockType.PARQUET_DATA_BLOCK):
        problems += _check_schema(block.schema)
    if block.block_type == BlockType.COMMAND_BLOCK:
        if block.header_value(HeaderKey.COMMAND_BLOCK_TYPE) != str(int(CommandType.ROLLBACK_BLOCK)):
            problems.append(f"COMMAND_BLOCK_TYPE {block.header_value(HeaderKey.COMMAND_BLOCK_TYPE)!r} is not a "
                            "rollback (0)")
        if not _instant_time(block.target_instant_time):
            problems.append(f"TARGET_INSTANT_TIME {block.target_instant_time!r} is not an instant time")
    return problems


def _check_schema(schema: str | None) -> list[str]:
    if schema is None:
        return ["the block has no SCHEMA header"]
    import fastavro

    try:
        parsed = json.loads(schema)
        fastavro.parse_schema(parsed)
    except Exception as err:  # JSON and fastavro raise several types for a bad schema
        return [f"the SCHEMA header is not an Avro schema: {err}"]
    if not isinstance(parsed, Mapping) or parsed.get("type") != "record":
        return ["the SCHEMA header is not an Avro record schema"]
    names = {f.get("name") for f in parsed.get("fields", ()) if isinstance(f, Mapping)}
    meta = [m for m in _META if m in names]
    if meta and len(meta) < len(_META):
        return [f"the SCHEMA header has meta field(s) {', '.join(meta)} but not "
                f"{', '.join(m for m in _META if m not in names)}: a writer gives all five or none"]
    return []


def _check_avro_records(block: LogBlock, partition_path: str | None, file_id: str | None) -> list[str]:
    import fastavro

    if _check_schema(block.schema):
        return []  # reported with the header
    assert block.schema is not None
    writer = fastavro.parse_schema(json.loads(block.schema))
    content = block.content
    if len(content) < 8:
        return ["the content is shorter than its 8-byte preamble"]
    version, count = struct.unpack_from(">ii", content, 0)
    if version != DATA_BLOCK_VERSION:
        return [f"content version {version}, not {DATA_BLOCK_VERSION}"]
    if count < 0:
        return [f"record count {count} is negative"]
    pos, records = 8, []
    for i in range(count):
        if pos + 4 > len(content):
            return [f"the content ends after {i} of its {count} records"]
        (length,) = _INT.unpack_from(content, pos)
        pos += 4
        if length < 0 or pos + length > len(content):
            return [f"record {i}'s length {length} runs past the content"]
        stream = io.BytesIO(content[pos:pos + length])
        try:
            records.append(fastavro.schemaless_reader(stream, writer, None))
        except Exception as err:  # fastavro raises several types on bytes that do not decode
            return [f"record {i} does not decode with the block's schema: {err}"]
        if stream.tell() != length:
            return [f"record {i} decodes in {stream.tell()} of its {length} bytes"]
        pos += length
    problems = [f"{len(content) - pos} bytes follow the last of its {count} records"] if pos != len(content) else []
    return problems + _check_records(block, records, partition_path, file_id)


def _check_records(block: LogBlock, records: list[Any], partition_path: str | None,
                   file_id: str | None) -> list[str]:
    """The meta fields of data records against the block's instant and the log file's partition and file id."""
    instant = block.instant_time
    problems: list[str] = []
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or not all(k in rec for k in _META):
            continue
        commit_time, seqno, key = rec["_hoodie_commit_time"], rec["_hoodie_commit_seqno"], rec["_hoodie_record_key"]
        found = []
        if commit_time is not None and commit_time != instant:
            found.append(f"_hoodie_commit_time {commit_time!r} is not the block's instant {instant!r}")
        if seqno is not None and (not str(seqno).startswith(f"{instant}_")
                                  or not _SEQNO_SUFFIX.fullmatch(str(seqno)[len(instant or "") + 1:])):
            found.append(f"_hoodie_commit_seqno {seqno!r} is not the block's instant, '_', a partition number, "
                         "'_' and a record number")
        if key is not None and key == "":
            found.append("_hoodie_record_key is empty")
        if partition_path is not None and rec["_hoodie_partition_path"] not in (None, partition_path):
            found.append(f"_hoodie_partition_path {rec['_hoodie_partition_path']!r} is not the log file's "
                         f"partition {partition_path!r}")
        if file_id is not None and rec["_hoodie_file_name"] not in (None, file_id):
            found.append(f"_hoodie_file_name {rec['_hoodie_file_name']!r} is not the log file's file id")
        problems += [f"record {i}: {p}" for p in found]
    return problems


def _check_deletes(block: LogBlock, partition_path: str | None) -> list[str]:
    deletes, end, total = delete_records_span(block)
    problems = [f"the delete record list ends {total - end} bytes before the content does"] if end != total else []
    for i, d in enumerate(deletes):
        if not d.record_key:
            problems.append(f"delete record {i} has no record key")
        if partition_path is not None and d.partition_path not in (None, partition_path):
            problems.append(f"delete record {i}'s partition {d.partition_path!r} is not the log file's "
                            f"partition {partition_path!r}")
    return problems
