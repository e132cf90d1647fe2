"""``hudi-spec archived TABLE``: the archived timeline (like ``CALL show_archived_commits``).

Lists the instants archival moved off the active timeline, oldest first: ``instant_time``,
``action``, ``state`` and (table version 8) ``completion_time``. ``--run`` archives first, with
``--keep-min`` / ``--keep-max`` as ``hoodie.keep.min.commits`` / ``hoodie.keep.max.commits``
(defaults 20 / 30): table version 6 into the archived log, 8 into the LSM history.
"""

from __future__ import annotations

import argparse

from reference.commands import _output
from reference.commands._service_options import add_option_argument, service_config
from spec.config import registry as config_registry

COLUMNS = ["instant_time", "action", "state", "completion_time"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "archived", run, help="list (and with --run, first archive) the archived timeline")
    p.add_argument("--run", action="store_true", help="archive what the keep-min/keep-max rule allows first")
    for flag, name in (("--keep-min", "keep_min_commits"), ("--keep-max", "keep_max_commits")):
        setting = config_registry.BY_NAME[name]
        p.add_argument(flag, type=int, default=setting.value, help=f"{setting.key} (default {setting.default})")
    _output.add_engine_option(p, ("local",), what="local: --run archives in this process (it has no Spark step)")
    add_option_argument(p)


def run(args: argparse.Namespace) -> int:
    from reference.executors.archive import archive
    from reference.executors.common import load_table
    from spec.actions.archive import ArchiveConfig, archived_instants

    cfg = service_config(args)
    storage, table = load_table(args.table)
    moved: list[str] = []
    if args.run:
        result = archive(storage, table, ArchiveConfig(args.keep_min, args.keep_max), lock=cfg.lock)
        moved = [i.requested for i in result.archived]
    rows = [{"instant_time": i.requested, "action": i.action, "state": i.state, "completion_time": i.completed}
            for i in archived_instants(storage, table)]
    data = {"archived_now": moved, "total_instants": len(rows), "instants": rows}
    title = f"Archived timeline, {len(rows)} instants" + (f" ({len(moved)} archived now)" if args.run else "")
    _output.emit_rows(args.output, rows, COLUMNS, data=data, title=title)
    return 0
