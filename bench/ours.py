"""Our entries: the reference writer (bulk_insert, COW and MOR upsert, compaction) and reads of its tables
by the spec engine, the Spark engine and hudi-rs.

Every Spark entry gets its input as a cached Spark DataFrame read from the run's parquet input, the same
form the plain Spark write gets, so both time the write alone; the local-engine entries get an in-memory
Arrow table, the form the Arrow-native peers get.

The headline entries run the writer with Hudi's defaults, untouched, as a user runs it: gzip parquet
(at parquet-mr's level), the default small-file limit, the BLOOM index, table version 9 with its metadata
table; only the benchmark's key, partition and ordering fields are set. The ``_tuned`` entries beside them set
``hoodie.parquet.compression.codec=snappy`` (the peers' codec) and, on merge-on-read,
``hoodie.parquet.small.file.limit=0``, so updates go to the log as they do in a table of full-size files.
The merge-on-read reads and the compaction need a table with logs, so they use the merge-on-read table
written with the small-file limit at 0 and Hudi's default codec.

An entry whose API does not exist yet raises :class:`NotAvailable` with the reason; the result table
shows it as "not available: <reason>".
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bench.jobs import (
    READ,
    SERVICE,
    STARTUP,
    UPSERT,
    WRITE,
    Context,
    Job,
    Measurement,
    NotAvailable,
    arrow_input,
    cached_frame,
    spark_session,
    timed,
)

T = TypeVar("T")

TABLE_NAME = "bench"
# Hudi's defaults: nothing but the benchmark's fields, so a new table gets what a user's gets, table version 9
# with its metadata table (runs before this measured version 6)
OPTIONS: dict[str, str] = {
    "hoodie.table.name": TABLE_NAME,
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "true",
}
MOR_OPTIONS: dict[str, str] = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
# every base file here is far below Hudi's 100 MB small-file limit, and with the BLOOM index Hudi merges
# updates into small files (a copy-on-write rewrite); a table of full-size files sends them to the log,
# which the limit at 0 models
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}
MOR_LOG_OPTIONS: dict[str, str] = {**MOR_OPTIONS, **NO_SMALL_FILES}
# tuned: snappy, the codec of the peers (Spark, delta-rs, pyarrow), and updates to the log on merge-on-read
SNAPPY = {"hoodie.parquet.compression.codec": "snappy"}
TUNED_OPTIONS: dict[str, str] = {**OPTIONS, **SNAPPY}
TUNED_MOR_OPTIONS: dict[str, str] = {**MOR_OPTIONS, **SNAPPY, **NO_SMALL_FILES}
ENGINE = "hudi-spec (Spark)"
LOCAL_ENGINE = "hudi-spec (local)"


def hudi_table(path: Path) -> Any:
    from reference.api import HudiTable

    return HudiTable(str(path), spark_session())


def local_table(path: Path) -> Any:
    """The writer with ``engine="local"``: pyarrow in this process, no Spark session."""
    from reference.api import HudiTable

    return HudiTable(str(path), engine="local")


def count_rows(path: Path) -> int:
    """Rows of a table's snapshot, counted by the spec reader (only the key column is read)."""
    from spec.read.reader import read_table

    return int(read_table(str(path), columns=["_hoodie_record_key"]).num_rows)


# --- tables shared by several entries (built in prepare steps, never timed) ---------------------------

def _write(path: Path, data: Any, operation: str, options: dict[str, str]) -> None:
    from spec.errors import InvalidConfig, InvalidOperation

    try:
        hudi_table(path).write(data, operation, options)
    except (InvalidConfig, InvalidOperation) as e:
        raise NotAvailable(f"{options.get('hoodie.datasource.write.table.type', 'COPY_ON_WRITE')} writes: {e}") from e


Writer = Callable[[Path, Any, str, dict[str, str]], None]
"""A writer of the shared tables: ``(table, Spark DataFrame, operation, options)``."""


