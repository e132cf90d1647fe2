"""``hudi-spec compact TABLE``: compact a merge-on-read table (like ``CALL run_compaction``).

Without options: schedule a compaction of every latest file slice with log files and run it.
``--schedule`` only writes the plan (``<t>.compaction.requested``); ``--run [INSTANT]`` executes a
pending plan (the oldest when no instant is given). ``--engine local`` (the default) merges the file
groups on threads of this process, with no Spark session; ``--engine spark`` runs one Spark task per
file group. ``--option`` gives write options: the table lock it takes (``hoodie.write.lock.provider``), the
codec of the new base files. Output: one row per compacted file group.
"""

from __future__ import annotations

import argparse
from typing import Any

from reference.commands import _output
from reference.commands._service_options import add_plan_modes, options_of

COLUMNS = ["compaction_time", "partition_path", "file_id", "prev_commit", "num_writes",
           "total_log_files_compacted", "total_log_records", "file_size"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "compact", run, help="merge-on-read: merge base and log files into new base files")
    add_plan_modes(p, "compaction", "local: file groups merged on threads of this process, no Spark; "
                                    "spark: one Spark task per file group")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import commit_metadata
    from reference.executors.compaction import compact, run_compaction, schedule_compaction
    from reference.instrumentation.spark_progress import spark_progress
    from reference.write.client import WriteClient
    from spec.timeline.active_timeline import Timeline

    options = options_of(args)
    client = WriteClient(args.table, engine=args.engine)
    if args.schedule:
        t = schedule_compaction(client, options=options)
        data: dict[str, Any] = {"compaction_time": t, "state": "REQUESTED" if t else None, "file_groups": []}
        if t is None and args.output not in ("json", "csv"):
            return _nothing()
        _output.emit(args.output, data, COLUMNS, [], title=f"Compaction {t} scheduled")
        return 0
    with spark_progress():
        t = (run_compaction(client, args.run or None, options=options) if args.run is not None
             else compact(client, options=options))
    rows: list[dict[str, Any]] = []
    if t is not None:
        timeline = Timeline.load(client.storage)
        inst = timeline.get(t)
        assert inst is not None
        md = commit_metadata(client.storage, timeline, inst)
        rows = [{"compaction_time": t, "partition_path": s.partition_path, "file_id": s.file_id,
                 "prev_commit": s.prev_commit, "num_writes": s.num_writes,
                 "total_log_files_compacted": s.total_log_files_compacted, "total_log_records": s.total_log_records,
                 "file_size": s.file_size} for s in md.all_write_stats()]
    data = {"compaction_time": t, "state": "COMPLETED" if t else None, "engine": args.engine, "file_groups": rows}
    if t is None and args.output not in ("json", "csv"):
        return _nothing()
    _output.emit_rows(args.output, rows, COLUMNS, data=data, title=f"Compaction {t} ({args.engine} engine)")
    return 0


NOTHING = "Nothing to compact: no latest file slice has log files, and no compaction is pending"


def _nothing() -> int:
    """The one line a table-format answer gives when there was nothing to compact (JSON and CSV keep their
    shape: a null instant, a header without rows)."""
    _output.start_output()
    print(NOTHING)
    return 0
