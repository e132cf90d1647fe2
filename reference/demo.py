"""``make demo``: write a merge-on-read Hudi table with the reference writer, then read it every way.

The demo needs nothing but this repository (and Java for Spark). With a Spark session it:

1. generates a few thousand trips (seeded, so every run writes the same rows) in five cities,
   with strings, longs, ints, doubles, booleans and dates;
2. creates a MERGE_ON_READ table with them (a deltacommit of base files), upserts updates and new
   trips (log files), deletes some trips (delete blocks), compacts (a commit of new base files) and
   upserts again;
3. reads the table with every query type — snapshot, read-optimized, incremental between two
   instants, time travel to an earlier instant — with the Spark reader, the spec reader and hudi-rs,
   then cleans the file slices the latest snapshot no longer needs (after which Hudi, and the spec
   reader, refuse time travel to the compaction) and reads the snapshot again;
4. shows a sample of the rows and the timeline (``hudi-spec timeline``).

After every step the Spark reader, the spec reader (``spec.read.reader``) and hudi-rs (the ``hudi``
package) must read the same rows, and those rows must be the ones the demo meant to write; if they
ever differ the demo says where and exits with status 1. The table is left in ``--path`` (default:
a new temporary folder) for ``hudi-spec`` to look at.

Run ``python -m reference.demo [--path DIR] [--table-version 9|8|6] [--rows N]``: table version 9 by
default, as Apache Hudi 1.1 writes a new table (with its metadata table); 8 as Hudi 1.0, 6 as Hudi 0.14/0.15.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from reference.cli import main as cli
from reference.commands._output import emit_table
from reference.instrumentation import progress
from reference.instrumentation.spark_progress import spark_progress
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline

# =============================================================================================
# The dataset
# =============================================================================================

SEED = 20250101
CITIES = ("amsterdam", "chennai", "nairobi", "san_francisco", "sao_paulo")
TRIP_SCHEMA = pa.schema([
    ("uuid", pa.string()), ("ts", pa.int64()), ("rider", pa.string()), ("driver", pa.string()),
    ("fare", pa.float64()), ("distance_km", pa.float64()), ("passengers", pa.int32()),
    ("airport", pa.bool_()), ("pickup_date", pa.date32()), ("city", pa.string()),
])
KEY = "uuid"
DATA_COLUMNS = tuple(TRIP_SCHEMA.names)


class Trips:
    """A seeded generator of trips and the rows the table should hold (``expected``)."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        self.next_id = 0
        self.expected: dict[str, dict[str, Any]] = {}

    def _trip(self, uuid: str, ts: int, city: str | None = None) -> dict[str, Any]:
        r = self.rng
        return {"uuid": uuid, "ts": ts, "rider": f"rider-{r.randrange(500):03d}",
                "driver": f"driver-{r.randrange(200):03d}", "fare": round(r.uniform(4, 120), 2),
                "distance_km": round(r.uniform(0.5, 40), 3), "passengers": r.randint(1, 4),
                "airport": r.random() < 0.15,
                "pickup_date": dt.date(2025, 1, 1) + dt.timedelta(days=r.randrange(60)),
                "city": city or r.choice(CITIES)}

    def new(self, n: int, ts: int) -> list[dict[str, Any]]:
        rows = []
        for _ in range(n):
            self.next_id += 1
            rows.append(self._trip(f"trip-{self.next_id:06d}", ts))
        return rows

    def updates(self, n: int, ts: int) -> list[dict[str, Any]]:
        """New versions of ``n`` existing trips (same key and city, new fare and rider)."""
        keys = self.rng.sample(sorted(self.expected), n)
        return [self._trip(k, ts, self.expected[k]["city"]) for k in keys]

    def pick(self, n: int) -> list[dict[str, Any]]:
        return [self.expected[k] for k in self.rng.sample(sorted(self.expected), n)]

    def apply(self, rows: list[dict[str, Any]], delete: bool = False) -> None:
        for row in rows:
            if delete:
                self.expected.pop(row[KEY], None)
            else:
                self.expected[row[KEY]] = row

    @staticmethod
    def table(rows: list[dict[str, Any]]) -> pa.Table:
        return pa.Table.from_pylist(rows, schema=TRIP_SCHEMA)


# =============================================================================================
# Reading with the three readers and comparing
# =============================================================================================


