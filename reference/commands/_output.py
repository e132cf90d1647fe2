"""Shared output for ``hudi-spec`` commands: a rich table for people, JSON and CSV for programs.

One switch chooses the output: ``--format table|json|csv`` (and a command's own formats: ``read``'s
``parquet``, ``fsview``'s ``mermaid`` and ``svg``). The switches it replaces still work, as deprecated
aliases: ``--output text|json`` and ``--json``. Commands read the choice as ``args.output``: ``text``
(a table), ``json``, ``csv`` or the command's own.

Text fits where it goes: on a terminal, the terminal's width (or ``COLUMNS`` when set); piped or
redirected, ``COLUMNS`` when set, else ``PIPED_WIDTH`` characters. A table is drawn when its columns
fit at least as wide as their names; cells too long for their column fold onto more lines, never cut.
A table too wide for that is printed one record per row. ``--output json`` is for programs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spec.errors import InvalidOperation

PIPED_WIDTH = 100
"""Width of text output that does not go to a terminal, when ``COLUMNS`` is not set."""
MIN_WIDTH = 40
"""The narrowest a table is drawn, whatever ``COLUMNS`` says."""


def help_columns() -> int:
    """The columns argparse lays help out in, as ``shutil.get_terminal_size`` gives them: ``COLUMNS`` when a
    positive number, else the width of the terminal of ``sys.__stdout__`` (80 when it has none, or says 0)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):  # no standard output (None), or not a terminal
            columns = 80
    return columns


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout at argparse's width (``help_columns`` less 2), found without importing shutil (and
    with it bz2 and lzma): argparse makes a formatter for every option it adds, so each command line would."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, help_columns() - 2 if width is None else width)


class RawDescriptionHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """``argparse.RawDescriptionHelpFormatter`` (the description as written) at ``HelpFormatter``'s width."""


FORMATS = ("table", "json", "csv")
"""Every command's output formats: a table for people (drawn to fit the width), JSON and CSV for programs."""


class _Format(argparse.Action):
    """``--format table`` is the ``text`` output; any other format is itself."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, "text" if values == "table" else values)


def add_output_option(parser: argparse.ArgumentParser, extra: Sequence[str] = ()) -> None:
    """Every command takes ``--format table|json|csv``; ``extra`` adds formats of the command's own
    (``fsview``: ``mermaid``, ``svg``; ``read``: ``parquet``). ``--output`` and ``--json``, the switches it
    replaces, stay as deprecated aliases."""
    parser.add_argument("--format", dest="output", choices=(*FORMATS, *extra), action=_Format, default="text",
                        help="output: table (default), json or csv" + "".join(f", {e}" for e in extra))
    parser.add_argument("--output", choices=("text", "json", "csv", *extra), dest="output",
                        help="deprecated: use --format (--output text is --format table)")
    parser.add_argument("--json", dest="output", action="store_const", const="json",
                        help="deprecated: use --format json")


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


def start_output() -> None:
    """Blank any progress line before the command prints its output."""
    from reference.instrumentation import progress

    progress.finish()


def emit_json(data: Any) -> None:
    start_output()
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


def terminal() -> tuple[bool, int]:
    """Whether standard output is a terminal, and the terminal's width (80 when it has none)."""
    try:
        return os.isatty(sys.stdout.fileno()), os.get_terminal_size(sys.stdout.fileno()).columns
    except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor, or not a terminal
        return False, 80


