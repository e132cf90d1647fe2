"""``hudi-spec read TABLE``: read a table with any query type.

A corrupt log block the read skips (a truncated or damaged block; Hudi's readers skip them too) is
reported on stderr, one warning line per log file; ``--strict`` makes it an error (CorruptBlock,
exit 2) and prints no rows.

Two engines answer the same queries with the same rows: ``spec`` (the default) is the executable
specification's reader and needs no Spark; ``spark`` is the reference implementation's Spark reader
(``reference.spark_reader.read_spark``), whose DataFrame is collected to Arrow for output. Rows from Spark
come in Spark's order.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from reference.commands import _output
from spec.errors import CorruptBlock, InvalidOperation

if TYPE_CHECKING:  # pyarrow and the reader are imported by ``read`` when it runs, not by ``--help``
    import pyarrow as pa

    from spec.file_group.log_file.scanner import SkippedBlock

ENGINES = ("spec", "spark")
QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
"""``spec.read.query_plan.QUERY_TYPES`` (a test holds the two equal), named here so that ``--help`` needs
no reader."""
FROM_START = "00000000000000"
"""A ``--begin`` before every instant (Hudi's ``HoodieTimeline.INIT_INSTANT_TS``): incremental from the start."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(
        sub, "read", run, help="read a table: snapshot, read-optimized, incremental or time travel",
        description="Read a table with any query type. An incremental query needs --begin, as "
                    "Apache Hudi's does (hoodie.datasource.read.begin.instanttime is mandatory).")
    p.add_argument("--query", choices=QUERY_TYPES, default="snapshot")
    p.add_argument("--as-of", help="time travel: read the table as of this instant")
    p.add_argument("--begin", help="incremental (required, as in Apache Hudi): exclusive start instant; "
                                   f"{FROM_START} reads from the table's first commit")
    p.add_argument("--end", help="incremental: inclusive end instant (default: latest)")
    p.add_argument("--columns", nargs="+", help="only these columns")
    p.add_argument("--partition", action="append", dest="partitions",
                   help="only this partition path (repeatable)")
    p.add_argument("--format", choices=("table", "json", "parquet"), default=None,
                   help="rows as a table (default), a JSON array of row objects (as --json), "
                        "or a parquet file (needs --out)")
    p.add_argument("--out", help="write the rows to this file instead of standard output")
    p.add_argument("--limit", type=_output.count, default=None, help="show at most N rows (table/json)")
    p.add_argument("--strict", action="store_true",
                   help="a corrupt log block the read would skip is an error (CorruptBlock, exit 2) "
                        "instead of a warning")
    p.add_argument("--list-file-system", action="store_true",
                   help="list the table's files on storage even where its metadata table lists them (spec engine)")
    p.add_argument("--engine", choices=ENGINES, default="spec",
                   help="spec: the executable specification's reader (no Spark); "
                        "spark: the reference Spark reader (same rows)")


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.hex()
    return v


def check_args(args: argparse.Namespace) -> None:
    """Refuse what Apache Hudi refuses before anything is read: an incremental query needs a begin instant
    (``IncrementalRelation`` throws "Specify the begin instant time to pull from" without
    ``hoodie.datasource.read.begin.instanttime``), rather than silently returning every row."""
    if args.query == "incremental" and args.begin is None:
        raise InvalidOperation("an incremental query needs --begin (the exclusive start instant), as in Apache Hudi",
                               hint=f"add --begin INSTANT; --begin {FROM_START} reads every commit")


def why_empty(args: argparse.Namespace) -> str:
    """Why a query found nothing, in words: no commit yet, an ``--as-of`` before the first commit, an empty
    incremental window, or partitions with no file group."""
    from spec.timeline.active_timeline import Timeline

    commits = Timeline.load(args.table).commits_timeline().instants
    if not commits:
        return "the table has no completed commit yet"
    first = commits[0].requested  # time travel keeps the file slices of instants requested at or before as_of
    if args.as_of is not None and args.as_of < first:
        return f"--as-of {args.as_of} is before the table's first commit, {first}; nothing was written yet"
    if args.query == "incremental":
        return f"no commit completed after {args.begin}" + (f" and by {args.end}" if args.end else "")
    if args.partitions:
        return f"no file group in partition {', '.join(args.partitions)}"
    return "no file slice holds a row"