def shared_base(name: str, options: dict[str, str], write: Writer = _write,
                session: Callable[[], Any] = spark_session) -> Callable[[Context], Path]:
    """The N-row table ``write`` writes by bulk_insert with ``options`` (shared, built once per run, in the Spark
    session ``session`` starts before any input is loaded)."""

    def build(ctx: Context) -> Path:
        def make(p: Path) -> None:
            session()
            write(p, cached_frame(ctx.inputs.base), "bulk_insert", options)

        return ctx.cached(name, make)

    return build


def shared_upserted(name: str, base: Callable[[Context], Path], options: dict[str, str], write: Writer = _write,
                    session: Callable[[], Any] = spark_session) -> Callable[[Context], Path]:
    """``base`` after ``write``'s upsert of the batch with ``options`` (shared, built once per run)."""

    def build(ctx: Context) -> Path:
        def make(p: Path) -> None:
            import shutil

            shutil.copytree(base(ctx), p)
            session()
            write(p, cached_frame(ctx.inputs.upsert), "upsert", options)

        return ctx.cached(name, make)

    return build





cow_base = shared_base("hudi-cow-base", OPTIONS)
cow_upserted = shared_upserted("hudi-cow-upserted", cow_base, OPTIONS)
mor_base = shared_base("hudi-mor-base", MOR_OPTIONS)
mor_log_base = shared_base("hudi-mor-log-base", MOR_LOG_OPTIONS)
mor_upserted = shared_upserted("hudi-mor-upserted", mor_log_base, MOR_LOG_OPTIONS)  # with logs: reads, compaction
cow_base_tuned = shared_base("hudi-cow-base-tuned", TUNED_OPTIONS)
mor_base_tuned = shared_base("hudi-mor-base-tuned", TUNED_MOR_OPTIONS)


def needs(build: Callable[[Context], Path]) -> Callable[[Context], None]:
    """A prepare step that builds one shared table."""

    def prepare(ctx: Context) -> None:
        build(ctx)

    return prepare


# --- writes ---------------------------------------------------------------------------------------

_HOOKS: list[tuple[Callable[[], None], Callable[[], None]]] = []


def with_operation_hooks(start: Callable[[], None], stop: Callable[[], None], fn: Callable[[], T]) -> T:
    """``fn()`` with ``start`` called just before each timed operation of ours and ``stop`` just after it
    (e.g. to read the driver's peak memory of the operation alone)."""
    _HOOKS.append((start, stop))
    try:
        return fn()
    finally:
        _HOOKS.pop()


def _timed_op(fn: Callable[[], T]) -> tuple[float, T, dict[str, Any]]:
    """``timed(fn)``, the hooks around it, and the CPU seconds this Python process spent in it (user and
    system, every thread: for the local engine the whole write; for Spark the driver's Python side)."""
    for start, _ in _HOOKS:
        start()
    before = resource.getrusage(resource.RUSAGE_SELF)
    seconds, value = timed(fn)
    after = resource.getrusage(resource.RUSAGE_SELF)
    for _, stop in reversed(_HOOKS):
        stop()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, value, {"python_cpu_seconds": round(cpu, 3)}


def _timed_write(path: Path, table: Callable[[Path], Any], data: Any, operation: str, options: dict[str, str],
                 rows: int, rows_expected: int) -> Measurement:
    """One write timed alone (the table opened and the input loaded before the timer), its rows counted after."""
    writer = table(path)
    seconds, result, extra = _timed_op(lambda: writer.write(data, operation, options))
    return Measurement(seconds, rows, path, count_rows(path), rows_expected, steps=dict(result.step_seconds),
                       extra=extra)


def _engine(local: bool) -> tuple[Callable[[Path], Any], Callable[[Path], Any]]:
    """The writer and its input form: the Spark engine with a cached DataFrame, or the local one with an
    Arrow table."""
    return (local_table, arrow_input) if local else (hudi_table, cached_frame)


def bulk_insert(ctx: Context, job: str = "hudi_spec_bulk_insert", options: dict[str, str] = OPTIONS,
                local: bool = False) -> Measurement:
    table, load = _engine(local)
    data = load(ctx.inputs.base)
    return _timed_write(ctx.fresh_table_dir(job), table, data, "bulk_insert", options, ctx.n, ctx.n)


