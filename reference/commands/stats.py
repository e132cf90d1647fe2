"""``hudi-spec stats TABLE``: file sizes and write amplification (like ``CALL stats_file_sizes`` and
``stats_wa``)."""

from __future__ import annotations

import argparse
import statistics

from reference.commands import _output
from reference.commands._table import commit_metadata, open_table
from spec.file_system_view import FileSystemView

COLUMNS = ["commit_time", "total_upserted", "total_written", "write_amplification_factor"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("stats", help="file sizes of the latest slices and write amplification per commit")
    p.add_argument("table", help="table base path or URI")
    _output.add_output_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    storage, cfg, timeline = open_table(args.table)
    per_commit = []
    for inst in timeline.commits_timeline().instants:
        stats = list(commit_metadata(storage, timeline, inst).all_write_stats())
        upserted = sum(s.num_inserts + s.num_updates for s in stats)
        written = sum(s.num_writes for s in stats)
        per_commit.append({"commit_time": inst.requested, "total_upserted": upserted, "total_written": written,
                           "write_amplification_factor": round(written / upserted, 2) if upserted else None})
    view = FileSystemView.load(storage, cfg, timeline)
    sizes = [sl.base_file.size for sl in view.latest_slices() if sl.base_file]
    files = {"base_files": len(sizes), "total_bytes": sum(sizes),
             "min": min(sizes, default=0), "max": max(sizes, default=0),
             "avg": int(statistics.mean(sizes)) if sizes else 0,
             "median": int(statistics.median(sizes)) if sizes else 0,
             "log_files": sum(len(sl.log_files) for sl in view.latest_slices())}
    if args.output == "json":
        _output.emit_json({"file_sizes": files, "write_amplification": per_commit})
    else:
        _output.emit_mapping("Latest base files", files, "stat", "value")
        _output.emit_table("Write amplification", COLUMNS, [[r[c] for c in COLUMNS] for r in per_commit])
    return 0
