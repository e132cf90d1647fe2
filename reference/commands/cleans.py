"""``hudi-spec cleans TABLE``: completed cleans with their metadata (like ``CALL show_cleans``).

Columns as ``show_cleans`` names them: ``clean_time`` (requested time), ``state_transition_time``
(layout 2: the completion time; layout 1: when the completed instant file was written),
``action``, ``start_clean_time``, ``time_taken_in_millis``,
``total_files_deleted``, ``earliest_commit_to_retain``, ``last_completed_commit_timestamp`` and
``version``; added here: ``policy``. Newest first, as ``show_cleans`` orders them.
``--pending`` lists cleans that did not complete, with the number of files their plan deletes.
"""

from __future__ import annotations

import argparse

from reference.commands import _output

COLUMNS = ["clean_time", "state_transition_time", "action", "start_clean_time", "time_taken_in_millis",
           "total_files_deleted", "earliest_commit_to_retain", "last_completed_commit_timestamp", "version", "policy"]
PENDING_COLUMNS = ["clean_time", "state", "policy", "earliest_instant_to_retain", "files_to_delete"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "cleans", run, help="completed cleans and what they deleted")
    p.add_argument("--limit", type=_output.count, default=None, help="only the newest N")
    p.add_argument("--pending", action="store_true", help="cleans that did not complete, with their plans")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import (
        instant_record,
        open_table,
        requested_plan,
        state_transition_time,
        timeline_mtimes,
    )
    from spec.timeline.avro_model import HoodieCleanerPlan, HoodieCleanMetadata
    from spec.timeline.instant import Action

    storage, _, timeline = open_table(args.table)
    cleans = [i for i in reversed(timeline.instants) if i.action == Action.CLEAN]
    if args.pending:
        rows = []
        for inst in cleans:
            if inst.is_completed:
                continue
            plan = requested_plan(storage, timeline, inst, HoodieCleanerPlan)
            files = sum(len(v) for v in (plan.file_paths_to_be_deleted_per_partition or {}).values()) + sum(
                len(v) for v in (plan.files_to_be_deleted_per_partition or {}).values())
            e = plan.earliest_instant_to_retain
            rows.append({"clean_time": inst.requested, "state": inst.state.value, "policy": plan.policy,
                         "earliest_instant_to_retain": e.timestamp if e else None, "files_to_delete": files})
        _output.emit_rows(args.output, _output.newest(rows, args.limit), PENDING_COLUMNS, title="Pending cleans")
        return 0
    rows = []
    mtimes = timeline_mtimes(storage, timeline)
    for inst in cleans:
        if not inst.is_completed:
            continue
        md = instant_record(storage, timeline, inst, HoodieCleanMetadata)
        rows.append({"clean_time": inst.requested,
                     "state_transition_time": state_transition_time(timeline, inst, mtimes), "action": inst.action,
                     "start_clean_time": md.start_clean_time, "time_taken_in_millis": md.time_taken_in_millis,
                     "total_files_deleted": md.total_files_deleted,
                     "earliest_commit_to_retain": md.earliest_commit_to_retain,
                     "last_completed_commit_timestamp": md.last_completed_commit_timestamp,
                     "version": md.version, "policy": md.policy})
    _output.emit_rows(args.output, _output.newest(rows, args.limit), COLUMNS, title="Cleans")
    return 0
