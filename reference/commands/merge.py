"""``hudi-spec merge TABLE --source FILE [--on COND] --when-matched CLAUSE … --when-not-matched CLAUSE …``: Spark SQL's
``MERGE INTO t USING s ON … WHEN MATCHED … WHEN NOT MATCHED …``, as Apache Hudi 1.2.0 runs it.

The source is a ``.parquet``, ``.json`` (lines) or ``.csv`` file (as ``hudi-spec write --input``). Each clause is
the SQL after ``WHEN MATCHED`` or ``WHEN NOT MATCHED``, in order: ``--when-matched "UPDATE SET *"``,
``--when-matched "AND s.op = 'd' THEN DELETE"``, ``--when-matched "UPDATE SET v = s.v, ts = s.ts"``,
``--when-not-matched "INSERT *"``, ``--when-not-matched "AND s.ts > 0 THEN INSERT (id, ts) VALUES (s.id, s.ts)"``;
``s.col`` is the source's column, ``t.col`` the table's. ``--on`` equates the record key fields (default
``t.<key> = s.<key>``). Without clauses: ``UPDATE SET *`` and ``INSERT *``. One ``upsert`` on the table's engine
(``--engine local``, the default, or ``spark``); see ``reference.commands._merge``. Output: the instant and its
totals.
"""

from __future__ import annotations

import argparse

from reference.commands import _output


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "merge", run, help="merge a source into the table by key (MERGE INTO … WHEN "
                                                        "MATCHED … WHEN NOT MATCHED …)")
    p.add_argument("--source", required=True, metavar="FILE", help="the source rows: a .parquet, .json (lines) or "
                                                                   ".csv file")
    p.add_argument("--on", metavar="CONDITION", help="t.<record key> = s.<column>, by AND (default: the record key "
                                                     "fields by name)")
    p.add_argument("--when-matched", action="append", default=[], metavar="CLAUSE",
                   help="[AND condition THEN] UPDATE SET * | UPDATE SET col = expr, ... | DELETE (repeatable, in "
                        "order); expr: a literal, null, s.col or t.col")
    p.add_argument("--when-not-matched", action="append", default=[], metavar="CLAUSE",
                   help="[AND condition THEN] INSERT * | INSERT (cols) VALUES (exprs) (repeatable, in order)")
    _output.add_engine_option(p)
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="any hoodie.* write option")


def run(args: argparse.Namespace) -> int:
    from reference.commands._merge import merge_into
    from reference.commands._update_delete import client_of, emit, options_of
    from reference.commands.write import _load
    from reference.instrumentation.spark_progress import spark_progress

    matched, not_matched = args.when_matched, args.when_not_matched
    if not matched and not not_matched:
        matched, not_matched = ["UPDATE SET *"], ["INSERT *"]
    client = client_of(args)
    source = _load(args.source)
    with spark_progress():
        result = merge_into(client, source, args.on, matched, not_matched, options_of(args))
    return emit(args, "merged into", result, inserts=True)
