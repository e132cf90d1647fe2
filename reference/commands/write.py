"""``hudi-spec write TABLE --input FILE``: write a parquet, JSON or CSV file to a table.

Engines (``--engine``): ``local`` runs the write with pyarrow in this process, with no Spark session
(``reference.engines.local``); ``spark`` runs it as Spark jobs. The default, ``auto``, takes the local
engine for an input that fits in memory — an estimated in-memory size (a parquet file's uncompressed
size from its footer; a JSON or CSV file's size) up to ``LOCAL_LIMIT_BYTES`` — and Spark above it, and
says which it took.

A new table is created with ``--record-key`` (or ``--auto-record-key``: no record key field, keys generated as
Apache Hudi generates them, ``spec.keygen.auto_record_key``), ``--ordering-field``, ``--partition-field``,
``--table-name`` (default: the folder's name), ``--table-type`` (default COPY_ON_WRITE) and
``--table-version`` (default 9, as Apache Hudi 1.1 writes: ``HoodieWriteConfig.WRITE_TABLE_VERSION``
defaults to ``HoodieTableVersion.current()``). An existing table's name, keys, ordering and partition
fields, type and version are its ``hoodie.properties``'s: none of those options is needed, and one given
that differs is refused (``ConfigConflict``), as Hudi's ``HoodieWriterUtils.validateTableConfig`` does.
Any ``hoodie.*`` write option can be given with ``--option KEY=VALUE``. Output: the instant written, its
totals, and the engine it ran on and why.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from reference.commands import _output
from spec.config import registry
from spec.config.write_operation import WRITER_OPERATIONS

if TYPE_CHECKING:
    import pyarrow as pa

ENGINES = ("auto", "local", "spark")
LOCAL_LIMIT_BYTES = 512 * 1024 * 1024
"""``--engine auto``: the largest input (estimated size in memory) written with the local engine."""
DEFAULT_TABLE_VERSION = str(registry.default("table_version"))
"""A new table's version: the registry's ``hoodie.write.table.version``, Apache Hudi 1.1's 9
(``HoodieTableVersion.current()``)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "write", help="write a parquet/JSON/CSV file to a table (local engine, or Spark for big inputs)",
        description="Write a parquet, JSON-lines or CSV file to a Hudi table. A new table needs --record-key (or "
                    "--auto-record-key for generated keys); "
                    "it gets table version 9 with a metadata table, as Apache Hudi 1.1 writes (6 or 8 with "
                    "--table-version). An existing table's name, keys, fields, type and version come from its "
                    "hoodie.properties.",
        formatter_class=_output.RawDescriptionHelpFormatter)
    p.add_argument("table", help="table base path")
    p.add_argument("--input", required=True, help="a .parquet, .json (lines) or .csv file")
    p.add_argument("--operation", choices=WRITER_OPERATIONS, default=registry.default("operation"),
                   help="the write operation (default %(default)s)")
    p.add_argument("--record-key", help="new tables: record key field(s), comma-separated")
    p.add_argument("--auto-record-key", action="store_true",
                   help="new tables: no record key field; every record gets a generated key, "
                        "<instant>_<input partition>_<row>, as Apache Hudi generates them")
    p.add_argument("--ordering-field", help="new tables: ordering (precombine) field")
    p.add_argument("--partition-field", help="new tables: partition field(s), comma-separated")
    p.add_argument("--table-name", help="new tables: the table's name (default: the folder's name)")
    p.add_argument("--table-type", choices=("COPY_ON_WRITE", "MERGE_ON_READ"), default=None,
                   help="new tables: the table type (default COPY_ON_WRITE)")
    p.add_argument("--table-version", choices=("9", "8", "6"), default=None,
                   help="new tables: 9 (default; Apache Hudi 1.1, with a metadata table), 8 (Hudi 1.0, with "
                        "a metadata table) or 6 (Hudi 0.14/0.15)")
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="auto (default): local for an input whose estimated size in memory is at most "
                        f"{LOCAL_LIMIT_BYTES // 2**20} MB, spark above; local: pyarrow in this process, no "
                        "Spark; spark: Spark jobs")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="any hoodie.* option")
    _output.add_output_option(p)
    p.set_defaults(handler=run)


_FORMATS = {".parquet": "parquet", ".json": "JSON lines", ".jsonl": "JSON lines", ".csv": "CSV"}


def _extension(path: str) -> str:
    """The input's extension, checked: a missing file or an unknown extension is an InvalidOperation."""
    from spec.errors import InvalidOperation

    if not os.path.isfile(path):
        raise InvalidOperation(f"input file {path!r} does not exist", hint="give a .parquet, .json or .csv file")
    ext = next((e for e in _FORMATS if path.endswith(e)), None)
    if ext is None:
        raise InvalidOperation(f"cannot read {path!r}", hint="use a .parquet, .json or .csv file")
    return ext


def _unreadable(path: str, ext: str, err: BaseException) -> Exception:
    from spec.errors import InvalidOperation

    detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return InvalidOperation(f"input file {path!r} is not a readable {_FORMATS[ext]} file: {detail}",
                            hint=f"give a {_FORMATS[ext]} file, or name the file by what it holds "
                                 "(.parquet, .json, .csv)")


def _load(path: str) -> pa.Table:
    """The input file as an Arrow table, read by its extension; a file that does not hold what its
    extension says is an InvalidOperation naming the file and the format expected."""
    import pyarrow as pa

    ext = _extension(path)
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
        raise _unreadable(path, ext, err) from err


