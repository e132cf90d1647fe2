"""``hudi-spec fsview TABLE``: file groups and slices (like ``CALL show_fsview_all`` / ``show_fsview_latest``)."""

from __future__ import annotations

import argparse

from reference.commands import _output
from reference.commands._table import open_table
from spec.file_system_view import FileSystemView

COLUMNS = ["partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
           "total_delta_file_size", "delta_files"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("fsview", help="file groups and their slices")
    p.add_argument("table", help="table base path or URI")
    p.add_argument("--latest", action="store_true", help="only the latest slice of each file group")
    p.add_argument("--as-of", help="the view as of this instant")
    p.add_argument("--partition", help="only this partition path")
    _output.add_output_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    storage, cfg, timeline = open_table(args.table)
    view = FileSystemView.load(storage, cfg, timeline, args.as_of)
    rows = []
    for group in view.groups:
        if args.partition is not None and group.partition_path != args.partition:
            continue
        slices = group.slices[-1:] if args.latest else group.slices
        for sl in slices:
            rows.append({
                "partition": group.partition_path, "file_id": group.file_id, "base_instant": sl.base_instant,
                "data_file": sl.base_file.name if sl.base_file else None,
                "data_file_size": sl.base_file.size if sl.base_file else 0,
                "num_delta_files": len(sl.log_files), "total_delta_file_size": sum(f.size for f in sl.log_files),
                "delta_files": [f.name for f in sl.log_files],
            })
    _output.emit(args.output, rows, COLUMNS,
                 [[*(r[c] for c in COLUMNS[:-1]), "\n".join(r["delta_files"])] for r in rows],
                 title=f"{len(view.groups)} file groups")
    return 0
