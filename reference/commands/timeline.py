"""``hudi-spec timeline TABLE``: the instants of the active timeline (like ``CALL show_timeline``).

Text shows the times the timeline itself holds: ``instant_time`` (the requested time), ``action``,
``state`` and, on layout 2 (table versions 8 and 9), ``completion_time`` (the ``C`` of ``T_C.action``;
layout 1 names none); the one time that is not the timeline's, when the instant's file was last written,
only in a column that says so, ``file_modified`` (UTC). JSON has every column as ``show_timeline`` names
them: ``instant_time``, ``action``, ``state``, and ``requested_time`` / ``inflight_time`` /
``completed_time``, which in ``show_timeline`` are the modification times of the instant's file in each
state (UTC, to the millisecond); added here: ``completion_time``, ``requested_action`` (``compaction`` for a
completed compaction shown as ``commit``) and ``files``, the instant's timeline files (in text only with
``--files``). Like
``show_timeline`` the newest 20 instants are shown unless ``--all`` or ``--limit`` says otherwise;
rows are in timeline order. ``--archived`` (``show_timeline``'s ``showArchived``) puts the archived
instants first, ``timeline_type`` ARCHIVED (v6: the archived log; v8: the LSM history).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from reference.commands import _output

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage

COLUMNS = ["instant_time", "action", "state", "requested_time", "inflight_time", "completed_time",
           "timeline_type", "completion_time", "requested_action", "files"]
DEFAULT_LIMIT = 20
"""``CALL show_timeline``'s default ``limit``."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "timeline", run, help="list the instants of the active timeline")
    p.add_argument("--all", action="store_true", help="every instant (default: the newest 20)")
    p.add_argument("--limit", type=_output.count, default=None,
                   help=f"only the newest N instants (default {DEFAULT_LIMIT})")
    p.add_argument("--pending", action="store_true", help="only instants that did not complete")
    p.add_argument("--files", action="store_true", help="text: also list each instant's timeline files")
    p.add_argument("--archived", action="store_true", help="also the archived instants (first, oldest first)")


def text_columns(rows: list[dict[str, object]], layout: int, archived: bool, files: bool) -> list[str]:
    """The columns text shows: the timeline's own times (``instant_time``; ``completion_time`` only on layout
    2, layout 1 has none), then ``file_modified``; ``timeline_type`` only with ``--archived`` (else every row is
    ACTIVE), ``files`` only with ``--files``. A ``requested_action`` other than the action is shown in the
    action's cell, as ``commit (compaction)``. JSON always has every column."""
    columns = ["instant_time", "action", "state"]
    if layout == 2:
        columns.append("completion_time")
    columns.append("file_modified")
    if archived:
        columns.append("timeline_type")
    return [*columns, "files"] if files else columns


FILE_MODIFIED = "file_modified"
"""The text column of the modification time of the instant's file in its current state: not a time of the
timeline, and named so (``MM-dd HH:mm:ss``, UTC, as ``show_timeline`` prints its state times)."""


def _text_cell(row: dict[str, object], column: str) -> object:
    """A cell of the text table: the time the instant's file in its state was written (``file_modified``), the
    action with the action it was requested as, files one a line."""
    if column == FILE_MODIFIED:
        state = {"REQUESTED": "requested_time", "INFLIGHT": "inflight_time", "COMPLETED": "completed_time"}
        value = row.get(state.get(str(row["state"]), ""))
        return datetime.fromisoformat(value).strftime("%m-%d %H:%M:%S") if isinstance(value, str) else None
    value = row[column]
    if column == "action" and row["requested_action"] not in (None, value):
        return f"{value} ({row['requested_action']})"
    if column == "files":
        return "\n".join(row["files"])  # type: ignore[arg-type]
    return value


def _iso(mtime_ms: int) -> str:
    return datetime.fromtimestamp(mtime_ms / 1000, UTC).isoformat(timespec="milliseconds")


def run(args: argparse.Namespace) -> int:
    from spec.storage.hoodie_storage import Storage
    from spec.timeline.active_timeline import Timeline
    from spec.timeline.instant import State
    from spec.timeline.layout import parse_instant_file_name, timeline_dir

    storage = Storage(args.table)
    timeline = Timeline.load(storage)
    listing = {f.name: f.mtime_ms for f in storage.list(timeline_dir(timeline.layout)) if not f.is_dir}
    if args.pending:
        timeline = timeline.pending()
    instants = list(timeline.instants)
    limit = None if args.all or (args.archived and args.limit is None) else (
        args.limit if args.limit is not None else DEFAULT_LIMIT)
    if limit is not None:
        instants = instants[-limit:] if limit > 0 else []
    rows = _archived_rows(storage, args.pending) if args.archived else []
    for inst in instants:
        files = timeline.files_of(inst)
        mtimes: dict[State, str] = {}
        for name in files:
            if name in listing:
                mtimes[parse_instant_file_name(name, timeline.layout).state] = _iso(listing[name])
        rows.append({
            "instant_time": inst.requested,
            "action": inst.action,
            "state": inst.state.value,
            "requested_time": mtimes.get(State.REQUESTED),
            "inflight_time": mtimes.get(State.INFLIGHT),
            "completed_time": mtimes.get(State.COMPLETED),
            "timeline_type": "ACTIVE",
            "completion_time": inst.completed,
            "requested_action": timeline.origin_action(inst.requested),
            "files": list(files),
        })
    if limit is not None and args.archived:
        rows = rows[-limit:] if limit > 0 else []
    total = len(timeline) + (sum(r["timeline_type"] == "ARCHIVED" for r in rows) if args.archived else 0)
    if args.output == "json":
        _output.emit_json({"layout": timeline.layout, "total_instants": total, "instants": rows})
    elif args.output == "csv":
        _output.emit_csv(COLUMNS, [[r[c] for c in COLUMNS] for r in rows])
    else:
        shown = f"{len(rows)} of {total}" if len(rows) < total else str(len(rows))
        columns = text_columns(rows, timeline.layout, args.archived, args.files)
        _output.emit_table(f"Timeline (layout {timeline.layout}), {shown} instants", columns,
                           [[_text_cell(r, c) for c in columns] for r in rows])
    return 0


def _archived_rows(storage: Storage, pending_only: bool) -> list[dict[str, object]]:
    from spec.actions.archive import archived_instants
    from spec.config.table_config import TableConfig
    from spec.timeline.instant import State

    table = TableConfig.load(storage)
    return [{"instant_time": a.requested, "action": a.action, "state": a.state, "requested_time": None,
             "inflight_time": None, "completed_time": None, "timeline_type": "ARCHIVED",
             "completion_time": a.completed, "requested_action": a.action, "files": []}
            for a in archived_instants(storage, table) if not pending_only or a.state != State.COMPLETED.value]