def _read(args: argparse.Namespace) -> pa.Table:
    from spec.read.reader import read_table

    if args.engine == "spark":
        if args.strict:
            raise InvalidOperation("--strict needs the spec engine", hint="drop --engine spark")
        return _read_spark(args)
    skipped: list[SkippedBlock] = []
    table = read_table(args.table, args.query, as_of=args.as_of, begin=args.begin, end=args.end,
                       columns=args.columns, partition_filter=args.partitions, skipped=skipped,
                       use_metadata_table=not args.list_file_system)
    report_skipped(skipped, strict=args.strict)
    return table


def report_skipped(skipped: list[SkippedBlock], strict: bool) -> None:
    """The corrupt log blocks a read skipped: one warning line per log file on stderr, or with
    ``strict`` a CorruptBlock error (no rows are printed)."""
    by_file: dict[str, list[SkippedBlock]] = {}
    for s in skipped:
        by_file.setdefault(s.path, []).append(s)
    if strict and by_file:
        path, first = next(iter(by_file.items()))
        raise CorruptBlock(f"{len(skipped)} corrupt log block(s) in {len(by_file)} log file(s), first in {path} at "
                           f"{first[0].describe()}",
                           hint="the rows of those file slices would lack the records of the skipped blocks; "
                                "inspect them with `hudi-spec logfile`, or read without --strict")
    for path, blocks in by_file.items():
        print(f"hudi-spec read: warning: skipped {len(blocks)} corrupt block(s) in {path} "
              f"({'; '.join(b.describe() for b in blocks[:3])}{'; …' if len(blocks) > 3 else ''}); "
              "rows of its file slice lack any records those bytes held", file=sys.stderr)


def _read_spark(args: argparse.Namespace) -> pa.Table:
    """The query's rows read by Spark (the process's session), collected to Arrow."""
    import pyarrow as pa

    from reference.progress import spark_progress
    from reference.spark import get_or_create_session
    from reference.spark_reader import read_spark
    from spec.read.query_plan import check_query

    check_query(args.query, args.as_of, args.begin, args.end)  # bad arguments fail before Spark starts
    with spark_progress():
        df = read_spark(get_or_create_session(), args.table, args.query, as_of=args.as_of, begin=args.begin,
                        end=args.end, columns=args.columns, partition_filter=args.partitions)
        if not df.columns:
            return pa.table({})
        table: pa.Table = df.toArrow()
    return table


def run(args: argparse.Namespace) -> int:
    import pyarrow.parquet as pq

    fmt = args.format or ("json" if args.output == "json" else "table")
    if fmt == "parquet" and not args.out:
        raise InvalidOperation("--format parquet writes a file", hint="add --out FILE")
    check_args(args)
    table = _read(args)
    if fmt == "parquet":
        pq.write_table(table, args.out)
        print(f"wrote {table.num_rows} rows to {args.out}", file=sys.stderr)
        return 0
    shown = table.slice(0, args.limit) if args.limit is not None else table
    with _destination(args.out):
        if fmt == "json":
            _output.emit_json([{k: _jsonable(v) for k, v in row.items()} for row in shown.to_pylist()])
        elif table.num_rows == 0:
            print(f"0 rows ({args.query}): {why_empty(args)}")
        else:
            rows = [[row.get(c) for c in shown.column_names] for row in shown.to_pylist()]
            _output.emit_table(f"{table.num_rows} rows ({args.query})", shown.column_names, rows)
    if args.out:
        print(f"wrote {shown.num_rows} rows to {args.out}", file=sys.stderr)
    return 0


@contextlib.contextmanager
def _destination(out: str | None) -> Iterator[None]:
    """Standard output, or the file ``out`` in its place."""
    if not out:
        yield
        return
    with open(out, "w") as f, contextlib.redirect_stdout(f):
        yield
