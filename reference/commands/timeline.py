"""``hudi-spec timeline TABLE``: the instants of the active timeline (like ``CALL show_timeline``)."""

from __future__ import annotations

import argparse

from reference.commands import _output
from spec.storage import Storage
from spec.timeline import Timeline, parse_instant_time

COLUMNS = ["instant_time", "action", "state", "requested_time", "completion_time", "files"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("timeline", help="list the instants of the active timeline")
    p.add_argument("table", help="table base path or URI")
    p.add_argument("--pending", action="store_true", help="only instants that did not complete")
    p.add_argument("--limit", type=int, default=None, help="only the newest N instants")
    _output.add_output_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    timeline = Timeline.load(Storage(args.table))
    if args.pending:
        timeline = timeline.pending()
    instants = list(timeline.instants)
    if args.limit is not None:
        instants = instants[-args.limit:]
    rows = []
    for inst in instants:
        completion = timeline.completion_time(inst.requested)
        rows.append({
            "instant_time": inst.requested,
            "action": inst.action,
            "state": inst.state.value,
            "requested_time": parse_instant_time(inst.requested).isoformat(),
            "completion_time": completion,
            "requested_action": timeline.origin_action(inst.requested),
            "files": list(timeline.files_of(inst.requested)),
        })
    if args.output == "json":
        _output.emit_json({"layout": timeline.layout, "instants": rows})
    else:
        _output.emit_table(
            f"Timeline (layout {timeline.layout}), {len(rows)} instants",
            COLUMNS,
            [[r["instant_time"], r["action"], r["state"], r["requested_time"], r["completion_time"],
              "\n".join(r["files"])] for r in rows],
        )
    return 0
