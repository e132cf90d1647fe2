"""Shared output for ``hudi-spec`` commands: a rich table for people, JSON for programs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def add_output_option(parser: argparse.ArgumentParser) -> None:
    """Every command takes ``--output text|json`` (``--json`` is a shorthand for the latter)."""
    parser.add_argument("--output", choices=("text", "json"), default="text", help="output format")
    parser.add_argument("--json", dest="output", action="store_const", const="json", help="same as --output json")


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def emit_table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print rows as a table; columns are named as Hudi's ``CALL show_*`` procedures name them."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console = Console()
    if not console.is_terminal:
        console = Console(width=100_000)  # piped: one line per row, nothing folded
    console.print(table)


def emit_mapping(title: str | None, mapping: Mapping[str, Any], key: str = "property", value: str = "value") -> None:
    emit_table(title, [key, value], sorted(mapping.items()))


def emit(
    output: str, data: Any, columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> None:
    """Print ``data`` as JSON, or ``rows`` under ``columns`` as a table."""
    if output == "json":
        emit_json(data)
    else:
        emit_table(title, columns, rows)
