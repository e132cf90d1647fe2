"""``--option KEY=VALUE`` on the commands that change a table outside a write (clean, compact, rollback,
savepoint create / restore / delete, archived --run): the ``hoodie.*`` options that decide which table lock
the command takes (``hoodie.write.lock.provider`` and its settings), as Hudi's CLI and ``CALL`` procedures
take the writer's options. A service run with no option takes the default provider's lock; beside a
pipeline that names another provider, name the same one here (``WriteConfig.lock``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reference.config.options import WriteConfig


def add_option_argument(parser: argparse.ArgumentParser) -> None:
    """``--option KEY=VALUE``, repeatable."""
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a hoodie.* option, e.g. hoodie.write.lock.provider (the table lock this command takes)")


def add_plan_modes(parser: argparse.ArgumentParser, service: str, engines: str) -> None:
    """The arguments of a table service that plans, then runs (``compact``, ``cluster``): ``--schedule`` (only the
    plan) or ``--run [INSTANT]`` (only a pending plan), ``--engine`` (``engines`` says what each does) and
    ``--option``."""
    from reference.commands import _output

    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--schedule", action="store_true", help=f"only write the {service} plan")
    mode.add_argument("--run", nargs="?", const="", metavar="INSTANT",
                      help=f"only run a pending {service} (the oldest, or INSTANT)")
    _output.add_engine_option(parser, what=engines)
    add_option_argument(parser)


def options_of(args: argparse.Namespace) -> dict[str, str]:
    """The ``--option`` pairs; InvalidConfig for one that is not KEY=VALUE."""
    from spec.errors import InvalidConfig

    options: dict[str, str] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidConfig(f"--option {item!r} is not KEY=VALUE", hint="write --option hoodie.KEY=VALUE")
        options[key.strip()] = value
    return options


def service_config(args: argparse.Namespace) -> WriteConfig:
    """The options validated (``parse_options``): its ``lock`` is the lock the command takes."""
    from reference.config.options import parse_options

    return parse_options(options_of(args))


__all__ = ["add_option_argument", "options_of", "service_config"]
