"""``hudi-spec commits TABLE``: completed writes with their totals (like ``CALL show_commits``).

Columns as ``show_commits`` names them: ``commit_time`` (requested time), ``state_transition_time``
(layout 2: the completion time; layout 1: when the completed instant file was written),
``action``, ``total_bytes_written``, ``total_files_added``,
``total_files_updated``, ``total_partitions_written``, ``total_records_written``,
``total_update_records_written`` and ``total_errors``; added here: ``operation``, ``total_inserts``
and ``total_deletes``. Newest first, as ``show_commits`` orders them; ``--limit N`` keeps the newest N.
"""

from __future__ import annotations

import argparse

from reference.commands import _output

COLUMNS = ["commit_time", "state_transition_time", "action", "operation", "total_bytes_written", "total_files_added",
           "total_files_updated", "total_partitions_written", "total_records_written", "total_update_records_written",
           "total_inserts", "total_deletes", "total_errors"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "commits", run, help="completed commits with their write totals")
    p.add_argument("--limit", type=_output.count, default=None, help="only the newest N")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import commit_metadata, open_table, state_transition_time, timeline_mtimes

    storage, _, timeline = open_table(args.table)
    rows = []
    mtimes = timeline_mtimes(storage, timeline)
    for inst in reversed(timeline.commits_timeline().instants):
        md = commit_metadata(storage, timeline, inst)
        stats = list(md.all_write_stats())
        rows.append({
            "commit_time": inst.requested,
            "state_transition_time": state_transition_time(timeline, inst, mtimes),
            "action": timeline.origin_action(inst.requested) or inst.action,
            "operation": md.operation_type,
            "total_bytes_written": sum(s.total_write_bytes for s in stats),
            "total_files_added": sum(1 for s in stats if s.prev_commit == "null"),
            "total_files_updated": sum(1 for s in stats if s.prev_commit != "null"),
            "total_partitions_written": len(md.partition_to_write_stats),
            "total_records_written": sum(s.num_writes for s in stats),
            "total_update_records_written": sum(s.num_updates for s in stats),
            "total_inserts": sum(s.num_inserts for s in stats),
            "total_deletes": sum(s.num_deletes for s in stats),
            "total_errors": sum(int(s.get("totalWriteErrors", 0)) for s in stats),
        })
    _output.emit_rows(args.output, _output.newest(rows, args.limit), COLUMNS, title="Commits")
    return 0
