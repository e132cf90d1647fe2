"""``make demo``: build a merge-on-read Hudi table from the specification's rules, then read it back.

The demo needs nothing but this repository. Step by step it writes a small table of trips the way
the spec says a writer must (hoodie.properties with its checksum, instants moving requested →
inflight → completed, a base file with the five meta columns, log blocks of updates and deletes,
commit metadata), then:

- shows it with the ``hudi-spec`` commands (desc, timeline, logfile);
- reads it with every query type through the spec reader;
- reads it with hudi-rs (the ``hudi`` package) and checks both agree row for row.

Run ``python -m reference.demo [--path DIR] [--table-version 6|8]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reference.cli import main as cli
from spec.commit_metadata import CommitMetadata, format_commit_metadata, write_stat
from spec.file_naming import BaseFileName, LogFileName
from spec.log_blocks import avro_data_block, delete_block, delete_record
from spec.log_format import encode_blocks
from spec.reader import read_table
from spec.schema import META_FIELDS, avro_schema_from_arrow, record_name_for_table, with_meta_fields
from spec.storage import Storage
from spec.table_config import MERGE_ON_READ, PartitionMetadata, TableConfig, partition_depth
from spec.timeline import Action, Instant, State, format_instant_file_name, timeline_dir

TABLE = "trips"
FILE_ID = "5f0c6a5e-2c1a-4d3b-9a1e-7b3f0d2a9c41-0"
TOKEN = "0-1-1"
INSERT_T, INSERT_DONE = "20250101080000000", "20250101080001000"
UPDATE_T, UPDATE_DONE = "20250101090000000", "20250101090001000"

SCHEMA = pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("rider", pa.string()), ("fare", pa.float64()),
                    ("city", pa.string())])
TRIPS = [
    {"uuid": "t1", "ts": 1, "rider": "rider-A", "fare": 19.10, "city": "san_francisco"},
    {"uuid": "t2", "ts": 1, "rider": "rider-B", "fare": 27.70, "city": "san_francisco"},
    {"uuid": "t3", "ts": 1, "rider": "rider-C", "fare": 33.90, "city": "san_francisco"},
    {"uuid": "t4", "ts": 1, "rider": "rider-D", "fare": 93.50, "city": "san_francisco"},
]


def say(text: str) -> None:
    print(f"\n== {text}", flush=True)


def _instant_files(storage: Storage, layout: int, requested: str, action: str, completed: str,
                   metadata: CommitMetadata, version: int) -> None:
    """Walk one instant through its states, leaving the files the timeline rules require."""
    folder = timeline_dir(layout)
    inst = Instant(requested, action, State.REQUESTED)
    storage.create_if_absent(f"{folder}/{format_instant_file_name(inst, layout)}", b"")
    inst = inst.transition(State.INFLIGHT)
    storage.create_if_absent(f"{folder}/{format_instant_file_name(inst, layout)}", b"")
    done = inst.transition(State.COMPLETED, completed=completed if layout == 2 else None)
    storage.create_if_absent(f"{folder}/{format_instant_file_name(done, layout)}",
                             format_commit_metadata(metadata, version))


def build_table(base: Path, version: int) -> Path:
    """Write the demo table: one insert (a base file), then updates and a delete (log blocks)."""
    storage = Storage(base)
    avro = avro_schema_from_arrow(SCHEMA, *record_name_for_table(TABLE))
    cfg = TableConfig.create(TABLE, MERGE_ON_READ, version, ("uuid",), "ts", ("city",), "SIMPLE",
                             hive_style_partitioning=True, create_schema=json.dumps(avro))
    for folder in (".hoodie/.temp", ".hoodie/.aux/.bootstrap/.partitions", ".hoodie/.aux/.bootstrap/.fileids",
                   ".hoodie/.schema", timeline_dir(cfg.timeline_layout),
                   ".hoodie/archived" if version < 8 else ".hoodie/timeline/history"):
        storage.mkdirs(folder)
    storage.write_atomic(".hoodie/hoodie.properties", cfg.to_bytes())
    layout = cfg.timeline_layout
    partition = "city=san_francisco"

    say(f"1. insert 4 trips at {INSERT_T}: a base file with the five meta columns")
    base_name = BaseFileName(FILE_ID, TOKEN, INSERT_T).format()
    rows = [dict(zip(META_FIELDS, (INSERT_T, f"{INSERT_T}_0_{i}", r["uuid"], partition, base_name), strict=True), **r)
            for i, r in enumerate(TRIPS)]
    full = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + list(SCHEMA))
    storage.write_atomic(f"{partition}/.hoodie_partition_metadata",
                         PartitionMetadata(INSERT_T, partition_depth(partition)).format())
    pq.write_table(pa.Table.from_pylist(rows, schema=full), storage.full(f"{partition}/{base_name}"))
    size = storage.size(f"{partition}/{base_name}")
    stat = write_stat(fileId=FILE_ID, path=f"{partition}/{base_name}", partitionPath=partition, numWrites=4,
                      numInserts=4, totalWriteBytes=size, fileSizeInBytes=size)
    md = CommitMetadata({partition: (stat,)}, False, {"schema": json.dumps(avro)}, "UPSERT")
    _instant_files(storage, layout, INSERT_T, Action.DELTA_COMMIT, INSERT_DONE, md, version)
    print(f"   {partition}/{base_name}")

    say(f"2. upsert at {UPDATE_T}: t1 gets a new fare, t2 is deleted — one data block, then one delete block")
    log = LogFileName(FILE_ID, INSERT_T if version < 8 else UPDATE_T, 1, TOKEN)
    schema_json = json.dumps(with_meta_fields(avro))
    update = {**TRIPS[0], "ts": 2, "fare": 25.00}
    record = {"_hoodie_commit_time": UPDATE_T, "_hoodie_commit_seqno": f"{UPDATE_T}_0_1",
              "_hoodie_record_key": "t1", "_hoodie_partition_path": partition, "_hoodie_file_name": FILE_ID, **update}
    blocks = [avro_data_block(UPDATE_T, schema_json, [record]),
              delete_block(UPDATE_T, schema_json, [delete_record("t2", partition, 2)])]
    data = encode_blocks(blocks)
    storage.write_atomic(f"{partition}/{log.format()}", data)
    stat = write_stat(fileId=FILE_ID, path=f"{partition}/{log.format()}", partitionPath=partition,
                      prevCommit=INSERT_T, numWrites=1, numUpdateWrites=1, numDeletes=1, totalWriteBytes=len(data),
                      fileSizeInBytes=len(data), logVersion=1, logOffset=0,
                      baseFile=base_name if version < 8 else "", logFiles=[log.format()])
    md = CommitMetadata({partition: (stat,)}, False, {"schema": json.dumps(avro)}, "UPSERT")
    _instant_files(storage, layout, UPDATE_T, Action.DELTA_COMMIT, UPDATE_DONE, md, version)
    print(f"   {partition}/{log.format()}")
    return base


def _rows(table: pa.Table | None) -> list[dict[str, Any]]:
    if table is None or table.num_columns == 0:
        return []
    return sorted(table.to_pylist(), key=lambda r: str(r.get("_hoodie_record_key")))


def _hudi_rs(path: Path, **options: str) -> list[dict[str, Any]] | None:
    try:
        import hudi
        from hudi import HudiQueryType, HudiReadOptions
    except ImportError:
        return None
    opts = HudiReadOptions()
    if "as_of" in options:
        opts = opts.with_as_of_timestamp(options["as_of"])
    if "read_optimized" in options:
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if "begin" in options:
        opts = opts.with_query_type(HudiQueryType.Incremental).with_start_timestamp(options["begin"])
        opts = opts.with_end_timestamp(options["end"])
    batches = hudi.HudiTableBuilder.from_base_uri(str(path)).build().read(opts)
    return _rows(pa.Table.from_batches(batches)) if batches else []


def run(path: Path, version: int) -> int:
    build_table(path, version)
    say("3. the table, as hudi-spec shows it")
    cli(["desc", str(path)])
    cli(["timeline", str(path)])
    log = next(p for p in sorted(path.rglob(".*.log.*")))
    cli(["logfile", str(log), "--records", "2"])

    end = UPDATE_DONE if version >= 8 else UPDATE_T
    queries: list[tuple[str, dict[str, Any], dict[str, str]]] = [
        ("snapshot", {}, {}),
        ("read_optimized", {"query": "read_optimized"}, {"read_optimized": "true"}),
        (f"time travel as of {INSERT_T}", {"as_of": INSERT_T}, {"as_of": INSERT_T}),
        (f"incremental ({INSERT_T}, {end}]", {"query": "incremental", "begin": INSERT_T if version < 8 else
                                               INSERT_DONE, "end": end},
         {"begin": INSERT_T if version < 8 else INSERT_DONE, "end": end}),
    ]
    say("4. every query type: the spec reader and hudi-rs")
    failures = 0
    for label, ours_kw, theirs_kw in queries:
        ours = _rows(read_table(str(path), **ours_kw))
        theirs = _hudi_rs(path, **theirs_kw)
        verdict = "hudi-rs not installed" if theirs is None else ("hudi-rs agrees" if theirs == ours else "DIFFERS")
        failures += verdict == "DIFFERS"
        print(f"   {label:45} {len(ours)} rows  [{verdict}]")
        for r in ours:
            print(f"      {r['_hoodie_record_key']}  fare={r['fare']:<6} commit={r['_hoodie_commit_time']}")
    print(f"   table left at {path}")
    return failures


def run_writer(path: Path, version: int) -> int:
    """Part two: the reference writer (PySpark) writes a copy-on-write table; hudi-rs reads it back."""
    from reference.api import HudiTable

    say(f"5. the reference writer on Spark: a copy-on-write table (v{version}) at {path}")
    table = HudiTable(str(path))
    options = {"hoodie.table.name": "trips_cow", "hoodie.datasource.write.recordkey.field": "uuid",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.write.table.version": str(version)}
    trips = pa.Table.from_pylist(TRIPS, schema=SCHEMA)
    steps = [("insert", trips),
             ("upsert", pa.Table.from_pylist([{**TRIPS[0], "ts": 2, "fare": 25.0},
                                              {"uuid": "t5", "ts": 1, "rider": "rider-E", "fare": 11.0,
                                               "city": "chennai"}], schema=SCHEMA)),
             ("delete", pa.Table.from_pylist([TRIPS[1]], schema=SCHEMA))]
    failures = 0
    for op, data in steps:
        result = table.write(data, op, options)
        ours = _rows(table.read())
        theirs = _hudi_rs(path)
        ok = theirs is None or theirs == ours
        failures += not ok
        print(f"   {op:8} at {result.instant}: {len(ours)} rows  [{'hudi-rs agrees' if ok else 'DIFFERS'}]")
    cli(["commits", str(path)])
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=None, help="where to build the table (default: a temp dir)")
    parser.add_argument("--table-version", type=int, choices=(6, 8), default=6)
    parser.add_argument("--no-spark", action="store_true", help="skip part two (the Spark writer)")
    args = parser.parse_args(argv)
    path = args.path or Path(tempfile.mkdtemp(prefix="hudi-spec-demo-")) / TABLE
    for p in (path, path.with_name(path.name + "_cow")):
        if p.exists():
            shutil.rmtree(p)
    failures = run(path, args.table_version)
    if not args.no_spark:
        failures += run_writer(path.with_name(path.name + "_cow"), args.table_version)
    say("done: " + ("hudi-rs reads every table exactly as the spec reader does" if not failures
                    else f"{failures} reads differ"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
