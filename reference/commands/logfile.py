"""``hudi-spec logfile FILE``: the blocks of a log file (like hudi-cli ``show logfile metadata/records``).

One row per block: its offset, type (a command block by its command, ``HoodieCommandBlockTypeEnum``:
``COMMAND_BLOCK (ROLLBACK_BLOCK)``), instant, record count, sizes and whether it read whole. ``--records N``
adds the first N records, in text as a table of their values per block (a delete block's keys as Hudi's
``DeleteRecord`` holds them), in JSON as objects. Each block is framed (``spec.file_group.log_file.log_format``)
and checked for what can be checked without a checksum (``spec.file_group.log_file.block_checks``); a
corrupt region or a block with a problem makes the exit code 1. Where the file lies in a table (a ``.hoodie``
folder above it), its table version, partition and file id are checked too. A file with no log block in it
at all (no ``#HUDI#`` magic anywhere) is not a log file: bad input, exit 2.
"""

from __future__ import annotations

import argparse
import base64
import os
from typing import Any

from reference.commands import _output
from spec.errors import HudiSpecError, InvalidOperation

COLUMNS = ["offset", "block_type", "instant_time", "target_instant_time", "record_count", "content_bytes",
           "total_bytes", "status"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("logfile", help="show the blocks (and optionally records) of a log file")
    p.add_argument("file", help="path or URI of a log file")
    p.add_argument("--records", type=_output.count, default=0, metavar="N", help="also show the first N records")
    _output.add_output_option(p)
    p.set_defaults(handler=run)


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _location(path: str) -> tuple[int | None, str | None, str | None]:
    """The table version, partition path and file id of a local log file inside a table (None where unknown)."""
    from spec.config.table_config import TableConfig
    from spec.file_group.file_naming import is_log_file_name, parse_log_file_name

    name = os.path.basename(path)
    file_id = parse_log_file_name(name).file_id if is_log_file_name(name) else None
    if "://" in path:
        return None, None, file_id
    folder = os.path.dirname(os.path.abspath(path))
    root = folder
    while not os.path.isdir(os.path.join(root, ".hoodie")):
        parent = os.path.dirname(root)
        if parent == root:
            return None, None, file_id
        root = parent
    try:
        version: int | None = TableConfig.load(root).table_version
    except HudiSpecError:
        version = None
    partition = os.path.relpath(folder, root).replace(os.sep, "/")
    return version, "" if partition == "." else partition, file_id


def run(args: argparse.Namespace) -> int:
    from spec.file_group.log_file.block_checks import check_block
    from spec.file_group.log_file.log_blocks import block_record_count, decode_records
    from spec.file_group.log_file.log_format import MAGIC, BlockType, CommandType, HeaderKey, read_blocks
    from spec.storage.hoodie_storage import Storage

    path = args.file
    if "://" in path:
        parent, _, name = path.rpartition("/")
    else:
        if os.path.isdir(path):
            raise InvalidOperation(f"{path} is a folder, not a log file",
                                   hint="give a log file, e.g. PARTITION/.FILEID_INSTANT.log.1_0-1-0")
        parent, name = os.path.split(os.path.abspath(path))
    storage = Storage(parent)
    if not storage.exists(name):
        raise InvalidOperation(f"no such log file: {path}",
                               hint="check the path; `hudi-spec fsview TABLE` lists each file slice's log files")
    data = storage.read(name)
    if data and MAGIC not in data:
        raise InvalidOperation(f"{path} is not a Hudi log file: no log block in its {len(data)} bytes",
                               hint="give a log file, e.g. PARTITION/.FILEID_INSTANT.log.1_0-1-0; "
                                    "`hudi-spec fsview TABLE` lists each file slice's log files")
    version, partition, file_id = _location(path)
    blocks: list[dict[str, Any]] = []
    shown = 0
    corrupt = 0
    damaged = 0
    for rec in read_blocks(data):
        row: dict[str, Any] = {"offset": rec.offset, "total_bytes": rec.length}
        if rec.block is None:
            corrupt += 1
            row.update(block_type="CORRUPT_BLOCK", status=f"corrupt: {rec.corrupt.reason if rec.corrupt else ''}")
            blocks.append(row)
            continue
        block = rec.block
        header = {(HeaderKey(k).name if k in HeaderKey._value2member_map_ else str(k)): v for k, v in block.header}
        command = block.header_value(HeaderKey.COMMAND_BLOCK_TYPE)
        if block.block_type == BlockType.COMMAND_BLOCK and command is not None and command.isdigit():
            known = int(command) in CommandType._value2member_map_
            row["command_type"] = CommandType(int(command)).name if known else f"unknown command {command}"
        row.update(block_type=block.block_type.name, instant_time=block.instant_time,
                   target_instant_time=block.target_instant_time, content_bytes=len(block.content),
                   header=header, status="ok")
        try:
            row["record_count"] = block_record_count(block)
        except HudiSpecError as err:
            row["record_count"] = None
            row["status"] = f"content not decoded: {err.message}"
        problems = check_block(block, version, partition, file_id)
        row["problems"] = problems
        if problems:
            damaged += 1
            row["status"] = "damaged: " + "; ".join(problems)
        if args.records and shown < args.records and block.block_type != BlockType.COMMAND_BLOCK:
            try:
                records = decode_records(block)[: args.records - shown]
            except HudiSpecError:
                records = []
            row["records"] = _jsonable(records)
            shown += len(records)
        blocks.append(row)
    if args.output == "json":
        _output.emit_json({"file": path, "size": len(data), "corrupt_blocks": corrupt, "damaged_blocks": damaged,
                           "blocks": blocks})
    elif args.output == "csv":
        _output.emit_csv(COLUMNS, [[_type_cell(b) if c == "block_type" else b.get(c) for c in COLUMNS]
                                   for b in blocks])
    else:
        _output.emit_table(f"{name}: {len(blocks)} blocks, {len(data)} bytes", COLUMNS,
                           [[_type_cell(b) if c == "block_type" else b.get(c) for c in COLUMNS] for b in blocks])
        for b in blocks:
            records = b.get("records") or []
            if records:
                columns = list(dict.fromkeys(k for r in records for k in r))
                print()
                _output.emit_table(f"{len(records)} records of the {b['block_type']} at offset {b['offset']}"
                                   f" (instant {b.get('instant_time')})", columns,
                                   [[r.get(c) for c in columns] for r in records])
    return 1 if corrupt or damaged else 0


def _type_cell(block: dict[str, Any]) -> str:
    """A block's type as text shows it: a command block with its command."""
    kind = str(block.get("block_type"))
    return f"{kind} ({block['command_type']})" if "command_type" in block else kind
