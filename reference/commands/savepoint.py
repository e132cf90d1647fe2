"""``hudi-spec savepoint create|restore``: savepoint a commit, restore the table to a savepoint.

- ``savepoint create TABLE [INSTANT] [--user U --comment C]`` (like ``CALL create_savepoint``):
  keeps the files of the latest slices as of the commit (default: the latest) from every clean;
- ``savepoint restore TABLE INSTANT`` (like ``CALL rollback_to_savepoint``): undoes every write
  after the savepoint under one restore instant; the table then reads as it read at the savepoint;
- ``savepoint delete TABLE INSTANT`` (like ``CALL delete_savepoint``): removes the savepoint; the
  files it kept become cleanable again.

Each takes ``--option`` to name the table lock it takes (``reference.commands._service_options``).
"""

from __future__ import annotations

import argparse

from reference.commands import _output
from reference.commands._service_options import add_option_argument, service_config

CREATE_COLUMNS = ["savepoint_time", "partition_path", "file"]
RESTORE_COLUMNS = ["restore_instant", "savepoint_time", "instant", "action", "total_files_deleted"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("savepoint", help="create a savepoint or restore the table to one")
    actions = p.add_subparsers(dest="savepoint_command", metavar="ACTION", required=True)
    c = _output.table_command(actions, "create", run_create, help="savepoint a completed commit (default: the latest)")
    c.add_argument("instant", nargs="?", help="the commit to savepoint (default: the latest)")
    c.add_argument("--user", default="hudi-spec", help="savepointedBy (default hudi-spec)")
    c.add_argument("--comment", default="", help="comments")
    r = _output.table_command(actions, "restore", run_restore, help="restore the table to a savepoint")
    r.add_argument("instant", help="the savepoint's time")
    d = _output.table_command(actions, "delete", run_delete, help="delete a savepoint")
    d.add_argument("instant", help="the savepoint's time")
    for action in (c, r, d):
        _output.add_engine_option(action, ("local",), what="local: savepoints are written in this process "
                                                            "(they have no Spark step)")
        add_option_argument(action)


def run_create(args: argparse.Namespace) -> int:
    from reference.executors.common import load_table
    from reference.executors.savepoint import savepoint_create

    cfg = service_config(args)
    storage, table = load_table(args.table)
    result = savepoint_create(storage, table, args.instant, user=args.user, comment=args.comment, lock=cfg.lock)
    rows = [{"savepoint_time": result.instant, "partition_path": p, "file": f} for p, f in sorted(result.files)]
    data = {"savepoint_time": result.instant, "total_files": len(rows), "files": rows}
    _output.emit_rows(args.output, rows, CREATE_COLUMNS, data=data, title=f"Savepoint {result.instant}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from reference.executors.common import load_table
    from reference.executors.restore import restore

    cfg = service_config(args)
    storage, table = load_table(args.table)
    result = restore(storage, table, args.instant, lock=cfg.lock)
    rows = []
    for inst in result.rolled_back:
        md = (result.metadata.hoodie_restore_metadata.get(inst.requested) or (None,))[0]
        rows.append({"restore_instant": result.instant, "savepoint_time": result.savepoint,
                     "instant": inst.requested, "action": inst.action,
                     "total_files_deleted": md.total_files_deleted if md else 0})
    data = {"restore_instant": result.instant, "savepoint_time": result.savepoint, "rolled_back": rows}
    _output.emit_rows(args.output, rows, RESTORE_COLUMNS, data=data,
                      title=f"Restored to {result.savepoint} at {result.instant}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from reference.executors.common import load_table
    from reference.executors.savepoint import savepoint_delete

    cfg = service_config(args)
    storage, table = load_table(args.table)
    savepoint_delete(storage, table, args.instant, lock=cfg.lock)
    _output.emit(args.output, {"deleted_savepoint": args.instant}, ["deleted_savepoint"], [[args.instant]],
                 title="Savepoint deleted")
    return 0
