"""``make bench``: every job side by side in one run; a table of seconds, rows/s, ratios, memory, bytes.

``python -m bench [--rows 1000000 5000000] [--only JOB ...] [--out FILE]``. Each job runs in a fresh
process; Spark session start is measured on its own and not counted in Spark jobs.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.jobs import JOBS

RATIO_TO = {"hudi_spec_cow_upsert": "delta_rs_merge", "spark_naive_full_rewrite": "delta_rs_merge",
            "hudi_spec_bulk_insert": "spark_parquet_write", "delta_rs_write": "spark_parquet_write",
            "pyarrow_dataset_write": "spark_parquet_write",
            "hudi_spec_snapshot_read_spec_engine": "hudi_rs_read_our_table"}


def run_job(name: str, n: int, work: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "bench.jobs", name, str(n), str(work)], capture_output=True,
                          text=True, timeout=3600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"job": name, "n": n, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return dict(json.loads(lines[-1]))


def table(results: list[dict[str, Any]]) -> str:
    by = {(r["job"], r["n"]): r for r in results}
    lines = ["| job | rows | seconds | rows/s | ratio | vs | peak RSS MB | bytes on disk |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['job']} | {r['n']} | not available: {r['error'][:80]} | | | | | |")
            continue
        peer = by.get((RATIO_TO.get(r["job"], ""), r["n"]))
        ratio = f"{r['seconds'] / peer['seconds']:.2f}x" if peer and "seconds" in peer and peer["seconds"] else ""
        rate = f"{r['rows'] / r['seconds']:,.0f}" if r["rows"] and r["seconds"] else ""
        lines.append(f"| {r['job']} | {r['n']:,} | {r['seconds']:.2f} | {rate} | {ratio} | "
                     f"{RATIO_TO.get(r['job'], '')} | {r['peak_rss_mb']} | {r['bytes']:,} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--only", nargs="+", choices=sorted(JOBS), default=None)
    parser.add_argument("--out", type=Path, default=None, help="JSON results (default bench/results/<time>.json)")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="hudi-spec-bench-") as tmp:
        for n in args.rows:
            work = Path(tmp) / str(n)
            for name in args.only or list(JOBS):
                r = run_job(name, n, work)
                print(json.dumps(r), flush=True)
                results.append(r)
    md = table(results)
    print(md)
    out = args.out or Path("bench/results") / time.strftime("%Y%m%d-%H%M%S.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                               "results": results, "markdown": md}, indent=2))
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
