"""``hudi-spec``: the command line, in the manner of hudi-cli.

Each subcommand lives in its own module under ``reference/commands/`` and exposes
``register(subparsers)``; the parser below discovers them. A command module imports what its work
needs (pyarrow, the reader, Spark) when it runs, so that ``hudi-spec --help`` stays quick. A bare
``hudi-spec`` lists the commands; ``--version`` says which version this is. Every command takes
``--output text|json``. Every error is one line on standard error, ``hudi-spec COMMAND: what``.
Exit codes (``EXIT_CODES``, the table of the README and the command-line guide): 0 success; 1 the
command ran and found a problem (a corrupt log block); 2 bad input: a typed error from
``spec.errors``, a file that cannot be read, or a command line argparse refuses; 3 an unexpected
failure (``HUDI_SPEC_DEBUG=1`` prints the traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from reference import commands
from reference.commands import _output
from spec.errors import HudiSpecError

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_BAD_INPUT = 2
EXIT_FAILURE = 3
EXIT_INTERRUPTED = 130
DEBUG_ENV = "HUDI_SPEC_DEBUG"
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_PROBLEM: "the command ran and found a problem: `logfile` read a corrupt or damaged block",
    EXIT_BAD_INPUT: "bad input: not a Hudi table, a missing file, an unknown instant, a bad option or argument "
                    "(a typed error from `spec/errors.py`, or a usage error)",
    EXIT_FAILURE: f"an unexpected failure (a bug, or Spark failing); `{DEBUG_ENV}=1` prints the traceback",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
"""Every exit code of ``hudi-spec`` and what it means; the README and the command-line guide show this table."""


class HudiSpecParser(argparse.ArgumentParser):
    """argparse, with its usage errors on one line like every other error (exit 2), its help laid out by
    ``_output.HelpFormatter`` (argparse's layout, without importing shutil)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _output.HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: usage: {message} (see {self.prog} --help)\n")


class HudiSpecVersion(argparse.Action):
    """``--version``: the installed version of hudi-spec and the table versions it reads and writes (the
    package metadata is read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version of hudi-spec and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_line(parser.prog.split()[0]))
        parser.exit(EXIT_OK)


def version_line(program: str) -> str:
    """``PROGRAM VERSION (Apache Hudi table versions 6, 8 and 9; new tables: 9)``."""
    from importlib.metadata import PackageNotFoundError, version

    from spec.config.registry import default

    try:
        installed = version("hudi-spec")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = "(not installed)"
    return f"{program} {installed} (Apache Hudi table versions 6, 8 and 9; new tables: {default('table_version')})"


def command_module(word: str) -> str | None:
    """The module of ``reference.commands`` that registers the command ``word`` (``commit-files``:
    ``commit_files``), or None when no module is named so."""
    name = word.replace("-", "_")
    if name.startswith("_") or not name.isidentifier():
        return None
    return name if importlib.util.find_spec(f"{commands.__name__}.{name}") is not None else None


def _command_modules() -> list[str]:
    """Every module of ``reference.commands`` that registers a command (not the ``_`` helpers), by name."""
    import pkgutil

    return sorted(info.name for info in pkgutil.iter_modules(commands.__path__) if not info.name.startswith("_"))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command, or with ``only`` (a module of ``reference.commands``) that
    command alone, which is all a command line naming it needs (the other commands' modules are not imported)."""
    parser = HudiSpecParser(
        prog="hudi-spec",
        description="Inspect, read and write Apache Hudi tables with the executable specification. "
                    "`hudi-spec COMMAND --help` describes a command.",
    )
    parser.add_argument("--version", action=HudiSpecVersion)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in [only] if only is not None else _command_modules():
        importlib.import_module(f"{commands.__name__}.{name}").register(sub)
    for command_parser in sub.choices.values():  # unknown arguments are reported by the command's parser
        command_parser.set_defaults(command_parser=command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; its exit code (``EXIT_CODES``). Ctrl-C at any moment — while the command is
    chosen, runs or prints — is exit code 130 and one line, never a traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C while saying so
            print(f"hudi-spec {_command(argv)}".rstrip() + ": interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if argv is None:  # the process is this command line's (not a caller's that passed its own argv)
            _quiet_interrupts_from_now_on(_command(argv))


def _quiet_interrupts_from_now_on(command: str) -> None:
    """After the command, in a process of its own: a Ctrl-C while the interpreter shuts down (stopping
    Spark, flushing output) ends the process with 130 and the one line of any interrupt at once, instead
    of a traceback from an exit handler."""
    def exit_interrupted(*_: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            print(f"hudi-spec {command}".rstrip() + ": interrupted", file=sys.stderr, flush=True)
        os._exit(EXIT_INTERRUPTED)

    with contextlib.suppress(ValueError):  # not the main thread (a command run from a worker thread): leave it
        signal.signal(signal.SIGINT, exit_interrupted)


def _main(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_module(words[0]) if words else None)
    if not words:  # a bare `hudi-spec`: the commands
        parser.print_help()
        return EXIT_OK
    try:
        args, unknown = parser.parse_known_args(words)
        if unknown:
            args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except HudiSpecError as err:  # an argument's type refused it (e.g. --limit -1)
        print(f"hudi-spec {_command(argv)}: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning(args.command)
        return _run(args)


def _show_warning(command: str) -> Callable[..., None]:
    """Warnings (an unknown ``hoodie.*`` option, …) as one line in the command's style, without
    Python's source line."""
    def show(message: Warning | str, *_: Any, **__: Any) -> None:
        print(f"hudi-spec {command}: warning: {_one_line(Exception(str(message)))}", file=sys.stderr)
    return show


def _run(args: argparse.Namespace) -> int:
    from reference.instrumentation.progress import command_activity

    try:
        with command_activity(f"hudi-spec {args.command}"):  # a progress line, on a terminal, past a second
            code = args.handler(args)
    except HudiSpecError as err:
        print(f"hudi-spec {args.command}: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"hudi-spec {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as err:
        print(f"hudi-spec {args.command}: {type(err).__name__}: {_one_line(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:  # anything else: one line, the traceback on request
        if os.environ.get(DEBUG_ENV):
            import traceback

            traceback.print_exc()
        print(f"hudi-spec {args.command}: unexpected {type(err).__name__}: {_one_line(err)} "
              f"(set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return EXIT_FAILURE
    return int(code or EXIT_OK)


def _command(argv: Sequence[str] | None) -> str:
    """The subcommand named on the command line (the first word: ``hudi-spec`` itself takes no options but
    ``--help``), for messages written before parsing finished."""
    return next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), "")


def _one_line(err: BaseException, limit: int = 300) -> str:
    """The first line of an error's message, shortened (Spark's errors carry whole JVM stack traces)."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":
    raise SystemExit(main())
