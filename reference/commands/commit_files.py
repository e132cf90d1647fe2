"""``hudi-spec commit-files TABLE [INSTANT]``: the files one commit wrote (like ``CALL show_commit_files``).

One row per write stat. Text shows ``show_commit_files``'s columns: ``action``, ``partition_path``,
``file_id``, ``previous_commit``, ``total_records_updated``, ``total_records_written``,
``total_bytes_written``, ``total_errors`` and ``file_size``. JSON adds, per file, the columns of
``show_commits_metadata`` (``num_writes``, ``num_inserts``, ``num_deletes``, ``num_update_writes``,
``total_log_blocks``, ``total_corrupt_log_blocks``, ``total_rollback_blocks``, ``total_log_records``,
``total_updated_records_compacted``) and the file's ``path``.
"""

from __future__ import annotations

import argparse

from reference.commands import _output
from spec.errors import InstantNotFound

COLUMNS = ["action", "partition_path", "file_id", "previous_commit", "total_records_updated", "total_records_written",
           "total_bytes_written", "total_errors", "file_size"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "commit-files", run, help="the files one completed commit wrote")
    p.add_argument("instant", nargs="?", help="the commit's instant time (default: the latest)")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import commit_metadata, open_table

    storage, _, timeline = open_table(args.table)
    commits = timeline.commits_timeline()
    inst = commits.get(args.instant) if args.instant else commits.latest_completed()
    if inst is None:
        raise InstantNotFound(f"no completed commit {args.instant or ''} on the timeline".replace("  ", " "),
                              hint="list them with hudi-spec commits TABLE")
    md = commit_metadata(storage, timeline, inst)
    action = timeline.origin_action(inst.requested) or inst.action
    rows = [{
        "action": action, "partition_path": s.partition_path, "file_id": s.file_id, "previous_commit": s.prev_commit,
        "path": s.path, "num_writes": s.num_writes, "num_inserts": s.num_inserts, "num_deletes": s.num_deletes,
        "num_update_writes": s.num_updates, "total_errors": int(s.get("totalWriteErrors", 0)),
        "total_log_blocks": int(s.get("totalLogBlocks", 0)),
        "total_corrupt_log_blocks": int(s.get("totalCorruptLogBlock", 0)),
        "total_rollback_blocks": int(s.get("totalRollbackBlocks", 0)),
        "total_log_records": int(s.get("totalLogRecords", 0)),
        "total_updated_records_compacted": int(s.get("totalUpdatedRecordsCompacted", 0)),
        "total_bytes_written": s.total_write_bytes, "total_records_updated": s.num_updates,
        "total_records_written": s.num_writes, "file_size": s.file_size,
    } for s in md.all_write_stats()]
    data = {"instant": inst.requested, "action": action, "operation": md.operation_type, "files": rows,
            "replaced_file_ids": {p: list(v) for p, v in (md.partition_to_replace_file_ids or {}).items()}}
    _output.emit_rows(args.output, rows, COLUMNS, data=data, title=f"{action} {inst.requested} ({md.operation_type})")
    return 0
