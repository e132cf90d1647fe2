"""``hudi-conformance``: run the conformance suite, regenerate fixtures, check a table directory.

    hudi-conformance run --impl spec|reference|hudi_rs|module:Class|exec:CMD [--writer W] [--suite S] [--case ID]
                         [--examples N [--profile ci|long] [--write-regressions]]
                         [--fixtures DIR] [--strict] [--junitxml FILE] [--output text|json]
    hudi-conformance generate [--out fixtures] [--suite S]
    hudi-conformance tables [--fixtures fixtures] [--case ID]
    hudi-conformance check TABLE...

``run`` exits 0 when every executed case passed (or failed as a known failure) and at least one
case executed, 1 otherwise. Every command: 2 on bad input — a usage error, one line on standard error
(``hudi-conformance COMMAND: usage: what (see hudi-conformance COMMAND --help)``), or a typed error
(``hudi-conformance COMMAND: ErrorType: what``); 130 on Ctrl-C, at any moment, without a traceback. A bare
``hudi-conformance`` lists the commands; ``--version`` says which version this is.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from spec.errors import HudiSpecError

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
SUBCOMMANDS = ("run", "generate", "tables", "check", "export", "report")
DEFAULT_FIXTURES = "fixtures"


def register_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run the conformance cases against an implementation")
    p.add_argument("--impl", required=True, help="spec, reference, hudi_rs, module:Class (a TableUnderTest) or "
                   "exec:CMD (a program speaking the process protocol)")
    p.add_argument("--writer", default="reference", help="for a reader under test (hudi_rs's kind, or an exec: "
                   "program with role reader): the adapter that writes its tables (default: reference)")
    p.add_argument("--jars", default=None, help="the hudi-spark bundle jar for --impl hudi_spark (else the "
                   "environment variable HUDI_SPARK_BUNDLE)")
    p.add_argument("--suite", default=None, help="only this suite (a folder under <fixtures>/cases)")
    p.add_argument("--case", action="append", default=[], help="only cases whose id contains this (repeatable)")
    p.add_argument("--fixtures", default=DEFAULT_FIXTURES, help="the corpus folder (default: fixtures)")
    p.add_argument("--strict", action="store_true", help="also compare L3 (file names and log block sequences)")
    p.add_argument("--junitxml", default=None, help="also write a JUnit XML report to this file")
    p.add_argument("--output", choices=("text", "json"), default="text")
    p.add_argument("--verbose", "-v", action="store_true", help="show the diffs of known failures too")
    p.add_argument("--examples", type=int, default=0, help="also run the lockstep state machine for N random "
                   "examples (conformance.machine), reported as the case machine/lockstep")
    p.add_argument("--profile", choices=("ci", "long"), default="ci", help="the state machine's profile (sequence "
                   "length; --examples sets the number of examples)")
    p.add_argument("--derandomize", action="store_true", help="draw the state machine's sequences from a fixed "
                   "seed (the same run every time, as CI does); by default --examples explores at random")
    p.add_argument("--write-regressions", action="store_true", help="write a minimized machine failure as a case "
                   "under <fixtures>/cases/regressions")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from conformance.adapters import resolve_impl
    from conformance.interface.adapter import DEFAULT_LAYERS, LAYERS
    from conformance.runner import RunResult, load_cases, render_json, render_junit, render_text, run_cases

    if args.jars:
        os.environ["HUDI_SPARK_BUNDLE"] = args.jars
    factory = resolve_impl(args.impl, args.writer)
    cases = load_cases(args.fixtures, args.suite)
    if args.case:
        cases = [c for c in cases if any(part in c.case.id for part in args.case)]
    layers = LAYERS if args.strict else DEFAULT_LAYERS
    from conformance.progress import CaseProgress

    shown = CaseProgress(len(cases))
    try:
        result = run_cases(cases, factory, layers, progress=shown)
    finally:
        shown.close()
        if not isinstance(factory, type):  # a factory object (exec:) holds a program to end
            getattr(factory, "close", lambda: None)()
    if args.examples > 0:
        result = RunResult(result.adapter, (*result.cases, explore(factory, args)))
    if args.junitxml:
        Path(args.junitxml).write_text(render_junit(result))
    print(render_json(result) if args.output == "json" else render_text(result, args.verbose))
    return result.exit_code


def explore(factory: Any, args: argparse.Namespace) -> Any:
    """The state machine as one more case: PASS, or FAIL with the minimized sequence's diff."""
    from conformance.machine import run_machine
    from conformance.runner import CaseResult, LayerResult, Verdict

    regressions = args.fixtures if args.write_regressions else None
    try:
        run_machine(factory, args.profile, regressions=regressions, max_examples=args.examples,
                    derandomize=args.derandomize)
    except AssertionError as err:
        return CaseResult("lockstep", "machine", Verdict.FAIL, "", (LayerResult("all", Verdict.FAIL, None, str(err)),),
                          None, str(err))
    return CaseResult("lockstep", "machine", Verdict.PASS, "", (LayerResult("all", Verdict.PASS),))


