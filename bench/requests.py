"""Object-store requests per operation: the representative writes run against a local S3 server
(moto on 127.0.0.1, which logs every request it answers), counted by method, beside the fewest
requests a write of that shape needs.

The writes (local engine, table version 8, one table per row of the result; a table of 60 rows in 3
partitions, one file group each, is written first and not counted):

- ``cow_upsert`` / ``mor_upsert``: 60 rows, every key updated, into the 3 file groups;
- ``cow_insert``: 60 new keys into the same 3 partitions (small-file handling fills the 3 groups);
- ``cow_delete``: 30 keys deleted from the 3 groups;
- ``mor_compaction``: compaction of the 3 slices the upsert gave a log file each;
- ``cow_clean``: the cleaner (KEEP_LATEST_COMMITS, 1 retained) after two upserts: 3 older base files go.

The fewest requests (``minimum``) count what a writer of that shape cannot avoid on an object store
without a metadata table, one request per item: read ``hoodie.properties``, list the timeline, read the
latest completed instant, list the files (4; the services that list only, 3); per file group the
files it must read (a base file to merge or index; for compaction the base and the log file) and
each file it writes (a base file, or a new log file: no appends on object stores); take the table
lock (read and conditional write, 2) and release it (1); the instant files it must create (requested
and inflight, then completed: 3; a clean's deletes are one request per file). Hudi's write markers
and its heartbeats add requests on top that the minimum leaves out. The tables are new version 8
tables, so they have a metadata table (Hudi 1.x's default), whose requests the counts include and the
minimum leaves out.

Run ``python -m bench.requests`` for the table alone; ``python -m bench`` records it in
``docs/performance.md`` (between ``REQUESTS_BEGIN`` and ``REQUESTS_END``) and its JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REQUESTS_BEGIN = "<!-- bench:requests:begin -->"
REQUESTS_END = "<!-- bench:requests:end -->"
GROUPS = 3
ROWS = 60
METHODS = ("GET", "LIST", "HEAD", "PUT", "POST", "DELETE")


@dataclass(frozen=True)
class RequestCount:
    """The requests one operation made, by method (``LIST``: a ``GET`` with ``list-type``), and the fewest
    a write of its shape needs, with how that number is made up."""

    operation: str
    by_method: dict[str, int]
    minimum: int
    minimum_parts: str

    @property
    def total(self) -> int:
        return sum(self.by_method.values())


def fewest(operation: str, groups: int = GROUPS) -> tuple[int, str]:
    """The fewest requests of ``operation`` over ``groups`` file groups, and its parts (see the module)."""
    head, lock, instants = 4, 3, 3
    if operation in ("cow_upsert", "mor_upsert", "cow_insert", "cow_delete"):
        reads, writes = groups, groups
        parts = (f"4 (properties, timeline, latest instant, files) + {reads} reads + {writes} writes"
                 " + 3 lock + 3 instants")
        return head + reads + writes + lock + instants, parts
    if operation == "mor_compaction":
        head = 3
        reads, writes = 2 * groups, groups
        parts = (f"3 (properties, timeline, files) + {reads} reads (base and log) + {writes} writes"
                 " + 3 lock + 3 instants")
        return head + reads + writes + lock + instants, parts
    if operation == "cow_clean":
        head = 3
        parts = f"3 (properties, timeline, files) + {groups} deletes + 3 lock + 3 instants"
        return head + groups + lock + instants, parts
    raise ValueError(f"unknown operation {operation!r}")


def _count(entries: list[tuple[str, str, str]]) -> dict[str, int]:
    c: Counter[str] = Counter("LIST" if m == "GET" and "list-type" in q else m for m, _, q in entries)
    return {m: c.get(m, 0) for m in METHODS if c.get(m, 0)} | {m: n for m, n in c.items() if m not in METHODS}


def measure() -> list[RequestCount]:
    """Start a local S3 server, run every operation on a fresh bucket, and count its requests. Run it in
    a process that has not reached S3 yet (``run_in_subprocess``): a process makes one S3 client, for
    the endpoint it first reaches."""
    import pyarrow as pa

    from reference.api import HudiTable
    from tests.s3_server import running_s3_server

    with running_s3_server() as server:
        def options(table_type: str) -> dict[str, str]:
            return {"hoodie.table.name": "req", "hoodie.datasource.write.recordkey.field": "id",
                    "hoodie.datasource.write.precombine.field": "ts",
                    "hoodie.datasource.write.partitionpath.field": "city",
                    "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "8",
                    "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
                    "hoodie.cleaner.commits.retained": "1"}

        def rows(keys: range, ts: int) -> pa.Table:
            return pa.Table.from_pylist([{"id": i, "ts": ts, "city": f"c{i % GROUPS}", "v": f"v{i}@{ts}"}
                                         for i in keys])

        def table(table_type: str) -> tuple[HudiTable, dict[str, str]]:
            t = HudiTable(f"s3://{server.new_bucket()}/t", engine="local")
            opts = options(table_type)
            t.write(rows(range(ROWS), 1), "upsert", opts)
            return t, opts

        def counted(name: str, op: Callable[[], Any]) -> RequestCount:
            server.log.clear()
            op()
            minimum, parts = fewest(name)
            return RequestCount(name, _count(server.log.snapshot()), minimum, parts)

        out = []
        t, o = table("COPY_ON_WRITE")
        out.append(counted("cow_upsert", lambda: t.write(rows(range(ROWS), 2), "upsert", o)))
        out.append(counted("cow_insert", lambda: t.write(rows(range(ROWS, 2 * ROWS), 1), "insert", o)))
        out.append(counted("cow_delete", lambda: t.write(rows(range(0, ROWS, 2), 3), "delete", o)))
        out.append(counted("cow_clean", lambda: t.clean(o)))
        m, mo = table("MERGE_ON_READ")
        out.append(counted("mor_upsert", lambda: m.write(rows(range(ROWS), 2), "upsert", mo)))
        out.append(counted("mor_compaction", lambda: m.compact(mo)))
        return out


def markdown(counts: list[RequestCount]) -> str:
    """The counts as a markdown table, one row per operation."""
    lines = ["| operation | " + " | ".join(METHODS) + " | total | fewest | the fewest, made up of |",
             "|---|" + "---:|" * (len(METHODS) + 2) + "---|"]
    for c in counts:
        lines.append(f"| {c.operation} | " + " | ".join(str(c.by_method.get(m, 0)) for m in METHODS)
                     + f" | {c.total} | {c.minimum} | {c.minimum_parts} |")
    return "\n".join(lines) + "\n"


def run_in_subprocess(timeout: float) -> list[dict[str, Any]] | None:
    """``measure`` in a fresh process (as every bench job runs); its counts as JSON-able dicts, or None
    (with the reason printed) when it failed."""
    done = subprocess.run([sys.executable, "-m", "bench.requests", "--json"], capture_output=True, text=True,
                          timeout=timeout, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        print(f"object-store requests not counted: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    data: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def from_dicts(data: list[dict[str, Any]]) -> list[RequestCount]:
    return [RequestCount(d["operation"], d["by_method"], d["minimum"], d["minimum_parts"]) for d in data]


def record(page: Path, counts: list[RequestCount]) -> bool:
    """Put the table between the page's request markers; False (page untouched) when it has none."""
    text = page.read_text()
    begin, end = text.find(REQUESTS_BEGIN), text.find(REQUESTS_END)
    if begin < 0 or end < begin:
        return False
    page.write_text(text[:begin + len(REQUESTS_BEGIN)] + "\n\n" + markdown(counts).strip() + "\n\n" + text[end:])
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.requests", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the counts as one line of JSON")
    args = parser.parse_args(argv)
    counts = measure()
    print(json.dumps([asdict(c) for c in counts]) if args.json else markdown(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
