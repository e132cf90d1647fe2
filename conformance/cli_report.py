"""``hudi-conformance report``: every implementation against the corpus, as a matrix (``conformance.report``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="run every implementation and write the conformance matrix (JSON, Markdown)")
    p.add_argument("--impl", action="append", default=[], help="an implementation (repeatable; default: spec, "
                   "reference, reference_local, hudi_rs, hudi_spark); exec:CMD adds a program; the reader rows: "
                   "hudi_spark_reader (Apache Hudi reading the --writer's tables) and spec_reader (the spec reader; "
                   "with --writer hudi_spark, on Apache Hudi's tables against Hudi's own read)")
    p.add_argument("--writer", default="reference", help="the adapter that writes a reader's tables (each entry "
                   "of the matrix names it, so runs with different writers merge)")
    p.add_argument("--fixtures", default="fixtures", help="the corpus folder (default: fixtures)")
    p.add_argument("--case", action="append", default=[], help="only cases whose id contains this (repeatable)")
    p.add_argument("--departures", action="store_true", help="also export the corpus with hudi-rs's departures and "
                   "list the exported tables and queries hudi-rs reads differently (needs the hudi package)")
    p.add_argument("--merge", action="append", default=[], metavar="RUN.json",
                   help="a run's JSON to merge with this one (repeatable; with no --impl, only merge them)")
    p.add_argument("--rerun", action="append", default=[], metavar="RUN.json",
                   help="a run of some cases again (--case), after their expectations changed: its verdicts replace "
                   "those cases' in the matrix (repeatable)")
    p.add_argument("--json", default=None, help="write the matrix as JSON here")
    p.add_argument("--markdown", default=None, help="write the Markdown page here (default: print it)")
    p.set_defaults(handler=run)


def run(args: Any) -> int:
    from conformance.report import (
        DEFAULT_IMPLS,
        apply_reruns,
        corpus,
        merge_matrices,
        render_matrix,
        run_matrix,
        write_matrix,
    )

    runs = [json.loads(Path(m).read_text()) for m in args.merge]
    if args.impl or not runs:
        cases, version = corpus(args.fixtures)
        if args.case:
            cases = [c for c in cases if any(part in c.case.id for part in args.case)]
        matrix = run_matrix(args.impl or DEFAULT_IMPLS, cases, version, args.writer,
                            progress=lambda line: print(line, file=sys.stderr))
        if args.departures:
            from conformance.departures import hudi_rs_departures

            matrix["departures"] = hudi_rs_departures(args.fixtures)
        runs.append(matrix)
    matrix = merge_matrices(runs)
    if args.rerun:
        matrix = apply_reruns(matrix, [json.loads(Path(r).read_text()) for r in args.rerun])
    write_matrix(matrix, args.json, args.markdown)
    if not args.markdown:
        print(render_matrix(matrix))
    return 0
