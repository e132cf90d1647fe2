"""``hudi-spec savepoints TABLE``: completed savepoints (like ``CALL show_savepoints``).

``savepoint_time`` as ``show_savepoints`` names it (the savepointed commit's time), newest first;
added here from the HoodieSavepointMetadata: ``savepointed_by``, ``savepointed_at``, ``comments``,
``total_partitions``, ``total_files`` (the files the savepoint keeps) and ``state_transition_time``
(layout 2: the completion time; layout 1: when the completed savepoint file was written).
"""

from __future__ import annotations

import argparse

from reference.commands import _output

COLUMNS = ["savepoint_time", "savepointed_by", "savepointed_at", "comments", "total_partitions", "total_files",
           "state_transition_time"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _output.table_command(sub, "savepoints", run, help="completed savepoints and the files they keep")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import instant_record, open_table, state_transition_time, timeline_mtimes
    from spec.timeline.avro_model import HoodieSavepointMetadata
    from spec.timeline.instant import Action

    storage, _, timeline = open_table(args.table)
    rows = []
    mtimes = timeline_mtimes(storage, timeline)
    for inst in reversed(timeline.instants):
        if inst.action != Action.SAVEPOINT or not inst.is_completed:
            continue
        md = instant_record(storage, timeline, inst, HoodieSavepointMetadata)
        rows.append({"savepoint_time": inst.requested, "savepointed_by": md.savepointed_by,
                     "savepointed_at": md.savepointed_at, "comments": md.comments,
                     "total_partitions": len(md.partition_metadata),
                     "total_files": sum(len(pm.savepoint_data_file) for pm in md.partition_metadata.values()),
                     "state_transition_time": state_transition_time(timeline, inst, mtimes)})
    _output.emit_rows(args.output, rows, COLUMNS, title="Savepoints")
    return 0