def _upsert(ctx: Context, job: str, base: Callable[[Context], Path], options: dict[str, str],
            local: bool = False) -> Measurement:
    table, load = _engine(local)
    path = ctx.copy_of(base(ctx), job)
    data = load(ctx.inputs.upsert)
    return _timed_write(path, table, data, "upsert", options, ctx.shape.batch, ctx.shape.rows_after)


def cow_upsert(ctx: Context) -> Measurement:
    return _upsert(ctx, "hudi_spec_cow_upsert", cow_base, OPTIONS)


def mor_upsert(ctx: Context) -> Measurement:
    return _upsert(ctx, "hudi_spec_mor_upsert", mor_base, MOR_OPTIONS)


def _require_compaction() -> None:
    from reference.api import HudiTable

    if not callable(getattr(HudiTable, "compact", None)):
        raise NotAvailable("reference.api.HudiTable has no compact() yet")


def prepare_compaction(ctx: Context) -> None:
    _require_compaction()
    mor_upserted(ctx)


def _compaction(ctx: Context, job: str, local: bool) -> Measurement:
    _require_compaction()
    path = ctx.copy_of(mor_upserted(ctx), job)
    table = local_table(path) if local else hudi_table(path)
    seconds, _, extra = _timed_op(lambda: table.compact(OPTIONS))  # Hudi's default codec, as the writes
    rows = count_rows(path)
    return Measurement(seconds, rows, path, rows, ctx.shape.rows_after, extra=extra)


def compaction(ctx: Context) -> Measurement:
    return _compaction(ctx, "hudi_spec_compaction", local=False)


def compaction_local(ctx: Context) -> Measurement:
    return _compaction(ctx, "hudi_spec_local_compaction", local=True)


# --- reads of our tables --------------------------------------------------------------------------

def _spec_read(path: Path, ctx: Context) -> Measurement:
    from spec.read.reader import read_table

    seconds, table = timed(lambda: read_table(str(path)))
    return Measurement(seconds, table.num_rows, path, table.num_rows, ctx.shape.rows_after)


def first_write(path: Path) -> str:
    """When a table's first write completed: an incremental query from it holds what came after (its completion
    time on table versions 8 and 9, whose incremental queries compare completion times; its instant on 6)."""
    from spec.storage.hoodie_storage import Storage
    from spec.timeline.active_timeline import Timeline

    return next(i.completed or i.requested for i in Timeline.load(Storage(str(path))).instants if i.is_completed)


def _spec_incremental_read(path: Path, ctx: Context) -> Measurement:
    """The incremental query of the upsert's commit alone (from the base's bulk_insert on), by the spec reader."""
    from spec.read.reader import read_table

    begin = first_write(path)
    seconds, table = timed(lambda: read_table(str(path), "incremental", begin=begin))
    return Measurement(seconds, table.num_rows, path, table.num_rows, ctx.shape.batch)


def _hudi_rs_read(path: Path, ctx: Context) -> Measurement:
    import hudi

    def read() -> int:
        batches = hudi.HudiTableBuilder.from_base_uri(str(path)).build().read()
        return sum(b.num_rows for b in batches)

    seconds, rows = timed(read)
    return Measurement(seconds, rows, path, rows, ctx.shape.rows_after)


def spark_reader() -> Callable[[Any, str], Any]:
    """The Spark engine's snapshot read from reference/engines/spark_reader.py: (spark, path) -> DataFrame."""
    from reference.engines.spark_reader import read_spark

    def read(session: Any, path: str) -> Any:
        return read_spark(session, path)

    return read


def _spark_read(path: Path, ctx: Context) -> Measurement:
    read = spark_reader()
    session = spark_session()
    # every column of every row is produced (the noop sink), nothing is written
    seconds, _ = timed(lambda: read(session, str(path)).write.format("noop").mode("overwrite").save())
    rows = int(read(session, str(path)).count())
    return Measurement(seconds, rows, path, rows, ctx.shape.rows_after)


