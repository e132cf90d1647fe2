"""``hudi-spec update TABLE --where CONDITION --set ASSIGNMENTS``: change the rows a condition matches (Spark
SQL's ``UPDATE t SET … WHERE …``).

The snapshot's rows that match ``--where`` (the filter of ``hudi-spec read --where``), with each column of
``--set`` (``column = literal``, by commas; ``null`` too) set to its literal, are written as an ``upsert`` on the
table's engine (``--engine local``, the default, or ``spark``); see ``reference.commands._update_delete``. The
record key, partition and ordering fields cannot be set. No matching row: nothing is written. Output: the
instant and its totals.
"""

from __future__ import annotations

import argparse

from reference.commands import _output


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from reference.commands._update_delete import add_arguments

    p = _output.table_command(sub, "update", run, help="set columns of the rows a condition matches (UPDATE … SET … "
                                                         "WHERE …)")
    add_arguments(p)
    p.add_argument("--set", required=True, dest="assignments", metavar="ASSIGNMENTS",
                   help="column = literal, by commas (strings in single quotes, numbers, true, false, null)")


def run(args: argparse.Namespace) -> int:
    from reference.commands._update_delete import client_of, emit, options_of, update_where
    from reference.instrumentation.spark_progress import spark_progress

    with spark_progress():
        result = update_where(client_of(args), args.where, args.assignments, options_of(args))
    return emit(args, "updated", result)
