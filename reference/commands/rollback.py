"""``hudi-spec rollback TABLE [INSTANT]``: roll back a write (like ``CALL rollback_to_instant``).

Without INSTANT the latest data-writing instant (completed or pending) is rolled back. A completed
write is rolled back only when no write completed after it and no savepoint keeps it; a pending
compaction is never rolled back (it is retried). ``--option`` names the table lock it takes
(``reference.commands._service_options``). Output: one row per file deleted or command-block
log written.
"""

from __future__ import annotations

import argparse

from reference.commands import _output
from reference.commands._service_options import add_option_argument, service_config

COLUMNS = ["rollback_instant", "instant", "partition_path", "change", "file"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "rollback", run, help="roll back the latest (or a named) write")
    p.add_argument("instant", nargs="?", help="the instant to roll back (default: the latest write)")
    _output.add_engine_option(p, ("local",), what="local: rollback runs in this process (it has no Spark step)")
    add_option_argument(p)


def run(args: argparse.Namespace) -> int:
    from reference.executors.common import load_table
    from reference.executors.rollback import rollback

    cfg = service_config(args)
    storage, table = load_table(args.table)
    result = rollback(storage, table, args.instant, lock=cfg.lock)
    rows = []
    for p, pm in sorted(result.metadata.partition_metadata.items()):
        rows += [{"rollback_instant": result.instant, "instant": result.target.requested, "partition_path": p,
                  "change": "deleted", "file": f} for f in pm.success_delete_files]
        rows += [{"rollback_instant": result.instant, "instant": result.target.requested, "partition_path": p,
                  "change": "rollback block", "file": f} for f in sorted(pm.rollback_log_files or {})]
    data = {"rollback_instant": result.instant, "instant": result.target.requested, "action": result.target.action,
            "state": result.target.state.value, "total_files_deleted": result.metadata.total_files_deleted,
            "changes": rows}
    # the table names each file by its name (its partition is the column beside it); JSON and CSV keep the paths
    shown = rows if args.output in ("json", "csv") else [{**r, "file": r["file"].rsplit("/", 1)[-1]} for r in rows]
    _output.emit_rows(args.output, shown, COLUMNS, data=data,
                      title=f"Rolled back {result.target.requested} ({result.target.action}) at {result.instant}")
    return 0