def estimated_memory(path: str) -> int:
    """The input's estimated size in memory, in bytes: a parquet file's uncompressed size (the sum of its
    row groups' ``total_byte_size``, read from the footer alone), a JSON or CSV file's size on disk."""
    import pyarrow as pa

    ext = _extension(path)
    if ext != ".parquet":
        return os.path.getsize(path)
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except (pa.ArrowException, OSError) as err:
        raise _unreadable(path, ext, err) from err
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def _size(n: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


def choose_engine(engine: str, path: str) -> tuple[str, str]:
    """The engine a write runs on and why, in words: the one asked for, or with ``auto`` the local engine
    for an input of at most ``LOCAL_LIMIT_BYTES`` in memory (``estimated_memory``) and Spark above."""
    if engine != "auto":
        return engine, f"--engine {engine}"
    size = estimated_memory(path)
    limit = _size(LOCAL_LIMIT_BYTES)
    if size <= LOCAL_LIMIT_BYTES:
        return "local", f"auto: the input, about {_size(size)} in memory, fits under {limit}"
    return "spark", f"auto: the input, about {_size(size)} in memory, is over {limit}"


def table_exists(table: str) -> bool:
    from spec.storage.hoodie_storage import Storage

    return Storage(table).exists(".hoodie/hoodie.properties")


def write_options(args: argparse.Namespace, new: bool) -> dict[str, str]:
    """The ``hoodie.*`` options of the command line. A new table's creation options get their defaults
    (the folder's name, COPY_ON_WRITE, version 9); an existing table's come from its ``hoodie.properties``,
    so only those given are passed on, to be checked against the table's."""
    from spec.errors import InvalidConfig

    options: dict[str, str] = {}
    for key, given, default in (
            ("hoodie.table.name", args.table_name, args.table.rstrip("/").rsplit("/", 1)[-1]),
            ("hoodie.datasource.write.table.type", args.table_type, "COPY_ON_WRITE"),
            ("hoodie.write.table.version", args.table_version, DEFAULT_TABLE_VERSION),
            ("hoodie.datasource.write.recordkey.field", args.record_key, None),
            ("hoodie.datasource.write.precombine.field", args.ordering_field, None),
            ("hoodie.datasource.write.partitionpath.field", args.partition_field, None)):
        value = given if given is not None else (default if new else None)
        if value is not None:
            options[key] = value
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidConfig(f"--option {item!r} is not KEY=VALUE", hint="write --option hoodie.KEY=VALUE")
        options[key] = value
    return options


def check_new_table(table: str, options: dict[str, str], auto_record_key: bool = False) -> None:
    """A new table needs a record key, or ``--auto-record-key`` for generated keys
    (``spec.keygen.auto_record_key``); say so in the command line's words before any engine starts, rather than
    by the write option's name."""
    from spec.errors import InvalidConfig

    keyed = options.get("hoodie.datasource.write.recordkey.field") or options.get("hoodie.table.recordkey.fields")
    if keyed and auto_record_key:
        raise InvalidConfig("--auto-record-key and a record key field exclude each other",
                            hint="give --record-key FIELD, or --auto-record-key for generated keys")
    if not keyed and not auto_record_key:
        raise InvalidConfig(f"{table} is not a Hudi table yet, and a new table needs a record key",
                            hint="add --record-key FIELD, the field that identifies a record "
                                 "(several: comma-separated), or --auto-record-key for generated keys")


def _spark_input(path: str) -> Any:
    """The input for the Spark engine: a parquet file read by Spark itself (its rows never pass through
    this process), a JSON or CSV file read with pyarrow as for the local engine."""
    if not path.endswith(".parquet"):
        return _load(path)
    from reference.engines.spark_session import get_or_create_session

    return get_or_create_session().read.parquet(os.path.abspath(path))


def run(args: argparse.Namespace) -> int:
    from reference.instrumentation.spark_progress import spark_progress
    from reference.write.client import WriteClient

    new = not table_exists(args.table)
    options = write_options(args, new)
    if new:
        check_new_table(args.table, options, args.auto_record_key)
    elif args.auto_record_key:
        from spec.errors import InvalidConfig

        raise InvalidConfig("--auto-record-key is for new tables",
                            hint="an existing table's keys come from its hoodie.properties: leave it out")
    engine, why = choose_engine(args.engine, args.input)
    with spark_progress():
        data = _spark_input(args.input) if engine == "spark" else _load(args.input)
        result = WriteClient(args.table, engine=engine).write(data, args.operation, options)
    stats = list(result.metadata.all_write_stats())
    summary = {"instant": result.instant, "action": result.action, "operation": result.operation,
               "files": len(stats), "records_written": sum(s.num_writes for s in stats),
               "inserts": sum(s.num_inserts for s in stats), "updates": sum(s.num_updates for s in stats),
               "deletes": sum(s.num_deletes for s in stats), "engine": engine}
    if args.output == "json":
        _output.emit_json({**summary, "engine_choice": why})
    elif args.output == "csv":
        _output.emit_csv([*summary, "engine_choice"], [[*summary.values(), why]])
    else:
        _output.emit_mapping(f"wrote {args.table}", {**summary, "engine": f"{engine} ({why})"}, "what", "value")
    return 0