class DemoFailure(Exception):
    """The readers disagree, or do not read what was written."""


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date | Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def canonical(table: pa.Table | None, columns: tuple[str, ...] | None = None) -> list[str]:
    """Rows as a sorted list of canonical JSON strings: a multiset that ignores row and column order."""
    if table is None or table.num_columns == 0:
        return []
    if columns is not None:
        table = table.select([c for c in columns if c in table.column_names])
    return sorted(json.dumps({k: _plain(v) for k, v in row.items()}, sort_keys=True) for row in table.to_pylist())


def _first_difference(ours: list[str], theirs: list[str]) -> str:
    only_ours = sorted(set(ours) - set(theirs))
    only_theirs = sorted(set(theirs) - set(ours))
    if only_ours:
        return f"missing from it: {only_ours[0]}"
    if only_theirs:
        return f"extra in it: {only_theirs[0]}"
    return "the same rows, repeated a different number of times"


def hudi_rs_available() -> bool:
    try:
        import hudi  # noqa: F401
    except ImportError:
        return False
    return True


def read_hudi_rs(path: str, query: str = "snapshot", as_of: str | None = None, begin: str | None = None,
                 end: str | None = None) -> pa.Table | None:
    """The rows hudi-rs (the ``hudi`` package) reads for one query."""
    import hudi
    from hudi import HudiQueryType, HudiReadOptions

    opts = HudiReadOptions()
    if query == "read_optimized":
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    if query == "incremental":
        opts = opts.with_query_type(HudiQueryType.Incremental)
        if begin is not None:
            opts = opts.with_start_timestamp(begin)
        if end is not None:
            opts = opts.with_end_timestamp(end)
    batches = hudi.HudiTableBuilder.from_base_uri(path).build().read(opts)
    return pa.Table.from_batches(batches) if batches else None


@dataclass
class Readers:
    """The three readers of one table, compared query by query."""

    path: str
    spark: Any
    use_hudi_rs: bool = True
    checks: list[str] = field(default_factory=list)

    def check(self, label: str, expected: Mapping[str, dict[str, Any]] | None, query: str = "snapshot",
              **kw: str | None) -> pa.Table:
        """Read one query with every reader; raise DemoFailure unless they agree (and match ``expected``)."""
        from reference.engines.spark_reader import read_spark

        ours = read_table(self.path, query, **kw)  # type: ignore[arg-type]
        reference = canonical(ours)
        df = read_spark(self.spark, self.path, query, **kw)
        from reference.engines.spark_arrow import spark_to_arrow

        spark_rows = canonical(spark_to_arrow(df) if df.columns else None)
        readers: list[tuple[str, list[str]]] = [("the Spark reader", spark_rows)]
        if self.use_hudi_rs:
            readers.append(("hudi-rs", canonical(read_hudi_rs(self.path, query, **kw))))
        for who, rows in readers:
            if rows != reference:
                raise DemoFailure(f"{label}: {who} read {len(rows):,} rows, the spec reader {len(reference):,}; "
                                  f"{_first_difference(reference, rows)}")
        if expected is not None:
            meant = canonical(Trips.table(list(expected.values())))
            got = canonical(ours, DATA_COLUMNS)
            if got != meant:
                raise DemoFailure(f"{label}: the readers agree on {len(got):,} rows but {len(meant):,} were "
                                  f"written; {_first_difference(meant, got)}")
        self.checks.append(label)
        return ours


# =============================================================================================
# The demo
# =============================================================================================


class Steps:
    """Numbered, one-line output: ``  3. upsert   …   1.2s``."""

    def __init__(self) -> None:
        self.n = 0
        self.started = time.monotonic()

    def say(self, name: str, text: str, seconds: float | None = None) -> None:
        self.n += 1
        took = f"  {seconds:5.1f}s" if seconds is not None else ""
        progress.clear()
        print(f"{self.n:>3}. {name:<15}{text}{took}", flush=True)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.monotonic()
    return fn(), time.monotonic() - t0


def _agree(readers: Readers) -> str:
    return "spark = spec = hudi-rs" if readers.use_hudi_rs else "spark = spec (hudi-rs not installed)"


@dataclass(frozen=True)
class DemoResult:
    """What the demo did: the table, the instants of its steps and the checks that passed."""

    path: Path
    instants: dict[str, str]
    checks: tuple[str, ...]


