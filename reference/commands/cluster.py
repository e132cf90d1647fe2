"""``hudi-spec cluster TABLE``: cluster a table's small files (like ``CALL run_clustering``).

Without options: schedule a clustering with Hudi's size-based plan strategy and execute it (sort-and-size:
rows sorted by ``hoodie.clustering.plan.strategy.sort.columns``, or kept in input order, written to new file groups
of at most ``hoodie.clustering.plan.strategy.target.file.max.bytes``). ``--schedule`` only writes the plan (v6
``<t>.replacecommit.requested``, v8/v9 ``<t>.clustering.requested``); ``--run [INSTANT]`` executes a pending plan
(the oldest when no instant is given). ``--engine local`` (the default) rewrites the groups on threads of this
process; ``--engine spark`` runs one Spark task per input group. ``--option`` gives the
``hoodie.clustering.plan.strategy.*`` options, the table lock, the codec. Output: one row per new file group.
"""

from __future__ import annotations

import argparse
from typing import Any

from reference.commands import _output
from reference.commands._service_options import add_plan_modes, options_of

COLUMNS = ["clustering_time", "partition_path", "file_id", "num_writes", "file_size", "replaced_file_ids"]
NOTHING = ("Nothing to cluster: no file group is under the small file limit in a partition written since the last "
           "clustering, and no clustering is pending")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "cluster", run, help="rewrite small file groups into larger, sorted ones")
    add_plan_modes(p, "clustering", "local: input groups rewritten on threads of this process, no Spark; "
                                    "spark: one Spark task per input group")


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import commit_metadata
    from reference.executors.clustering import cluster, run_clustering, schedule_clustering
    from reference.instrumentation.spark_progress import spark_progress
    from reference.write.client import WriteClient
    from spec.timeline.active_timeline import Timeline

    options = options_of(args)
    client = WriteClient(args.table, engine=args.engine)
    if args.schedule:
        t = schedule_clustering(client, options=options)
        if t is None and args.output not in ("json", "csv"):
            return _nothing()
        data: dict[str, Any] = {"clustering_time": t, "state": "REQUESTED" if t else None, "file_groups": []}
        _output.emit(args.output, data, COLUMNS, [], title=f"Clustering {t} scheduled")
        return 0
    with spark_progress():
        t = (run_clustering(client, args.run or None, options=options) if args.run is not None
             else cluster(client, options=options))
    rows: list[dict[str, Any]] = []
    if t is not None:
        timeline = Timeline.load(client.storage)
        inst = timeline.get(t)
        assert inst is not None
        md = commit_metadata(client.storage, timeline, inst)
        replaced = md.partition_to_replace_file_ids or {}
        rows = [{"clustering_time": t, "partition_path": s.partition_path, "file_id": s.file_id,
                 "num_writes": s.num_writes, "file_size": s.file_size,
                 "replaced_file_ids": len(replaced.get(s.partition_path or "", ()))} for s in md.all_write_stats()]
    if t is None and args.output not in ("json", "csv"):
        return _nothing()
    data = {"clustering_time": t, "state": "COMPLETED" if t else None, "engine": args.engine, "file_groups": rows}
    _output.emit_rows(args.output, rows, COLUMNS, data=data, title=f"Clustering {t} ({args.engine} engine)")
    return 0


def _nothing() -> int:
    _output.start_output()
    print(NOTHING)
    return 0