def _prepare_spark_read(ctx: Context) -> None:
    spark_reader()
    cow_upserted(ctx)


# --- whole processes: the commands a user types -----------------------------------------------------------
# A first look at a table: `hudi-spec read TABLE --limit 1` and a one-line hudi-rs read of the same table, each a
# whole process (interpreter start, imports, listing, reading, printing), run in turn so that a drift of the
# machine's speed falls on both; the seconds are the median, the job's extra figures the pairs' ratios. A third
# process runs in each turn too, the floor: pyarrow alone reading the same base files (the snapshot's, listed
# before any timer) with argparse imported, printing the row count and the first row — the libraries our command
# is built on doing the read's input and output with none of the table format's work.

SMALL_ROWS = 1_000
PAIRS = 7
"""The pairs (triples, with the floor) of a run: issue #43's "median of 7, paired"."""
HUDI_RS_ONE_LINE = ("import hudi, sys; b = hudi.HudiTableBuilder.from_base_uri(sys.argv[1]).build().read(); "
                    "print(b[0].slice(0, 1))")
FLOOR_ONE_LINE = ("import argparse, sys, pyarrow as pa, pyarrow.parquet as pq; "
                  "t = pa.concat_tables([pq.ParquetFile(f).read() for f in sys.argv[1:]]); "
                  "print(t.num_rows, t.slice(0, 1))")


def small_table(ctx: Context) -> Path:
    """A small table as a user's first write makes it: the first ``SMALL_ROWS`` of the run's base rows, upserted
    by the local engine with nothing but the benchmark's fields set (so table version 9, with a metadata table)."""
    from bench.data import base_rows

    return ctx.cached("hudi-small-v9", lambda p: local_table(p).write(base_rows(SMALL_ROWS), "upsert", OPTIONS))


def cli_command(table: Path) -> list[str]:
    """``hudi-spec read TABLE --limit 1``, the command installed beside this interpreter."""
    return [str(Path(sys.executable).parent / "hudi-spec"), "read", str(table), "--limit", "1"]


def hudi_rs_command(table: Path) -> list[str]:
    """The one-line hudi-rs read of ``table``: every row, the first printed."""
    return [sys.executable, "-c", HUDI_RS_ONE_LINE, str(table)]


def floor_command(table: Path) -> list[str]:
    """The floor of ``table``'s read: pyarrow alone reading the base files of its latest snapshot (listed by the
    spec reader here, untimed), with argparse imported, the count and the first row printed."""
    from spec.read.reader import TableReader

    reader = TableReader(str(table))
    files = sorted(str(table / sl.base_file.path) for sl in reader.plan("snapshot").slices if sl.base_file)
    return [sys.executable, "-c", FLOOR_ONE_LINE, *files]


def process_seconds(argv: list[str]) -> tuple[float, float, str]:
    """One whole process: its wall seconds, its CPU seconds (user + system, from the kernel's accounting of the
    reaped child) and its standard output. A failed process is an error."""
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def spread(values: list[float]) -> dict[str, float]:
    """Minimum, median and maximum."""
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def compile_bytecode() -> None:
    """Our packages' bytecode written, as an installed package has it (pip compiles it at install time): a
    process started with PYTHONDONTWRITEBYTECODE set would otherwise compile every changed module of ours again
    in each timed run, while hudi-rs's come compiled."""
    import compileall
    import importlib.util

    for package in ("spec", "reference"):
        found = importlib.util.find_spec(package)
        for folder in (found.submodule_search_locations or []) if found else []:
            compileall.compile_dir(folder, quiet=1)