def write_options(version: int) -> dict[str, str]:
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": KEY, "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.write.table.version": str(version),
            # no small-file routing: updates go to log files (a small base file would be rewritten instead,
            # as Hudi does when the index cannot look into log files), new trips to new file groups
            "hoodie.parquet.small.file.limit": "0"}


def _point(timeline: Timeline, requested: str) -> str:
    """The time a query names an instant by: its completion time (layout 2) or its requested time."""
    inst = timeline.get(requested)
    return (inst.completed if inst is not None and inst.completed else None) or requested


def run(path: Path, version: int = 9, rows: int = 3000, spark: Any = None) -> DemoResult:
    """The whole demo on a new table at ``path``; raises DemoFailure when a check fails."""
    from reference.api import HudiTable
    from reference.engines.spark_session import get_or_create_session
    from reference.executors.clean import clean
    from reference.executors.common import load_table
    from spec.actions.clean import CleanConfig
    from spec.config.registry import KEEP_LATEST_COMMITS

    steps = Steps()
    trips = Trips()
    print(f"hudi-spec demo: a MERGE_ON_READ table, table version {version}, at {path}", flush=True)
    with spark_progress():
        session, took = _timed(lambda: spark or get_or_create_session())
        readers = Readers(str(path), session, hudi_rs_available())
        steps.say("spark", f"session {session.version} on {session.sparkContext.master}", took)
        table = HudiTable(str(path), session)
        options = write_options(version)
        instants: dict[str, str] = {}

        first = trips.new(rows, ts=1)
        steps.say("generate", f"{rows:,} trips in {len(CITIES)} cities (seed {SEED}); {len(TRIP_SCHEMA)} columns of "
                              "strings, longs, ints, doubles, booleans and dates")

        def write(name: str, data: list[dict[str, Any]], operation: str, what: str) -> None:
            result, took = _timed(lambda: table.write(Trips.table(data), operation, options))
            trips.apply(data, delete=operation == "delete")
            instants[name] = result.instant
            readers.check(f"after {name}", trips.expected)
            steps.say(name, f"{result.action} {result.instant}: {what} → {len(trips.expected):,} rows  "
                            f"[{_agree(readers)}]", took)

        write("insert", first, "insert", f"{rows:,} trips into base files")
        n_upd, n_new = rows // 5, rows // 10
        batch = trips.updates(n_upd, ts=2) + trips.new(n_new, ts=2)
        write("upsert", batch, "upsert", f"{n_upd:,} updated (log files) + {n_new:,} new (base files)")
        gone = trips.pick(rows // 20)
        write("delete", gone, "delete", f"{len(gone):,} trips, as delete blocks")

        compacted, took = _timed(table.compact)
        if compacted is None:
            raise DemoFailure("compaction: nothing was compacted, yet the table has log files")
        instants["compaction"] = compacted
        at_compaction = dict(trips.expected)
        readers.check("after compaction", trips.expected)
        steps.say("compact", f"commit {compacted}: every file slice with logs → new base files  "
                             f"[{_agree(readers)}]", took)

        n_upd2, n_new2 = rows // 10, rows // 20
        updated2, new2 = trips.updates(n_upd2, ts=3), trips.new(n_new2, ts=3)
        second = updated2 + new2
        write("upsert again", second, "upsert", f"{n_upd2:,} updated + {n_new2:,} new")
        latest_keys = {r[KEY] for r in second}
        # read-optimized reads base files only: the compacted table and the new trips' new file groups
        base_only = {**at_compaction, **{r[KEY]: r for r in new2}}

        timeline = Timeline.load(str(path))
        begin, end = _point(timeline, compacted), _point(timeline, instants["upsert again"])
        queries: list[tuple[str, str, dict[str, str | None], Mapping[str, dict[str, Any]]]] = [
            ("snapshot", "snapshot", {}, trips.expected),
            ("read_optimized", "read_optimized", {}, base_only),
            (f"incremental ({begin}, {end}]", "incremental", {"begin": begin, "end": end},
             {k: v for k, v in trips.expected.items() if k in latest_keys}),
            (f"time travel as of {begin}", "snapshot", {"as_of": begin}, at_compaction),
        ]
        steps.say("read", "every query type with the three readers:")
        snapshot_rows = None
        for label, query, kw, expected in queries:
            t0 = time.monotonic()
            got = readers.check(label, expected, query, **kw)
            snapshot_rows = snapshot_rows if snapshot_rows is not None else got
            progress.clear()
            print(f"       {label:<56}{got.num_rows:>7,} rows  [{_agree(readers)}]  {time.monotonic() - t0:5.1f}s",
                  flush=True)
        # cleaned after the reads: Apache Hudi refuses time travel before the clean's earliest retained commit
        # (spec.read.time_travel), and the read as of the compaction is one of them
        storage, config = load_table(str(path))
        cleaned, took = _timed(lambda: clean(storage, config, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1)))
        if cleaned.instant is None:
            raise DemoFailure("clean: nothing to clean, yet compaction replaced every slice with logs")
        instants["clean"] = cleaned.instant
        readers.check("after clean", trips.expected)
        steps.say("clean", f"clean {cleaned.instant}: {cleaned.total_deleted} files of replaced slices deleted "
                           f"(KEEP_LATEST_COMMITS, 1 retained)  [{_agree(readers)}]", took)

    steps.say("sample", "five trips of the snapshot, with two of Hudi's meta columns")
    assert snapshot_rows is not None
    sample = sorted(snapshot_rows.to_pylist(), key=lambda r: r[KEY])[:5]
    cols = ["_hoodie_commit_time", "_hoodie_partition_path", "uuid", "fare", "pickup_date"]
    emit_table(None, cols, [[r[c] for c in cols] for r in sample])
    steps.say("timeline", f"{hudi_spec_command()} timeline {path}")
    cli(["timeline", str(path), "--all"])
    print(f"\nAll {len(readers.checks)} checks passed in {time.monotonic() - steps.started:.0f}s. "
          f"The table is at {path}; try:", flush=True)
    for line in closing_hints(path):
        print(line)
    return DemoResult(path, instants, tuple(readers.checks))


