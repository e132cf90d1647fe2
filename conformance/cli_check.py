"""``hudi-conformance check PATH``: validate a table directory against the specification.

Each table is PASS, FAIL (an error: the table breaks a rule) or UNSUPPORTED (a table version or base
file format the specification does not cover). Exit code: 0 every table passed; 1 a table failed (or,
with ``--strict``, has a warning); 3 no table failed but one is unsupported; 2 bad input: a usage error,
or a path that is not a table at all (no ``.hoodie`` folder), checked before any table is.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="validate a table directory against the spec")
    p.add_argument("table", nargs="+", help="table base path(s)")
    p.add_argument("--output", choices=("text", "json"), default="text")
    p.add_argument("--json", dest="output", action="store_const", const="json")
    p.add_argument("--strict", action="store_true", help="fail on warnings too")
    p.set_defaults(handler=run)


EXIT_UNSUPPORTED = 3


def check_is_table(path: str) -> None:
    """A path with no ``.hoodie`` folder is not a table (InvalidTable, exit 2); one with a ``.hoodie``
    folder is checked, whatever is wrong inside it (a missing ``hoodie.properties`` is a FAIL)."""
    from spec.errors import InvalidTable
    from spec.storage.hoodie_storage import Storage

    if not Storage(path).is_dir(".hoodie"):
        raise InvalidTable(f"{path} is not a Hudi table: it has no .hoodie folder",
                           hint="give the base path of a table, the folder that holds .hoodie")


def run(args: argparse.Namespace) -> int:
    from conformance.checker import check_table

    for table in args.table:
        check_is_table(table)
    reports = [check_table(t) for t in args.table]
    failed = [r for r in reports if r.status == "FAIL" or (args.strict and r.findings and not r.unsupported)]
    if args.output == "json":
        json.dump([{"table": r.base_path, "ok": r.ok, "status": r.status, "findings": [f.to_json() for f in r.findings]}
                   for r in reports], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in reports:
            print(f"{r.status} {r.base_path}")
            for f in r.findings:
                print(f"  {f.level:7} {f.code:24} {f.path}: {f.message}")
    if failed:
        return 1
    return EXIT_UNSUPPORTED if any(r.unsupported for r in reports) else 0
