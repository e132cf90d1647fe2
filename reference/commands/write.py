"""``hudi-spec write TABLE --input FILE``: write a parquet, JSON or CSV file to a table.

``--engine spark`` (the default) runs the write as Spark jobs; ``--engine local`` runs it with
pyarrow in this process, with no Spark session (``reference.engines.local``).

A new table is created with ``--record-key``, ``--ordering-field``, ``--partition-field``,
``--table-type`` and ``--table-version``; any ``hoodie.*`` write option can be given with
``--option KEY=VALUE``. Output: the instant written and its totals.
"""

from __future__ import annotations

import argparse
import os

import pyarrow as pa

from reference.commands import _output
from reference.instrumentation.progress import spark_progress
from spec.config import registry as config_registry
from spec.config.write_operation import WRITER_OPERATIONS
from spec.errors import InvalidConfig, InvalidOperation


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("write", help="write a parquet/JSON/CSV file to a table (Spark, or local)")
    p.add_argument("table", help="table base path")
    p.add_argument("--input", required=True, help="a .parquet, .json (lines) or .csv file")
    p.add_argument("--operation", choices=WRITER_OPERATIONS, default=config_registry.default("operation"))
    p.add_argument("--record-key", help="record key field(s), comma-separated (new tables)")
    p.add_argument("--ordering-field", help="ordering (precombine) field")
    p.add_argument("--partition-field", help="partition field(s), comma-separated")
    p.add_argument("--table-name", help="table name (new tables; default: the folder name)")
    p.add_argument("--table-type", choices=("COPY_ON_WRITE", "MERGE_ON_READ"), default=None,
                   help="new tables (default COPY_ON_WRITE); an existing table keeps its own")
    p.add_argument("--table-version", choices=("6", "8", "9"), default=None,
                   help="new tables (default 6); an existing table keeps its own")
    p.add_argument("--engine", choices=("spark", "local"), default="spark",
                   help="spark (default): Spark jobs; local: pyarrow in this process, no Spark")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="any hoodie.* option")
    _output.add_output_option(p)
    p.set_defaults(handler=run)


_FORMATS = {".parquet": "parquet", ".json": "JSON lines", ".jsonl": "JSON lines", ".csv": "CSV"}


def _load(path: str) -> pa.Table:
    """The input file as an Arrow table, read by its extension; a file that does not hold what its
    extension says is an InvalidOperation naming the file and the format expected."""
    if not os.path.isfile(path):
        raise InvalidOperation(f"input file {path!r} does not exist", hint="give a .parquet, .json or .csv file")
    ext = next((e for e in _FORMATS if path.endswith(e)), None)
    if ext is None:
        raise InvalidOperation(f"cannot read {path!r}", hint="use a .parquet, .json or .csv file")
    try:
        if ext == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path)
        if ext == ".csv":
            import pyarrow.csv as pcsv

            return pcsv.read_csv(path)
        import pyarrow.json as pj

        return pj.read_json(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InvalidOperation(f"input file {path!r} is not a readable {_FORMATS[ext]} file: {detail}",
                               hint=f"give a {_FORMATS[ext]} file, or name the file by what it holds "
                                    "(.parquet, .json, .csv)") from err


def check_new_table(table: str, options: dict[str, str]) -> None:
    """A new table needs a record key; say so in the command line's words (``--record-key``) before any
    Spark starts, rather than by the write option's name."""
    from spec.storage.hoodie_storage import Storage

    keyed = options.get("hoodie.datasource.write.recordkey.field") or options.get("hoodie.table.recordkey.fields")
    if not keyed and not Storage(table).exists(".hoodie/hoodie.properties"):
        raise InvalidConfig(f"{table} is not a Hudi table yet, and a new table needs a record key",
                            hint="add --record-key FIELD, the field that identifies a record "
                                 "(several: comma-separated)")


def run(args: argparse.Namespace) -> int:
    from reference.write.client import WriteClient
    from spec.storage.hoodie_storage import Storage

    new = not Storage(args.table).exists(".hoodie/hoodie.properties")
    options: dict[str, str] = {"hoodie.table.name": args.table_name or args.table.rstrip("/").rsplit("/", 1)[-1]}
    # given, they must agree with an existing table (a conflict is refused); not given, the table's own apply
    for key, given, default in (("hoodie.datasource.write.table.type", args.table_type, "COPY_ON_WRITE"),
                                ("hoodie.write.table.version", args.table_version, "6")):
        if given is not None or new:
            options[key] = given or default
    if args.record_key:
        options["hoodie.datasource.write.recordkey.field"] = args.record_key
    if args.ordering_field:
        options["hoodie.datasource.write.precombine.field"] = args.ordering_field
    if args.partition_field:
        options["hoodie.datasource.write.partitionpath.field"] = args.partition_field
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidConfig(f"--option {item!r} is not KEY=VALUE")
        options[key] = value
    check_new_table(args.table, options)
    with spark_progress():
        result = WriteClient(args.table, engine=args.engine).write(_load(args.input), args.operation, options)
    stats = list(result.metadata.all_write_stats())
    summary = {"instant": result.instant, "action": result.action, "operation": result.operation,
               "files": len(stats), "records_written": sum(s.num_writes for s in stats),
               "inserts": sum(s.num_inserts for s in stats), "updates": sum(s.num_updates for s in stats),
               "deletes": sum(s.num_deletes for s in stats)}
    if args.output == "json":
        _output.emit_json(summary)
    else:
        _output.emit_mapping(f"wrote {args.table}", summary, "what", "value")
    return 0
