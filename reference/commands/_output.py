"""Shared output for ``hudi-spec`` commands: a rich table for people, JSON for programs.

Text fits where it goes: on a terminal, the terminal's width (or ``COLUMNS`` when set); piped or
redirected, ``COLUMNS`` when set, else ``PIPED_WIDTH`` characters. A table is drawn when its columns
fit at least as wide as their names; cells too long for their column fold onto more lines, never cut.
A table too wide for that is printed one record per row. ``--output json`` is for programs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spec.errors import InvalidOperation

PIPED_WIDTH = 100
"""Width of text output that does not go to a terminal, when ``COLUMNS`` is not set."""
MIN_WIDTH = 40
"""The narrowest a table is drawn, whatever ``COLUMNS`` says."""


def add_output_option(parser: argparse.ArgumentParser, extra: Sequence[str] = ()) -> None:
    """Every command takes ``--output text|json`` (``--json`` is a shorthand for the latter); ``extra`` adds
    formats of the command's own (``fsview``: ``mermaid``, ``svg``)."""
    parser.add_argument("--output", choices=("text", "json", *extra), default="text", help="output format")
    parser.add_argument("--json", dest="output", action="store_const", const="json", help="same as --output json")


def add_engine_option(parser: argparse.ArgumentParser, engines: Sequence[str] = ("local", "spark"),
                      default: str = "local", what: str = "") -> None:
    """Every command that writes takes ``--engine``. ``local``: pyarrow in this process, no Spark session;
    ``spark``: Spark jobs. A command whose work has no Spark step (clean, rollback, savepoint) takes
    ``local`` alone and says so."""
    helps = {"auto": "auto", "local": "local: in this process, no Spark", "spark": "spark: as Spark jobs"}
    text = what or "; ".join(helps[e] for e in engines)
    parser.add_argument("--engine", choices=engines, default=default, help=f"{text} (default {default})")


def table_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str,
                  handler: Callable[[argparse.Namespace], int], *, output_extra: Sequence[str] = (),
                  **parser_args: Any) -> argparse.ArgumentParser:
    """A command on one table: ``NAME TABLE`` (base path or URI) with ``--output``, run by ``handler``. The
    command adds its own arguments to the parser returned."""
    parser = sub.add_parser(name, **parser_args)
    parser.add_argument("table", help="table base path or URI")
    add_output_option(parser, output_extra)
    parser.set_defaults(handler=handler)
    return parser


def count(text: str) -> int:
    """The ``type`` of ``--limit N`` and ``--records N``: a whole number, 0 or more. Anything else is refused
    with a typed error (exit 2) rather than read as "no rows" or "every row"."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidOperation(f"{text!r} is not a count", hint="give a whole number, 0 or more")
    return value


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def columns_env() -> int | None:
    """``COLUMNS`` as a width, or None when it is unset or not a positive number."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def text_width(is_terminal: bool, terminal_width: int) -> int:
    """The width text output is drawn at: the terminal's (``COLUMNS`` wins when set), or when not a terminal
    ``COLUMNS`` or ``PIPED_WIDTH``; never under ``MIN_WIDTH``."""
    env = columns_env()
    width = env if env is not None else (terminal_width if is_terminal else PIPED_WIDTH)
    return max(width, MIN_WIDTH)


def emit_table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print rows under ``columns`` (named as Hudi's ``CALL show_*`` procedures name them) in ``text_width``
    characters: as a table when every column fits at least as wide as its name, long cells folded onto more
    lines; else one record after another, ``column  value`` per line (as ``psql``'s expanded display). No rows:
    the title, "no rows", and the column names."""
    from rich.console import Console

    probe = Console()
    width = text_width(probe.is_terminal, probe.size.width)
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    if not cells:
        for line in textwrap.wrap(f"{title}: no rows" if title else "no rows", width) + textwrap.wrap(
                "columns: " + " ".join(columns), width, subsequent_indent="  "):
            print(line)
    elif table_width(columns, cells) <= width:
        _print_table(Console(width=width), title, columns, cells)
    else:
        for line in record_lines(title, columns, cells, width):
            print(line)


SEPARATOR = 2
"""Spaces between two columns of a table."""


FOLD_OVER = 20
"""Cells longer than this may fold onto more lines in a table; shorter ones (instant times, numbers) never do."""


def min_widths(columns: Sequence[str], cells: Sequence[Sequence[str]]) -> list[int]:
    """The narrowest each column is drawn: as wide as its name, and as its widest cell line up to
    ``FOLD_OVER`` characters (longer cells fold)."""
    widths = []
    for i, name in enumerate(columns):
        widest = max((len(line) for row in cells for line in row[i].splitlines() or [""]), default=0)
        widths.append(max(len(name), min(widest, FOLD_OVER)))
    return widths


def table_width(columns: Sequence[str], cells: Sequence[Sequence[str]]) -> int:
    """How wide a table of these cells must at least be: its columns' ``min_widths`` and the space between."""
    return sum(min_widths(columns, cells)) + SEPARATOR * (len(columns) - 1)


def record_lines(title: str | None, columns: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> list[str]:
    """Rows as records, for tables too wide for ``width``: a numbered header line per row, then one
    ``column  value`` line per column, values wrapped (long words broken) to fit."""
    key_width = max(len(c) for c in columns)
    stacked = key_width + SEPARATOR + 20 > width  # names too long to share a line with the value: value below
    indent = SEPARATOR if stacked else key_width + SEPARATOR
    out = textwrap.wrap(f"{title}: one record per row (too wide for {width} columns as a table)" if title else
                        f"one record per row (too wide for {width} columns as a table)", width)
    for n, row in enumerate(cells, 1):
        out.append(f"-[ {n} ]" + "-" * max(width - len(f"-[ {n} ]"), 0))
        for name, value in zip(columns, row, strict=True):
            pieces = [p for line in (value.splitlines() or [""])
                      for p in (textwrap.wrap(line, width - indent, break_long_words=True, break_on_hyphens=False)
                                or [""])]
            if stacked:
                out.append(name[:width])
                out.extend(f"{'':<{indent}}{p}".rstrip() for p in pieces if p)
            else:
                out.append(f"{name:<{key_width}}{' ' * SEPARATOR}{pieces[0]}".rstrip())
                out.extend(f"{'':<{indent}}{p}".rstrip() for p in pieces[1:])
    return out


def _print_table(console: Any, title: str | None, columns: Sequence[str], cells: Sequence[Sequence[str]]) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for col, least in zip(columns, min_widths(columns, cells), strict=True):
        table.add_column(col, overflow="fold", min_width=least)
    for row in cells:
        table.add_row(*row)
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


def emit_rows(output: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str], title: str | None = None,
              data: Any = None) -> None:
    """Print ``rows`` (or ``data`` when given) as JSON, or the ``columns`` of ``rows`` as a table."""
    emit(output, rows if data is None else data, columns, [[r[c] for c in columns] for r in rows], title)


def newest(rows: Sequence[Any], limit: int | None) -> list[Any]:
    """``--limit N``: the first N of rows listed newest first (every row without a limit)."""
    return list(rows if limit is None else rows[:limit])
