"""``hudi-spec partitions TABLE``: the table's partitions with their file groups and rows (like
``CALL show_partitions``, with what each holds).

One row per partition path, in path order: ``partition`` (as Hudi writes it, hive-style or not),
``file_groups`` (with a latest slice), ``base_files`` and ``log_files`` of the latest slices, their
``size_bytes``, ``rows`` (what a snapshot query reads there: a slice that is its base file alone is counted
from its parquet footer, a slice with log files by merging it) and ``last_commit`` (the latest base or log
instant of its slices). Files are listed as the reader lists them: through the metadata table when the
table has one. ``--as-of`` counts as a time-travel query would.
"""

from __future__ import annotations

import argparse
from typing import Any

from reference.commands import _output

COLUMNS = ["partition", "file_groups", "base_files", "log_files", "size_bytes", "rows", "last_commit"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "partitions", run, help="partitions with their file groups, files and rows")
    p.add_argument("--as-of", help="as of this time (any form --as-of of read takes)")


def run(args: argparse.Namespace) -> int:
    import dataclasses

    import pyarrow.parquet as pq

    from reference.instrumentation.progress import task_progress
    from spec.read.query_plan import check_query
    from spec.read.reader import TableReader
    from spec.timeline.instant import format_query_instant

    as_of = format_query_instant(args.as_of) if args.as_of else None
    check_query("snapshot", as_of, None, None)
    reader = TableReader(args.table)
    plan = reader.plan("snapshot", as_of)
    by_partition: dict[str, dict[str, Any]] = {}
    for group in reader.view(as_of).groups:
        row = by_partition.setdefault(group.partition_path, {c: 0 for c in COLUMNS} | {
            "partition": group.partition_path, "last_commit": None})
        if group.slices:
            row["file_groups"] += 1
    key = reader.config.record_key_fields[0] if reader.config.record_key_fields else None
    with task_progress("counting rows", len(plan.slices)) as step:
        for sl in plan.slices:
            row = by_partition[sl.partition_path]
            row["base_files"] += sl.base_file is not None
            row["log_files"] += len(sl.log_files)
            row["size_bytes"] += (sl.base_file.size if sl.base_file else 0) + sum(f.size for f in sl.log_files)
            instants = [sl.base_instant, *(n.instant for n in sl.log_file_names)]
            row["last_commit"] = max([i for i in (row["last_commit"], *instants) if i])
            if sl.base_file is not None and not sl.log_files:
                with reader.storage.fs.open_input_file(reader.storage.full(sl.base_file.path)) as f:
                    row["rows"] += pq.ParquetFile(f).metadata.num_rows
            else:
                one = dataclasses.replace(plan, slices=(sl,))
                row["rows"] += sum(p.table.num_rows for p in reader.read_plan(one, [key] if key else None))
            step()
    rows = [by_partition[p] for p in sorted(by_partition)]
    total = {"partitions": len(rows), "file_groups": sum(r["file_groups"] for r in rows),
             "rows": sum(r["rows"] for r in rows)}
    title = (f"{total['partitions']} partitions, {total['file_groups']} file groups, {total['rows']} rows"
             + (f" as of {as_of}" if as_of else ""))
    _output.emit_rows(args.output, rows, COLUMNS, title=title, data={**total, "as_of": as_of, "items": rows})
    return 0
