"""Clustering: schedule a plan with Hudi's size-based strategy, execute it as Hudi's sort-and-size strategy does.

- **schedule**: ``spec.actions.clustering_plan.plan_clustering`` over the latest file slices of every partition
  (groups under a pending compaction or clustering excluded) → the requested clustering instant holding a
  ``HoodieRequestedReplaceMetadata`` with operation type ``CLUSTER`` and the ``HoodieClusteringPlan``: table
  version 6 ``<t>.replacecommit.requested``, 8 and 9 ``<t>.clustering.requested``
  (``ClusteringPlanActionExecutor``). Nothing to cluster → no instant.
- **execute** (``SparkSortAndSizeExecutionStrategy``): the instant goes inflight; one task per input group reads its
  slices (base file and logs merged by the spec reader's rules), in plan order, sorts the rows by the plan's sort
  columns (ascending, nulls first, a linear sort; no sort columns: the input order kept) and writes them, in that order,
  to the group's ``numOutputFileGroups`` new file groups (new file ids; the plan sized them by
  ``hoodie.clustering.plan.strategy.target.file.max.bytes``: ``spec.actions.clustering_plan.output_chunks``). Rows keep
  their commit time and sequence number (``preserveHoodieMetadata``); only ``_hoodie_file_name`` changes. The completed
  instant is a ``replacecommit`` (operation ``CLUSTER``) whose ``partitionToReplaceFileIds`` names every input file
  group; the metadata table records it as any commit.
- **a clustering that died half way** (inflight) is rolled back to its plan first — its new files deleted, the
  instant back to requested — then run again, as Hudi's ``BaseHoodieTableServiceClient.cluster`` does
  (``rollbackInflightClustering``).

While a clustering is pending, writers refuse to update its file groups (``SparkRejectUpdateStrategy``:
``reference.transaction.transaction.reject_updates_to_clustering``), and compaction leaves them alone.

Runs under the table lock of the provider the options name, for the whole schedule and execution.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from reference.executors.common import pending_compaction_groups
from reference.executors.compaction import Compactor, service_table
from reference.executors.rollback import rollback_instant
from reference.io.buckets import stats_by_partition
from reference.io.handles import HandleContext, _write, marker_path
from reference.transaction.lock import maybe_locked
from reference.transaction.transaction import complete, mark_inflight, request
from spec.actions.clustering import clustering_plan, pending_clustering_groups, pending_clusterings
from spec.actions.clustering_plan import (
    SORT_COLUMNS_KEY,
    ClusteringConfig,
    CommitPartitions,
    EligibleSlice,
    clustering_plan_record,
    incremental_partitions,
    output_chunks,
    plan_clustering,
)
from spec.actions.file_refs import SliceRef
from spec.config.registry import canonical_key
from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.errors import HudiSpecError, InstantNotFound, UnsupportedOption
from spec.file_group.file_naming import BaseFileName, make_file_id, parse_base_file_name, parse_log_file_name
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView
from spec.read.merge import MergeRule
from spec.read.reader import TableReader
from spec.schema.table_schema import (
    FILE_NAME,
    META_FIELDS,
    avro_schema_from_arrow,
    record_name_for_table,
    with_meta_fields,
)
from spec.timeline.active_timeline import Timeline, instant_times
from spec.timeline.avro_model import HoodieRequestedReplaceMetadata, format_avro_metadata
from spec.timeline.commit_metadata import CommitMetadata, parse_commit_metadata
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import format_instant_file_name, read_instant_content, timeline_dir


class Clusterer(Compactor, Protocol):
    """What clustering needs of the process that runs it: a compactor's needs, and new file ids
    (``reference.write.client.WriteClient`` is one)."""

    def new_file_id(self) -> str: ...


def clustering_action(table: TableConfig) -> Action:
    """The action of a requested clustering: ``clustering`` on timeline layout 2 (versions 8, 9), ``replacecommit``
    before."""
    return Action.CLUSTERING if table.timeline_layout == 2 else Action.REPLACE_COMMIT


_TRIGGERS = frozenset({"hoodie.clustering.inline", "hoodie.clustering.inline.max.commits",
                       "hoodie.clustering.schedule.inline", "hoodie.clustering.async.max.commits"})
"""The writer's inline clustering switches (``spec.config.registry``): not the plan's, the same options serve both."""


def _split(options: Mapping[str, Any] | None) -> tuple[ClusteringConfig, dict[str, Any]]:
    """The clustering config, and the remaining write options (codec, lock provider)."""
    opts = dict(options or {})
    config = ClusteringConfig.from_options({k: v for k, v in opts.items() if canonical_key(k) not in _TRIGGERS})
    rest = {k: v for k, v in opts.items() if not k.startswith(("hoodie.clustering.", "hoodie.layout."))
            and k not in ("hoodie.parquet.max.file.size", "hoodie.table.services.incremental.enabled")}
    if str(rest.get("hoodie.index.type", "")).upper() == "BUCKET":
        raise UnsupportedOption("clustering a table with hoodie.index.type=BUCKET is not supported: the size-based "
                                "strategy writes new file ids, and a bucket's file group is its file id",
                                hint="Hudi's bucket index tables are clustered by its bucket strategies (as Hudi's "
                                     "Flink writer, this one refuses the SIMPLE engine's)")
    return config, rest


def _base_uri(client: Clusterer, table: TableConfig) -> str:
    """The table's location as the plan's file paths start: as given where the metadata table lists the files;
    a local table listed from the file system (no metadata table) with Hadoop's ``file:`` scheme, as Hudi 1.2.0
    writes it (measured: ``tests/test_clustering_hudi.py``)."""
    full = client.storage.full("")
    return full if "://" in full or table.metadata_partitions else "file:" + full


def schedule_clustering(client: Clusterer, *, locked: bool = False,
                        options: Mapping[str, Any] | None = None) -> str | None:
    """Write a clustering plan (the module's rule); its instant, or None when nothing qualifies."""
    from reference.config.options import parse_options

    table = service_table(client, "cluster")
    config, rest = _split(options)
    with maybe_locked(client.storage, locked, "schedule clustering", parse_options(rest).lock):
        return _schedule(client, table, config)


def _schedule(client: Clusterer, table: TableConfig, config: ClusteringConfig) -> str | None:
    timeline = Timeline.load(client.storage, table.timeline_layout)
    client.rollback_failed_writes(table, timeline)
    timeline = Timeline.load(client.storage, table.timeline_layout)
    busy = {**pending_compaction_groups(client.storage, timeline),
            **pending_clustering_groups(client.storage, timeline)}
    view = FileSystemView.load(client.storage, table, timeline)
    latest = {p: [EligibleSlice(SliceRef.of(sl), sl.base_file.size if sl.base_file else None,
                                tuple(f.size for f in sl.log_files))
                  for sl in view.latest_file_slices(p)] for p in view.partitions()}
    t = instant_times(timeline, client.clock).next()
    window = _incremental_window(client, table, timeline, t)
    plan = plan_clustering(latest, config, set(busy), window)
    if not plan.groups:
        return None
    record = clustering_plan_record(plan, config, _base_uri(client, table), table.table_version)
    content = format_avro_metadata(HoodieRequestedReplaceMetadata(
        operation_type="CLUSTER", clustering_plan=record, extra_metadata={}, version=1), table.table_version)
    request(client.storage, table, t, clustering_action(table), content)
    return t


def _incremental_window(client: Clusterer, table: TableConfig, timeline: Timeline, t: str) -> set[str] | None:
    """``spec.actions.clustering_plan.incremental_partitions`` over the table's completed writes (a completion
    time of table version 6, which its file names do not hold, read as the requested time)."""
    completed = timeline.commits_timeline().completed().instants
    last = next((i for i in reversed(completed) if i.action == Action.REPLACE_COMMIT
                 and _completed_clustering_plan(client, i, table) is not None), None)
    if last is None:
        return None
    plan = _completed_clustering_plan(client, last, table) or {}
    commits = [CommitPartitions(i.action, i.requested, i.completed or i.requested, frozenset(
        parse_commit_metadata(read_instant_content(client.storage, i, timeline.layout)).partition_to_write_stats))
        for i in completed if (i.completed or i.requested) >= last.requested]  # only these can be in the window
    return incremental_partitions(t, last.requested, plan.get("missingSchedulePartitions") or (), commits,
                                  table.table_type == MERGE_ON_READ)


def _completed_clustering_plan(client: Clusterer, inst: Instant, table: TableConfig) -> Mapping[str, Any] | None:
    """The plan of a completed replacecommit that was a clustering (None for an insert overwrite's)."""
    layout = table.timeline_layout
    requested = Instant(inst.requested, clustering_action(table), State.REQUESTED)
    if not client.storage.exists(posixpath.join(timeline_dir(layout), format_instant_file_name(requested, layout))):
        return None  # layout 2: a replacecommit requested as such (an insert overwrite)
    return clustering_plan(client.storage, requested, layout)


def run_clustering(client: Clusterer, instant: str | None = None, *, locked: bool = False,
                   options: Mapping[str, Any] | None = None) -> str:
    """Execute a pending clustering (the oldest when ``instant`` is None); its instant."""
    from reference.config.options import parse_options

    table = service_table(client, "cluster")
    config, rest = _split(options)
    cfg = parse_options(rest)
    with maybe_locked(client.storage, locked, "clustering", cfg.lock):
        return _run(client, table, instant, cfg.compression, config)


def cluster(client: Clusterer, *, locked: bool = False, options: Mapping[str, Any] | None = None) -> str | None:
    """Run the pending clusterings (an inflight one rolled back to its plan first), then schedule a clustering and
    execute it (``run_clustering(op => 'scheduleAndExecute')``); the last instant clustered, or None when there
    was nothing to cluster."""
    from reference.config.options import parse_options

    table = service_table(client, "cluster")
    config, rest = _split(options)
    cfg = parse_options(rest)
    with maybe_locked(client.storage, locked, "clustering", cfg.lock):
        pending = pending_clusterings(client.storage, Timeline.load(client.storage, table.timeline_layout))
        done = [_run(client, table, p.requested, cfg.compression, config) for p in pending]
        t = _schedule(client, table, config)
        return _run(client, table, t, cfg.compression, config) if t is not None else (done[-1] if done else None)


def _pending(client: Clusterer, table: TableConfig, instant: str | None) -> Instant:
    pending = pending_clusterings(client.storage, Timeline.load(client.storage, table.timeline_layout))
    found = [i for i in pending if instant is None or i.requested == instant]
    if not found:
        raise InstantNotFound("there is no pending clustering to run" if instant is None
                              else f"no pending clustering at {instant}",
                              hint="schedule one with `hudi-spec cluster --schedule`")
    return found[0]


def _run(client: Clusterer, table: TableConfig, instant: str | None, codec: str, config: ClusteringConfig) -> str:
    layout = table.timeline_layout
    inst = _pending(client, table, instant)
    t = inst.requested
    plan = clustering_plan(client.storage, inst, layout)
    assert plan is not None
    if inst.state == State.INFLIGHT:  # a run that died half way: back to its plan, then run again
        _remove_partial_output(client, plan, t)
        rollback_instant(client.storage, table, inst, clock=client.clock,
                         timeline=Timeline.load(client.storage, layout))
        inst = _pending(client, table, t)
    inflight = mark_inflight(client.storage, table, Instant(t, inst.action, State.REQUESTED))
    timeline = Timeline.load(client.storage, layout)
    stats = _run_groups(client, plan, t, codec)
    replaced: dict[str, list[str]] = {}
    for group in plan.get("inputGroups") or ():
        for s in group.get("slices") or ():
            replaced.setdefault(str(s["partitionPath"] or ""), []).append(str(s["fileId"]))
    schema = _latest_schema(client, timeline) or table.create_schema or ""
    md = CommitMetadata(stats_by_partition(stats), False, {"schema": schema}, "CLUSTER",
                        {p: tuple(ids) for p, ids in sorted(replaced.items())})
    complete(client.storage, table, inflight, md,
             instant_times(Timeline.load(client.storage, layout), client.clock), client.metadata_table_services)
    return t


def _remove_partial_output(client: Clusterer, plan: Mapping[str, Any], t: str) -> None:
    """Delete the base files a killed run of clustering ``t`` left half written (``.inprogress``, which no marker
    and no rollback plan names)."""
    partitions = {str(s["partitionPath"] or "") for g in plan.get("inputGroups") or () for s in g.get("slices") or ()}
    for partition in partitions:
        for f in client.storage.list(partition):
            if f.is_dir or not f.name.endswith(".inprogress"):
                continue
            try:
                if parse_base_file_name(f.name.removesuffix(".inprogress")).instant == t:
                    client.storage.delete(f.path)
            except HudiSpecError:
                continue


def _latest_schema(client: Clusterer, timeline: Timeline) -> str | None:
    for inst in reversed(timeline.commits_timeline().completed().instants):
        md = parse_commit_metadata(read_instant_content(client.storage, inst, timeline.layout))
        if md.schema:
            return md.schema
    return None


def _run_groups(client: Clusterer, plan: Mapping[str, Any], t: str, codec: str) -> list[dict[str, Any]]:
    """Every input group of the plan, one task each on the client's engine; the write stats of every new file."""
    params = (plan.get("strategy") or {}).get("strategyParams") or {}
    sort_columns = [c.strip() for c in str(params.get(SORT_COLUMNS_KEY, "")).split(",") if c.strip()]
    payloads = []
    for group in plan.get("inputGroups") or ():
        prefix = client.new_file_id().rsplit("-", 1)[0]
        slices = [{"partition": str(s["partitionPath"] or ""), "file_id": str(s["fileId"]),
                   "base_file": posixpath.basename(s["dataFilePath"]) if s.get("dataFilePath") else None,
                   "logs": [posixpath.basename(n) for n in s.get("deltaFilePaths") or ()]}
                  for s in group.get("slices") or ()]
        payloads.append(json.dumps({"slices": slices, "prefix": prefix, "sort": sort_columns,
                                    "outputs": int(group.get("numOutputFileGroups") or 1)}))
    if not payloads:
        return []
    base_path = client.path

    def task(payload: str, token: str) -> dict[str, Any]:
        return {"stats": cluster_group(base_path, json.loads(payload), t, token, codec)}

    engine = client.engine()
    try:
        results = engine.run_tasks(task, payloads, f"hudi clustering {t}: {len(payloads)} groups")
    finally:
        engine.release()
    return [s for r in results for s in r["stats"]]


def cluster_group(base_path: str, group: Mapping[str, Any], t: str, write_token: str,
                  compression: str = "gzip") -> list[dict[str, Any]]:
    """Rewrite one input group: its slices' rows read (merged), sorted by ``group["sort"]`` (or in input order),
    written in that order to ``group["outputs"]`` new file groups ``<prefix>-<n>``; their write stats."""
    reader = TableReader(base_path)
    storage = reader.storage
    parts: list[pa.Table] = []
    partition = ""
    for s in group["slices"]:
        partition = s["partition"]

        def data_file(name: str, p: str = partition) -> DataFile:
            return DataFile(p, name, storage.size(posixpath.join(p, name) if p else name))

        base = data_file(s["base_file"]) if s["base_file"] else None
        logs = [data_file(n) for n in s["logs"]]
        base_instant = (parse_base_file_name(base.name).instant if base
                        else min(parse_log_file_name(f.name).instant for f in logs))
        rows = reader.read_slice(FileSlice(partition, s["file_id"], base_instant, base).with_logs(logs))
        if rows is not None and rows.num_rows:
            parts.append(rows)
    if not parts:
        return []
    merged = pa.concat_tables(parts, promote_options="default")
    if group["sort"]:
        merged = merged.take(pc.sort_indices(merged, sort_keys=[(c, "ascending", "at_start") for c in group["sort"]]))
    data_schema = pa.schema([f for f in merged.schema if f.name not in META_FIELDS])
    avro = with_meta_fields(avro_schema_from_arrow(data_schema, *record_name_for_table(reader.config.name)))
    ctx = HandleContext(base_path, t, json.dumps(avro), MergeRule.from_config(reader.config), compression, {})
    stats = []
    for n, (start, count) in enumerate(output_chunks(merged.num_rows, int(group["outputs"]))):
        chunk = merged.slice(start, count)
        file_id = make_file_id(group["prefix"], n)
        name = BaseFileName(file_id, write_token, t).format()
        rel = posixpath.join(partition, name) if partition else name
        storage.create_if_absent(marker_path(t, rel, "CREATE"), b"")
        chunk = chunk.set_column(chunk.schema.get_field_index(FILE_NAME), FILE_NAME,
                                 pa.array([name] * chunk.num_rows, pa.string()))
        size = _write(storage, rel, chunk, ctx)
        stats.append({"fileId": file_id, "path": rel, "prevCommit": "null", "numWrites": chunk.num_rows,
                      "numDeletes": 0, "numUpdateWrites": 0, "numInserts": chunk.num_rows, "totalWriteBytes": size,
                      "totalWriteErrors": 0, "partitionPath": partition, "fileSizeInBytes": size})
    return stats


__all__ = ["cluster", "cluster_group", "clustering_action", "run_clustering", "schedule_clustering"]