def emit_table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print rows under ``columns`` (named as Hudi's ``CALL show_*`` procedures name them) in ``text_width``
    characters: as a table when every column fits at least as wide as its name and its longest word, long
    cells wrapped onto more lines between words (``wrap_cell``: a path or file name only after ``/``, ``_``
    or ``-``, never inside a word); else one record after another, ``column  value`` per line (as ``psql``'s
    expanded display). No rows: the title, "no rows", and the column names. A title is wrapped between
    words too, above the table."""
    start_output()
    width = text_width(*terminal())
    cells = [[text_cell(v) for v in row] for row in rows]
    if not cells:
        for line in textwrap.wrap(f"{title}: no rows" if title else "no rows", width) + textwrap.wrap(
                "columns: " + " ".join(columns), width, subsequent_indent="  "):
            print(line)
    elif table_width(columns, cells) <= width:
        for line in textwrap.wrap(title or "", width, break_long_words=False, break_on_hyphens=False):
            print(line)
        from rich.console import Console  # loaded only to draw a table (a record list needs none of it)

        _print_table(Console(width=width), columns, cells, column_widths(columns, cells, width))
    else:
        for line in record_lines(title, columns, cells, width):
            print(line)


def text_cell(value: Any) -> str:
    """A value as a table shows it: None empty, a list or a mapping as JSON (never Python's repr), bytes in hex."""
    if value is None:
        return ""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


SEPARATOR = 2
"""Spaces between two columns of a table."""


FOLD_OVER = 20
"""Cells longer than this may wrap inside a path or a name (``_BREAK``); shorter ones only at their spaces,
so an instant time, a number or a short name is never cut."""

_BREAK = re.compile(r"(?<=[/_\-,=])|(?<=\s)|(?<=\.)(?=[A-Za-z])")
"""Where a cell may wrap: after a space, and in a path, a file name or a dotted name after ``/``, ``_``,
``-``, ``,``, ``=`` or a ``.`` before a letter (``hoodie.`` ``table``, ``…283.`` ``parquet``; never ``21.`` ``0``)."""


_SPACE = re.compile(r"(?<=\s)")


def words(line: str, fine: bool = True) -> list[str]:
    """The pieces of a line a wrap keeps whole (each with the separator it ends with): split at ``_BREAK``,
    or with ``fine`` False at spaces only."""
    return [w for w in (_BREAK if fine else _SPACE).split(line) if w]


def wrap_cell(text: str, width: int) -> list[str]:
    """A cell's lines at most ``width`` wide, wrapped between ``words`` (a cell of at most ``FOLD_OVER``
    characters only at its spaces); a word wider than ``width`` alone (only at widths narrower than any table
    is drawn) is cut."""
    out: list[str] = []
    fine = len(text) > FOLD_OVER
    for line in text.splitlines() or [""]:
        current = ""
        for word in words(line, fine):
            if current and len(current) + len(word.rstrip()) > width:
                out.append(current.rstrip())
                current = ""
            while len(word.rstrip()) > width:
                out.append(word[:width])
                word = word[width:]
            current += word
        out.append(current.rstrip())
    return out


def longest_word(text: str) -> int:
    """The longest piece of a cell ``wrap_cell`` keeps whole."""
    fine = len(text) > FOLD_OVER
    return max((len(w.rstrip()) for line in text.splitlines() for w in words(line, fine)), default=0)


def min_widths(columns: Sequence[str], cells: Sequence[Sequence[str]]) -> list[int]:
    """The narrowest each column is drawn: as wide as its name and as the longest word of its cells."""
    return [max(len(name), *(longest_word(row[i]) for row in cells)) for i, name in enumerate(columns)]


def column_widths(columns: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> list[int]:
    """Each column's width in a table ``width`` wide: its widest line when all fit, else its ``min_widths``
    and the room left shared in proportion to what each column would take more."""
    least = min_widths(columns, cells)
    natural = [max(least[i], *(len(line) for row in cells for line in row[i].splitlines() or [""]))
               for i in range(len(columns))]
    room = width - SEPARATOR * (len(columns) - 1)
    if sum(natural) <= room:
        return natural
    extra = room - sum(least)
    wants = [n - m for n, m in zip(natural, least, strict=True)]
    total = sum(wants) or 1
    widths = [m + extra * w // total for m, w in zip(least, wants, strict=True)]
    return widths


def table_width(columns: Sequence[str], cells: Sequence[Sequence[str]]) -> int:
    """How wide a table of these cells must at least be: its columns' ``min_widths`` and the space between."""
    return sum(min_widths(columns, cells)) + SEPARATOR * (len(columns) - 1)


def record_lines(title: str | None, columns: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> list[str]:
    """Rows as records, for tables too wide for ``width``: a numbered header line per row, then one
    ``column  value`` line per column, values wrapped between words (``wrap_cell``) to fit; a value with a
    word too long to share the line with its column's name goes below it."""
    key_width = max(len(c) for c in columns)
    indent = key_width + SEPARATOR
    out = textwrap.wrap(f"{title}: one record per row (too wide for {width} columns as a table)" if title else
                        f"one record per row (too wide for {width} columns as a table)", width,
                        break_long_words=False, break_on_hyphens=False)
    for n, row in enumerate(cells, 1):
        out.append(f"-[ {n} ]" + "-" * max(width - len(f"-[ {n} ]"), 0))
        for name, value in zip(columns, row, strict=True):
            if indent + 20 <= width and longest_word(value) <= width - indent:
                pieces = wrap_cell(value, width - indent)
                out.append(f"{name:<{key_width}}{' ' * SEPARATOR}{pieces[0]}".rstrip())
                out.extend(f"{'':<{indent}}{p}".rstrip() for p in pieces[1:])
            else:  # the value below its name
                out.append(name[:width])
                out.extend(f"{'':<{SEPARATOR}}{p}".rstrip() for p in wrap_cell(value, width - SEPARATOR) if p)
    return out


def _print_table(console: Any, columns: Sequence[str], cells: Sequence[Sequence[str]], widths: Sequence[int]) -> None:
    """The table, its cells wrapped to ``widths`` beforehand (rich then draws them as they are)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for col, w in zip(columns, widths, strict=True):
        table.add_column(col, no_wrap=True, overflow="ignore", min_width=w, max_width=w)
    for row in cells:
        table.add_row(*(Text("\n".join(wrap_cell(c, w))) for c, w in zip(row, widths, strict=True)))
    console.print(table)


def emit_mapping(title: str | None, mapping: Mapping[str, Any], key: str = "property", value: str = "value") -> None:
    emit_table(title, [key, value], sorted(mapping.items()))


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: None empty, a list its items joined by ``;``, a mapping as JSON."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ";".join("" if v is None else str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    if isinstance(value, bytes):
        return value.hex()
    return value


def emit_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Rows under a header line, as RFC 4180 CSV (cells with commas, quotes or line breaks are quoted)."""
    import csv

    start_output()
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(v) for v in row])


def emit(
    output: str, data: Any, columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> None:
    """Print ``data`` as JSON, or ``rows`` under ``columns`` as CSV or a table."""
    if output == "json":
        emit_json(data)
    elif output == "csv":
        emit_csv(columns, rows)
    else:
        emit_table(title, columns, rows)


def emit_rows(output: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str], title: str | None = None,
              data: Any = None) -> None:
    """Print ``rows`` (or ``data`` when given) as JSON, or the ``columns`` of ``rows`` as CSV or a table."""
    emit(output, rows if data is None else data, columns, [[r[c] for c in columns] for r in rows], title)


def newest(rows: Sequence[Any], limit: int | None) -> list[Any]:
    """``--limit N``: the first N of rows listed newest first (every row without a limit)."""
    return list(rows if limit is None else rows[:limit])