def cli_read_first_row(ctx: Context) -> Measurement:
    """``PAIRS`` turns of ours, hudi-rs's and the floor's process, after one warm-up of each (our bytecode
    compiled first, ``compile_bytecode``); what ours printed is checked each time. The extra figures: each
    process's wall and CPU seconds, ours over hudi-rs's turn by turn (``wall_ratio``, ``cpu_ratio``: the target's
    verdict is the median of ``wall_ratio``), and the floor's over hudi-rs's (``floor_wall_ratio``,
    ``floor_cpu_ratio``)."""
    table = small_table(ctx)
    commands = (cli_command(table), hudi_rs_command(table), floor_command(table))
    compile_bytecode()
    for argv in commands:
        process_seconds(argv)
    walls: tuple[list[float], ...] = ([], [], [])
    cpus: tuple[list[float], ...] = ([], [], [])
    for _ in range(PAIRS):
        for i, argv in enumerate(commands):
            wall, cpu, out = process_seconds(argv)
            walls[i].append(wall)
            cpus[i].append(cpu)
            if i == 0 and not out.startswith(f"{SMALL_ROWS} rows (snapshot), the first 1 shown"):
                raise RuntimeError(f"hudi-spec read printed {out[:200]!r}")
            if i == 2 and not out.startswith(f"{SMALL_ROWS} "):
                raise RuntimeError(f"the floor's read printed {out[:200]!r}")

    def ratios(a: list[float], b: list[float]) -> dict[str, float]:
        return spread([x / y for x, y in zip(a, b, strict=True)])

    extra = {"pairs": PAIRS, "wall_seconds": spread(walls[0]), "cpu_seconds": spread(cpus[0]),
             "hudi_rs_wall_seconds": spread(walls[1]), "hudi_rs_cpu_seconds": spread(cpus[1]),
             "floor_wall_seconds": spread(walls[2]), "floor_cpu_seconds": spread(cpus[2]),
             "wall_ratio": ratios(walls[0], walls[1]), "cpu_ratio": ratios(cpus[0], cpus[1]),
             "floor_wall_ratio": ratios(walls[2], walls[1]), "floor_cpu_ratio": ratios(cpus[2], cpus[1])}
    return Measurement(statistics.median(walls[0]), SMALL_ROWS, table, count_rows(table), SMALL_ROWS, extra=extra)


def hudi_rs_one_line_read(ctx: Context) -> Measurement:
    """The one-line hudi-rs read alone, ``PAIRS`` times after a warm-up (its median is the ratio's base)."""
    table = small_table(ctx)
    argv = hudi_rs_command(table)
    process_seconds(argv)
    walls = [process_seconds(argv)[0] for _ in range(PAIRS)]
    return Measurement(statistics.median(walls), SMALL_ROWS, table, count_rows(table), SMALL_ROWS,
                       extra={"wall_seconds": spread(walls)})


STARTUP_RUNS = 7
"""Whole-process runs of each start-up job (after one warm-up): the median is its seconds."""
HELP_SECONDS, IMPORT_READER_SECONDS = 0.3, 0.15
"""Issue #45's `hudi-spec --help` within 0.3 s, issue #43's importing the spec reader within 0.15 s (targets)."""


def _median_process(argv: list[str], floor: list[str] | None = None) -> Measurement:
    """``STARTUP_RUNS`` runs of ``argv`` as a whole process after a warm-up (our bytecode compiled first); the
    median wall seconds, the runs' wall and CPU spreads as extra figures. With ``floor``, that process runs in
    turn with it, its figures kept too (``floor_wall_seconds``, ``floor_cpu_seconds``)."""
    compile_bytecode()
    commands = [argv] if floor is None else [argv, floor]
    for command in commands:
        process_seconds(command)
    runs: list[list[tuple[float, float, str]]] = [[] for _ in commands]
    for _ in range(STARTUP_RUNS):
        for i, command in enumerate(commands):
            runs[i].append(process_seconds(command))
    extra: dict[str, Any] = {"runs": STARTUP_RUNS}
    for prefix, done in zip(("", "floor_")[:len(runs)], runs, strict=True):
        extra[f"{prefix}wall_seconds"] = spread([r[0] for r in done])
        extra[f"{prefix}cpu_seconds"] = spread([r[1] for r in done])
    return Measurement(statistics.median(r[0] for r in runs[0]), 0, None, extra=extra)


def cli_help(ctx: Context) -> Measurement:
    """``hudi-spec --help``, the command installed beside this interpreter, as a whole process."""
    return _median_process([str(Path(sys.executable).parent / "hudi-spec"), "--help"])


