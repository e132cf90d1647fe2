"""``hudi-conformance export OUT``: the golden tables with every query's expected rows (``conformance.export``)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write the golden tables and every query's expected rows for readers in "
                       "any language (a DAT-style folder)")
    p.add_argument("out", help="a new folder")
    p.add_argument("--fixtures", default="fixtures", help="the corpus folder (default: fixtures)")
    p.add_argument("--real-tables", action="append", default=[], metavar="DIR",
                   help="also export Apache Hudi's tables from DIR (zips + MANIFEST.tsv), with the row counts "
                   "hudi-rs read (repeatable)")
    p.add_argument("--departures", action="store_true", help="also export hudi-rs's known departures as minimal "
                   "tables (replayed with the reference's local engine; needs the hudi package)")
    p.set_defaults(handler=run)


def run(args: Any) -> int:
    from conformance.export import export

    top = export(args.out, args.fixtures, args.real_tables, args.departures)
    queries = sum(t["queries"] for t in top["tables"])
    print(f"exported {len(top['tables'])} tables, {queries} queries (corpus version {top['corpus_version']}) "
          f"to {args.out}")
    return 0