def register_generate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("generate", help="regenerate the cases and their expected observations from the spec model")
    p.add_argument("--out", default=DEFAULT_FIXTURES, help="the corpus folder (default: fixtures)")
    p.add_argument("--suite", action="append", default=None, help="only this suite (repeatable)")
    p.set_defaults(handler=generate)


def generate(args: argparse.Namespace) -> int:
    from conformance.generate import generate as write_corpus

    counts = write_corpus(args.out, args.suite)
    for suite, n in counts.items():
        print(f"{suite}: {n} cases")
    print(f"{sum(counts.values())} cases written to {args.out}")
    return 0


def register_tables(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tables", help="write the golden tables: replay their cases on the reference (needs Spark)")
    p.add_argument("--fixtures", default=DEFAULT_FIXTURES, help="the corpus folder (default: fixtures)")
    p.add_argument("--case", action="append", default=None, help="only this case (repeatable; default: all "
                   "of conformance.golden.GOLDEN_CASES)")
    p.set_defaults(handler=tables)


def tables(args: argparse.Namespace) -> int:
    from conformance.adapters import resolve_impl
    from conformance.golden import GOLDEN_CASES, write_goldens

    written = write_goldens(args.fixtures, resolve_impl("reference"), args.case or GOLDEN_CASES)
    for folder in written:
        print(f"wrote {folder}")
    return 0


BUILTIN = {"run": register_run, "generate": register_generate, "tables": register_tables}


class ConformanceParser(argparse.ArgumentParser):
    """argparse, with its usage errors on one line, as ``hudi-spec`` writes them (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: usage: {message} (see {self.prog} --help)\n")


class ConformanceVersion(argparse.Action):
    """``--version``: the installed version (the package metadata is read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version of the suite and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("hudi-spec")
        except PackageNotFoundError:
            installed = "(not installed)"
        print(f"hudi-conformance {installed} (Apache Hudi table versions 6, 8 and 9)")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = ConformanceParser(
        prog="hudi-conformance",
        description="The Hudi conformance suite. `hudi-conformance COMMAND --help` describes a command.")
    parser.add_argument("--version", action=ConformanceVersion)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)  # each a ConformanceParser too
    for name in SUBCOMMANDS:
        if name in BUILTIN:
            BUILTIN[name](sub)
            continue
        try:
            module = importlib.import_module(f"conformance.cli_{name}")
        except ModuleNotFoundError as err:
            if err.name != f"conformance.cli_{name}":
                raise
            continue
        module.register(sub)
    for command_parser in sub.choices.values():  # unknown arguments are reported by the command's parser
        command_parser.set_defaults(command_parser=command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; its exit code. Ctrl-C at any moment is 130 and one line, never a traceback."""
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(words)
    except KeyboardInterrupt:
        command = next((w for w in words if not w.startswith("-")), "")
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C while saying so
            print(f"hudi-conformance {command}".rstrip() + ": interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(words: list[str]) -> int:
    parser = build_parser()
    if not words:  # a bare `hudi-conformance`: the commands
        parser.print_help()
        return 0
    args, unknown = parser.parse_known_args(words)
    if unknown:
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(args.handler(args) or 0)
    except HudiSpecError as err:
        print(f"hudi-conformance {args.command}: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