def import_spec_reader(ctx: Context) -> Measurement:
    """``python -c "import spec.read.reader"`` as a whole process: the interpreter, pyarrow and the reader; in turn
    with its floor, ``python -c "import pyarrow"`` (the library the reader reads files with; its parquet reader,
    ``pyarrow._parquet``, loads with the first file read)."""
    return _median_process([sys.executable, "-c", "import spec.read.reader"],
                           floor=[sys.executable, "-c", "import pyarrow"])


DEFAULTS = "Hudi's defaults (gzip, default small-file limit)"
TUNED = "tuned: snappy"
TUNED_MOR = "tuned: snappy, small-file limit 0 (updates to the log)"

JOBS: tuple[Job, ...] = (
    Job("hudi_spec_bulk_insert", ENGINE, WRITE, bulk_insert, spark=True, vs="spark_parquet_write",
        warm=True, note=f"COW, N rows into an empty table; {DEFAULTS}"),
    Job("hudi_spec_cow_upsert", ENGINE, UPSERT, cow_upsert, prepare=needs(cow_base),
        spark=True, vs="delta_rs_merge", warm=True, note=f"COW, the upsert batch into the N-row table; {DEFAULTS}"),
    Job("hudi_spec_mor_upsert", ENGINE, UPSERT, mor_upsert, prepare=needs(mor_base),
        spark=True, vs="delta_rs_merge", warm=True, note=f"MOR, the upsert batch into the N-row table; {DEFAULTS}"),
    Job("hudi_spec_local_bulk_insert", LOCAL_ENGINE, WRITE,
        lambda c: bulk_insert(c, "hudi_spec_local_bulk_insert", local=True), vs="spark_parquet_write",
        warm=True, note=f"COW, N rows into an empty table; Arrow input, no Spark; {DEFAULTS}"),
    Job("hudi_spec_local_cow_upsert", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_cow_upsert", cow_base, OPTIONS, local=True), prepare=needs(cow_base),
        vs="delta_rs_merge", warm=True, note=f"COW, the upsert batch; Arrow input, no Spark; {DEFAULTS}"),
    Job("hudi_spec_local_mor_upsert", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_mor_upsert", mor_base, MOR_OPTIONS, local=True), prepare=needs(mor_base),
        vs="delta_rs_merge", warm=True, note=f"MOR, the upsert batch; Arrow input, no Spark; {DEFAULTS}"),
    Job("hudi_spec_bulk_insert_tuned", ENGINE, WRITE,
        lambda c: bulk_insert(c, "hudi_spec_bulk_insert_tuned", TUNED_OPTIONS), spark=True,
        vs="spark_parquet_write", warm=True, note=f"COW, N rows into an empty table; {TUNED}"),
    Job("hudi_spec_cow_upsert_tuned", ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_cow_upsert_tuned", cow_base_tuned, TUNED_OPTIONS),
        prepare=needs(cow_base_tuned), spark=True, vs="delta_rs_merge", warm=True,
        note=f"COW, the upsert batch; {TUNED}"),
    Job("hudi_spec_mor_upsert_tuned", ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_mor_upsert_tuned", mor_base_tuned, TUNED_MOR_OPTIONS),
        prepare=needs(mor_base_tuned), spark=True, vs="delta_rs_merge", warm=True,
        note=f"MOR, the upsert batch; {TUNED_MOR}"),
    Job("hudi_spec_local_bulk_insert_tuned", LOCAL_ENGINE, WRITE,
        lambda c: bulk_insert(c, "hudi_spec_local_bulk_insert_tuned", TUNED_OPTIONS, local=True),
        vs="spark_parquet_write", warm=True, note=f"COW, N rows; Arrow input, no Spark; {TUNED}"),
    Job("hudi_spec_local_cow_upsert_tuned", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_cow_upsert_tuned", cow_base_tuned, TUNED_OPTIONS, local=True),
        prepare=needs(cow_base_tuned), vs="delta_rs_merge", warm=True,
        note=f"COW, the upsert batch; Arrow input, no Spark; {TUNED}"),
    Job("hudi_spec_local_mor_upsert_tuned", LOCAL_ENGINE, UPSERT,
        lambda c: _upsert(c, "hudi_spec_local_mor_upsert_tuned", mor_base_tuned, TUNED_MOR_OPTIONS, local=True),
        prepare=needs(mor_base_tuned), vs="delta_rs_merge", warm=True,
        note=f"MOR, the upsert batch; Arrow input, no Spark; {TUNED_MOR}"),
    Job("hudi_spec_compaction", ENGINE, SERVICE, compaction, prepare=prepare_compaction, spark=True,
        note="MOR table after the upsert (small-file limit 0, so it has logs): every log into new base files, gzip"),
    Job("hudi_spec_local_compaction", LOCAL_ENGINE, SERVICE, compaction_local, prepare=prepare_compaction,
        note="the same compaction on threads of one process, no Spark; gzip"),
    Job("hudi_spec_snapshot_read_spec_engine", "hudi-spec spec.read.reader", READ,
        lambda c: _spec_read(cow_upserted(c), c), prepare=needs(cow_upserted),
        vs="hudi_rs_read_our_cow_table", warm=True, note="COW table after the upsert"),
    Job("hudi_spec_snapshot_read_spark_engine", "hudi-spec reference.engines.spark_reader (Spark)", READ,
        lambda c: _spark_read(cow_upserted(c), c), prepare=_prepare_spark_read, spark=True,
        vs="hudi_rs_read_our_cow_table", warm=True, note="COW table after the upsert"),
    Job("hudi_spec_incremental_read_spec_engine", "hudi-spec spec.read.reader", READ,
        lambda c: _spec_incremental_read(cow_upserted(c), c), prepare=needs(cow_upserted),
        vs="apache_hudi_incremental_read", warm=True, note="COW table after the upsert: the upsert's commit alone"),
    Job("hudi_rs_read_our_cow_table", "hudi-rs", READ, lambda c: _hudi_rs_read(cow_upserted(c), c),
        prepare=needs(cow_upserted), vs="pyarrow_dataset_read",
        warm=True, note="COW table after the upsert"),
    Job("hudi_spec_mor_snapshot_read_spec_engine", "hudi-spec spec.read.reader", READ,
        lambda c: _spec_read(mor_upserted(c), c), prepare=needs(mor_upserted),
        vs="hudi_rs_read_our_mor_table", warm=True,
        note="MOR table after the upsert (small-file limit 0: base files + logs)"),
    Job("hudi_rs_read_our_mor_table", "hudi-rs", READ, lambda c: _hudi_rs_read(mor_upserted(c), c),
        prepare=needs(mor_upserted), vs="pyarrow_dataset_read",
        warm=True, note="MOR table after the upsert (small-file limit 0: base files + logs)"),
    Job("hudi_spec_cli_read_first_row", "hudi-spec CLI (whole process)", READ, cli_read_first_row,
        prepare=needs(small_table), vs="hudi_rs_one_line_read",
        note=f"`hudi-spec read TABLE --limit 1`, a {SMALL_ROWS:,}-row table (local engine, table version 9); "
             f"{PAIRS} runs in turn with hudi-rs's one-line read and the floor (pyarrow alone reading the same "
             "files), after a warm-up of each"),
    Job("hudi_spec_cli_help", "hudi-spec CLI (whole process)", STARTUP, cli_help,
        note=f"`hudi-spec --help`, median of {STARTUP_RUNS} runs after a warm-up"),
    Job("hudi_spec_import_reader", "hudi-spec spec.read.reader (whole process)", STARTUP, import_spec_reader,
        note=f"`python -c \"import spec.read.reader\"`, median of {STARTUP_RUNS} runs after a warm-up, in turn "
             "with its floor, `python -c \"import pyarrow\"`"),
    Job("hudi_rs_one_line_read", "hudi-rs (whole process)", READ, hudi_rs_one_line_read,
        prepare=needs(small_table), note=f"`python -c 'import hudi; ... .read()'`, the same {SMALL_ROWS:,}-row table"),
)
