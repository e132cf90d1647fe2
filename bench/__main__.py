"""``make bench`` / ``python -m bench``: every job side by side in one run.

    python -m bench [--rows 1000000 5000000] [--scale-rows 1000000 5000000 20000000] [--only JOB ...]
                    [--out FILE] [--skip-slow-peers] [--docs FILE | --no-docs] [--work DIR]
                    [--timeout SECONDS] [--list]

With no options it runs the published set: every job at 1M and 5M rows, and the scale jobs (the
Spark engine on a standalone cluster, its driver's memory) at 1M, 5M and 20M. Given ``--rows`` alone,
the scale jobs run at those row counts too.

Prints each job's result as it finishes, then the table; writes the JSON to ``--out`` (default
``bench/results/<UTC time>.json``, git-ignored) and the table between the markers of
``docs/performance.md`` (``--docs``), unless ``--no-docs``.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from pathlib import Path

from bench import report
from bench import requests as object_store_requests
from bench.harness import JobResult, all_jobs, run_all, work_dir
from bench.jobs import OK, ROOT, SLOW_PEER_ROWS

DEFAULT_ROWS = [1_000_000, 5_000_000]
DEFAULT_SCALE_ROWS = [1_000_000, 5_000_000, 20_000_000]
DEFAULT_DOCS = ROOT / "docs" / "performance.md"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    jobs = all_jobs()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=None,
                        help="row counts (default 1000000 5000000)")
    parser.add_argument("--scale-rows", type=int, nargs="+", default=None,
                        help="row counts of the scale jobs (default 1000000 5000000 20000000; with --rows "
                             "alone, those row counts)")
    parser.add_argument("--only", nargs="+", choices=list(jobs), metavar="JOB",
                        help="run only these jobs (see --list)")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON results file (default bench/results/<UTC time>.json)")
    parser.add_argument("--skip-slow-peers", action="store_true",
                        help=f"skip slow peers (pyiceberg upsert) above {SLOW_PEER_ROWS:,} rows")
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument("--docs", type=Path, default=DEFAULT_DOCS,
                      help="page whose results markers receive the table (default docs/performance.md)")
    docs.add_argument("--no-docs", action="store_true", help="do not touch any docs page")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder, kept (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per job step (default 3600)")
    parser.add_argument("--list", action="store_true", help="list the jobs and exit")
    parser.add_argument("--no-requests", action="store_true",
                        help="do not count object-store requests per operation (bench.requests)")
    args = parser.parse_args(argv)
    if args.scale_rows is None:
        args.scale_rows = DEFAULT_SCALE_ROWS if args.rows is None else args.rows
    if args.rows is None:
        args.rows = DEFAULT_ROWS
    if any(n < 10 for n in [*args.rows, *args.scale_rows]):
        parser.error("--rows, --scale-rows: every row count must be at least 10")
    return args


def _progress(r: JobResult) -> None:
    if r.status == OK:
        ratio = f" ({r.ratio:.2f}x {r.vs})" if r.ratio else ""
        print(f"[{r.n:,}] {r.job}: {r.seconds:.2f} s{ratio}, peak {r.peak_rss_mb} MB", flush=True)
    else:
        print(f"[{r.n:,}] {r.job}: {r.status}: {r.reason}", flush=True)


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through the harness, which kills the running step's group


WHERE_OPTIONS = ("--out", "--work", "--docs")
"""Options that say where results go, not what was measured: left out of the recorded command, so a
published table names no folder of the machine that made it."""


def measured_args(argv: list[str]) -> list[str]:
    """``argv`` without the ``WHERE_OPTIONS`` and their values."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in WHERE_OPTIONS:
            skip = True
        elif not arg.startswith(tuple(f"{o}=" for o in WHERE_OPTIONS)):
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    registry = all_jobs()
    if args.list:
        for job in registry.values():
            print(f"{job.name:42} {job.kind:8} {job.engine:34} {job.note}")
        return 0
    jobs = [j for j in registry.values() if args.only is None or j.name in args.only]
    if not args.no_docs:
        report.replace_between_markers(args.docs.read_text(), "")  # fail now, not after the run
    command = "python -m bench " + shlex.join(measured_args(argv if argv is not None else sys.argv[1:]))
    started, load = report.now(), report.load_average()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    try:
        with work_dir(args.work) as work:
            results = run_all(jobs, args.rows, work, args.timeout, args.skip_slow_peers, _progress,
                              keep=args.work is not None, scale_rows=args.scale_rows)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    counted = None if args.no_requests else object_store_requests.run_in_subprocess(args.timeout)
    info = report.RunInfo(command.strip(), started, report.now(), report.machine(load), report.versions())
    md = report.markdown(results, info)
    print()
    print(md)
    out = args.out or ROOT / "bench" / "results" / (started.replace(":", "").replace("-", "") + ".json")
    data = report.results_json(results, info, md)
    if counted is not None:  # object-store requests per operation, beside the fewest (bench.requests)
        data["object_store_requests"] = counted
        print(object_store_requests.markdown(object_store_requests.from_dicts(counted)))
    report.write_json(out, data)
    print(f"results: {out}")
    if not args.no_docs:
        report.update_docs(args.docs, md)
        if counted is not None:
            object_store_requests.record(args.docs, object_store_requests.from_dicts(counted))
        report.write_json(report.page_json_path(args.docs), data)
        print(f"table written to {args.docs}, its JSON (the charts' data) beside it")
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
