"""``hudi-conformance check PATH``: validate a table directory against the specification."""

from __future__ import annotations

import argparse
import json
import sys

from conformance.checker import check_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="validate a table directory against the spec")
    p.add_argument("table", nargs="+", help="table base path(s)")
    p.add_argument("--output", choices=("text", "json"), default="text")
    p.add_argument("--json", dest="output", action="store_const", const="json")
    p.add_argument("--strict", action="store_true", help="fail on warnings too")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    reports = [check_table(t) for t in args.table]
    failed = [r for r in reports if not r.ok or (args.strict and r.findings)]
    if args.output == "json":
        json.dump([{"table": r.base_path, "ok": r.ok, "findings": [f.to_json() for f in r.findings]}
                   for r in reports], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in reports:
            print(f"{'PASS' if r.ok else 'FAIL'} {r.base_path}")
            for f in r.findings:
                print(f"  {f.level:7} {f.code:24} {f.path}: {f.message}")
    return 1 if failed else 0
