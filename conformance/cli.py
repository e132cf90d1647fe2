"""``hudi-conformance``: run the conformance suite, regenerate fixtures, check a table directory."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from spec.errors import HudiSpecError

SUBCOMMANDS = ("run", "generate", "check")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hudi-conformance", description="The Hudi conformance suite.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"conformance.cli_{name}")
        except ModuleNotFoundError as err:
            if err.name != f"conformance.cli_{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except HudiSpecError as err:
        print(f"hudi-conformance {args.command}: {type(err).__name__}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
