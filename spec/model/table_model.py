"""The spec model: the oracle. An in-memory Hudi table that applies the case language's operations
and predicts what a conforming implementation leaves behind.

``apply(state, op, env) -> state`` is pure over an immutable ``TableState``: a failed operation
raises the typed error a conforming writer must raise and the caller keeps the old state. ``op``
is any operation of ``spec.model.operations``; ``dispatch`` hands it to ``ModelOperations``, the model's
``OperationHandler``.

``predict(state)`` says what readers must return and what the table must look like:

- **rows** (L0) for the snapshot, read-optimized, time-travel and incremental queries, with the
  five meta columns. Exact: the rows, their data values, ``_hoodie_commit_time``,
  ``_hoodie_record_key``, ``_hoodie_partition_path``, and the instant part of
  ``_hoodie_commit_seqno``. Up to normalization: the seqno's task partition and index (Spark task
  order), and ``_hoodie_file_name`` (its file id and write token are implementation-chosen;
  its instant is exact);
- **timeline** (L1): ordered (requested time, action, state) of the active timeline, with the
  completion time in v8;
- **layout** (L2): per partition its file groups in creation order, their slices (base instant,
  base file or not, log file versions) and which group holds each key. File ids come from the
  env; within one write, files are written in ``spec.write.partitioner``'s bucket order (update buckets,
  then per partition the small-file and new insert buckets), which is the order new groups are
  created in.

Time-travel and incremental reads are predicted for completed writes whose files all survive
(a clean removes what older reads need; those reads are not predicted).

Source: no Hudi class — the oracle is this project's; it applies the rules of the modules it calls,
each of which names its Hudi classes (``HoodieTableMetaClient`` and the write client are what it
stands in for).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from spec.actions.clustering_plan import ClusteringConfig
from spec.config.registry import check_values
from spec.config.write_operation import WriteOperationType, write_action
from spec.errors import ERROR_KINDS, HudiSpecError, InvalidOperation
from spec.index.global_index import refuse_streaming
from spec.model.actions import (
    archive,
    clean,
    finish,
    maybe_inline_compaction,
    next_instant,
    restore,
    rollback,
    rollback_failed_writes,
    run_compaction,
    savepoint,
    schedule_compaction,
)
from spec.model.bucketing import bucket_groups, commit_totals, model_bucket_index
from spec.model.clustering import group_rows, model_clustering_plan, new_base_file, sorted_rows, split_rows
from spec.model.concurrency import concurrent
from spec.model.deduplicate import dedupe
from spec.model.files import IS_DELETED, BaseFile, Row
from spec.model.global_tagging import model_global_index
from spec.model.operations import (
    Archive,
    Clean,
    Cluster,
    Compact,
    Concurrent,
    Crash,
    DeletePartition,
    ExpectError,
    Operation,
    OperationHandler,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    Write,
    dispatch,
)
from spec.model.queries import (
    GroupLayout,
    incremental,
    key_locations,
    layout,
    query_instants,
    read_optimized,
    snapshot,
    view,
)
from spec.model.state import Env, TableSettings, TableState, start_instant
from spec.model.writes import (
    apply_files,
    evolve_schema,
    mark_replaced,
    observed_size,
    plan_stream_checkpoint,
    plan_write,
    prepare,
)
from spec.timeline.instant import Action, State
from spec.write import writer_utils as wu
from spec.write.partitioner import average_record_size
from spec.write.service_configs import partitioner_config
from spec.write.stream_buckets import BucketStreamAssigner, StreamBucketAssigner, StreamFileGroup
from spec.write.writer_utils import validate_table_config

__all__ = ["Env", "Prediction", "TableModel", "TableState", "apply", "create_table", "predict"]


def create_table(config: TableSettings) -> TableState:
    """An empty table with this configuration."""
    return TableState(config)


# --8<-- [start:write]
def write(state: TableState, env: Env, operation: str, records: Sequence[Mapping[str, Any]],
          instant_time: str | None = None) -> TableState:
    """One write: check the batch's schema against the table's, key the batch, take an instant, roll back
    failed writes, write the files, commit (or stop half way when a crash is armed), then run inline table
    services.

    The schema is checked before any record is keyed, as Hudi's Spark writer deduces the writer schema
    against the table's latest (``HoodieSchemaUtils.deduceWriterSchema``, refusing a batch that lacks a
    field of the table's with ``SchemaCompatibilityException``) before its key generator runs
    (``HoodieCreateRecordUtils.createHoodieRecordRdd``): a record without its record-key column on a table
    that has a schema is ``SchemaMismatch``, on a new table ``InvalidRecord`` (measured with Apache Hudi
    1.2.0: case ``expect-errors-cow-v6``)."""
    cfg = state.config
    schema = state.schema if operation == "delete" else evolve_schema(state.schema, records)
    recs = prepare(state, operation, records)
    creates_table = not state.timeline  # the write that creates the table (Hudi's hoodie.properties)
    state, t = start_commit(state, env, instant_time)
    action = Action(write_action(operation, cfg.is_mor, creates_table))
    state = state.with_instant(start_instant(action, t))
    state = replace(state, schema=schema)  # rows are written with the batch's schema
    plan = plan_write(state, env, operation, recs, t)
    return _commit(state, env, t, plan.files, plan.replaced, plan.appended, schema,
                   WriteOperationType.of_option(operation).value)


def start_commit(state: TableState, env: Env, instant_time: str | None = None) -> tuple[TableState, str]:
    """A write's start: the failed writes rolled back (``rollback_failed_writes``), and the write's instant
    time; the table after the rollbacks and that time.

    A write that names no instant time rolls back first and then takes a new time, so its rollbacks come
    before it on the timeline (``BaseHoodieWriteClient.startCommit``: ``CleanerUtils.rollbackFailedWrites``,
    then ``createNewInstantTime``; measured with Apache Hudi 1.2.0 on versions 6, 8 and 9: the corpus's
    ``crash-then-write-*`` cases). A write that names its time (Hudi's ``startCommitWithTime``) has it
    first, and its rollbacks follow it."""
    if instant_time is None:
        state = rollback_failed_writes(state, env)
        return state, next_instant(state, env)
    t = next_instant(state, env, instant_time)
    return rollback_failed_writes(state, env, floor=t), t


def _commit(state: TableState, env: Env, t: str, files: Sequence[Any], replaced: frozenset[tuple[str, str]],
            appended: Sequence[tuple[str, str, str]], schema: tuple[tuple[str, str], ...],
            operation: str = WriteOperationType.UPSERT.value) -> TableState:
    """Write the files of instant ``t`` and complete it; ``operation`` is the ``WriteOperationType`` its
    commit metadata names (a streaming checkpoint is an ``UPSERT``)."""
    inst = state.instant(t)
    assert inst is not None
    state = state.with_instant(inst.transition(State.INFLIGHT))
    state = replace(state, operations=(*state.operations, (t, operation)))
    logs = (*state.appended_logs, (t, tuple(appended)))
    if state.crash_after is not None:
        written = files[: state.crash_after]
        names = {lf.name for _, _, lf in written if hasattr(lf, "blocks")}
        state = apply_files(state, written, t)
        crashed = tuple(a for a in appended if a[2] in names)
        old_schema = state.schema_log[-1][1] if state.schema_log else ()
        return replace(state, crash_after=None, schema=old_schema,
                       appended_logs=(*state.appended_logs, (t, crashed)))
    state = mark_replaced(apply_files(state, files, t), replaced, t)
    state = replace(state, appended_logs=logs, schema=schema, schema_log=(*state.schema_log, (t, schema)))
    state = finish(state, env, t)
    return _after_commit(state, env)
# --8<-- [end:write]


def _after_commit(state: TableState, env: Env) -> TableState:
    """Inline compaction (MOR), then automatic clean and archival, as configured."""
    state = maybe_inline_compaction(state, env)
    if state.config.auto_clean:
        state = clean(state, env)
    if state.config.auto_archive:
        state = archive(state, env)
    return state


def delete_partition(state: TableState, env: Env, partitions: Sequence[str], instant_time: str | None) -> TableState:
    """A replacecommit replacing every visible file group of the partitions; no new files."""
    state, t = start_commit(state, env, instant_time)
    state = state.with_instant(start_instant(Action.REPLACE_COMMIT, t))
    wanted = set(partitions)
    replaced = frozenset((g.partition_path, g.file_id) for g in view(state) if g.partition_path in wanted)
    return _commit(state, env, t, (), replaced, (), state.schema, "DELETE_PARTITION")


# --8<-- [start:stream]
def stream(state: TableState, env: Env, checkpoints: Sequence[Sequence[Any]]) -> TableState:
    """A streaming write (Flink): one commit per checkpoint, buckets from ``spec.write.stream_buckets`` (a
    bucket-indexed table's from its ``BucketStreamAssigner``, by ``spec.index.bucket_index``).

    The assigner starts from the table (its groups, their record counts and keys). A new key goes to
    the first group of its partition with room (``max_file_size // average record size``), else to
    a new group; a group opened in this checkpoint is an insert (I) bucket for every record of the
    checkpoint, later an update (U) bucket. COW: I buckets are written by a create handle, U
    buckets merged into a new base file. MOR: every bucket goes through the append handle, so new
    file groups start as log-only groups (slice keyed by their first deltacommit).
    """
    cfg = state.config
    pcfg = partitioner_config(cfg)
    capacity = max(cfg.max_file_size // average_record_size(commit_totals(state), pcfg), 1)
    bucket_index = model_bucket_index(cfg, "upsert")
    refuse_streaming(model_global_index(cfg))
    assigner: StreamBucketAssigner | BucketStreamAssigner = StreamBucketAssigner(capacity, groups={
        p: tuple(StreamFileGroup(g.file_id, len(g.keys), 0) for g in groups) for p, groups in layout(state).items()},
        key_index={k: fids[0] for k, fids in key_locations(state).items()}) if bucket_index is None else (
        BucketStreamAssigner(bucket_index, bucket_groups(state)))
    for records in checkpoints:
        # a checkpoint is one Spark DataFrame: its deletes are rows with _hoodie_is_deleted true, so the
        # column (false on its other rows) joins the table's schema (Hudi's streaming sink writes each
        # micro-batch as an upsert of the DataFrame, HoodieStreamingSink → HoodieSparkSqlWriter)
        rows = ([{**r.record, IS_DELETED: r.kind == "delete"} for r in records]
                if any(r.kind == "delete" for r in records) else [r.record for r in records])
        schema = evolve_schema(state.schema, rows)
        typed = replace(state, schema=schema)  # the checkpoint's ordering values have the types it writes
        recs = dedupe(typed, prepare(typed, "upsert", rows))
        state, t = start_commit(state, env)
        state = replace(state.with_instant(start_instant(Action.DELTA_COMMIT if cfg.is_mor else Action.COMMIT, t)),
                        schema=schema)
        buckets: dict[tuple[str, str], list[Any]] = {}
        for r in recs:
            if r.data is None and assigner.location(r.partition, r.key) is None:
                continue  # deleting a key the table does not hold
            assigner, b = assigner.assign(r.partition, r.key, lambda n: f"{env.next_file_id_prefix()}-0")
            buckets.setdefault((b.partition, b.file_id), []).append(r)
        plan = plan_stream_checkpoint(state, env, t, buckets)
        state = _commit(state, env, t, plan.files, frozenset(), plan.appended, schema)
        assigner = assigner.checkpoint()
    return state
# --8<-- [end:stream]


def compact(state: TableState, env: Env, mode: str, instant_time: str | None) -> TableState:
    """A compaction operation: ``run`` executes a pending plan, ``schedule`` only writes one, ``schedule_and_run`` does
    both. On a copy-on-write table every mode is refused before the timeline is looked at, so ``run`` with no
    pending plan is ``invalid_operation`` there, not ``instant_not_found`` (Hudi: ``HoodieSparkCopyOnWriteTable``
    ``.compact`` and ``.scheduleCompaction`` throw ``HoodieNotSupportedException``; on merge-on-read, a
    schedule that finds nothing returns an empty ``Option`` and no instant,
    ``BaseHoodieTableServiceClient.scheduleCompaction``)."""
    if not state.config.is_mor:
        raise InvalidOperation("compaction applies to MERGE_ON_READ tables", hint="COW tables need no compaction")
    if mode == "run":
        return run_compaction(state, env, instant_time)
    state, t = schedule_compaction(state, env, instant_time)
    if mode == "schedule_and_run" and t is not None:
        state = run_compaction(state, env, t)
    return state


def cluster(state: TableState, env: Env, options: Sequence[tuple[str, str]]) -> TableState:
    """Schedule a clustering and execute it (``spec.model.clustering``): nothing when no file group qualifies."""
    config = ClusteringConfig.from_options(dict(options))
    t = next_instant(state, env)
    plan = model_clustering_plan(state, config, t)
    if not plan.groups:
        return state
    action = Action.CLUSTERING if state.table_version >= 8 else Action.REPLACE_COMMIT
    state = state.with_instant(start_instant(action, t).transition(State.INFLIGHT))
    state = replace(state, clusterings=(*state.clusterings, (t, plan.missing_partitions if config.incremental else ())),
                    operations=(*state.operations, (t, "CLUSTER")))
    files: list[tuple[str, str, BaseFile]] = []
    for g in plan.groups:
        prefix = env.next_file_id_prefix()
        rows = sorted_rows(group_rows(state, [s.slice for s in g.slices]), config.sort_columns)
        for n, chunk in enumerate(split_rows(rows, g.num_output_file_groups)):
            fid = f"{prefix}-{n}"
            size = observed_size(state, env, g.partition_path, fid, t, len(chunk))
            files.append((g.partition_path, fid, new_base_file(fid, t, chunk, size)))
    replaced = frozenset(gid for g in plan.groups for gid in g.group_ids())
    return finish(mark_replaced(apply_files(state, files, t), replaced, t), env, t)


# --- the operation vocabulary -------------------------------------------------------------------

def table_identity(config: TableSettings) -> dict[str, str]:
    """A model table's identity properties by write-option key (``spec.write.writer_utils.IDENTITY``)."""
    out = {wu.TABLE_NAME: config.table_name, wu.TABLE_TYPE: config.table_type,
           wu.RECORD_KEY: ",".join(config.record_key_fields), wu.PARTITION_PATH: ",".join(config.partition_fields),
           wu.KEY_GENERATOR: config.resolved_key_generator, wu.HIVE_STYLE: str(config.hive_style).lower(),
           wu.URL_ENCODE: "false", wu.WRITE_TABLE_VERSION: str(config.table_version)}
    if config.ordering_field:
        out[wu.ORDERING] = config.ordering_field
    if config.table_version >= 8:
        out[wu.MERGE_MODE_PROPERTY] = config.merge_mode
    return out


# --8<-- [start:apply]
def apply(state: TableState, op: Operation, env: Env) -> TableState:
    """The table after ``op`` (``spec.model.operations.dispatch`` hands it to ``ModelOperations``). An armed
    ``ExpectError`` makes the next operation succeed only by failing with that error kind, leaving the
    table as it was."""
    return dispatch(ModelOperations(state, env), op)


@dataclass(frozen=True)
class ModelOperations(OperationHandler[TableState]):
    """The model's execution of each operation: the table after it, from ``state`` in ``env``."""

    state: TableState
    env: Env

    def _run(self, op: Operation, run: Callable[[TableState], TableState]) -> TableState:
        """``run`` on the table; while an error is expected, only its failure with that kind succeeds."""
        kind = self.state.expect_error
        if kind is None:
            return run(self.state)
        before = replace(self.state, expect_error=None)
        try:
            run(before)
        except HudiSpecError as err:
            if isinstance(err, ERROR_KINDS[kind]):
                return before
            raise
        raise InvalidOperation(f"{type(op).__name__} succeeded, but the case expects it to fail with {kind}",
                               hint="fix the case or the model")

    def expect_error(self, op: ExpectError) -> TableState:
        """Arm the expectation (a new one replaces an armed one)."""
        if op.kind not in ERROR_KINDS:
            raise InvalidOperation(f"unknown error kind {op.kind!r}", hint=f"use one of {', '.join(ERROR_KINDS)}")
        return replace(self.state, expect_error=op.kind)
    # --8<-- [end:apply]

    def write(self, op: Write) -> TableState:
        """A batch write; the write's own options apply to it alone, once checked against the table."""
        def run(s: TableState) -> TableState:
            if not op.options:
                return write(s, self.env, op.operation, op.records, op.instant_time)
            check_values(dict(op.options))
            validate_table_config(table_identity(s.config), dict(op.options))
            table_config = s.config
            merged = (*table_config.options, *op.options)
            with_options = replace(s, config=replace(table_config, options=merged))  # type: ignore[type-var]
            return replace(write(with_options, self.env, op.operation, op.records, op.instant_time),
                           config=table_config)
        return self._run(op, run)

    def delete_partition(self, op: DeletePartition) -> TableState:
        """Drop the partitions."""
        return self._run(op, lambda s: delete_partition(s, self.env, op.partitions, op.instant_time))

    def compact(self, op: Compact) -> TableState:
        """Schedule and/or run a compaction."""
        return self._run(op, lambda s: compact(s, self.env, op.mode, op.instant_time))

    def cluster(self, op: Cluster) -> TableState:
        """Schedule a clustering and execute it."""
        return self._run(op, lambda s: cluster(s, self.env, op.options))

    def clean(self, op: Clean) -> TableState:
        """Plan and run the cleaner."""
        return self._run(op, lambda s: clean(s, self.env, op.instant_time))

    def rollback(self, op: Rollback) -> TableState:
        """Roll back an instant."""
        return self._run(op, lambda s: rollback(s, self.env, op.instant_time))

    def savepoint(self, op: Savepoint) -> TableState:
        """Savepoint a commit."""
        return self._run(op, lambda s: savepoint(s, self.env, op.instant_time))

    def restore(self, op: Restore) -> TableState:
        """Restore to a savepoint."""
        return self._run(op, lambda s: restore(s, self.env, op.savepoint_time))

    def archive(self, op: Archive) -> TableState:
        """Archive old instants."""
        return self._run(op, lambda s: archive(s, self.env))

    def stream(self, op: Stream) -> TableState:
        """A streaming write."""
        return self._run(op, lambda s: stream(s, self.env, op.checkpoints))

    def concurrent(self, op: Concurrent) -> TableState:
        """Writers at once (``spec.model.concurrency``)."""
        def commit(s: TableState, t: str, replaced: frozenset[tuple[str, str]], schema: tuple[tuple[str, str], ...]
                   ) -> TableState:
            s = mark_replaced(s, replaced, t)
            s = replace(s, schema=schema, schema_log=(*s.schema_log, (t, schema)))
            return _after_commit(finish(s, self.env, t), self.env)

        def service(s: TableState, m: Compact | Clean) -> TableState:
            if isinstance(m, Compact):
                return compact(s, self.env, m.mode, m.instant_time)
            return clean(s, self.env)

        return self._run(op, lambda s: concurrent(s, self.env, op, commit, service))

    def crash(self, op: Crash) -> TableState:
        """Arm the fault: the next write stops after ``op.after_files`` files."""
        return self._run(op, lambda s: replace(s, crash_after=op.after_files))


# --- predictions --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Prediction:
    """What the model predicts after a step: rows per query (L0), timeline (L1), layout (L2)."""

    snapshot: tuple[Row, ...]
    read_optimized: tuple[Row, ...]
    time_travel: Mapping[str, tuple[Row, ...]]
    incremental: Mapping[tuple[str | None, str], tuple[Row, ...]]
    timeline: tuple[tuple[str, str, str, str | None], ...]
    layout: Mapping[str, tuple[GroupLayout, ...]]


def predict(state: TableState) -> Prediction:
    """Every prediction for the table as it is. Incremental windows run between any two of
    (start of the table, completion of each queryable write)."""
    instants = query_instants(state)
    done = {i.requested: i.completed or i.requested for i in state.timeline}
    ends = [done[t] for t in instants]
    windows = [(b, e) for e in ends for b in (None, *ends) if b is None or b < e]
    return Prediction(
        snapshot=snapshot(state),
        read_optimized=read_optimized(state),
        time_travel={t: snapshot(state, t) for t in instants},
        incremental={(b, e): incremental(state, b, e) for b, e in windows},
        timeline=tuple((i.requested, str(i.action), str(i.state), i.completed) for i in state.timeline),
        layout=layout(state),
    )


class TableModel:
    """A convenience holder: the current state and its environment; ``apply`` replaces the state
    only when the operation succeeds."""

    def __init__(self, config: TableSettings, env: Env | None = None) -> None:
        self.env = env or Env.deterministic()
        self.state = create_table(config)

    def apply(self, op: Operation) -> TableState:
        """Apply one operation; the model keeps the new state (or raises the typed error and keeps the old)."""
        self.state = apply(self.state, op, self.env)
        return self.state

    def predict(self) -> Prediction:
        """What a conforming implementation's table now holds: rows per query, timeline and layout."""
        return predict(self.state)
