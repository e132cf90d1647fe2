"""``hudi-spec compactions TABLE``: compaction instants, pending and completed (like ``CALL show_compaction``).

Columns as ``show_compaction`` names them: ``compaction_time`` (requested time),
``state_transition_time`` (layout 2: the completion time; layout 1: when the file of the instant's
state was written), ``state``, ``action`` (``compaction``
while pending, ``commit`` once completed), ``timeline_type`` and ``operation_size`` (the number of
operations in the plan, ``T.compaction.requested``); added here: ``total_log_files`` (log files the
plan compacts) and ``partitions``. One row per instant, newest first.
"""

from __future__ import annotations

import argparse
from typing import Any

from reference.commands import _output

COLUMNS = ["compaction_time", "state_transition_time", "state", "action", "timeline_type", "operation_size",
           "total_log_files", "partitions"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "compactions", run, help="compaction instants and the size of their plans")
    p.add_argument("--limit", type=_output.count, default=None, help="only the newest N")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import instant_record, open_table, state_transition_time, timeline_mtimes
    from spec.timeline.avro_model import HoodieCompactionPlan
    from spec.timeline.instant import Action

    storage, _, timeline = open_table(args.table)
    rows: list[dict[str, Any]] = []
    mtimes = timeline_mtimes(storage, timeline)
    for inst in reversed(timeline.instants):
        requested = f"{inst.requested}.compaction.requested"  # the plan stays after the compaction completes
        if inst.family != Action.COMMIT or requested not in timeline.files_of(inst.requested):
            continue
        plan = instant_record(storage, timeline, requested, HoodieCompactionPlan)
        ops = plan.operations or ()
        rows.append({"compaction_time": inst.requested,
                     "state_transition_time": state_transition_time(timeline, inst, mtimes),
                     "state": inst.state.value, "action": inst.action, "timeline_type": "ACTIVE",
                     "operation_size": len(ops), "total_log_files": sum(len(op.delta_file_paths or ()) for op in ops),
                     "partitions": sorted({op.partition_path or "" for op in ops})})
    rows = _output.newest(rows, args.limit)
    _output.emit(args.output, rows, COLUMNS,
                 [[*(r[c] for c in COLUMNS[:-1]), ", ".join(r["partitions"])] for r in rows],
                 title="Compactions")
    return 0
