"""``hudi-spec stats TABLE``: file sizes and write amplification (like ``CALL stats_file_sizes`` and
``CALL stats_wa``).

File sizes, with ``stats_file_sizes``'s columns: one row per instant that wrote base files still on
storage (the instant in their names), then ``ALL``: ``commit_time``, ``min``, ``10th``, ``50th``,
``avg``, ``95th``, ``max``, ``num_files``, ``std_dev`` (bytes). Write amplification, with
``stats_wa``'s columns: one row per completed commit, then ``Total``: ``commit_time``,
``total_upserted`` (inserts and updates), ``total_written`` (records written, rewritten ones
included) and ``write_amplification_factor`` (written / upserted, two decimals). Per partition, the
file sizes of its latest base files (``partition`` and ``stats_file_sizes``'s columns), then its rows and log
files. ``--partition`` limits the file sizes to one partition (its path in either form, as ``read`` takes
it). ``--section commits|partitions|write-amplification`` prints one of the three tables (CSV prints one).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from reference.commands import _output

SIZE_COLUMNS = ["commit_time", "min", "10th", "50th", "avg", "95th", "max", "num_files", "std_dev"]
PARTITION_COLUMNS = ["partition", "num_files", "min", "50th", "avg", "max", "std_dev", "total_bytes", "log_files",
                     "log_bytes"]
"""The per-partition columns text and CSV show (JSON has the 10th and 95th percentiles too)."""
SECTIONS = ("commits", "partitions", "write-amplification")
WA_COLUMNS = ["commit_time", "total_upserted", "total_written", "write_amplification_factor"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "stats", run,
                              help="base file sizes per commit and per partition, and write amplification")
    p.add_argument("--partition", help="file sizes of this partition only")
    p.add_argument("--section", choices=SECTIONS, help="only this table (CSV: one table; default commits)")


def _percentile(sorted_sizes: Sequence[int], q: float) -> float:
    """The ``q`` quantile by linear interpolation between closest ranks."""
    if len(sorted_sizes) == 1:
        return float(sorted_sizes[0])
    pos = q * (len(sorted_sizes) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_sizes) - 1)
    return round(sorted_sizes[lo] + (sorted_sizes[hi] - sorted_sizes[lo]) * (pos - lo), 2)


def size_row(commit_time: str, sizes: Sequence[int]) -> dict[str, Any]:
    """One ``stats_file_sizes`` row of a non-empty list of file sizes."""
    import statistics

    s = sorted(sizes)
    return {"commit_time": commit_time, "min": s[0], "10th": _percentile(s, 0.10), "50th": _percentile(s, 0.50),
            "avg": round(statistics.fmean(s), 2), "95th": _percentile(s, 0.95), "max": s[-1], "num_files": len(s),
            "std_dev": round(statistics.pstdev(s), 2)}


def _factor(written: int, upserted: int) -> float | None:
    return round(written / upserted, 2) if upserted else None


def partition_row(partition: str, sizes: Sequence[int], log_sizes: Sequence[int]) -> dict[str, Any]:
    """A partition's row: the ``stats_file_sizes`` columns of its latest base files (``None`` without one),
    their total, and its latest slices' log files."""
    row: dict[str, Any] = {"partition": partition, **dict.fromkeys(SIZE_COLUMNS[1:])}
    if sizes:
        row.update({k: v for k, v in size_row("", sizes).items() if k != "commit_time"})
    else:
        row["num_files"] = 0
    return {**row, "total_bytes": sum(sizes), "log_files": len(log_sizes), "log_bytes": sum(log_sizes)}


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import commit_metadata, open_table
    from spec.file_group.file_system_view import FileSystemView

    storage, cfg, timeline = open_table(args.table)
    wa: list[dict[str, Any]] = []
    for inst in timeline.commits_timeline().instants:
        stats = list(commit_metadata(storage, timeline, inst).all_write_stats())
        upserted = sum(s.num_inserts + s.num_updates for s in stats)
        written = sum(s.num_writes for s in stats)
        wa.append({"commit_time": inst.requested, "total_upserted": upserted, "total_written": written,
                   "write_amplification_factor": _factor(written, upserted)})
    up, wr = sum(r["total_upserted"] for r in wa), sum(r["total_written"] for r in wa)
    wa.append({"commit_time": "Total", "total_upserted": up, "total_written": wr,
               "write_amplification_factor": _factor(wr, up)})
    from reference.commands.read import resolve_partitions
    from spec.metadata.metadata_table import list_table_files

    view = FileSystemView.load(storage, cfg, timeline, None, list_table_files(storage, cfg, timeline))
    only = None
    if args.partition is not None:
        (only,) = resolve_partitions([args.partition], cfg, sorted({g.partition_path for g in view.groups}))
    by_commit: dict[str, list[int]] = {}
    latest: dict[str, tuple[list[int], list[int]]] = {}
    for group in view.groups:
        if only is not None and group.partition_path != only:
            continue
        for sl in group.slices:
            if sl.base_file is not None:
                by_commit.setdefault(sl.base_instant, []).append(sl.base_file.size)
        base, logs = latest.setdefault(group.partition_path, ([], []))
        if group.slices:
            sl = group.slices[-1]
            base += [sl.base_file.size] if sl.base_file is not None else []
            logs += [f.size for f in sl.log_files]
    sizes = [size_row(t, v) for t, v in sorted(by_commit.items())]
    every = [n for v in by_commit.values() for n in v]
    if every:
        sizes.append(size_row("ALL", every))
    partitions = [partition_row(p, *latest[p]) for p in sorted(latest)]
    tables = {"commits": ("File sizes (bytes) of base files, by the commit that wrote them", SIZE_COLUMNS, sizes),
              "partitions": ("File sizes (bytes) of the latest base files, by partition", PARTITION_COLUMNS,
                             partitions),
              "write-amplification": ("Write amplification", WA_COLUMNS, wa)}
    if args.output == "json":
        doc = {"file_sizes": sizes, "file_sizes_by_partition": partitions, "write_amplification": wa}
        keys = {"commits": "file_sizes", "partitions": "file_sizes_by_partition",
                "write-amplification": "write_amplification"}
        _output.emit_json(doc if args.section is None else {keys[args.section]: doc[keys[args.section]]})
        return 0
    chosen = [args.section] if args.section else (["commits"] if args.output == "csv" else list(tables))
    for n, name in enumerate(chosen):
        title, columns, rows = tables[name]
        if n:
            print()
        _output.emit(args.output, None, columns, [[r[c] for c in columns] for r in rows], title)
    return 0
