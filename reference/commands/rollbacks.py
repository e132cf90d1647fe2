"""``hudi-spec rollbacks TABLE``: completed rollbacks (like ``CALL show_rollbacks``).

Columns as ``show_rollbacks`` names them: ``instant`` (the instant rolled back),
``rollback_instant``, ``total_files_deleted``, ``time_taken_in_millis``, ``total_partitions``;
added here: ``action`` (of the instant rolled back), ``state_transition_time`` (layout 2: the
completion time; layout 1: when the completed rollback file was written) and
``rollback_log_files`` (command-block logs written, MOR v6). One row per
instant a rollback undid, newest rollback first. ``--pending`` lists rollbacks that did not
complete with the instant their plan targets.
"""

from __future__ import annotations

import argparse
from typing import Any

from reference.commands import _output

COLUMNS = ["instant", "rollback_instant", "total_files_deleted", "time_taken_in_millis", "total_partitions",
           "action", "state_transition_time", "rollback_log_files"]
PENDING_COLUMNS = ["rollback_instant", "state", "instant", "action", "requests"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "rollbacks", run, help="completed rollbacks and what they undid")
    p.add_argument("--limit", type=_output.count, default=None, help="only the newest N rollbacks")
    p.add_argument("--pending", action="store_true", help="rollbacks that did not complete, with their plans")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import (
        instant_record,
        open_table,
        requested_plan,
        state_transition_time,
        timeline_mtimes,
    )
    from spec.timeline.avro_model import HoodieRollbackMetadata, HoodieRollbackPlan
    from spec.timeline.instant import Action

    storage, _, timeline = open_table(args.table)
    rollbacks = [i for i in reversed(timeline.instants) if i.action == Action.ROLLBACK]
    if args.limit is not None:
        rollbacks = _output.newest([i for i in rollbacks if i.is_completed != args.pending], args.limit)
    rows: list[dict[str, Any]] = []
    if args.pending:
        for inst in rollbacks:
            if inst.is_completed:
                continue
            plan = requested_plan(storage, timeline, inst, HoodieRollbackPlan)
            target = plan.instant_to_rollback
            rows.append({"rollback_instant": inst.requested, "state": inst.state.value,
                         "instant": target.commit_time if target else None, "action": target.action if target else None,
                         "requests": len(plan.rollback_requests or ())})
        _output.emit_rows(args.output, rows, PENDING_COLUMNS, title="Pending rollbacks")
        return 0
    mtimes = timeline_mtimes(storage, timeline)
    for inst in rollbacks:
        if not inst.is_completed:
            continue
        md = instant_record(storage, timeline, inst, HoodieRollbackMetadata)
        actions = {i.commit_time: i.action for i in md.instants_rollback}
        logs = sorted(f for pm in md.partition_metadata.values() for f in (pm.rollback_log_files or {}))
        for undone in md.commits_rollback:
            rows.append({"instant": undone, "rollback_instant": inst.requested,
                         "total_files_deleted": md.total_files_deleted, "time_taken_in_millis": md.time_taken_in_millis,
                         "total_partitions": len(md.partition_metadata), "action": actions.get(undone),
                         "state_transition_time": state_transition_time(timeline, inst, mtimes),
                         "rollback_log_files": logs})
    _output.emit(args.output, rows, COLUMNS,
                 [[*(r[c] for c in COLUMNS[:-1]), "\n".join(r["rollback_log_files"])] for r in rows],
                 title="Rollbacks")
    return 0
