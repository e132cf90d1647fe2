"""``hudi-spec fsview TABLE``: file groups and slices (like ``CALL show_fsview_all`` / ``show_fsview_latest``).

Every slice of every file group, with ``show_fsview_all``'s columns: ``partition``, ``file_id``,
``base_instant``, ``data_file``, ``data_file_size``, ``num_delta_files``, ``total_delta_file_size`` and
``delta_files``. ``--latest`` shows the latest slice of each group with ``show_fsview_latest``'s
columns, which split the log files by whether the deltacommit that wrote them is completed (a
candidate for the next compaction, "scheduled") or not ("unscheduled"):
``delta_size_compaction_scheduled`` / ``_unscheduled`` (bytes), ``delta_to_base_radio_compaction_
scheduled`` / ``_unscheduled`` (log bytes over base bytes, -1 without a base file; "radio" is
Hudi's spelling) and ``delta_files_compaction_scheduled`` / ``_unscheduled``. Text shows the sizes
(``LATEST_TEXT_COLUMNS``); JSON every column.

``--output mermaid`` prints the file groups as a Mermaid flowchart (a subgraph per group, a node per
slice) and ``--output svg`` as a picture over the timeline (``reference.diagrams.fsview``); both honour
``--partition`` and ``--as-of`` and draw every slice (``--latest``: only the latest).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from reference.commands import _output

if TYPE_CHECKING:
    from spec.file_group.file_system_view import FileSlice, FileSystemView
    from spec.storage.hoodie_storage import Storage
    from spec.timeline.active_timeline import Timeline

COLUMNS = ["partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
           "total_delta_file_size", "delta_files"]
LATEST_COLUMNS = ["partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
                  "total_delta_file_size", "delta_size_compaction_scheduled", "delta_size_compaction_unscheduled",
                  "delta_to_base_radio_compaction_scheduled", "delta_to_base_radio_compaction_unscheduled",
                  "delta_files_compaction_scheduled", "delta_files_compaction_unscheduled"]
LATEST_TEXT_COLUMNS = ["partition", "file_id", "base_instant", "data_file_size", "num_delta_files",
                       "total_delta_file_size", "delta_size_compaction_scheduled", "delta_size_compaction_unscheduled"]
"""What text shows of ``--latest`` (JSON has every column)."""
LIST_COLUMNS = ("delta_files", "delta_files_compaction_scheduled", "delta_files_compaction_unscheduled")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "fsview", run, help="file groups and their slices", output_extra=("mermaid", "svg"))
    p.add_argument("--latest", action="store_true", help="only the latest slice of each file group")
    p.add_argument("--as-of", help="the view as of this instant")
    p.add_argument("--partition", help="only this partition path")
    p.add_argument("--list-file-system", action="store_true",
                   help="list files on storage even where the metadata table lists them")


def _row(sl: FileSlice, partition: str, file_id: str) -> dict[str, Any]:
    return {"partition": partition, "file_id": file_id, "base_instant": sl.base_instant,
            "data_file": sl.base_file.name if sl.base_file else None,
            "data_file_size": sl.base_file.size if sl.base_file else 0,
            "num_delta_files": len(sl.log_files), "total_delta_file_size": sum(f.size for f in sl.log_files),
            "delta_files": [f.name for f in sl.log_files]}


def _latest_row(sl: FileSlice, partition: str, file_id: str, timeline: Timeline) -> dict[str, Any]:
    row = _row(sl, partition, file_id)
    done = {i.requested for i in timeline.completed().instants}
    scheduled = [(f, n) for f, n in zip(sl.log_files, sl.log_file_names, strict=True) if n.instant in done]
    unscheduled = [(f, n) for f, n in zip(sl.log_files, sl.log_file_names, strict=True) if n.instant not in done]
    base = row["data_file_size"]
    for kind, logs in (("scheduled", scheduled), ("unscheduled", unscheduled)):
        size = sum(f.size for f, _ in logs)
        row[f"delta_size_compaction_{kind}"] = size
        row[f"delta_to_base_radio_compaction_{kind}"] = round(size / base, 4) if base else -1
        row[f"delta_files_compaction_{kind}"] = [f.name for f, _ in logs]
    del row["delta_files"]
    return row


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import open_table
    from spec.file_group.file_system_view import FileSystemView
    from spec.metadata.metadata_table import list_table_files
    from spec.timeline.instant import validate_instant_time

    if args.as_of is not None:
        validate_instant_time(args.as_of, metadata_suffix=True)  # metadata tables name instants so too
    storage, cfg, timeline = open_table(args.table)
    files = list_table_files(storage, cfg, timeline, use_metadata_table=not args.list_file_system)
    view = FileSystemView.load(storage, cfg, timeline, args.as_of, files)
    if args.output in ("mermaid", "svg"):
        return _draw(args, view, storage)
    rows = []
    for group in view.groups:
        if args.partition is not None and group.partition_path != args.partition:
            continue
        if args.latest:
            if group.slices:
                rows.append(_latest_row(group.slices[-1], group.partition_path, group.file_id, timeline))
        else:
            rows += [_row(sl, group.partition_path, group.file_id) for sl in group.slices]
    columns = LATEST_TEXT_COLUMNS if args.latest else COLUMNS
    title = f"{len(view.groups)} file groups, {len(rows)} {'latest ' if args.latest else ''}file slices"
    _output.emit(args.output, rows, columns,
                 [["\n".join(r[c]) if c in LIST_COLUMNS else r[c] for c in columns] for r in rows], title=title)
    return 0


def _draw(args: argparse.Namespace, view: FileSystemView, storage: Storage) -> int:
    """Print the view as Mermaid or SVG, only ``--partition``'s groups, only latest slices with ``--latest``."""
    from dataclasses import replace

    from reference.diagrams.fsview import fsview_mermaid, fsview_svg

    groups = tuple(replace(g, slices=g.slices[-1:] if args.latest else g.slices) for g in view.groups
                   if args.partition is None or g.partition_path == args.partition)
    shown = replace(view, groups=groups)
    if args.output == "mermaid":
        print(fsview_mermaid(shown), end="")
    else:
        print(fsview_svg(shown, storage, f"File groups of {args.table}"))
    return 0
