"""``hudi-spec read TABLE``: read a table with any query type.

A corrupt log block the read skips (a truncated or damaged block; Hudi's readers skip them too) is
reported on stderr, one warning line per log file; ``--strict`` makes it an error (CorruptBlock,
exit 2) and prints no rows.

Two engines answer the same queries with the same rows: ``spec`` (the default) is the executable
specification's reader and needs no Spark; ``spark`` is the reference implementation's Spark reader
(``reference.engines.spark_reader.read_spark``), whose DataFrame is collected to Arrow for output. Rows from Spark
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

    from spec.config.table_config import TableConfig
    from spec.file_group.log_file.corrupt_block import SkippedBlock

ENGINES = ("spec", "spark")
QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
"""``spec.read.query_plan.QUERY_TYPES`` (a test holds the two equal), named here so that ``--help`` needs
no reader."""
INCREMENTAL_FORMATS = ("latest_state", "cdc")
"""``hoodie.datasource.query.incremental.format``'s values."""
FROM_START = "00000000000000"
"""A ``--begin`` before every instant (Hudi's ``HoodieTimeline.INIT_INSTANT_TS``): incremental from the start."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(
        sub, "read", run, help="read a table: snapshot, read-optimized, incremental or time travel",
        description="Read a table with any query type. An incremental query needs --begin, as "
                    "Apache Hudi's does (hoodie.datasource.read.begin.instanttime is mandatory).",
        output_extra=("parquet",))
    p.add_argument("--query", choices=QUERY_TYPES, default="snapshot")
    p.add_argument("--as-of", help="time travel: read the table as of this time, in any form Apache Hudi's "
                                   "as.of.instant takes: yyyyMMddHHmmss[SSS], 'yyyy-MM-dd HH:mm:ss[.SSS]' or "
                                   "yyyy-MM-dd (the start of that day)")
    p.add_argument("--begin", help="incremental (required, as in Apache Hudi): exclusive start instant; "
                                   f"{FROM_START} reads from the table's first commit")
    p.add_argument("--end", help="incremental: inclusive end instant (default: latest; not before --begin)")
    p.add_argument("--incremental-format", choices=INCREMENTAL_FORMATS, default="latest_state",
                   help="incremental: latest_state (the rows the window's commits wrote) or cdc (every change: "
                        "op, ts_ms, before, after; a table with hoodie.table.cdc.enabled, the spec engine; "
                        "Apache Hudi's hoodie.datasource.query.incremental.format)")
    p.add_argument("--columns", nargs="+", metavar="COLUMNS",
                   help="only these columns (comma-separated, or several words)")
    p.add_argument("--partition", action="append", dest="partitions", metavar="PARTITION",
                   help="only this partition: its path (city=sf, or sf) in either form, hive-style or not "
                        "(repeatable); one that matches nothing is an error listing the partitions")
    p.add_argument("--where", metavar="FILTER",
                   help="only rows that match, in SQL's words: \"city = 'sf' AND fare > 10\" (=, !=, <, <=, "
                        ">, >=, IN (...), IS [NOT] NULL, AND, OR, NOT); partitions and files that cannot match "
                        "are not read")
    p.add_argument("--out", help="write the rows to this file instead of standard output (needed by --format "
                                 "parquet)")
    p.add_argument("--limit", type=_output.count, default=None, help="at most N rows, in every format")
    p.add_argument("--strict", action="store_true",
                   help="a corrupt log block the read would skip is an error (CorruptBlock, exit 2) "
                        "instead of a warning")
    p.add_argument("--list-file-system", action="store_true",
                   help="list the table's files on storage even where its metadata table lists them (spec engine)")
    p.add_argument("--engine", choices=ENGINES, default="spec",
                   help="spec: the executable specification's reader (no Spark); "
                        "spark: the reference Spark reader (same rows)")


UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Z", "+00:00", "utc"})


def python_rows(table: pa.Table) -> list[dict[str, Any]]:
    """``table.to_pylist()``, the same values, with a UTC timestamp of unit s, ms or us made here: pyarrow makes
    one (its time zone) by importing pandas, a third of a second of a short command. Other time zones and
    nanoseconds (which pyarrow turns into pandas' Timestamp) are left to pyarrow."""
    import datetime as dt

    import pyarrow as pa

    columns: dict[str, list[Any]] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        kind = column.type
        if pa.types.is_timestamp(kind) and kind.tz in UTC_NAMES and kind.unit != "ns":
            naive = pa.timestamp(kind.unit)  # the same instants, as UTC wall times (a view: nothing is computed)
            columns[name] = [None if v is None else v.replace(tzinfo=dt.UTC)
                             for chunk in column.chunks for v in chunk.view(naive).to_pylist()]
        else:
            columns[name] = column.to_pylist()
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.hex()
    return v


def check_args(args: argparse.Namespace) -> None:
    """Refuse what Apache Hudi refuses before anything is read: an incremental query needs a begin instant
    (``IncrementalRelation`` throws "Specify the begin instant time to pull from" without
    ``hoodie.datasource.read.begin.instanttime``), rather than silently returning every row; an end before
    the begin is a window that holds nothing, said as an error rather than an empty answer. ``--as-of`` is
    taken in any form Hudi's ``as.of.instant`` takes (``spec.timeline.instant.format_query_instant``);
    ``--columns`` in commas or words."""
    from spec.timeline.instant import format_query_instant

    if args.query == "incremental" and args.begin is None:
        raise InvalidOperation("an incremental query needs --begin (the exclusive start instant), as in Apache Hudi",
                               hint=f"add --begin INSTANT; --begin {FROM_START} reads every commit")
    if args.begin is not None and args.end is not None and args.end.ljust(17, "0") < args.begin.ljust(17, "0"):
        raise InvalidOperation(f"--end {args.end} is before --begin {args.begin}",
                               hint="an incremental query reads the commits after --begin up to --end; "
                                    "give an end at or after the begin")
    if getattr(args, "incremental_format", "latest_state") == "cdc":
        if args.query != "incremental":
            raise InvalidOperation("--incremental-format cdc is a format of the incremental query",
                                   hint="add --query incremental --begin INSTANT")
        others = [flag for flag, given in (("--as-of", args.as_of is not None), ("--columns", bool(args.columns)),
                                           ("--partition", bool(args.partitions)), ("--where", args.where is not None),
                                           ("--engine spark", args.engine == "spark")) if given]
        if others:
            raise InvalidOperation(f"--incremental-format cdc reads the whole table's changes with the spec engine: "
                                   f"{', '.join(others)} {'is' if len(others) == 1 else 'are'} not taken with it",
                                   hint="drop them and filter the changes read")
    if args.as_of is not None:
        args.as_of = format_query_instant(args.as_of)
    if args.columns:
        args.columns = [c.strip() for word in args.columns for c in word.split(",") if c.strip()]


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
    if args.where:
        return f"no row matches --where {args.where}"
    return "no file slice holds a row"


def resolve_partitions(given: list[str], config: TableConfig, partitions: list[str]) -> list[str]:
    """The partition paths ``--partition`` names: each as given, or in its other form — ``city=sf`` for a
    table whose paths are ``sf`` (not hive-style), ``sf`` for one whose paths are ``city=sf``. One that
    matches no partition of the table is an InvalidOperation listing them."""
    fields = list(config.partition_fields)
    out = []
    for text in given:
        text = text.strip("/")
        segments = text.split("/")
        forms = {text}
        if len(segments) == len(fields):
            pairs = [s.partition("=") for s in segments]
            if all(sep and key == f for (key, sep, _), f in zip(pairs, fields, strict=True)):
                forms.add("/".join(value for _, _, value in pairs))
            else:
                forms.add("/".join(f"{f}={s}" for f, s in zip(fields, segments, strict=True)))
        found = [p for p in partitions if p in forms]
        if not found:
            shown = ", ".join(partitions[:20]) + (f", … ({len(partitions)} in all)" if len(partitions) > 20 else "")
            raise InvalidOperation(f"no partition {text!r} in the table" if fields else
                                   f"--partition {text!r}: the table is not partitioned",
                                   hint=f"the partitions are: {shown}" if fields else "drop --partition")
        out.append(found[0])
    return out


def _read(args: argparse.Namespace) -> tuple[pa.Table, str]:
    """The query's rows, and what pruning by ``--where`` left unread (in words; '' when nothing)."""
    if args.engine == "spark":
        if args.strict:
            raise InvalidOperation("--strict needs the spec engine", hint="drop --engine spark")
        return _read_spark(args), ""
    if getattr(args, "incremental_format", "latest_state") == "cdc":
        from spec.read.cdc import cdc_table, read_cdc

        return cdc_table(read_cdc(args.table, None if args.begin == FROM_START else args.begin, args.end)), ""
    import dataclasses

    import pyarrow as pa

    from spec.read.query_plan import check_query
    from spec.read.reader import TableReader

    check_query(args.query, args.as_of, args.begin, args.end)
    reader = TableReader(args.table, use_metadata_table=not args.list_file_system)
    where = None
    if args.where is not None:  # the filter's module loads only for a command line that has one
        from reference.commands import _where

        where = _where.parse_where(args.where)
    schema = reader.table_schema(args.as_of)
    if schema is not None:  # the rows read carry the meta columns too
        from spec.schema.table_schema import META_FIELDS

        schema = pa.schema([*(pa.field(m, pa.string()) for m in META_FIELDS if m not in schema.names), *schema])
    if args.partitions:
        every = sorted({g.partition_path for g in reader.view(None).groups}
                       | {g.partition_path for g in reader.view(args.as_of).groups})
        args.partitions = resolve_partitions(args.partitions, reader.config, every)
    partition_filter: Any = args.partitions  # the partitions named, or a predicate (below)
    if where is not None and schema is not None:
        _where.expression(where, schema)  # a filter that names no column, or a value of the wrong type: refused now
        keep = _where.partition_predicate(where, reader.config, schema)
        chosen = set(args.partitions) if args.partitions else None

        def partition_filter(partition: str) -> bool:
            return keep(partition) and (chosen is None or partition in chosen)
    plan = reader.plan(args.query, args.as_of, args.begin, args.end, partition_filter)
    pruned = ""
    if where is not None:
        whole = reader.plan(args.query, args.as_of, args.begin, args.end, args.partitions)
        kept = tuple(sl for sl in plan.slices if _where.slice_may_match(where, reader.storage, sl, plan.with_logs))
        pruned = _where.describe((len({sl.partition_path for sl in kept}),
                                  len({sl.partition_path for sl in whole.slices})), (len(kept), len(whole.slices)))
        plan = dataclasses.replace(plan, slices=kept)
    columns = args.columns
    if where is not None and columns:  # read what the filter needs too, then keep the columns asked for
        columns = [*columns, *sorted(_where.columns_of(where) - set(columns))]
    from reference.instrumentation.progress import task_progress

    tables = []
    position = {id(sl): n for n, sl in enumerate(plan.slices, 1)}
    with task_progress("file slices read", len(plan.slices)) as step:
        for part in reader.read_plan(plan, columns):  # slices without rows are not yielded: count by position
            tables.append(part.table)
            step(position.get(id(part.slice)))
    report_skipped(reader.skipped, strict=args.strict)
    table = pa.concat_tables(tables, promote_options="permissive") if tables else _no_rows(reader, args.columns)
    if where is not None and table.num_columns and tables:
        table = _where.filter_rows(table, where)
        if args.columns:
            table = table.select(args.columns)
    return table, pruned


def _no_rows(reader: Any, columns: list[str] | None) -> pa.Table:
    """No rows, under the table's columns (its latest schema, the meta columns first; only ``columns`` if
    given): CSV then prints its header and a table says which columns it would show. A table without a
    schema (nothing committed) gives no columns either."""
    import pyarrow as pa

    from spec.schema.table_schema import META_FIELDS

    schema = reader.table_schema(None)
    if schema is None:
        return pa.table({})
    fields = [*(pa.field(m, pa.string()) for m in META_FIELDS if m not in schema.names), *schema]
    if columns:
        fields = [f for c in columns for f in fields if f.name == c]
    return pa.schema(fields).empty_table()


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

    from reference.engines.spark_reader import read_spark
    from reference.engines.spark_session import get_or_create_session
    from reference.instrumentation.spark_progress import spark_progress
    from spec.read.query_plan import check_query

    check_query(args.query, args.as_of, args.begin, args.end)  # bad arguments fail before Spark starts
    if args.partitions:
        from spec.config.table_config import TableConfig
        from spec.read.reader import TableReader

        reader = TableReader(args.table)
        every = sorted({g.partition_path for g in reader.view(None).groups})
        args.partitions = resolve_partitions(args.partitions, TableConfig.load(args.table), every)
    with spark_progress():
        df = read_spark(get_or_create_session(), args.table, args.query, as_of=args.as_of, begin=args.begin,
                        end=args.end, columns=None if args.where else args.columns,
                        partition_filter=args.partitions)
        if args.where:  # Spark SQL takes the same filter, and pushes it down its own way
            df = df.filter(args.where)
            if args.columns:
                df = df.select(*args.columns)
        if not df.columns:
            return pa.table({})
        from reference.engines.spark_arrow import spark_to_arrow

        return spark_to_arrow(df)


def run(args: argparse.Namespace) -> int:
    fmt = args.output
    if fmt == "parquet" and not args.out:
        raise InvalidOperation("--format parquet writes a file", hint="add --out FILE")
    check_args(args)
    table, pruned = _read(args)
    shown = table.slice(0, args.limit) if args.limit is not None else table
    if fmt == "parquet":
        import pyarrow.parquet as pq  # only here: a read that prints needs neither it nor pyarrow.fs

        _output.start_output()
        pq.write_table(shown, args.out)
        print(f"wrote {shown.num_rows} rows to {args.out}", file=sys.stderr)
        return 0
    with _destination(args.out):
        if fmt == "json":
            _output.emit_json([{k: _jsonable(v) for k, v in row.items()} for row in python_rows(shown)])
        elif fmt == "csv":
            _output.emit_csv(shown.column_names, [[row.get(c) for c in shown.column_names]
                                                  for row in python_rows(shown)])
        elif table.num_rows == 0:
            _output.start_output()
            print(f"0 rows ({args.query}{'; ' + pruned if pruned else ''}): {why_empty(args)}")
        else:
            rows = [[row.get(c) for c in shown.column_names] for row in python_rows(shown)]
            more = f", the first {shown.num_rows} shown" if shown.num_rows < table.num_rows else ""
            _output.emit_table(f"{table.num_rows} rows ({args.query}{'; read ' + pruned if pruned else ''}){more}",
                               shown.column_names, rows)
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
