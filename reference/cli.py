"""``hudi-spec``: the command line, in the manner of hudi-cli.

Each subcommand lives in its own module under ``reference/commands/`` and exposes
``register(subparsers)``; the parser below discovers them. Every command takes
``--output text|json``. Exit codes: 0 success, 1 the command ran and found a problem,
2 bad input (a typed error from ``spec.errors``, printed as one line).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from reference import commands
from spec.errors import HudiSpecError

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hudi-spec",
        description="Inspect, read and write Apache Hudi tables with the executable specification.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.handler(args)
    except HudiSpecError as err:
        print(f"hudi-spec {args.command}: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    return int(code or EXIT_OK)


if __name__ == "__main__":
    raise SystemExit(main())