HINTS = ("desc", "commits", "fsview --latest", "compactions", "cleans", "stats")
"""The commands the demo suggests on its table when it is done."""


def hudi_spec_command() -> str:
    """``hudi-spec`` as a user can type it here: the bare name when the ``hudi-spec`` on ``PATH`` is this
    environment's; else the script's path (relative to the current folder when below it, e.g.
    ``.venv/bin/hudi-spec`` after ``make demo`` on a fresh clone, where ``.venv`` is not activated)."""
    script = Path(sys.executable).parent / "hudi-spec"
    found = shutil.which("hudi-spec")
    if found and Path(found).resolve() == script.resolve():
        return "hudi-spec"
    if not script.is_file():
        return f"{sys.executable} -m reference.cli"
    return _as_typed(script)


def _as_typed(path: Path) -> str:
    """``path`` relative to the current folder when it is below it, else absolute."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else str(path)


def closing_hints(path: Path) -> list[str]:
    """The demo's last lines: commands to try on its table, each runnable exactly as printed."""
    command = hudi_spec_command()
    lines = [f"  {command} {hint} {path}" for hint in HINTS]
    if command != "hudi-spec" and (Path(sys.executable).parent / "activate").is_file():
        activate = _as_typed(Path(sys.executable).parent / "activate")
        lines.append(f"(or `source {activate}` first, then type just `hudi-spec ...`)")
    return lines


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(prog="python -m reference.demo", description=doc.splitlines()[0])
    parser.add_argument("--path", type=Path, default=None,
                        help="where to write the table (default: a new temporary folder); replaced if it exists")
    parser.add_argument("--table-version", type=int, choices=(9, 8, 6), default=9,
                        help="9 (default; Apache Hudi 1.1), 8 (Hudi 1.0) or 6 (Hudi 0.14/0.15)")
    parser.add_argument("--rows", type=int, default=3000, help="trips in the first write (default 3000)")
    args = parser.parse_args(argv)
    if args.rows < 40:
        parser.error("--rows must be at least 40")
    path = args.path or Path(tempfile.mkdtemp(prefix="hudi-spec-demo-")) / "trips"
    if path.exists():
        shutil.rmtree(path)
    try:
        run(path, args.table_version, args.rows, spark)
    except DemoFailure as err:
        print(f"\ndemo FAILED: {err}\nThe table is left at {path}.", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
