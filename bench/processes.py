"""Whole processes, the commands a user types: a first look at a small table (``hudi-spec read TABLE --limit 1``)
beside hudi-rs's one-line read and the floor of the libraries alone, run in turn; ``hudi-spec --help`` and importing
the spec reader, each a process of its own.

Each figure is the kernel's accounting of a reaped child (its CPU seconds) and a clock around it (its wall seconds);
our bytecode is compiled first, as an installed package's is (``compile_bytecode``).
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.jobs import READ, STARTUP, Context, Job, Measurement
from bench.ours import OPTIONS, count_rows, local_table, needs

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


JOBS: tuple[Job, ...] = (
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
