"""``hudi-spec delete TABLE --where CONDITION``: delete the rows a condition matches (Spark SQL's ``DELETE FROM t
WHERE …``).

The snapshot's rows that match ``--where`` (the filter of ``hudi-spec read --where``) are written as a
``delete`` on the table's engine (``--engine local``, the default, or ``spark``); see
``reference.commands._update_delete``. No matching row: nothing is written. Output: the instant and its totals.
"""

from __future__ import annotations

import argparse

from reference.commands import _output


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from reference.commands._update_delete import add_arguments

    p = _output.table_command(sub, "delete", run, help="delete the rows a condition matches (DELETE FROM … WHERE …)")
    add_arguments(p)


def run(args: argparse.Namespace) -> int:
    from reference.commands._update_delete import client_of, delete_where, emit, options_of
    from reference.instrumentation.spark_progress import spark_progress

    with spark_progress():
        result = delete_where(client_of(args), args.where, options_of(args))
    return emit(args, "deleted from", result)
